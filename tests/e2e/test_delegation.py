"""Delegation through the real server: a `task` child is a session of its own with its own
context and tools, and comes back as one bounded result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient

WRITE_TOOLS = {"write", "edit", "plan_write", "plan_edit", "plan_show", "plan_exit", "task"}


def task(agent: str, prompt: str, description: str = "look around", **extra: Any) -> Any:
    return tool_call(
        "task", {"agent": agent, "description": description, "prompt": prompt, **extra}
    )


def children(baton: BatonClient, parent: str) -> list[dict[str, Any]]:
    return [u for u in baton.updates(parent, "child")]


@pytest.mark.asyncio
async def test_a_child_sees_none_of_the_parent_and_explore_is_offered_no_write_tool(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("# TODO: one\n")
    llm.add(task("explore", "Find every TODO in the workspace.", "find the TODOs"))
    llm.add(tool_call("grep", {"pattern": "TODO"}))
    llm.add(text("One TODO: app.py:1."))
    llm.add(text("The child found one TODO."))
    parent = await baton.new_session()
    result = await baton.prompt(parent, "PARENT-ONLY words: look for TODOs with a child")
    assert result["stopReason"] == "end_turn"

    first_of_child = llm.model_requests[1]
    assert "PARENT-ONLY" not in first_of_child.input_text()
    assert "Find every TODO in the workspace." in first_of_child.input_text()
    assert '<baton:agent name="explore">' in first_of_child.input_text()
    names = set(first_of_child.tool_names)
    assert names & WRITE_TOOLS == set()
    assert {"read", "grep", "glob", "bash"} <= names
    # The parent is offered the task tool, its description listing the agents.
    parent_tools = {t.get("name"): t for t in llm.model_requests[0].tools}
    assert "explore" in parent_tools["task"]["description"]
    assert "build" in parent_tools["task"]["description"]

    outputs = llm.model_requests[3].tool_outputs()
    (result_text,) = outputs.values()
    assert result_text.startswith('<baton:task-result agent="explore"')
    assert "status: done" in result_text
    assert "One TODO: app.py:1." in result_text

    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    rows = {row["sessionId"]: row for row in sessions}
    assert rows[parent]["parentId"] is None and rows[parent]["agent"] is None
    (child_id,) = [sid for sid, row in rows.items() if row["parentId"] == parent]
    assert rows[child_id]["agent"] == "explore"
    assert f'child="{child_id}"' in result_text

    updates = children(baton, parent)
    assert [(u["status"], u.get("currentTool")) for u in updates] == [
        ("running", None),
        ("running", "grep"),
        ("done", None),
    ]
    assert all(u["childId"] == child_id and u["agent"] == "explore" for u in updates)
    assert updates[-1]["tokens"] > 0
    # The child's own progress carries its parent.
    child_notes = [
        params
        for method, params in baton.notifications
        if method == "baton/session/update" and params["sessionId"] == child_id
    ]
    assert child_notes and all(n["parentId"] == parent for n in child_notes)
    assert all("parentId" not in n for n in baton.notifications if n[1]["sessionId"] == parent)
