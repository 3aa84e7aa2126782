"""Recovering a damaged store into a new one, keeping the damaged file as it was.

`repair_store` reads a copy of the damaged store table by table, in rowid order,
and when a query meets a damaged page it seeks past the damage (doubling the
step until a seek succeeds, then bisecting back to the first readable row), so
every row on an undamaged page is saved. The rows go into a fresh store with
Baton's current schema. Rows that lost what they belong to are handled so the
new store is consistent: a session whose own row was lost gets a new one
("Recovered session"); a row whose message was lost (a part, a tool result) is
left out of the new store (it is still in the kept copy).

Then the damaged file (and its -wal/-shm) is renamed to `baton.db.damaged-<time>`
next to it and the new store takes its place. Nothing is deleted.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton.errors import StorageError
from baton.store.db import Database

log = logging.getLogger(__name__)

# Coordination rows, not history (store/leases.py): a new store starts with none.
_SKIPPED_TABLES = {"sqlite_sequence", "session_leases"}
_MAX_ROWID = 2**63 - 1
_MIN_ROWID = -(2**63)


@dataclass
class RecoveredSession:
    id: str
    title: str
    messages: int
    # The session's own row was lost and made anew from what referred to it.
    recreated: bool = False


@dataclass
class RepairReport:
    path: Path
    backup: Path
    sessions: list[RecoveredSession] = field(default_factory=list)
    rows_saved: dict[str, int] = field(default_factory=dict)
    # Per table: how many stretches of damaged pages were skipped.
    damaged_regions: dict[str, int] = field(default_factory=dict)
    # Per table: rows read but left out because what they belong to was lost.
    rows_left_out: dict[str, int] = field(default_factory=dict)
    # Per table: rows read but too garbled for the schema's constraints.
    rows_invalid: dict[str, int] = field(default_factory=dict)
    # Tables that could not be read at all.
    unreadable_tables: list[str] = field(default_factory=list)

    @property
    def messages(self) -> int:
        return sum(s.messages for s in self.sessions)


def repair_store(path: Path) -> RepairReport:
    """Recover every readable row of the store at `path` into a new store at `path`,
    keeping the damaged one (renamed) beside it. The store must not be open in another
    process (`integrity.other_processes`)."""
    if not path.exists():
        raise StorageError(f"there is no store at {path} to repair")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = _free_name(path.with_name(f"{path.name}.damaged-{stamp}"))
    work = _free_name(path.with_name(f"repair-{stamp}"))
    work.mkdir(parents=True)
    report = RepairReport(path=path, backup=backup)
    try:
        source = _copy_source(path, work)
        target_path = work / "recovered.db"
        target = Database(target_path)
        try:
            src = _open_source(source)
            if src is None:  # not even the schema reads: a new, empty store
                report.unreadable_tables = _tables(target.conn)
            else:
                with closing(src):
                    _copy_tables(src, target.conn, report)
            recreated = _reattach_orphans(target.conn, report)
            _list_sessions(target.conn, report, recreated)
            target.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            target.close()
        for suffix in ("", "-wal", "-shm"):
            old = Path(f"{path}{suffix}")
            if old.exists():
                os.replace(old, Path(f"{backup}{suffix}"))
        os.replace(target_path, path)
    finally:
        # Only this repair's own copies live here; the damaged original is kept as `backup`.
        shutil.rmtree(work, ignore_errors=True)
    log.info(
        "store %s repaired: %d sessions, %d messages saved; damaged copy kept at %s",
        path,
        len(report.sessions),
        report.messages,
        backup,
    )
    return report


def _free_name(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists() or Path(f"{candidate}-wal").exists():
        candidate = path.with_name(f"{path.name}-{n}")
        n += 1
    return candidate


def _copy_source(path: Path, work: Path) -> Path:
    """A private copy to read from: opening a WAL store writes to it (recovery,
    checkpoints), and the damaged original is to be kept exactly as it was."""
    source = work / "source.db"
    shutil.copyfile(path, source)
    wal = Path(f"{path}-wal")
    if wal.exists():
        shutil.copyfile(wal, Path(f"{source}-wal"))
    return source


def _open_source(source: Path) -> sqlite3.Connection | None:
    """The copy, opened for reading; None when not even its schema can be read."""
    wal = Path(f"{source}-wal")
    for attempt in ("with its log", "without its log"):
        conn = sqlite3.connect(str(source), isolation_level=None)
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.DatabaseError as exc:
            conn.close()
            log.warning("the store cannot be read %s: %s", attempt, exc)
        if not wal.exists():
            break
        wal.unlink()  # the copy's log, not the original's: read the main file alone
    return None


def _tables(conn: sqlite3.Connection) -> list[str]:
    return [
        str(row[0])
        for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        if str(row[0]) not in _SKIPPED_TABLES
    ]


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f'PRAGMA table_info("{table}")').fetchall()]


def _copy_tables(src: sqlite3.Connection, dst: sqlite3.Connection, report: RepairReport) -> None:
    tables = _tables(dst)
    dst.execute("PRAGMA foreign_keys=OFF")
    try:
        for table in tables:
            try:
                have = set(_columns(src, table))
            except sqlite3.DatabaseError as exc:
                log.warning("table %s cannot be read: %s", table, exc)
                report.unreadable_tables.append(table)
                continue
            if not have:  # an older store without this table
                continue
            columns = [c for c in _columns(dst, table) if c in have]
            saved = 0
            names = ", ".join(f'"{c}"' for c in columns)
            marks = ", ".join("?" for _ in columns)
            insert = f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({marks})'
            dst.execute("BEGIN IMMEDIATE")
            try:
                for row in _salvage(src, table, columns, report):
                    try:
                        dst.execute(insert, row[1:])
                    except sqlite3.IntegrityError as exc:  # a garbled row breaking a constraint
                        log.warning("a row of %s is not valid any more: %s", table, exc)
                        report.rows_invalid[table] = report.rows_invalid.get(table, 0) + 1
                        continue
                    saved += 1
                dst.execute("COMMIT")
            except BaseException:
                with suppress(sqlite3.Error):
                    dst.execute("ROLLBACK")
                raise
            report.rows_saved[table] = saved
    finally:
        dst.execute("PRAGMA foreign_keys=ON")


def _salvage(
    src: sqlite3.Connection, table: str, columns: list[str], report: RepairReport
) -> Iterator[tuple[Any, ...]]:
    """Every readable row of `table` in rowid order (rowid first), skipping damaged pages."""
    names = ", ".join(f'"{c}"' for c in columns)
    select = f'SELECT rowid, {names} FROM "{table}"'
    scan = f"{select} WHERE rowid > ? ORDER BY rowid"
    seek = f"{scan} LIMIT 1"  # reads no further than the row it returns
    after = _MIN_ROWID
    while True:
        try:
            for row in src.execute(scan, (after,)):
                after = int(row[0])
                yield tuple(row)
            return
        except sqlite3.DatabaseError as exc:
            # The cursor reads one row ahead, so the row before the damage may be unread:
            # one row at a time first.
            readable, row = _probe(src, seek, after)
            if not readable:
                report.damaged_regions[table] = report.damaged_regions.get(table, 0) + 1
                log.warning(
                    "table %s: damaged after rowid %d (%s): seeking past it", table, after, exc
                )
                row = _next_readable(src, seek, f"{select} WHERE rowid = ?", after)
            if row is None:
                return
            after = int(row[0])
            yield row


def _probe(src: sqlite3.Connection, seek: str, rowid: int) -> tuple[bool, tuple[Any, ...] | None]:
    """(readable, the first row past `rowid`): (True, None) at the table's end."""
    try:
        row = src.execute(seek, (rowid,)).fetchone()
    except sqlite3.DatabaseError:
        return False, None
    return True, None if row is None else tuple(row)


