"""Sessions, messages, parts and tool results: append-only rows, each write one transaction."""

from __future__ import annotations

import json
import sqlite3
from typing import Any, cast

from baton.ids import new_id, utc_now
from baton.labels import label
from baton.providers.base import Native, ProviderIdentity
from baton.store.db import Database
from baton.store.model import (
    Fact,
    MessageKind,
    SessionRow,
    StoredMessage,
    StoredPart,
    ToolResultRecord,
    part_from_json,
)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def native_to_json(native: Native | None) -> str | None:
    if native is None:
        return None
    return _dump({"identity": native.identity.to_json(), "item": native.item})


def native_from_json(text: str | None) -> Native | None:
    if not text:
        return None
    data = json.loads(text)
    return Native(identity=ProviderIdentity.from_json(data["identity"]), item=data["item"])


def _session(row: sqlite3.Row) -> SessionRow:
    return SessionRow(
        id=row["id"],
        title=row["title"],
        mode=row["mode"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        provider=row["provider"],
        model=row["model"],
        parent_id=row["parent_id"],
        agent=row["agent"],
        task=json.loads(row["task"]) if row["task"] else None,
    )


class SessionStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # ------------------------------------------------------------------ sessions

    def create_session(self, title: str, mode: str) -> SessionRow:
        now = utc_now()
        row = SessionRow(
            id=new_id("ses"), title=title, mode=cast(Any, mode), created_at=now, updated_at=now
        )
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (id, title, mode, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (row.id, row.title, row.mode, row.created_at, row.updated_at),
            )
        return row

    def create_child(
        self, parent_id: str, agent: str, task: dict[str, Any], title: str, mode: str
    ) -> SessionRow:
        """A `task` child of `parent_id` (baton.delegation): a session of its own. Its title
        is the model's or a plan's words: a label (one line, escaped, at most 500)."""
        now = utc_now()
        row = SessionRow(
            id=new_id("ses"),
            title=label(title),
            mode=cast(Any, mode),
            created_at=now,
            updated_at=now,
            parent_id=parent_id,
            agent=agent,
            task=task,
        )
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (id, title, mode, created_at, updated_at, parent_id,"
                " agent, task) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.id,
                    row.title,
                    row.mode,
                    row.created_at,
                    row.updated_at,
                    parent_id,
                    agent,
                    _dump(task),
                ),
            )
        return row

    def parent_of(self, session_id: str) -> str | None:
        row = self.db.conn.execute(
            "SELECT parent_id FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return row["parent_id"] if row is not None else None

    def children_of(self, session_id: str) -> list[SessionRow]:
        rows = self.db.conn.execute(
            "SELECT * FROM sessions WHERE parent_id = ? ORDER BY created_at, id", (session_id,)
        ).fetchall()
        return [_session(r) for r in rows]

    def get_session(self, session_id: str) -> SessionRow | None:
        row = self.db.conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return _session(row) if row else None

    def signature(self, session_id: str) -> tuple[Any, ...] | None:
        """What changes whenever anything of the session in the store changes (its row,
        messages, tool results, compactions and their undos, reverts, plan); None when
        the session does not exist. Cheap: every part is read through an index."""
        row = self.db.conn.execute(
            "SELECT s.title, s.mode, s.provider, s.model, s.updated_at,"
            " (SELECT MAX(seq) FROM messages WHERE session_id = s.id),"
            " (SELECT COUNT(*) FROM tool_results WHERE session_id = s.id),"
            " (SELECT COUNT(*) FROM compactions WHERE session_id = s.id),"
            " (SELECT COUNT(*) FROM compaction_undos u JOIN compactions c"
            "   ON c.id = u.compaction_id WHERE c.session_id = s.id),"
            " (SELECT COUNT(*) FROM reverted_messages WHERE session_id = s.id),"
            " (SELECT MAX(version) FROM plan_versions WHERE session_id = s.id),"
            " (SELECT status || ' ' || updated_at FROM plans WHERE session_id = s.id)"
            " FROM sessions s WHERE s.id = ?",
            (session_id,),
        ).fetchone()
        return tuple(row) if row is not None else None

    def list_sessions(self) -> list[SessionRow]:
        rows = self.db.conn.execute(
            "SELECT * FROM sessions ORDER BY updated_at DESC, id DESC"
        ).fetchall()
        return [_session(r) for r in rows]

    def update_session(self, session_id: str, **fields: Any) -> None:
        allowed = {"title", "mode", "provider", "model"}
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"unknown session fields: {sorted(unknown)}")
        sets = [f"{name} = ?" for name in fields] + ["updated_at = ?"]
        values = [*fields.values(), utc_now(), session_id]
        with self.db.transaction() as conn:
            conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", values)

    # ------------------------------------------------------------------ messages

    def append_message(
        self,
        session_id: str,
        role: str,
        kind: MessageKind,
        parts: list[StoredPart],
        *,
        incomplete: bool = False,
        meta: dict[str, Any] | None = None,
        results: list[ToolResultRecord] | None = None,
        message_id: str | None = None,
    ) -> StoredMessage:
        """Store a whole message (and optionally results of its tool calls) atomically."""
        message = StoredMessage(
            seq=0,
            id=message_id or new_id("msg"),
            session_id=session_id,
            role=cast(Any, role),
            kind=kind,
            created_at=utc_now(),
            parts=parts,
            incomplete=incomplete,
            meta=meta or {},
        )
        with self.db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO messages (id, session_id, role, kind, created_at, incomplete, meta)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    message.id,
                    session_id,
                    role,
                    kind,
                    message.created_at,
                    int(incomplete),
                    _dump(message.meta),
                ),
            )
            message.seq = int(cur.lastrowid or 0)
            conn.executemany(
                "INSERT INTO parts (message_id, type, data, native) VALUES (?, ?, ?, ?)",
                [
                    (message.id, part.type, _dump(part.to_json()), native_to_json(part.native))
                    for part in parts
                ],
            )
            for result in results or []:
                self._insert_result(conn, message, result)
            conn.execute(
                "UPDATE sessions SET updated_at = ? WHERE id = ?", (message.created_at, session_id)
            )
        for result in results or []:
            message.results[result.tool_call_id] = result
        return message

    def append_tool_result(self, message: StoredMessage, result: ToolResultRecord) -> None:
        with self.db.transaction() as conn:
            self._insert_result(conn, message, result)
        message.results[result.tool_call_id] = result

    def _insert_result(
        self, conn: sqlite3.Connection, message: StoredMessage, result: ToolResultRecord
    ) -> None:
        result.created_at = result.created_at or utc_now()
        conn.execute(
            "INSERT INTO tool_results"
            " (tool_call_id, message_id, session_id, status, output, facts, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                result.tool_call_id,
                message.id,
                message.session_id,
                result.status,
                result.output,
                _dump([f.to_json() for f in result.facts]),
                result.created_at,
            ),
        )

    def load_messages(self, session_id: str) -> list[StoredMessage]:
        conn = self.db.conn
        messages: dict[str, StoredMessage] = {}
        for row in conn.execute(
            "SELECT * FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        ):
            messages[row["id"]] = StoredMessage(
                seq=row["seq"],
                id=row["id"],
                session_id=session_id,
                role=row["role"],
                kind=row["kind"],
                created_at=row["created_at"],
                parts=[],
                incomplete=bool(row["incomplete"]),
                meta=json.loads(row["meta"]),
            )
        for row in conn.execute(
            "SELECT p.message_id, p.type, p.data, p.native FROM parts p"
            " JOIN messages m ON m.id = p.message_id WHERE m.session_id = ? ORDER BY p.seq",
            (session_id,),
        ):
            owner = messages.get(row["message_id"])
            if owner is None:
                continue  # committed by another process after the messages were read
            owner.parts.append(
                part_from_json(
                    row["type"], json.loads(row["data"]), native_from_json(row["native"])
                )
            )
        for row in conn.execute("SELECT * FROM tool_results WHERE session_id = ?", (session_id,)):
            owner = messages.get(row["message_id"])
            if owner is None:
                continue
            owner.results[row["tool_call_id"]] = ToolResultRecord(
                tool_call_id=row["tool_call_id"],
                status=row["status"],
                output=row["output"],
                facts=[Fact.from_json(f) for f in json.loads(row["facts"])],
                created_at=row["created_at"],
            )
        return list(messages.values())
