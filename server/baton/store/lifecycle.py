"""Deleting and forking sessions in the store, each as one transaction.

The store is append-only while a session lives; deleting it is the one
exception, because the person asked for exactly that (a session may hold a
pasted secret or private code). The delete removes every row that belongs to
the session, found from the schema itself (a `session_id` column, or a foreign
key to a row that belongs to it), so tables that later features add are
covered without this module knowing them. Plan files are not rows: they stay
on disk.

A fork copies rows instead of referencing them, so a fork and its source can
be deleted independently; messages taken back with `baton/session/revert` are
out of the source's view and are left out of the copy. Copies keep every column as stored (tool-call ids,
provider-native items, usage) so that the fork's next request replays its
history exactly; only identifiers that must be unique get new values.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from baton.ids import new_id, utc_now
from baton.store.db import Database

# A foreign key: (column, parent table, parent column).
_Link = tuple[str, str, str]


@dataclass
class _Owned:
    """How to select a table's rows that belong to one session."""

    table: str
    where: str
    depth: int


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    return [str(r[0]) for r in rows]


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in conn.execute(f'PRAGMA table_info("{table}")').fetchall()]


def _links(conn: sqlite3.Connection, table: str) -> list[_Link]:
    return [
        (str(r[3]), str(r[2]), str(r[4] or "rowid"))
        for r in conn.execute(f'PRAGMA foreign_key_list("{table}")').fetchall()
    ]


def owned_tables(conn: sqlite3.Connection) -> list[_Owned]:
    """Every table with rows that belong to a session, with the WHERE clause selecting
    them for `?` = the session id, most dependent first (children before parents)."""
    tables = _tables(conn)
    links = {t: _links(conn, t) for t in tables}
    where: dict[str, str] = {"sessions": "id = ?"}
    for table in tables:
        if table != "sessions" and "session_id" in _columns(conn, table):
            where[table] = "session_id = ?"
    # Tables reached only through a foreign key (parts → messages, undos → compactions).
    for _ in range(len(tables)):
        grew = False
        for table in tables:
            if table in where:
                continue
            for column, parent, parent_column in links[table]:
                if parent in where:
                    where[table] = (
                        f'"{column}" IN (SELECT "{parent_column}" FROM "{parent}"'
                        f" WHERE {where[parent]})"
                    )
                    grew = True
                    break
        if not grew:
            break
    # Depth: the longest chain of foreign keys down from `sessions` among owned tables.
    depth = dict.fromkeys(where, 0)
    for _ in range(len(tables)):
        deeper = False
        for table in where:
            for _column, parent, _parent_column in links[table]:
                if parent in where and parent != table and depth[table] < depth[parent] + 1:
                    depth[table] = depth[parent] + 1
                    deeper = True
        if not deeper:
            break
    owned = [_Owned(table, clause, depth[table]) for table, clause in where.items()]
    return sorted(owned, key=lambda o: o.depth, reverse=True)


def delete_session(db: Database, session_id: str) -> dict[str, int]:
    """Delete the session and every row that belongs to it; returns rows deleted per table.

    Children go first; rows of a table that references another table of the same
    depth are retried until the foreign keys allow them (at most one pass per table).
    """
    deleted: dict[str, int] = {}
    with db.transaction() as conn:
        pending = owned_tables(conn)
        for _ in range(len(pending) + 1):
            if not pending:
                break
            blocked: list[_Owned] = []
            for entry in pending:
                try:
                    cur = conn.execute(
                        f'DELETE FROM "{entry.table}" WHERE {entry.where}', (session_id,)
                    )
                except sqlite3.IntegrityError:
                    blocked.append(entry)
                    continue
                if cur.rowcount:
                    deleted[entry.table] = deleted.get(entry.table, 0) + cur.rowcount
            if len(blocked) == len(pending):
                raise sqlite3.IntegrityError(
                    "cannot delete session rows from: " + ", ".join(e.table for e in blocked)
                )
            pending = blocked
    return deleted


# --------------------------------------------------------------------------- fork


@dataclass
class ForkSource:
    """What to copy: the source's messages up to the fork point, and when that point was."""

    session_id: str
    message_ids: list[str]  # in order
    # Anything the source recorded after this instant (an undo, a plan version) happened
    # after the fork point and is not copied.
    boundary: str


@dataclass
class ForkResult:
    session_id: str
    # Source message id → fork message id, and source seq → fork seq.
    message_ids: dict[str, str] = field(default_factory=dict)
    seqs: dict[int, int] = field(default_factory=dict)
    compactions: dict[str, str] = field(default_factory=dict)


