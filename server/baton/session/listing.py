"""The rows of `baton/session/list`: each session with the start of the person's first
prompt (one indexed query a session) and the tokens its model requests used (one query
for the whole list); what a damaged page hides is left out, the rest still listed."""

from __future__ import annotations

import json
import sqlite3

from baton import protocol as p
from baton.errors import StorageError
from baton.store.db import Database
from baton.store.model import SessionRow

# Enough to recognise a session by; the list is a picker, not a transcript.
PREVIEW_CHARS = 160


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1].rstrip() + "…"


def session_rows(db: Database, rows: list[SessionRow]) -> list[p.SessionInfo]:
    usage = _usage(db)
    out = []
    for row in rows:
        info = row.to_wire()
        info.first_prompt = _first_prompt(db, row.id)
        info.usage = usage.get(row.id, p.SessionUsage())
        out.append(info)
    return out


def _first_prompt(db: Database, session_id: str) -> str | None:
    """The start of the session's first prompt; None when there is none, or when the page
    holding it cannot be read (a damaged store still lists every session it can)."""
    try:
        found = db.conn.execute(
            "SELECT p.data FROM messages m JOIN parts p ON p.message_id = m.id"
            " WHERE m.session_id = ? AND m.role = 'user' AND m.kind = 'prompt'"
            " AND p.type = 'text' ORDER BY m.seq, p.seq LIMIT 1",
            (session_id,),
        ).fetchone()
    except (sqlite3.DatabaseError, StorageError):
        return None
    if found is None:
        return None
    try:
        text = json.loads(found[0]).get("text")
    except (ValueError, AttributeError):
        return None
    return _preview(text) if isinstance(text, str) and text.strip() else None


def _usage(db: Database) -> dict[str, p.SessionUsage]:
    try:
        found = db.conn.execute(
            "SELECT session_id, COUNT(*), SUM(input_tokens), SUM(cached_tokens),"
            " SUM(output_tokens) FROM model_requests GROUP BY session_id"
        ).fetchall()
    except (sqlite3.DatabaseError, StorageError):
        return {}
    return {
        row[0]: p.SessionUsage(
            requests=int(row[1]),
            input_tokens=int(row[2]),
            cached_tokens=int(row[3]),
            output_tokens=int(row[4]),
        )
        for row in found
    }
