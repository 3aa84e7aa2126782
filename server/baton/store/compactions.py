"""Compaction records and the views they set; written in the same transaction as the
history marker, so a crash leaves either the old view or the new one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from baton import protocol as p
from baton.ids import utc_now
from baton.store.db import Database
from baton.store.model import StoredMessage, StoredPart, StoredText
from baton.store.sessions import STANDING_COMPACTION, SessionStore


@dataclass
class StoredCompaction:
    record: p.CompactionRecord
    first_kept_seq: int | None
    view: dict[str, Any]
    undone: bool


class CompactionStore:
    def __init__(self, db: Database, sessions: SessionStore) -> None:
        self.db = db
        self.sessions = sessions

    def commit(
        self,
        record: p.CompactionRecord,
        *,
        first_kept_seq: int | None,
        view: dict[str, Any],
        marker_parts: list[StoredPart],
        continue_text: str | None,
    ) -> tuple[StoredMessage, StoredMessage | None]:
        """Write the record, its view, the history marker and (maybe) a continue message."""
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO compactions (id, session_id, created_at, first_kept_seq, record, view)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    record.compaction_id,
                    record.session_id,
                    record.created_at,
                    first_kept_seq,
                    json.dumps(record.wire(), ensure_ascii=False),
                    json.dumps(view, ensure_ascii=False),
                ),
            )
            marker = self.sessions.append_message(
                record.session_id, "system", "compaction", marker_parts
            )
            follow = None
            if continue_text:
                follow = self.sessions.append_message(
                    record.session_id,
                    "user",
                    "continue",
                    [StoredText(continue_text)],
                )
        return marker, follow

    def all(self, session_id: str) -> list[StoredCompaction]:
        rows = self.db.conn.execute(
            "SELECT c.*, u.created_at AS undone_at FROM compactions c"
            " LEFT JOIN compaction_undos u ON u.compaction_id = c.id"
            " WHERE c.session_id = ? ORDER BY c.created_at, c.id",
            (session_id,),
        ).fetchall()
        out = []
        for row in rows:
            record = p.CompactionRecord.model_validate(json.loads(row["record"]))
            record.undone = row["undone_at"] is not None
            out.append(
                StoredCompaction(
                    record=record,
                    first_kept_seq=row["first_kept_seq"],
                    view=json.loads(row["view"]),
                    undone=record.undone,
                )
            )
        return out

    def active(self, session_id: str) -> StoredCompaction | None:
        """The latest compaction that has not been undone: it sets the model's view (one
        row read: each compaction asks, and a day's session has hundreds of records)."""
        row = self.db.conn.execute(
            STANDING_COMPACTION.format(columns="c.*"), (session_id,)
        ).fetchone()
        if row is None:
            return None
        record = p.CompactionRecord.model_validate(json.loads(row["record"]))
        record.undone = False
        return StoredCompaction(
            record=record,
            first_kept_seq=row["first_kept_seq"],
            view=json.loads(row["view"]),
            undone=False,
        )

    def undo(self, compaction_ids: list[str]) -> None:
        now = utc_now()
        with self.db.transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO compaction_undos (compaction_id, created_at) VALUES (?, ?)",
                [(cid, now) for cid in compaction_ids],
            )
