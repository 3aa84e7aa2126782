"""The fourth hardening pass (issue 46), through the real server: what a child inherits,
child text that could pass for Baton's or the person's, the labels faces show, and
discovery and catalogs with a bound. The ACP face's cases are in tests/acp/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient


def task(agent: str, prompt: str, description: str = "look around", **extra: Any) -> Any:
    arguments = {"agent": agent, "description": description, "prompt": prompt, **extra}
    return tool_call("task", arguments)


def child_of(sessions: list[dict[str, Any]], parent: str) -> list[str]:
    return [row["sessionId"] for row in sessions if row["parentId"] == parent]


# ---------------------------------------------------------------- 1. what a child inherits


@pytest.mark.asyncio
async def test_a_plan_mode_sessions_child_cannot_run_what_plan_mode_refuses_the_parent(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = lambda _: {"outcome": {"optionId": "allow_always"}}
    llm.add(tool_call("bash", {"command": "echo granted"}))
    llm.add(text("ran it"))
    parent = await baton.new_session()
    await baton.prompt(parent, "run echo")
    assert len(baton.permission_requests) == 1  # "Always allow every command", in build mode

    await baton.request("baton/session/setMode", {"sessionId": parent, "mode": "plan"})
    llm.add(tool_call("bash", {"command": "touch parent-plan.txt"}))
    llm.add(task("explore", "Touch a file.", "touch"))
    llm.add(tool_call("bash", {"command": "touch child-plan.txt"}))
    llm.add(text("touched"))
    llm.add(text("Done."))
    await baton.prompt(parent, "plan something")

    assert not (workspace / "parent-plan.txt").exists()
    assert not (workspace / "child-plan.txt").exists()
    result = list(llm.model_requests[-1].tool_outputs().values())[-1]
    assert "not available in plan mode" in llm.model_requests[-2].input_text()
    assert "- `touch child-plan.txt`" not in result
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    (child,) = child_of(sessions, parent)
    assert (await baton.load(child))["mode"] == "plan"
    assert len(baton.permission_requests) == 1


@pytest.mark.asyncio
async def test_a_grant_given_in_build_mode_does_not_carry_into_plan_mode(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    """The grant is kept by the mode it was given in: back in build mode it holds again."""
    baton.permission_policy = lambda _: {"outcome": {"optionId": "allow_always"}}
    llm.add(tool_call("bash", {"command": "echo one"}))
    llm.add(text("ran"))
    parent = await baton.new_session()
    await baton.prompt(parent, "run echo")
    await baton.request("baton/session/setMode", {"sessionId": parent, "mode": "plan"})
    await baton.request("baton/session/setMode", {"sessionId": parent, "mode": "build"})
    llm.add(task("build", "Run echo.", "echo"))
    llm.add(tool_call("bash", {"command": "echo child > out.txt"}))
    llm.add(text("ran it"))
    llm.add(text("Done."))
    await baton.prompt(parent, "again in a child")
    assert (workspace / "out.txt").read_text() == "child\n"
    assert len(baton.permission_requests) == 1
