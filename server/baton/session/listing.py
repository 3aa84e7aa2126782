"""The rows of `baton/session/list`: each session with the start of the person's first
prompt and the tokens its model requests used, two queries for the whole list."""

from __future__ import annotations

import json

from baton import protocol as p
from baton.store.db import Database
from baton.store.model import SessionRow

# Enough to recognise a session by; the list is a picker, not a transcript.
PREVIEW_CHARS = 160


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1].rstrip() + "…"


def session_rows(db: Database, rows: list[SessionRow]) -> list[p.SessionInfo]:
    first: dict[str, str] = {}
    for session_id, data in db.conn.execute(
        "SELECT m.session_id, p.data FROM messages m JOIN parts p ON p.message_id = m.id"
        " WHERE m.role = 'user' AND m.kind = 'prompt' AND p.type = 'text'"
        " ORDER BY m.seq, p.seq"
    ).fetchall():
        if session_id in first:
            continue
        try:
            text = json.loads(data).get("text")
        except (ValueError, AttributeError):
            continue
        if isinstance(text, str) and text.strip():
            first[session_id] = _preview(text)
    usage = {
        row[0]: p.SessionUsage(
            requests=int(row[1]),
            input_tokens=int(row[2]),
            cached_tokens=int(row[3]),
            output_tokens=int(row[4]),
        )
        for row in db.conn.execute(
            "SELECT session_id, COUNT(*), SUM(input_tokens), SUM(cached_tokens),"
            " SUM(output_tokens) FROM model_requests GROUP BY session_id"
        ).fetchall()
    }
    out = []
    for row in rows:
        info = row.to_wire()
        info.first_prompt = first.get(row.id)
        info.usage = usage.get(row.id, p.SessionUsage())
        out.append(info)
    return out
