"""Messages sent while the agent works (issue 50, point 6), through the real server.

`baton/session/queue` holds what the person says during a turn and tells every client
(`queue` updates); a `steer` message reaches the model at the running turn's next step
boundary, an `after_turn` one as the next turn; stopping the turn keeps the queue for
the next turn; a message taken back never reaches the model.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, stall, text, tool_call


def _queues(baton: Any, sid: str) -> list[list[str]]:
    return [[q["text"] for q in u["queued"]] for u in baton.updates(sid, "queue")]


async def _stalled_turn(baton: Any, llm: FakeLLM, sid: str, prompt: str) -> asyncio.Task[Any]:
    """A turn whose first model answer (text, then a `read` call) is held mid-stream."""
    llm.add(
        text("Looking at the notes first. "),
        tool_call("read", {"path": "notes.txt"}),
        stall(30, after=1),
    )
    turn = asyncio.create_task(baton.prompt(sid, prompt))
    await llm.wait_for_requests_async(len(llm.model_requests) + 1)
    await asyncio.sleep(0.2)
    return turn


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_a_steering_message_reaches_the_model_at_the_next_step(
    start_baton: StartBaton, llm: FakeLLM, workspace: Any
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    baton = await start_baton(settings={"permissions": {"read": "allow"}})
    sid = await baton.new_session()
    turn = await _stalled_turn(baton, llm, sid, "what do the notes say?")
    queued = await baton.request(
        "baton/session/queue", {"sessionId": sid, "text": "Answer in French.", "delivery": "steer"}
    )
    assert [q["text"] for q in queued["queued"]] == ["Answer in French."]
    assert queued.get("started", False) is False
    llm.add(text("Les notes disent 42."))
    llm.release()
    result = await asyncio.wait_for(turn, 30)
    assert result["stopReason"] == "end_turn"
    # The second request (after the read's result) ends with the person's words.
    second = llm.model_requests[1]
    assert second.last_user_text() == "Answer in French."
    assert len(llm.model_requests) == 2  # steering is not a turn of its own
    # Every client saw it queued, then delivered (an empty queue), and as a user message.
    assert _queues(baton, sid) == [["Answer in French."], []]
    shown = [(u["text"], u.get("queued")) for u in baton.updates(sid, "user_message")]
    assert shown == [("Answer in French.", "steer")]
    # It is in the history as the person's message, after the read's result.
    messages = (await baton.load(sid))["messages"]
    texts = [(m["role"], m["parts"][0].get("text")) for m in messages if m["parts"]]
    assert ("user", "Answer in French.") in texts


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_after_the_turn_is_a_turn_of_its_own_and_stopping_keeps_the_queue(
    start_baton: StartBaton, llm: FakeLLM, workspace: Any
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    baton = await start_baton(settings={"permissions": {"read": "allow"}})
    sid = await baton.new_session()

    # After the turn: the queued message starts the next turn once this one ends.
    turn = await _stalled_turn(baton, llm, sid, "read the notes")
    await baton.request(
        "baton/session/queue",
        {"sessionId": sid, "text": "Then sum 2 and 3.", "delivery": "after_turn"},
    )
    llm.add(text("The notes say 42."))
    llm.add(text("5."))
    llm.release()
    assert (await asyncio.wait_for(turn, 30))["stopReason"] == "end_turn"
    await llm.wait_for_requests_async(3)
    assert llm.model_requests[1].last_user_text() != "Then sum 2 and 3."  # not steered
    assert llm.model_requests[2].last_user_text() == "Then sum 2 and 3."
    for _ in range(100):
        if len(baton.updates(sid, "turn_ended")) >= 2:
            break
        await asyncio.sleep(0.05)
    assert [u["stopReason"] for u in baton.updates(sid, "turn_ended")] == ["end_turn", "end_turn"]

    # Stopping the turn keeps the queue; taking one back keeps it from the model.
    turn = await _stalled_turn(baton, llm, sid, "read them again")
    kept = await baton.request(
        "baton/session/queue", {"sessionId": sid, "text": "Keep it short.", "delivery": "steer"}
    )
    dropped = await baton.request(
        "baton/session/queue", {"sessionId": sid, "text": "Never mind this.", "delivery": "steer"}
    )
    left = await baton.request(
        "baton/session/unqueue", {"sessionId": sid, "id": dropped["queued"][-1]["id"]}
    )
    assert [q["text"] for q in left["queued"]] == ["Keep it short."]
    baton.notify("baton/session/cancel", {"sessionId": sid})
    llm.release()
    assert (await asyncio.wait_for(turn, 30))["stopReason"] == "cancelled"
    await asyncio.sleep(0.3)
    assert _queues(baton, sid)[-1] == ["Keep it short."]  # still waiting
    before = len(llm.model_requests)
    llm.add(text("Short: 42."))
    assert (await baton.prompt(sid, "what was the answer?"))["stopReason"] == "end_turn"
    request = llm.model_requests[before]
    assert request.texts("user")[-2:] == ["what was the answer?", "Keep it short."]
    assert not any("Never mind this." in t for r in llm.model_requests for t in r.texts("user"))

    with pytest.raises(JsonRpcException) as gone:
        await baton.request(
            "baton/session/unqueue", {"sessionId": sid, "id": kept["queued"][0]["id"]}
        )
    assert gone.value.code == -32602


@pytest.mark.asyncio
@pytest.mark.timeout(60)
async def test_a_message_to_an_idle_session_starts_its_turn(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton()
    sid = await baton.new_session()
    llm.add(text("Hello."))
    started = await baton.request("baton/session/queue", {"sessionId": sid, "text": "hi"})
    assert started == {"queued": [], "started": True}
    await llm.wait_for_requests_async(1)
    assert llm.model_requests[0].last_user_text() == "hi"
    with pytest.raises(JsonRpcException) as empty:
        await baton.request("baton/session/queue", {"sessionId": sid, "text": ""})
    assert empty.value.code == -32602
