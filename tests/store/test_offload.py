"""The payloads of messages before the latest compaction's cut leave memory (a tool result's
output, a part's provider-native item) and read back whole from the store; an undo holds
them again. What a client sees of them through the real server:
tests/e2e/test_compacted_past.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.providers.base import Native, ProviderIdentity, Route
from baton.store.db import Database
from baton.store.model import StoredMessage, StoredText, StoredToolCall, ToolResultRecord
from baton.store.offload import is_offloaded
from baton.store.sessions import OFFLOAD_MIN_CHARS, RECENT_READS, SessionStore

IDENTITY = ProviderIdentity("openai", "gpt-test", Route("http://127.0.0.1:1/v1", "none"))
LONG = "".join(f"line {i}\n" for i in range(OFFLOAD_MIN_CHARS))


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(Database(tmp_path / "baton.db"))


def _step(store: SessionStore, sid: str, call_id: str, output: str) -> StoredMessage:
    native = Native(IDENTITY, {"type": "function_call", "call_id": call_id, "pad": "x" * 900})
    return store.append_message(
        sid,
        "assistant",
        "step",
        [
            StoredText("reading", Native(IDENTITY, {"type": "message"})),
            StoredToolCall(call_id, "read", {"path": "a.txt"}, "{}", native),
        ],
        results=[ToolResultRecord(call_id, "completed", output)],
    )


def _compact(store: SessionStore, sid: str, first_kept_seq: int) -> str:
    with store.db.transaction() as conn:
        conn.execute(
            "INSERT INTO compactions (id, session_id, created_at, first_kept_seq, record, view)"
            " VALUES ('cmp_1', ?, '2026-12-07T00:00:00Z', ?, '{}', '{}')",
            (sid, first_kept_seq),
        )
    return "cmp_1"


def _snapshot(messages: list[StoredMessage]) -> list[object]:
    return [(m.to_wire(compacted=False), [p.native for p in m.parts]) for m in messages]


def test_compacted_payloads_leave_memory_and_read_back_whole(store: SessionStore) -> None:
    sid = store.create_session("day", "build").id
    old = _step(store, sid, "call_old", LONG)
    short = _step(store, sid, "call_short", "ok")
    kept = _step(store, sid, "call_kept", LONG + "kept")
    messages = [old, short, kept]
    whole = _snapshot(messages)
    _compact(store, sid, kept.seq)

    store.settle(messages, kept.seq)
    assert is_offloaded(old.results["call_old"], "output")
    assert all(is_offloaded(part, "native") for part in old.parts + short.parts)
    # Too short to be worth a loader: stays.
    assert not is_offloaded(short.results["call_short"], "output")
    assert not any(is_offloaded(part, "native") for part in kept.parts)
    assert not is_offloaded(kept.results["call_kept"], "output")
    assert _snapshot(messages) == whole
    # Read back, not held again: reading does not grow memory.
    assert is_offloaded(old.results["call_old"], "output")

    # A new process's load leaves them in the store from the start.
    loaded = store.load_messages(sid)
    assert is_offloaded(loaded[0].results["call_old"], "output")
    assert all(is_offloaded(part, "native") for part in loaded[0].parts)
    assert not any(is_offloaded(part, "native") for part in loaded[2].parts)
    assert _snapshot(loaded) == whole

    # Undone, the compaction's messages are held whole again.
    with store.db.transaction() as conn:
        conn.execute("INSERT INTO compaction_undos VALUES ('cmp_1', '2026-12-07T00:00:01Z')")
    assert store.compacted_before(sid) is None
    store.settle(loaded, None)
    assert not is_offloaded(loaded[0].results["call_old"], "output")
    assert not any(is_offloaded(part, "native") for part in loaded[0].parts)
    assert _snapshot(loaded) == whole
    reloaded = store.load_messages(sid)
    assert not is_offloaded(reloaded[0].results["call_old"], "output")
    assert _snapshot(reloaded) == whole


def test_read_backs_are_cached_within_a_bound(store: SessionStore) -> None:
    sid = store.create_session("day", "build").id
    messages = [_step(store, sid, f"call_{i}", LONG + str(i)) for i in range(RECENT_READS * 2)]
    last = store.append_message(sid, "user", "prompt", [StoredText("now")])
    store.settle([*messages, last], last.seq)
    for i, message in enumerate(messages):
        assert message.results[f"call_{i}"].output == LONG + str(i)
        assert message.parts[1].native is not None
    assert len(store._recent) == RECENT_READS
    # A repaired store is read afresh.
    store.forget_reads()
    assert not store._recent
    assert messages[0].results["call_0"].output == LONG + "0"


def test_a_loaded_history_holds_its_repeated_keys_and_short_strings_once(
    store: SessionStore,
) -> None:
    sid = store.create_session("day", "build").id
    meta = {"identity": IDENTITY.to_json(), "usage": {"input": 10, "output": 2}}
    for n in range(2):
        store.append_message(
            sid,
            "assistant",
            "step",
            [StoredToolCall(f"c{n}", "read", {"path": "src/app.py"}, "{}")],
            results=[ToolResultRecord(f"c{n}", "completed", "ok")],
            meta=meta,
        )
    first, second = store.load_messages(sid)
    assert first.meta == second.meta == meta  # the same values as stored
    call_one, call_two = first.tool_calls()[0], second.tool_calls()[0]
    assert call_one.input == call_two.input == {"path": "src/app.py"}
    # Held once across messages: keys, a model name, a path.
    key_one = next(k for k in first.meta if k == "identity")
    key_two = next(k for k in second.meta if k == "identity")
    assert key_one is key_two
    assert first.meta["identity"]["model"] is second.meta["identity"]["model"]
    assert call_one.input["path"] is call_two.input["path"]