def _next_readable(
    src: sqlite3.Connection, seek: str, lookup: str, after: int
) -> tuple[Any, ...] | None:
    """The first row past the damage that follows rowid `after` that reads whole (None:
    nothing readable follows). Always a row with a larger rowid than `after`."""
    bad, step = after, 1
    while True:
        good = min(after + step, _MAX_ROWID)
        if _probe(src, seek, good)[0]:
            break
        if good == _MAX_ROWID:
            return None
        bad, step = good, step * 2
    # Seeks past `good` read; those past `bad` do not: bisect to the first that reads.
    while good - bad > 1:
        middle = (bad + good) // 2
        if _probe(src, seek, middle)[0]:
            good = middle
        else:
            bad = middle
    # A seek past the last row of a damaged page still reads that page, so the row just
    # after it (`good` itself) is only found by looking it up directly.
    try:
        row = src.execute(lookup, (good,)).fetchone()
        if row is not None:
            return tuple(row)
    except sqlite3.DatabaseError:
        pass
    return _probe(src, seek, good)[1]


def _reattach_orphans(conn: sqlite3.Connection, report: RepairReport) -> set[str]:
    """Make the new store consistent: sessions whose row was lost are made anew (their
    ids are returned), rows whose message (or other parent) was lost are left out."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    missing: set[str] = set()
    for table in _tables(conn):
        if table == "sessions" or "session_id" not in _columns(conn, table):
            continue
        rows = conn.execute(
            f'SELECT DISTINCT session_id FROM "{table}"'
            " WHERE session_id NOT IN (SELECT id FROM sessions)"
        ).fetchall()
        missing.update(str(r[0]) for r in rows)
    conn.execute("BEGIN IMMEDIATE")
    for session_id in sorted(missing):
        first = conn.execute(
            "SELECT MIN(created_at) FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO sessions (id, title, mode, created_at, updated_at)"
            " VALUES (?, 'Recovered session', 'build', ?, ?)",
            (session_id, first or now, now),
        )
    conn.execute("COMMIT")
    # Leaving out a row can orphan rows that refer to it (a message's parts): repeat.
    while True:
        broken = conn.execute("PRAGMA foreign_key_check").fetchall()
        if not broken:
            return missing
        conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute("BEGIN IMMEDIATE")
        for table, rowid in {(str(r[0]), int(r[1])) for r in broken}:
            conn.execute(f'DELETE FROM "{table}" WHERE rowid = ?', (rowid,))
            report.rows_left_out[table] = report.rows_left_out.get(table, 0) + 1
            report.rows_saved[table] = report.rows_saved.get(table, 0) - 1
        conn.execute("COMMIT")
        conn.execute("PRAGMA foreign_keys=ON")


def _list_sessions(conn: sqlite3.Connection, report: RepairReport, recreated: set[str]) -> None:
    report.sessions = [
        RecoveredSession(
            id=str(row[0]),
            title=str(row[1]),
            messages=int(row[2]),
            recreated=str(row[0]) in recreated,
        )
        for row in conn.execute(
            "SELECT s.id, s.title,"
            " (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)"
            " FROM sessions s ORDER BY s.created_at, s.id"
        ).fetchall()
    ]
