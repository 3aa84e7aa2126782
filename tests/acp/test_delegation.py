"""A `task` child through `baton acp`: the SDK has no subagent update, so the child's
progress is the content of its parent's `task` tool call, and its permission requests
reach the editor on the parent's session, saying which child asks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.acp.conftest import StartAcp, allow_once
from tests.e2e.test_cli_delegation import script_child
from tests.fake_llm import FakeLLM, text, tool_call


def content_texts(updates: list[dict[str, Any]], call_id: str) -> list[str]:
    return [
        block["content"]["text"]
        for u in updates
        if u.get("toolCallId") == call_id
        for block in u.get("content") or []
        if block.get("type") == "content"
    ]


@pytest.mark.asyncio
async def test_a_child_shows_in_its_task_call_and_asks_on_the_parents_session(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("# TODO: one\n")
    acp = await start_acp()
    sid = await acp.new()
    asked: list[dict[str, Any]] = []

    async def allow(request: dict[str, Any]) -> str | None:
        asked.append(request)
        return await allow_once(request)

    acp.client.policy = allow
    script_child(llm)
    assert (await acp.say(sid, "look for TODOs with a child")).stop_reason == "end_turn"

    [task] = [c for c in acp.client.of(sid, "tool_call") if c["title"].startswith("Delegate")]
    assert task["title"] == "Delegate to explore: find the TODOs"
    call_id = task["toolCallId"]
    # The child's own tool calls are not calls of the parent's session …
    assert [c["title"] for c in acp.client.of(sid, "tool_call")] == [task["title"]]
    # … and nothing arrives for a session the editor does not know.
    assert {u["sessionId"] for u in acp.client.updates} == {sid}

    updates = acp.client.of(sid, "tool_call_update")
    texts = content_texts(updates, call_id)
    assert texts[0].splitlines() == ["explore child: find the TODOs", "running · 0 tokens"]
    # Each tool the child uses shows in the call while it runs.
    assert any("→ Search 'TODO'" in t for t in texts)
    running = [t for t in texts if "→ Run `wc -l app.py`" in t]
    assert running and running[-1].splitlines()[2:] == ["→ Search 'TODO'", "→ Run `wc -l app.py`"]
    metas = [
        u["_meta"]["baton"]["child"]
        for u in updates
        if u.get("toolCallId") == call_id and "_meta" in u
    ]
    assert metas[0]["status"] == "running" and metas[-1]["status"] == "done"
    assert metas[-1]["tokens"] > 0
    assert any(t.splitlines()[1].startswith("done · ") for t in texts)
    # The call ends with the task's bounded result, as any tool call ends.
    [completed] = [
        u
        for u in updates
        if u.get("toolCallId") == call_id and u.get("status") in ("completed", "failed")
    ]
    assert completed["status"] == "completed"
    assert completed["rawOutput"].startswith('<baton:task-result agent="explore"')

    # The child's command asked on the parent's session, saying which child asks.
    [request] = asked
    assert request["sessionId"] == sid
    assert request["toolCall"]["title"] == "explore child (find the TODOs): Run `wc -l app.py`"
    child_id = metas[0]["childId"]
    assert request["toolCall"]["_meta"] == {
        "baton": {"childSessionId": child_id, "agent": "explore"}
    }


PLAN = "# Greeting\n\n- [ ] Write hello.txt\n- [ ] Write bye.txt\n"


@pytest.mark.asyncio
async def test_approve_steps_shows_each_step_as_a_call_of_its_own(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp(env={"BATON_PERMISSIONS__WRITE": "allow"})
    sid = await acp.new()
    await acp.conn.set_session_mode(session_id=sid, mode_id="plan")
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Planned."), tool_call("plan_exit", {}))
    await acp.say(sid, "Plan a greeting")
    llm.add(tool_call("write", {"path": "hello.txt", "content": "hello\n"}))
    llm.add(text("Wrote hello.txt."))
    llm.add(tool_call("write", {"path": "bye.txt", "content": "bye\n"}))
    llm.add(text("Wrote bye.txt."))
    assert (await acp.say(sid, "/approve steps")).stop_reason == "end_turn"
    assert (workspace / "bye.txt").read_text() == "bye\n"

    steps = [c for c in acp.client.of(sid, "tool_call") if c["title"].startswith("Step ")]
    assert [c["title"] for c in steps] == [
        "Step 1 of 2: Write hello.txt",
        "Step 2 of 2: Write bye.txt",
    ]
    updates = acp.client.of(sid, "tool_call_update")
    for call in steps:
        texts = content_texts(updates, call["toolCallId"])
        assert texts[0].splitlines()[1].startswith("step ")
        assert any("→ Write " in t for t in texts)
        ends = [
            u["status"]
            for u in updates
            if u["toolCallId"] == call["toolCallId"] and u.get("status") != "in_progress"
        ]
        assert ends == ["completed"]
    first = content_texts(updates, steps[0]["toolCallId"])[0].splitlines()
    assert first == ["build child: Write hello.txt", "step 1 of 2 · running · 0 tokens"]
    # The plan's checklist follows the ticks.
    entries = acp.client.of(sid, "plan")[-1]["entries"]
    assert [e["status"] for e in entries] == ["completed", "completed"]
