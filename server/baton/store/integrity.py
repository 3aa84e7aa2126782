"""Damage in the store's file: told apart from other errors, named, and checked for.

SQLite finds a damaged page only when a query reads it, so damage can surface in
any query of any module. Rather than catch it everywhere, the store's connection
and cursors turn SQLite's "corrupt" and "not a database" errors into
`StoreDamaged`, which names the file and the way out (`baton doctor --repair`);
every face (JSON-RPC, ACP, `baton run`, a turn) then reports it like any other
Baton error, and the server keeps serving whatever is still readable.
"""

from __future__ import annotations

import os
import sqlite3
import struct
import sys
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton.errors import StoreDamaged

# SQLite's primary result codes for a damaged file (extended codes keep them in the low byte).
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26
_DAMAGE_WORDS = ("malformed", "not a database", "corrupt")


def is_damage(exc: BaseException) -> bool:
    """Whether `exc` is SQLite saying the file is damaged (not busy, full or read-only)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
    text = str(exc).lower()
    return any(word in text for word in _DAMAGE_WORDS)


class _Cursor(sqlite3.Cursor):
    """A cursor whose damage errors are `StoreDamaged` (rows are read lazily, so fetching
    can meet a damaged page as well as executing)."""

    @contextmanager
    def _named(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                path = getattr(self.connection, "store_path", "?")
                raise StoreDamaged(path, str(exc)) from exc
            raise

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        with self._named():
            super().execute(sql, parameters)
        return self

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> _Cursor:
        with self._named():
            super().executemany(sql, seq_of_parameters)
        return self

    def executescript(self, sql_script: str, /) -> _Cursor:
        with self._named():
            super().executescript(sql_script)
        return self

    def fetchone(self) -> Any:
        with self._named():
            return super().fetchone()

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        with self._named():
            return super().fetchmany(self.arraysize if size is None else size)

    def fetchall(self) -> list[Any]:
        with self._named():
            return super().fetchall()

    def __next__(self) -> Any:
        with self._named():
            return super().__next__()


class StoreConnection(sqlite3.Connection):
    """The store's connection: queries go through `_Cursor`, so damage is `StoreDamaged`."""

    store_path: Path

    def cursor(self, factory: Any = None) -> Any:
        return super().cursor(factory or _Cursor)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any:
        return self.cursor().executemany(sql, parameters)

    def executescript(self, sql_script: str, /) -> Any:
        return self.cursor().executescript(sql_script)


@dataclass
class CheckReport:
    """What `PRAGMA integrity_check` and a read of every session say about a store."""

    ok: bool
    exists: bool = True
    problems: list[str] = field(default_factory=list)
    sessions: int | None = None  # how many sessions could be listed (None: not even that)
    size: int = 0


# integrity_check lists at most this many problems; more says nothing new.
_MAX_PROBLEMS = 20


def check_store(path: Path) -> CheckReport:
    """Check the store at `path` without changing it (opened read-only)."""
    report = CheckReport(ok=False)
    if not path.exists():
        report.ok, report.exists, report.sessions = True, False, 0
        return report
    report.size = path.stat().st_size
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
            rows = conn.execute(f"PRAGMA integrity_check({_MAX_PROBLEMS})").fetchall()
            found = [str(row[0]) for row in rows if str(row[0]) != "ok"]
            report.problems.extend(found)
            try:
                report.sessions = int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
            except sqlite3.DatabaseError as exc:
                report.problems.append(f"the sessions cannot be listed: {exc}")
    except sqlite3.DatabaseError as exc:
        report.problems.append(str(exc))
    report.ok = not report.problems
    return report


# SQLite's unix VFS: every connection that has a WAL store open holds a read lock on
# this byte of the store's -shm file (the "DMS" slot) for as long as it is open.
_SHM_DMS_BYTE = 128


def other_processes(path: Path) -> list[int] | None:
    """Pids of other processes that have the store at `path` open, [] when none, None
    when this platform cannot tell. A store is only repaired when no one else has it
    open: a process holding the old file would go on writing to the kept copy."""
    if sys.platform != "linux":
        return None
    import fcntl

    shm = Path(f"{path}-shm")
    try:
        fd = os.open(shm, os.O_RDONLY)
    except FileNotFoundError:
        return []  # no -shm: no connection has the store open
    except OSError:
        return None
    try:
        # struct flock {short l_type, l_whence; off_t l_start, l_len; pid_t l_pid}:
        # F_GETLK names a lock of another process that a write lock would conflict with.
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, _SHM_DMS_BYTE, 1, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
    except OSError:
        return None
    finally:
        os.close(fd)
    kind, _whence, _start, _length, pid = struct.unpack("hhqqi", answer[: struct.calcsize("hhqqi")])
    if kind == fcntl.F_UNLCK:
        return []
    return [pid]
