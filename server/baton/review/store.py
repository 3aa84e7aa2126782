"""The checkpoint store: every file version Baton's tools replaced, and every revert.

File contents live once each in `file_blobs`, keyed by SHA-256, so a file that
several turns change costs one copy per distinct version. A change is two rows:
`file_changes` (written before the tool touches the file, holding the previous
content) and `file_change_results` (written after, holding the hash the tool left).
A revert writes its own change rows (what it overwrote, what it restored) and marks
messages in `reverted_messages`; nothing is ever updated or deleted.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass, field

from baton.ids import utc_now
from baton.store.db import Database


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class ChangeRow:
    """One change of one file: by a tool call (`tool_call_id`) or by a revert (`revert_id`)."""

    seq: int
    session_id: str
    message_id: str | None
    tool_call_id: str | None
    revert_id: str | None
    path: str  # workspace-relative, forward slashes
    before_sha256: str | None  # None: the file did not exist
    created_dirs: list[str] = field(default_factory=list)
    confirmed: bool = False  # the change's outcome was recorded
    after_sha256: str | None = None  # None with `confirmed`: the file does not exist after


@dataclass
class Restore:
    """What a revert did to one file: the content it overwrote and the content it restored."""

    path: str
    current: bytes | None
    target_sha256: str | None


class CheckpointStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # ------------------------------------------------------------------ blobs

    def _put_blob(self, conn: sqlite3.Connection, data: bytes | None) -> str | None:
        if data is None:
            return None
        digest = sha256(data)
        conn.execute(
            "INSERT OR IGNORE INTO file_blobs (sha256, data) VALUES (?, ?)", (digest, data)
        )
        return digest

    def blob(self, digest: str | None) -> bytes | None:
        if digest is None:
            return None
        row = self.db.conn.execute(
            "SELECT data FROM file_blobs WHERE sha256 = ?", (digest,)
        ).fetchone()
        return bytes(row["data"]) if row else None

    # ------------------------------------------------------------------ changes

    def begin_change(
        self,
        session_id: str,
        message_id: str | None,
        tool_call_id: str,
        path: str,
        before: bytes | None,
        created_dirs: list[str],
    ) -> int:
        """Keep the file's current content before a tool changes it; returns the change's seq."""
        with self.db.transaction() as conn:
            digest = self._put_blob(conn, before)
            cur = conn.execute(
                "INSERT INTO file_changes (session_id, message_id, tool_call_id, path,"
                " before_sha256, created_dirs, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    message_id,
                    tool_call_id,
                    path,
                    digest,
                    json.dumps(created_dirs),
                    utc_now(),
                ),
            )
            return int(cur.lastrowid or 0)

    def finish_change(self, seq: int, after: bytes | None) -> None:
        """Record the content the change left (the hash later edits are compared with)."""
        with self.db.transaction() as conn:
            digest = self._put_blob(conn, after)
            conn.execute(
                "INSERT INTO file_change_results (change_seq, after_sha256, created_at)"
                " VALUES (?, ?, ?)",
                (seq, digest, utc_now()),
            )

    def changes(self, session_id: str, tool_call_id: str | None = None) -> list[ChangeRow]:
        """The session's changes in the order they happened (optionally of one tool call)."""
        sql = (
            "SELECT c.*, r.change_seq IS NOT NULL AS confirmed, r.after_sha256"
            " FROM file_changes c LEFT JOIN file_change_results r ON r.change_seq = c.seq"
            " WHERE c.session_id = ?"
        )
        args: tuple[str, ...] = (session_id,)
        if tool_call_id is not None:
            sql += " AND c.tool_call_id = ?"
            args = (session_id, tool_call_id)
        rows = self.db.conn.execute(sql + " ORDER BY c.seq", args).fetchall()
        return [
            ChangeRow(
                seq=row["seq"],
                session_id=row["session_id"],
                message_id=row["message_id"],
                tool_call_id=row["tool_call_id"],
                revert_id=row["revert_id"],
                path=row["path"],
                before_sha256=row["before_sha256"],
                created_dirs=list(json.loads(row["created_dirs"])),
                confirmed=bool(row["confirmed"]),
                after_sha256=row["after_sha256"],
            )
            for row in rows
        ]

    # ------------------------------------------------------------------ reverts

    def reverted_ids(self, session_id: str) -> set[str]:
        rows = self.db.conn.execute(
            "SELECT message_id FROM reverted_messages WHERE session_id = ?", (session_id,)
        ).fetchall()
        return {row["message_id"] for row in rows}

    def record_revert(
        self,
        *,
        revert_id: str,
        session_id: str,
        message_id: str,
        forced: bool,
        files: list[dict[str, str]],
        restores: list[Restore],
        message_ids: list[str],
    ) -> None:
        """The revert, the content it overwrote and restored, and its marks: one transaction."""
        now = utc_now()
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO reverts (id, session_id, message_id, forced, files, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (revert_id, session_id, message_id, int(forced), json.dumps(files), now),
            )
            for restore in restores:
                # What was there is kept too: a forced revert loses nothing for good.
                before = self._put_blob(conn, restore.current)
                cur = conn.execute(
                    "INSERT INTO file_changes (session_id, revert_id, path, before_sha256,"
                    " created_at) VALUES (?, ?, ?, ?, ?)",
                    (session_id, revert_id, restore.path, before, now),
                )
                conn.execute(
                    "INSERT INTO file_change_results (change_seq, after_sha256, created_at)"
                    " VALUES (?, ?, ?)",
                    (int(cur.lastrowid or 0), restore.target_sha256, now),
                )
            conn.executemany(
                "INSERT INTO reverted_messages (message_id, session_id, revert_id)"
                " VALUES (?, ?, ?)",
                [(mid, session_id, revert_id) for mid in message_ids],
            )
