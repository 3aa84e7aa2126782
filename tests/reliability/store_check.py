"""Read a Baton store directly (the server is dead) and say what is wrong with it.

After a SIGKILL the crash suite opens the SQLite file itself, before any
server touches it again, so what it sees is exactly what the killed process
left: the database must pass `PRAGMA integrity_check`, every compaction row
must have its marker message and every marker its row (a compaction is one
transaction), and each plan file must agree with its latest version (or the
difference is noted, to be recorded as a user version on the next read).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from baton.plan import frontmatter
from baton.store.db import workspace_db_path


@dataclass
class StoreReport:
    problems: list[str] = field(default_factory=list)
    # session id → ids of the messages the active compaction leaves out of view
    compacted: dict[str, set[str]] = field(default_factory=dict)
    # session id → the plan file's content where it differs from the latest version
    plan_diffs: dict[str, str] = field(default_factory=dict)
    messages: int = 0
    compactions: int = 0
    plans: int = 0


def db_path(workspace: Path) -> Path:
    """The store of `workspace` (XDG_DATA_HOME must be the server's)."""
    return workspace_db_path(workspace)


def inspect_store(path: Path, workspace: Path) -> StoreReport:
    report = StoreReport()
    if not path.exists():
        return report
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.row_factory = sqlite3.Row
    try:
        integrity = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        if integrity != ["ok"]:
            report.problems.append(f"integrity_check: {integrity[:5]}")
        foreign = conn.execute("PRAGMA foreign_key_check").fetchall()
        if foreign:
            report.problems.append(f"foreign_key_check: {[tuple(r) for r in foreign[:5]]}")
        report.messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        _check_compactions(conn, report)
        _check_plans(conn, workspace, report)
    finally:
        conn.close()
    return report


def _check_compactions(conn: sqlite3.Connection, report: StoreReport) -> None:
    markers: dict[str, str] = {}
    for row in conn.execute(
        "SELECT m.session_id, p.data FROM parts p JOIN messages m ON m.id = p.message_id"
        " WHERE p.type = 'compaction'"
    ):
        markers[json.loads(row["data"])["compactionId"]] = row["session_id"]
    rows = conn.execute(
        "SELECT c.id, c.session_id, c.view, u.compaction_id AS undone FROM compactions c"
        " LEFT JOIN compaction_undos u ON u.compaction_id = c.id ORDER BY c.created_at, c.id"
    ).fetchall()
    report.compactions = len(rows)
    ids = {r["id"] for r in rows}
    for row in rows:
        if markers.get(row["id"]) != row["session_id"]:
            report.problems.append(f"compaction {row['id']} has no marker message")
    for cid in set(markers) - ids:
        report.problems.append(f"marker of compaction {cid} has no compaction row")
    active: dict[str, int | None] = {}
    for row in rows:
        if row["undone"] is None:
            active[row["session_id"]] = json.loads(row["view"]).get("firstKeptSeq")
    for session_id, first in active.items():
        if first is None:
            report.compacted[session_id] = set()
            continue
        report.compacted[session_id] = {
            r["id"]
            for r in conn.execute(
                "SELECT id FROM messages WHERE session_id = ? AND seq < ? AND kind != 'compaction'",
                (session_id, first),
            )
        }


def _check_plans(conn: sqlite3.Connection, workspace: Path, report: StoreReport) -> None:
    for plan in conn.execute("SELECT session_id, path FROM plans"):
        report.plans += 1
        latest = conn.execute(
            "SELECT content FROM plan_versions WHERE session_id = ? ORDER BY version DESC LIMIT 1",
            (plan["session_id"],),
        ).fetchone()
        if latest is None:
            report.problems.append(f"plan of {plan['session_id']} has no version")
            continue
        file = workspace / plan["path"]
        if not file.exists():
            report.problems.append(f"plan file {plan['path']} is missing; its versions are not")
            continue
        content = frontmatter.split(file.read_text(encoding="utf-8"))[1]
        if content != latest["content"]:
            report.plan_diffs[plan["session_id"]] = content
