"""The database handle: connection settings, migrations and transactions.

WAL journaling with `synchronous=NORMAL` makes every committed transaction
survive a killed process (only an OS crash could lose the last ones), and a
crash at any instant leaves the last committed state whole.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from baton.config import data_dir
from baton.errors import StorageError, StoreDamaged
from baton.store.integrity import StoreConnection
from baton.store.migrations import MIGRATIONS

log = logging.getLogger(__name__)


class Database:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._depth = 0
        self._connect()

    def _connect(self) -> None:
        """Open `path` as `self.conn`, with Baton's settings, migrated."""
        conn = sqlite3.connect(
            str(self.path),
            isolation_level=None,
            check_same_thread=False,
            timeout=10.0,
            factory=StoreConnection,
        )
        conn.store_path = self.path
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=10000")
            self.conn = conn
            self.migrate()
        except BaseException:
            with suppress(sqlite3.Error):
                conn.close()
            raise

    def reopen(self) -> None:
        """Open the file at `path` afresh (after `baton/store/repair` replaced it); every
        holder of this Database sees the new connection."""
        self.close()
        self._depth = 0
        self._connect()

    def migrate(self) -> None:
        version = int(self.conn.execute("PRAGMA user_version").fetchone()[0])
        if version > len(MIGRATIONS):
            raise StorageError(
                f"the store at {self.path} was written by a newer Baton (schema {version})"
            )
        for index in range(version, len(MIGRATIONS)):
            # One script, one transaction: a migration is applied whole or not at all.
            script = f"BEGIN IMMEDIATE;\n{MIGRATIONS[index]}\nPRAGMA user_version = {index + 1};\nCOMMIT;"
            try:
                self.conn.executescript(script)
            except StoreDamaged:
                self._rollback()
                raise
            except sqlite3.Error as exc:
                self._rollback()
                raise StorageError(f"migrating the store at {self.path} failed: {exc}") from exc
            log.info("store %s migrated to schema %d", self.path, index + 1)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic unit: all of it commits, or none of it (disk full, crash)."""
        if self._depth:
            self._depth += 1
            try:
                yield self.conn
            finally:
                self._depth -= 1
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StorageError(f"the store cannot start a write: {exc}") from exc
        self._depth = 1
        try:
            yield self.conn
        except BaseException:
            self._depth = 0
            self._rollback()
            raise
        self._depth = 0
        try:
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise StorageError(f"the store could not commit, nothing was changed: {exc}") from exc

    def data_version(self) -> int:
        """Changes each time another connection (another process) commits to the store."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def _rollback(self) -> None:
        with suppress(sqlite3.Error):
            self.conn.execute("ROLLBACK")

    def close(self) -> None:
        with suppress(sqlite3.Error):
            self.conn.close()


def workspace_db_path(workspace: Path) -> Path:
    key = hashlib.sha256(str(workspace).encode("utf-8")).hexdigest()[:16]
    return data_dir() / "workspaces" / key / "baton.db"


def open_workspace_db(workspace: Path) -> Database:
    path = workspace_db_path(workspace)
    info = path.parent / "workspace.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not info.exists():
        info.write_text(json.dumps({"path": str(workspace)}), encoding="utf-8")
    return Database(path)