def _copy_row(
    conn: sqlite3.Connection,
    table: str,
    row: sqlite3.Row,
    overrides: dict[str, Any],
    skip: Iterable[str] = (),
) -> int:
    """Insert a copy of `row` with `overrides`, keeping every other column as stored."""
    skipped = set(skip)
    columns = [c for c in row.keys() if c not in skipped]  # noqa: SIM118 - sqlite3.Row
    values = [overrides.get(c, row[c]) for c in columns]
    names = ", ".join(f'"{c}"' for c in columns)
    marks = ", ".join("?" for _ in columns)
    cur = conn.execute(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', values)
    return int(cur.lastrowid or 0)


def copy_history(
    conn: sqlite3.Connection, source: ForkSource, target_session_id: str
) -> ForkResult:
    """Copy messages (with parts and tool results) and the compactions made within them.

    Runs inside the caller's transaction. Message ids and compaction ids are new
    (they are unique across the store); tool-call ids, parts and provider-native
    items are copied as stored. Compaction views are carried with their seq
    boundary moved to the fork's own messages, so the fork's view at its last
    message is the source's view at the fork point.
    """
    out = ForkResult(session_id=target_session_id)
    taken_back = _reverted(conn, source.session_id)
    for message_id in source.message_ids:
        if message_id in taken_back:
            # Out of the source's view (baton/session/revert): not part of the fork's history.
            continue
        row = conn.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            continue
        new_message = new_id("msg")
        seq = _copy_row(
            conn,
            "messages",
            row,
            {"id": new_message, "session_id": target_session_id},
            skip=("seq",),
        )
        out.message_ids[message_id] = new_message
        out.seqs[int(row["seq"])] = seq

    kept = set(out.message_ids)
    compactions = conn.execute(
        "SELECT * FROM compactions WHERE session_id = ? ORDER BY created_at, id",
        (source.session_id,),
    ).fetchall()
    markers = _markers(conn, kept)
    for row in compactions:
        old_id = str(row["id"])
        if old_id not in markers:
            # Made after the fork point: its marker is not in the copied history.
            continue
        out.compactions[old_id] = new_id("cmp")

    for row in compactions:
        old_id = str(row["id"])
        if old_id not in out.compactions:
            continue
        new_cmp = out.compactions[old_id]
        first_kept = _map_seq(row["first_kept_seq"], out.seqs)
        record = json.loads(row["record"])
        record["compactionId"] = new_cmp
        record["sessionId"] = target_session_id
        if record.get("firstKeptMessageId") is not None:
            record["firstKeptMessageId"] = out.message_ids.get(record["firstKeptMessageId"])
        view = json.loads(row["view"])
        view["compactionId"] = new_cmp
        if "firstKeptSeq" in view:
            view["firstKeptSeq"] = first_kept
        _copy_row(
            conn,
            "compactions",
            row,
            {
                "id": new_cmp,
                "session_id": target_session_id,
                "first_kept_seq": first_kept,
                "record": json.dumps(record, ensure_ascii=False),
                "view": json.dumps(view, ensure_ascii=False),
            },
        )
        undo = conn.execute(
            "SELECT * FROM compaction_undos WHERE compaction_id = ? AND created_at <= ?",
            (old_id, source.boundary),
        ).fetchone()
        if undo is not None:
            _copy_row(conn, "compaction_undos", undo, {"compaction_id": new_cmp})

    for old_message, new_message in out.message_ids.items():
        for part in conn.execute(
            "SELECT * FROM parts WHERE message_id = ? ORDER BY seq", (old_message,)
        ).fetchall():
            overrides: dict[str, Any] = {"message_id": new_message}
            if part["type"] == "compaction":
                data = json.loads(part["data"])
                data["compactionId"] = out.compactions.get(data.get("compactionId", ""), "")
                overrides["data"] = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            _copy_row(conn, "parts", part, overrides, skip=("seq",))
        for result in conn.execute(
            "SELECT * FROM tool_results WHERE message_id = ?", (old_message,)
        ).fetchall():
            _copy_row(
                conn,
                "tool_results",
                result,
                {"message_id": new_message, "session_id": target_session_id},
            )
    conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (utc_now(), target_session_id))
    return out


def _reverted(conn: sqlite3.Connection, session_id: str) -> set[str]:
    """Messages the review feature took back (baton/session/revert)."""
    rows = conn.execute(
        "SELECT message_id FROM reverted_messages WHERE session_id = ?", (session_id,)
    ).fetchall()
    return {str(r[0]) for r in rows}


def _markers(conn: sqlite3.Connection, message_ids: set[str]) -> set[str]:
    """Compaction ids whose history marker is among `message_ids`."""
    found: set[str] = set()
    if not message_ids:
        return found
    marks = ", ".join("?" for _ in message_ids)
    for row in conn.execute(
        f"SELECT data FROM parts WHERE type = 'compaction' AND message_id IN ({marks})",
        list(message_ids),
    ):
        compaction_id = json.loads(row["data"]).get("compactionId")
        if isinstance(compaction_id, str):
            found.add(compaction_id)
    return found


def _map_seq(seq: int | None, seqs: dict[int, int]) -> int | None:
    """The fork's seq for a source view boundary: the first copied message at or after it."""
    if seq is None:
        return None
    later = [new for old, new in seqs.items() if old >= seq]
    if later:
        return min(later)
    return (max(seqs.values()) + 1) if seqs else 0
