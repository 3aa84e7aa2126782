"""Sessions, messages, parts and tool results: append-only rows, each write one transaction."""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from collections import OrderedDict
from collections.abc import Iterable
from functools import partial
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
from baton.store.offload import bring_back, held, offload

log = logging.getLogger(__name__)

# Outputs shorter than this stay in memory when their message is compacted: what an
# offloaded value costs to hold (its loader) would be most of what it saves.
OFFLOAD_MIN_CHARS = 512
# Offloaded payloads read back recently, kept for the next reader (recall of one output,
# a compaction's ledger reading the same results again): bounded, so memory stays flat.
RECENT_READS = 64
# The session's compaction that stands: its latest not undone (it sets the model's view).
# One query, shared with `CompactionStore.active`, so both agree on which one stands.
STANDING_COMPACTION = (
    "SELECT {columns} FROM compactions c"
    " LEFT JOIN compaction_undos u ON u.compaction_id = c.id"
    " WHERE c.session_id = ? AND u.compaction_id IS NULL"
    " ORDER BY c.created_at DESC, c.id DESC LIMIT 1"
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


# Strings up to this long are interned as a session's rows load (keys, kinds, paths,
# model names, commands): repeated in every message, they are held once.
_INTERNED_CHARS = 64


def _interned(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return {
        sys.intern(key): sys.intern(value)
        if isinstance(value, str) and len(value) <= _INTERNED_CHARS
        else value
        for key, value in pairs
    }


def _load_row_json(text: str) -> Any:
    """A message's stored JSON (its meta, a part, a result's facts), its keys and short
    strings shared with every other message's: the same values in about 40% less memory
    (a short day's busiest session loaded and traced: 514 -> 305 KiB)."""
    return json.loads(text, object_pairs_hook=_interned)


def _long_text(value: Any) -> bool:
    return isinstance(value, str) and len(value) >= OFFLOAD_MIN_CHARS


class SessionStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._recent: OrderedDict[tuple[str, str, Any], Any] = OrderedDict()

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
                meta=_load_row_json(row["meta"]),
            )
        # The payloads of messages before the latest compaction's cut are not read: they
        # are offloaded as they load (read back from here on access).
        cut = self.compacted_before(session_id) or 0
        for row in conn.execute(
            "SELECT p.message_id, p.type, p.data, p.native IS NOT NULL AS has_native,"
            " CASE WHEN m.seq < ? THEN NULL ELSE p.native END AS native"
            " FROM parts p JOIN messages m ON m.id = p.message_id"
            " WHERE m.session_id = ? ORDER BY p.seq",
            (cut, session_id),
        ):
            owner = messages.get(row["message_id"])
            if owner is None:
                continue  # committed by another process after the messages were read
            part = part_from_json(
                row["type"], _load_row_json(row["data"]), native_from_json(row["native"])
            )
            if row["has_native"] and row["native"] is None:
                offload(part, "native", partial(self._native, owner.id, len(owner.parts)))
            owner.parts.append(part)
        for row in conn.execute(
            "SELECT t.message_id, t.tool_call_id, t.status, t.facts, t.created_at,"
            " CASE WHEN m.seq < ? AND length(t.output) >= ? THEN NULL ELSE t.output END"
            " AS output FROM tool_results t JOIN messages m ON m.id = t.message_id"
            " WHERE t.session_id = ?",
            (cut, OFFLOAD_MIN_CHARS, session_id),
        ):
            owner = messages.get(row["message_id"])
            if owner is None:
                continue
            result = ToolResultRecord(
                tool_call_id=row["tool_call_id"],
                status=row["status"],
                output=row["output"] or "",
                facts=[Fact.from_json(f) for f in _load_row_json(row["facts"])],
                created_at=row["created_at"],
            )
            if row["output"] is None:
                offload(result, "output", partial(self._output, owner.id, result.tool_call_id))
            owner.results[row["tool_call_id"]] = result
        return list(messages.values())

    # ------------------------------------------------------------------ offloading

    def compacted_before(self, session_id: str) -> int | None:
        """The seq before which the session's messages are compacted (the latest
        compaction not undone keeps those from it on); None: every message is in view."""
        row = self.db.conn.execute(
            STANDING_COMPACTION.format(columns="c.first_kept_seq"), (session_id,)
        ).fetchone()
        return row["first_kept_seq"] if row is not None else None

    def settle(self, messages: Iterable[StoredMessage], first_kept_seq: int | None) -> None:
        """Offload the payloads of the messages before `first_kept_seq` (never sent to a
        model again while that view holds) and hold again those from it on (an undone
        compaction's messages are back in view). Every message is stored by now."""
        for message in messages:
            compacted = first_kept_seq is not None and message.seq < first_kept_seq
            for index, part in enumerate(message.parts):
                if not compacted:
                    bring_back(part, "native")
                elif isinstance(held(part, "native"), Native):
                    offload(part, "native", partial(self._native, message.id, index))
            for result in message.results.values():
                if not compacted:
                    bring_back(result, "output")
                elif _long_text(held(result, "output")):
                    call_id = result.tool_call_id
                    offload(result, "output", partial(self._output, message.id, call_id))

    def forget_reads(self) -> None:
        """Drop the recent read-backs (the store was replaced: `baton/store/repair`)."""
        self._recent.clear()

    def _output(self, message_id: str, call_id: str) -> str:
        def read() -> str:
            row = self.db.conn.execute(
                "SELECT output FROM tool_results WHERE message_id = ? AND tool_call_id = ?",
                (message_id, call_id),
            ).fetchone()
            if row is None:
                log.warning("output of %s in %s is gone from the store", call_id, message_id)
                return ""
            return str(row["output"])

        return cast(str, self._recently(("output", message_id, call_id), read))

    def _native(self, message_id: str, index: int) -> Native | None:
        def read() -> Native | None:
            row = self.db.conn.execute(
                "SELECT native FROM parts WHERE message_id = ? ORDER BY seq LIMIT 1 OFFSET ?",
                (message_id, index),
            ).fetchone()
            if row is None:
                log.warning("part %d of %s is gone from the store", index, message_id)
                return None
            return native_from_json(row["native"])

        return cast(Native | None, self._recently(("native", message_id, index), read))

    def _recently(self, key: tuple[str, str, Any], read: Any) -> Any:
        if key in self._recent:
            self._recent.move_to_end(key)
            return self._recent[key]
        value = read()
        self._recent[key] = value
        if len(self._recent) > RECENT_READS:
            self._recent.popitem(last=False)
        return value
