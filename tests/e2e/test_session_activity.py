"""One owner for a session's activity, through the real server: work that is not a turn
(a step-by-step build) is admitted like a turn, so a compaction asked during it is run
and answered while the session is still that work's, never left for a later turn."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.fake_llm import FakeLLM, stall, text, tool_call
from tests.harness import BatonClient

PLAN = """# Two notes

- [ ] Write one.txt
- [ ] Write two.txt
"""

NATIVE = {"compaction": {"strategy": "native"}}


async def approved_plan(baton: BatonClient, llm: FakeLLM) -> str:
    sid = await baton.new_session(mode="plan", title="Notes")
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Planned."), tool_call("plan_exit", {}))
    await baton.prompt(sid, "Write two notes.")
    return sid


async def build_ended(baton: BatonClient, sid: str) -> dict[str, Any]:
    """The step build's end (the planning turn ended first)."""
    for _ in range(400):
        ends = baton.updates(sid, "turn_ended")
        if len(ends) >= 2:
            return ends[-1]
        await asyncio.sleep(0.05)
    raise AssertionError("the step build did not end")


@pytest.mark.asyncio
async def test_a_compaction_asked_during_a_step_build_is_answered_between_steps(
    start_baton: Any, llm: FakeLLM
) -> None:
    baton = await start_baton(settings=NATIVE)
    sid = await approved_plan(baton, llm)
    before = len(llm.model_requests)
    # The first step's child hangs until released: the build is running.
    llm.add(text("Wrote one."), stall(30, after=1))
    llm.add(text("Wrote two."))
    await baton.request("baton/plan/approve", {"sessionId": sid, "build": "steps"})
    await llm.wait_for_requests_async(before + 1)

    compact = asyncio.create_task(
        baton.request("baton/session/compact", {"sessionId": sid, "instructions": "keep it"})
    )
    await asyncio.sleep(0.3)
    assert not compact.done()  # the build's work, not the compaction's, holds the session
    llm.release()

    record = await asyncio.wait_for(compact, 20)
    assert record["trigger"] == "manual"
    end = await build_ended(baton, sid)
    assert end["stopReason"] == "end_turn"
    # Between the two steps: after the first child ended, before the second started.
    steps = [u for u in baton.updates(sid, "child")]
    order = [
        ("child", u["step"]["index"], u["status"]) if u["kind"] == "child" else (u["kind"],)
        for u in baton.updates(sid)
        if u["kind"] in ("child", "compaction_started")
    ]
    assert order.index(("compaction_started",)) > order.index(("child", 1, "done"))
    assert order.index(("compaction_started",)) < order.index(("child", 2, "running"))
    assert [u["status"] for u in steps if u["step"]["index"] == 2][-1] == "done"

    # Nothing is left to run at the parent's next turn.
    llm.add(text("All done."))
    compactions = len(baton.updates(sid, "compaction_started"))
    await baton.prompt(sid, "anything left?")
    assert len(baton.updates(sid, "compaction_started")) == compactions


@pytest.mark.asyncio
async def test_a_compaction_asked_during_the_last_step_is_answered_when_the_build_ends(
    start_baton: Any, llm: FakeLLM
) -> None:
    baton = await start_baton(settings=NATIVE)
    sid = await approved_plan(baton, llm)
    before = len(llm.model_requests)
    llm.add(text("Wrote one."))
    llm.add(text("Wrote two."), stall(30, after=1))
    await baton.request("baton/plan/approve", {"sessionId": sid, "build": "steps"})
    await llm.wait_for_requests_async(before + 2)

    compact = asyncio.create_task(baton.request("baton/session/compact", {"sessionId": sid}))
    await asyncio.sleep(0.3)
    llm.release()
    record = await asyncio.wait_for(compact, 20)
    assert record["trigger"] == "manual"
    assert (await build_ended(baton, sid))["stopReason"] == "end_turn"
    # The session is idle again, and its next prompt runs a turn, not the compaction.
    llm.add(text("Done."))
    compactions = len(baton.updates(sid, "compaction_started"))
    result = await baton.prompt(sid, "and now?")
    assert result["stopReason"] == "end_turn"
    assert len(baton.updates(sid, "compaction_started")) == compactions
