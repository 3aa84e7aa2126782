"""A reopened session shows what it showed live: how each turn ended (the error card,
"Stopped", the step limit) after the message it followed, and each compaction's figures.
Through the real server, restarted on the same store as after Reload Window."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, error, rate_limit, stall, text, tool_call

SUMMARY = "\n\n".join(f"## {name}\n- {name.lower()}" for name in SECTIONS)


def _live_ends(baton: Any, sid: str) -> list[dict[str, Any]]:
    return [
        {"stopReason": u["stopReason"], "error": u.get("error")}
        for u in baton.updates(sid, "turn_ended")
    ]


@pytest.mark.asyncio
async def test_a_reopened_session_shows_each_turn_end_and_compaction_where_it_was(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\n" * 300, encoding="utf-8")
    baton = await start_baton(
        settings={"maxSteps": 1, "compaction": {"auto": False, "strategy": "native"}}
    )
    sid = await baton.new_session()

    llm.add(text("First answer."))
    assert (await baton.prompt(sid, "one"))["stopReason"] == "end_turn"
    llm.add(tool_call("read", {"path": "notes.txt"}))
    assert (await baton.prompt(sid, "two"))["stopReason"] == "max_steps"
    llm.add(text("slow ", "answer ", "that never ends"), stall(30, after=8))
    prompt = asyncio.ensure_future(baton.prompt(sid, "three"))
    await baton.wait_update("agent_message_chunk", sid)
    baton.notify("baton/session/cancel", {"sessionId": sid})
    assert (await asyncio.wait_for(prompt, 10))["stopReason"] == "cancelled"
    llm.add(error(400, {"error": {"message": "bad request body", "type": "invalid_request"}}))
    failed = await baton.error("baton/session/prompt", {"sessionId": sid, "text": "four"})
    assert "bad request body" in str(failed)
    llm.add(text(SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"], record
    live = _live_ends(baton, sid)
    assert [e["stopReason"] for e in live] == ["end_turn", "max_steps", "cancelled", "error"]

    before = await baton.load(sid)
    # As after Reload Window: a new server process on the same store.
    again = await start_baton(
        settings={"maxSteps": 1, "compaction": {"auto": False, "strategy": "native"}}
    )
    loaded = await again.load(sid)
    assert loaded["turns"] == before["turns"]
    turns = loaded["turns"]
    assert [{"stopReason": t["stopReason"], "error": t.get("error")} for t in turns] == live

    # Each end sits after the last message the turn left: the answer, the tool result's
    # step, the partial answer, the failed prompt.
    by_id = {m["id"]: m for m in loaded["messages"]}
    order = [m["id"] for m in loaded["messages"]]
    anchors = [t["afterMessageId"] for t in turns]
    assert all(a in by_id for a in anchors), anchors
    assert anchors == sorted(anchors, key=order.index)
    assert by_id[anchors[0]]["parts"][0]["text"] == "First answer."
    prompts = [m["id"] for m in loaded["messages"] if m["role"] == "user"]
    assert order.index(anchors[3]) == order.index(prompts[3]), "the error follows 'four'"
    assert any(p["type"] == "text" and "slow" in p["text"] for p in by_id[anchors[2]]["parts"])

    [marker] = [
        part for m in loaded["messages"] for part in m["parts"] if part["type"] == "compaction"
    ]
    assert marker["compactionId"] == record["compactionId"]
    assert (marker["trigger"], marker["tokensBefore"], marker["tokensAfter"]) == (
        "manual",
        record["tokensBefore"],
        record["tokensAfter"],
    )


@pytest.mark.asyncio
async def test_a_reopened_session_shows_its_retries_and_a_compaction_that_gained_nothing(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    """Issue 50, point 9: the 429 retry lines and a no-op compaction ("487 → 487") are
    shown live but are no messages; a reopened session shows them where they were."""
    settings = {"maxRetries": 1, "compaction": {"auto": False, "strategy": "native"}}
    baton = await start_baton(settings=settings)
    sid = await baton.new_session()
    llm.add(rate_limit(retry_after=0.1))
    llm.add(text("After one retry."))
    assert (await baton.prompt(sid, "one"))["stopReason"] == "end_turn"
    llm.add(rate_limit(retry_after=0.1))
    llm.add(rate_limit(retry_after=0.1))
    gave_up = await baton.error("baton/session/prompt", {"sessionId": sid, "text": "two"})
    assert "429" in str(gave_up)
    noop = await baton.request("baton/session/compact", {"sessionId": sid})
    assert noop["committed"] is False
    live = [u for u in baton.updates(sid) if u["kind"] in ("model_retry", "compaction_finished")]
    assert [u["kind"] for u in live] == ["model_retry", "model_retry", "compaction_finished"]

    # As after Reload Window: a new server process on the same store.
    again = await start_baton(settings=settings)
    loaded = await again.load(sid)
    notices = loaded["notices"]
    assert [n["update"] for n in notices] == live
    prompts = [m["id"] for m in loaded["messages"] if m["role"] == "user"]
    # Each after the message that was the session's last then: the retries after their
    # prompt (before the answer, or the error card), the compaction at the end.
    assert [n["afterMessageId"] for n in notices] == [
        prompts[0],
        prompts[1],
        loaded["messages"][-1]["id"],
    ]
    record = notices[2]["update"]["compaction"]
    assert record["tokensBefore"] == record["tokensAfter"]
    assert record["notes"][0].startswith("nothing to compact")
    assert loaded["turns"][-1]["afterMessageId"] == prompts[1]
    assert notices[1]["createdAt"] <= loaded["turns"][-1]["createdAt"]
