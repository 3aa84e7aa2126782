"""The model requests a session made, with the tokens the provider reported for each.

One row per request, inserted when its answer's usage arrives and never
changed: how many input tokens, how many of those the provider's prompt cache
served (OpenAI's `cached_tokens`, llama.cpp's `cache_n`), how many output
tokens. `baton/session/context` reports the session's cache hit rate from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from baton.ids import utc_now
from baton.providers.base import ProviderIdentity, Usage
from baton.store.db import Database

Purpose = Literal["turn", "pre_compact", "summary", "compact"]


@dataclass
class RequestTotals:
    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0

    @property
    def cache_hit_rate(self) -> float | None:
        """The part of the input the provider's cache served; None before any input."""
        return self.cached_tokens / self.input_tokens if self.input_tokens else None


class RequestLog:
    def __init__(self, db: Database) -> None:
        self.db = db

    def record(
        self,
        session_id: str,
        purpose: Purpose,
        usage: Usage,
        identity: ProviderIdentity | None = None,
        message_id: str | None = None,
    ) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO model_requests (session_id, message_id, purpose, provider, model,"
                " input_tokens, cached_tokens, output_tokens, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    message_id,
                    purpose,
                    identity.provider if identity else None,
                    identity.model if identity else None,
                    usage.input_tokens,
                    min(usage.cached_tokens, usage.input_tokens),
                    usage.output_tokens,
                    utc_now(),
                ),
            )

    def totals(self, session_id: str) -> RequestTotals:
        row = self.db.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(cached_tokens), 0),"
            " COALESCE(SUM(output_tokens), 0) FROM model_requests WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return RequestTotals(int(row[0]), int(row[1]), int(row[2]), int(row[3]))
