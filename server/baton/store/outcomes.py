"""How each of a session's turns ended, and after which message.

Live, a turn's end reaches the client as `turn_ended` (an error card, a "Stopped"
marker, the step-limit note); stored here, one row per turn and never changed, it
reaches a client that reopens the session through `baton/session/load`, in the place
it had. The compaction figures shown live come from the compactions table. Updates
shown live that are no message and no turn's end (a model request's retry, a
compaction that gained nothing) are kept the same way, as the update itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import TypeAdapter, ValidationError

from baton import protocol as p
from baton.ids import utc_now
from baton.store.db import Database

_SHOWN: TypeAdapter[p.ShownUpdateKind] = TypeAdapter(p.ShownUpdateKind)


@dataclass(frozen=True)
class CompactionFigures:
    trigger: p.Trigger
    tokens_before: int
    tokens_after: int
    score: p.CompactionScore | None = None


class TurnOutcomeLog:
    def __init__(self, db: Database) -> None:
        self.db = db

    def record(
        self, session_id: str, after_seq: int | None, stop_reason: p.StopReason, error: str | None
    ) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO turn_outcomes (session_id, after_seq, stop_reason, error, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, after_seq, stop_reason, error, utc_now()),
            )

    def outcomes(self, session_id: str) -> list[tuple[int | None, p.StopReason, str | None, str]]:
        """(after_seq, stop_reason, error, created_at) in the order the turns ended."""
        rows = self.db.conn.execute(
            "SELECT after_seq, stop_reason, error, created_at FROM turn_outcomes"
            " WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ).fetchall()
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def record_shown(
        self, session_id: str, after_seq: int | None, update: p.ShownUpdateKind
    ) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO shown_updates (session_id, after_seq, payload, created_at)"
                " VALUES (?, ?, ?, ?)",
                (session_id, after_seq, update.model_dump_json(by_alias=True), utc_now()),
            )

    def shown(self, session_id: str) -> list[tuple[int | None, p.ShownUpdateKind, str]]:
        """(after_seq, update, created_at) in the order they were shown; a row that no longer
        reads as an update (a damaged store) is left out."""
        rows = self.db.conn.execute(
            "SELECT after_seq, payload, created_at FROM shown_updates"
            " WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ).fetchall()
        out: list[tuple[int | None, p.ShownUpdateKind, str]] = []
        for after_seq, payload, created_at in rows:
            try:
                update = _SHOWN.validate_json(payload)
            except ValidationError:
                continue
            out.append((after_seq, update, created_at))
        return out

    def compaction_figures(self, session_id: str) -> dict[str, CompactionFigures]:
        """The committed compactions' trigger and token figures, by compaction id."""
        rows = self.db.conn.execute(
            "SELECT id, record FROM compactions WHERE session_id = ?", (session_id,)
        ).fetchall()
        figures: dict[str, CompactionFigures] = {}
        for compaction_id, raw in rows:
            try:
                record = json.loads(raw)
                figures[str(compaction_id)] = CompactionFigures(
                    trigger=record["trigger"],
                    tokens_before=int(record["tokensBefore"]),
                    tokens_after=int(record["tokensAfter"]),
                    score=p.CompactionScore.model_validate(record["score"])
                    if record.get("score")
                    else None,
                )
            except (ValueError, KeyError, TypeError, ValidationError):
                continue  # a damaged record: the marker shows without figures
        return figures
