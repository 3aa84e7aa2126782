"""`baton/plan/approve {build: "steps"}` through the real server: Baton builds each open
step of the approved plan in a fresh build child, ticks it and writes its result under
it, and stops at a failing step with `[!]` and the error."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient

PLAN = """# Greeting

- [ ] Write hello.txt
- [ ] Write bye.txt
- [ ] Check both
"""


async def approved_steps(baton: BatonClient, llm: FakeLLM) -> str:
    sid = await baton.new_session(mode="plan", title="Greeting")
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Planned."), tool_call("plan_exit", {}))
    await baton.prompt(sid, "Write a greeting, REQUEST-VERBATIM.")
    return sid


async def ended(baton: BatonClient, sid: str) -> dict[str, Any]:
    for _ in range(400):
        ends = baton.updates(sid, "turn_ended")
        if len(ends) >= 2:
            return ends[-1]
        await asyncio.sleep(0.05)
    raise AssertionError("the step build did not end")


@pytest.mark.asyncio
async def test_build_steps_ticks_each_step_in_its_own_child(
    start_baton: Any, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"write": "allow", "bash": "allow"}})
    sid = await approved_steps(baton, llm)
    planning = len(llm.model_requests)
    llm.add(tool_call("write", {"path": "hello.txt", "content": "hello\n"}))
    llm.add(text("Wrote hello.txt."))
    llm.add(tool_call("write", {"path": "bye.txt", "content": "bye\n"}))
    llm.add(text("Wrote bye.txt."))
    llm.add(tool_call("bash", {"command": "cat hello.txt bye.txt"}))
    llm.add(text("Both are there."))
    result = await baton.request("baton/plan/approve", {"sessionId": sid, "build": "steps"})
    assert result == {"status": "approved", "mode": "build"}
    end = await ended(baton, sid)
    assert end["stopReason"] == "end_turn"
    assert (workspace / "hello.txt").read_text() == "hello\n"

    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    assert plan["status"] == "done"
    content = plan["content"]
    assert "- [x] Write hello.txt\n  - result: Wrote hello.txt." in content
    assert "- [x] Write bye.txt\n  - result: Wrote bye.txt." in content
    assert "- [x] Check both\n  - result: Both are there." in content

    # Each child starts fresh: the plan with its step marked, the requests verbatim, the
    # ledger so far; nothing of the planning conversation.
    children_first = [llm.model_requests[planning + i] for i in (0, 2, 4)]
    for index, request in enumerate(children_first, start=1):
        body = request.input_text()
        assert "REQUEST-VERBATIM" in body
        assert f"Your step ({index} of 3)" in body
        assert "Planned." not in body
        assert "task" not in request.tool_names
    assert ">> - [ ] Write hello.txt" in children_first[0].input_text()
    assert ">> - [ ] Write bye.txt" in children_first[1].input_text()
    assert "hello.txt" in children_first[1].input_text().split("Your step")[0]

    updates = [u for u in baton.updates(sid, "child") if u["status"] != "running"]
    assert [(u["status"], u["step"]) for u in updates] == [
        ("done", {"index": 1, "total": 3}),
        ("done", {"index": 2, "total": 3}),
        ("done", {"index": 3, "total": 3}),
    ]
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    kids = [row for row in sessions if row["parentId"] == sid]
    assert len(kids) == 3 and {row["agent"] for row in kids} == {"build"}

    # The parent's context grew by one short result per step.
    llm.add(text("All built."))
    await baton.prompt(sid, "what happened?")
    parent_view = llm.model_requests[-1].input_text()
    assert parent_view.count("<baton:step-result") == 3
    assert "Wrote bye.txt." in parent_view


@pytest.mark.asyncio
async def test_build_steps_stops_at_a_failing_check_with_the_error(
    start_baton: Any, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"write": "allow", "bash": "allow"}})
    sid = await approved_steps(baton, llm)
    llm.add(tool_call("write", {"path": "hello.txt", "content": "hello\n"}))
    llm.add(text("Wrote hello.txt."))
    llm.add(tool_call("bash", {"command": "test -f missing.txt"}))
    llm.add(text("The check failed."))
    await baton.request("baton/plan/approve", {"sessionId": sid, "build": "steps"})
    end = await ended(baton, sid)
    assert end["stopReason"] == "error"
    assert "step 2 of 3 failed" in end["error"]
    assert "`test -f missing.txt` exited 1" in end["error"]
    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    content = plan["content"]
    assert "- [x] Write hello.txt" in content
    assert "- [!] Write bye.txt: its last check `test -f missing.txt` exited 1" in content
    assert "- [ ] Check both" in content
    assert plan["status"] == "approved"
    assert llm.pending == 0
    updates = [u for u in baton.updates(sid, "child") if u["status"] != "running"]
    assert [u["step"]["index"] for u in updates] == [1, 2]


@pytest.mark.asyncio
async def test_build_steps_refuses_a_plan_with_no_open_step(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session(mode="plan")
    llm.add(tool_call("plan_write", {"content": "# Done\n\n- [x] all of it\n"}))
    llm.add(text("Planned."), tool_call("plan_exit", {}))
    await baton.prompt(sid, "plan")
    error = await baton.error("baton/plan/approve", {"sessionId": sid, "build": "steps"})
    assert "no open step" in str(error)
    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    assert plan["status"] == "awaiting_approval"
