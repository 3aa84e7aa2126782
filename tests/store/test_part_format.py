"""Stored parts keep the JSON they always had: rows written before parts were types load,
and each part writes back exactly the JSON it was read from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from baton.store.db import Database
from baton.store.model import (
    StoredAttachment,
    StoredCompactionMarker,
    StoredOpaque,
    StoredPreCompact,
    StoredReasoning,
    StoredText,
    StoredToolCall,
)
from baton.store.sessions import SessionStore

# (type, data) as the store held them before the part types existed.
ROWS: list[tuple[str, dict[str, Any]]] = [
    ("text", {"text": "hello"}),
    ("reasoning", {"text": "thinking"}),
    (
        "tool_call",
        {"toolCallId": "call_1", "name": "read", "input": {"path": "a.py"}, "arguments": "{}"},
    ),
    ("compaction", {"compactionId": "cmp_1"}),
    (
        "pre_compact",
        {
            "type": "pre_compact",
            "hook": "archive",
            "prompt": "save notes",
            "trigger": "manual",
            "status": "completed",
        },
    ),
    (
        "attachment",
        {
            "uri": "file:///w/a.py",
            "path": "a.py",
            "source": "editor",
            "startLine": 2,
            "endLine": 4,
            "truncated": True,
            "text": "x = 1",
        },
    ),
    ("attachment", {"uri": "untitled:1", "path": "untitled:1", "source": "disk", "text": "y"}),
    ("opaque", {}),
    ("opaque", {"serverCompaction": True}),
]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(Database(tmp_path / "baton.db"))


def _insert(store: SessionStore, rows: list[tuple[str, dict[str, Any]]]) -> str:
    row = store.create_session("old", "build")
    message = store.append_message(row.id, "assistant", "step", [StoredText("seed")])
    with store.db.transaction() as conn:
        conn.execute("DELETE FROM parts WHERE message_id = ?", (message.id,))
        conn.executemany(
            "INSERT INTO parts (message_id, type, data, native) VALUES (?, ?, ?, NULL)",
            [(message.id, kind, json.dumps(data)) for kind, data in rows],
        )
    return row.id


def test_old_rows_load_as_typed_parts_and_write_back_the_same_json(store: SessionStore) -> None:
    sid = _insert(store, ROWS)
    [message] = store.load_messages(sid)
    types = [type(part) for part in message.parts]
    assert types == [
        StoredText,
        StoredReasoning,
        StoredToolCall,
        StoredCompactionMarker,
        StoredPreCompact,
        StoredAttachment,
        StoredAttachment,
        StoredOpaque,
        StoredOpaque,
    ]
    assert [(part.type, part.to_json()) for part in message.parts] == ROWS
    call = message.tool_calls()[0]
    assert (call.tool_call_id, call.name, call.input) == ("call_1", "read", {"path": "a.py"})
    assert message.parts[-1] == StoredOpaque(server_compaction=True)


def test_a_tool_call_stored_without_its_raw_arguments_is_replayed_from_its_input(
    store: SessionStore,
) -> None:
    sid = _insert(store, [("tool_call", {"toolCallId": "c", "name": "glob", "input": {"p": 1}})])
    [message] = store.load_messages(sid)
    [call] = message.tool_calls()
    assert call.arguments == "" and call.input == {"p": 1}
    wire = message.to_wire(compacted=False).parts[0]
    assert wire.wire()["input"] == {"p": 1}
