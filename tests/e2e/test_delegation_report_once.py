"""Children that report once, through the real server: a resumed child's result, facts
and the parent's ledger lines cover the resumed call only; its token budget counts per
call (its total stays on its card); a child that never started leaves no session."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.e2e.test_delegation import child_ids, sleeping_child, task
from tests.fake_llm import FakeLLM, text, tool_call, usage

ALLOW_BASH = {"permissions": {"bash": "allow"}}


def last_output(llm: FakeLLM) -> str:
    return list(llm.model_requests[-1].tool_outputs().values())[-1]


@pytest.mark.asyncio
async def test_a_resumed_child_reports_only_what_the_resumed_call_did(
    start_baton: Any, llm: FakeLLM
) -> None:
    baton = await start_baton(settings={**ALLOW_BASH, "compaction": {"strategy": "native"}})
    llm.add(task("build", "Say one.", "one"))
    llm.add(tool_call("bash", {"command": "echo one"}))
    llm.add(text("Said one."))
    llm.add(text("First call done."))
    parent = await baton.new_session()
    await baton.prompt(parent, "say one")
    first = [o for o in llm.model_requests[-1].tool_outputs().values() if "task-result" in o]
    assert "`echo one` → 0" in first[-1]
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    (child,) = child_ids(sessions, parent)

    llm.add(task("build", "Anything else?", "again", resume=child))
    llm.add(text("Nothing more to run."))
    llm.add(text("Resumed."))
    await baton.prompt(parent, "again")
    resumed = last_output(llm)
    assert "Nothing more to run." in resumed
    assert "echo one" not in resumed
    assert "commands run" not in resumed

    # The parent's ledger has the child's command once, with one exit code.
    record = await baton.request("baton/session/compact", {"sessionId": parent})
    ledger = str(record["ledger"])
    assert ledger.count("echo one") == 1, ledger
    assert "0, 0" not in ledger


@pytest.mark.asyncio
async def test_a_child_that_spent_its_budget_is_resumed_with_a_budget_again(
    start_baton: Any, llm: FakeLLM
) -> None:
    baton = await start_baton(settings={"delegation": {"tokenBudget": 1000}})
    llm.add(task("explore", "Read.", "read"))
    llm.add(text("Half way."), tool_call("glob", {"pattern": "*"}), usage(input=900, output=200))
    llm.add(text("Stopped early."))
    parent = await baton.new_session()
    await baton.prompt(parent, "read")
    first = last_output(llm)
    assert "status: max_steps" in first and "(1,000 tokens) was reached" in first
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    (child,) = child_ids(sessions, parent)

    requests = len(llm.model_requests)
    llm.add(task("explore", "Finish reading.", "finish", resume=child))
    llm.add(text("Finished reading."), usage(input=300, output=50))
    llm.add(text("Done."))
    await baton.prompt(parent, "finish")
    # The resumed call ran (parent, child, parent), and says what it spent of the total.
    assert len(llm.model_requests) == requests + 3
    output = last_output(llm)
    assert "status: done" in output and "Finished reading." in output
    assert "tokens: 350 (1,450 in all its calls)" in output
    # The child's card shows its total.
    ended = [u for u in baton.updates(parent, "child") if u["status"] != "running"]
    assert ended[-1]["tokens"] == 1450


@pytest.mark.asyncio
async def test_a_child_cancelled_before_it_started_leaves_no_session(
    start_baton: Any, llm: FakeLLM
) -> None:
    baton = await start_baton(settings=ALLOW_BASH)
    # A build child of the first session holds the writer gate, sleeping.
    llm.add(task("build", "Wait.", "wait"))
    llm.add(tool_call("bash", {"command": "sleep 30"}))
    first = await baton.new_session()
    first_prompt = asyncio.create_task(baton.prompt(first, "wait"))
    await sleeping_child(baton, first)

    # The second session's build child waits for the gate, and is cancelled there.
    llm.add(task("build", "Write.", "write"))
    second = await baton.new_session()
    second_prompt = asyncio.create_task(baton.prompt(second, "write"))
    await llm.wait_for_requests_async(3)
    await asyncio.sleep(0.5)
    baton.notify("baton/session/cancel", {"sessionId": second})
    assert (await asyncio.wait_for(second_prompt, 20))["stopReason"] == "cancelled"
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    assert child_ids(sessions, second) == []
    assert baton.updates(second, "child") == []

    baton.notify("baton/session/cancel", {"sessionId": first})
    assert (await asyncio.wait_for(first_prompt, 20))["stopReason"] == "cancelled"
