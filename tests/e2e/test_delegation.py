"""Delegation through the real server: a `task` child is a session of its own with its own
context and tools, and comes back as one bounded result."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fake_llm import FakeLLM, delay, text, tool_call, usage
from tests.harness import BatonClient

WRITE_TOOLS = {"write", "edit", "plan_write", "plan_edit", "plan_show", "plan_exit", "task"}


def task(
    agent: str,
    prompt: str,
    description: str = "look around",
    *,
    call_id: str | None = None,
    **extra: Any,
) -> Any:
    arguments = {"agent": agent, "description": description, "prompt": prompt, **extra}
    return tool_call("task", arguments, call_id=call_id)


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


async def sleeping_child(baton: BatonClient, parent: str) -> str:
    """The id of `parent`'s child once it has started `sleep 30`."""
    started = await baton.wait_for(
        lambda m, params: (
            m == "baton/session/update"
            and params.get("parentId") == parent
            and params["update"]["kind"] == "tool_call"
            and params["update"]["input"].get("command") == "sleep 30"
        ),
        include_past=True,
    )
    return str(started["sessionId"])


def child_ids(sessions: list[dict[str, Any]], parent: str) -> list[str]:
    return [row["sessionId"] for row in sessions if row["parentId"] == parent]


@pytest.mark.asyncio
async def test_a_long_final_message_comes_back_cut_and_recall_returns_it_whole(
    start_baton: Any, llm: FakeLLM
) -> None:
    baton = await start_baton(settings={"delegation": {"resultTokens": 100}})
    long_answer = " ".join(f"finding-{n}" for n in range(600)) + " LAST-WORD"
    llm.add(task("explore", "Describe everything.", call_id="call_task_1"))
    llm.add(text(long_answer))
    llm.add(tool_call("recall", {"call_id": "call_task_1"}))
    llm.add(text("Read it all."))
    parent = await baton.new_session()
    await baton.prompt(parent, "explore it")

    cut = llm.model_requests[2].tool_outputs()["call_task_1"]
    assert "finding-0 " in cut and "LAST-WORD" not in cut
    assert "cut to 100 of" in cut
    assert '`recall` with call_id "call_task_1" returns it whole' in cut
    recalled = llm.model_requests[3].tool_outputs()
    (whole,) = [v for k, v in recalled.items() if k != "call_task_1"]
    assert "whole final message of task call call_task_1" in whole
    assert "finding-0 " in whole and "LAST-WORD" in whole


@pytest.mark.asyncio
async def test_two_explore_children_run_at_the_same_time(baton: BatonClient, llm: FakeLLM) -> None:
    arrived: dict[str, float] = {}

    def answer(req: Any) -> Any:
        body = req.input_text()
        for name in ("ALPHA", "BETA"):
            if f"Look at {name}." in body and not req.tool_outputs():
                arrived[name] = time.monotonic()
                return [delay(1.5), text(f"{name} seen")]
        return None

    llm.add(task("explore", "Look at ALPHA.", "alpha"), task("explore", "Look at BETA.", "beta"))
    llm.on_request(answer)
    parent = await baton.new_session()
    started = time.monotonic()
    await baton.prompt(parent, "look at both")
    elapsed = time.monotonic() - started
    assert set(arrived) == {"ALPHA", "BETA"}
    # Both children's requests were in flight together: the second came before the
    # first was answered, and the whole took about one child's time, not two.
    assert abs(arrived["ALPHA"] - arrived["BETA"]) < 1.0
    assert elapsed < 2.9
    outputs = llm.model_requests[-1].tool_outputs()
    assert sorted("ALPHA seen" in v for v in outputs.values()) == [False, True]
    assert sum("status: done" in v for v in outputs.values()) == 2


@pytest.mark.asyncio
async def test_a_childs_permission_request_reaches_the_client_labelled_with_it(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = lambda _: {"outcome": {"optionId": "allow_once"}}
    llm.add(task("build", "Create notes.txt saying hi.", "write the notes"))
    llm.add(tool_call("write", {"path": "notes.txt", "content": "hi\n"}))
    llm.add(text("Wrote notes.txt."))
    llm.add(text("Done."))
    parent = await baton.new_session()
    await baton.prompt(parent, "make notes")
    assert (workspace / "notes.txt").read_text() == "hi\n"
    (request,) = baton.permission_requests
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    (child,) = child_ids(sessions, parent)
    assert request["sessionId"] == child
    assert request["parentId"] == parent
    assert request["agent"] == "build"
    result = next(iter(llm.model_requests[-1].tool_outputs().values()))
    assert "files changed:\n- created notes.txt" in result


@pytest.mark.asyncio
async def test_always_allow_in_the_parent_holds_inside_its_child(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = lambda _: {"outcome": {"optionId": "allow_always"}}
    llm.add(tool_call("bash", {"command": "echo parent"}))
    llm.add(task("build", "Run echo child.", "echo"))
    llm.add(tool_call("bash", {"command": "echo child > out.txt"}))
    llm.add(text("ran it"))
    llm.add(text("Done."))
    parent = await baton.new_session()
    await baton.prompt(parent, "run things")
    assert (workspace / "out.txt").read_text() == "child\n"
    assert len(baton.permission_requests) == 1
    result = list(llm.model_requests[-1].tool_outputs().values())[-1]
    assert "- `echo child > out.txt` → 0" in result


@pytest.mark.asyncio
async def test_cancelling_a_child_leaves_the_parent_running_with_a_cancelled_result(
    start_baton: Any, llm: FakeLLM
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow"}})
    llm.add(task("explore", "Wait for a long time.", "wait"))
    llm.add(tool_call("bash", {"command": "echo started"}))
    llm.add(text("Started; now the long part."), tool_call("bash", {"command": "sleep 30"}))
    llm.add(text("The parent goes on."))
    parent = await baton.new_session()
    prompt = asyncio.create_task(baton.prompt(parent, "delegate a slow job"))
    child = await sleeping_child(baton, parent)
    await asyncio.sleep(0.3)
    baton.notify("baton/session/cancel", {"sessionId": child})
    result = await asyncio.wait_for(prompt, 20)
    assert result["stopReason"] == "end_turn"
    assert baton.streamed_text(parent).endswith("The parent goes on.")
    output = next(iter(llm.model_requests[-1].tool_outputs().values()))
    assert "status: cancelled" in output and f'child="{child}"' in output
    # What it did so far: the command that finished, and its last words.
    assert "- `echo started` → 0" in output
    assert "Started; now the long part." in output
    assert children(baton, parent)[-1]["status"] == "cancelled"


@pytest.mark.asyncio
async def test_cancelling_the_parent_cancels_its_child(start_baton: Any, llm: FakeLLM) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow"}})
    llm.add(task("explore", "Wait for a long time.", "wait"))
    llm.add(tool_call("bash", {"command": "sleep 30"}))
    parent = await baton.new_session()
    prompt = asyncio.create_task(baton.prompt(parent, "delegate a slow job"))
    await sleeping_child(baton, parent)
    await asyncio.sleep(0.3)
    baton.notify("baton/session/cancel", {"sessionId": parent})
    result = await asyncio.wait_for(prompt, 20)
    assert result["stopReason"] == "cancelled"
    assert children(baton, parent)[-1]["status"] == "cancelled"
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    (child,) = child_ids(sessions, parent)
    loaded = await baton.load(child)
    assert any(
        part.get("name") == "bash" and part["status"] == "failed"
        for message in loaded["messages"]
        for part in message["parts"]
        if part["type"] == "tool_call"
    )


@pytest.mark.asyncio
async def test_children_are_listed_under_their_parent_and_resume_continues_one(
    baton: BatonClient, llm: FakeLLM
) -> None:
    llm.add(task("explore", "Count the files.", "count"))
    llm.add(text("There are 3 files."))
    llm.add(text("Counted."))
    parent = await baton.new_session()
    await baton.prompt(parent, "count files")
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    (child,) = child_ids(sessions, parent)

    llm.add(task("explore", "And the folders?", "folders", resume=child))
    llm.add(text("And 2 folders."))
    llm.add(text("Both counted."))
    await baton.prompt(parent, "and folders")
    resumed = llm.model_requests[-2]
    # The child's own history goes on: its first task and answer are in view.
    assert "Count the files." in resumed.input_text()
    assert "There are 3 files." in resumed.input_text()
    assert "And the folders?" in resumed.input_text()
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    assert child_ids(sessions, parent) == [child]
    output = list(llm.model_requests[-1].tool_outputs().values())[-1]
    assert "And 2 folders." in output and "3 files" not in output
    loaded = await baton.load(child)
    assert [m["role"] for m in loaded["messages"]] == ["user", "assistant", "user", "assistant"]

    # Deleting the parent deletes its children.
    await baton.request("baton/session/delete", {"sessionId": parent})
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    assert [row["sessionId"] for row in sessions] == []
    error = await baton.error("baton/session/load", {"sessionId": child})
    assert error.code == -32001


@pytest.mark.asyncio
async def test_a_child_cannot_start_children_nor_call_a_tool_it_is_not_offered(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    llm.add(task("explore", "Try to write.", "try"))
    llm.add(
        tool_call("write", {"path": "x.txt", "content": "x"}),
        task("explore", "nested", "nested"),
    )
    llm.add(text("Could not."))
    llm.add(text("Done."))
    parent = await baton.new_session()
    await baton.prompt(parent, "try")
    assert not (workspace / "x.txt").exists()
    outputs = list(llm.model_requests[2].tool_outputs().values())
    assert any("write is not one of the explore agent's tools" in o for o in outputs)
    assert any("a child cannot start children" in o for o in outputs)


@pytest.mark.asyncio
async def test_max_steps_ends_a_child_with_its_partial_result(
    start_baton: Any, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    baton = await start_baton(settings={"delegation": {"maxSteps": 2}})
    llm.add(task("explore", "Read forever.", "read"))
    llm.add(text("Reading a."), tool_call("read", {"path": "a.txt"}))
    llm.add(text("Still reading."), tool_call("glob", {"pattern": "*"}))
    llm.add(text("Stopped."))
    parent = await baton.new_session()
    await baton.prompt(parent, "read")
    output = next(iter(llm.model_requests[-1].tool_outputs().values()))
    assert "status: max_steps" in output
    assert "step limit (2)" in output
    assert "Still reading." in output


@pytest.mark.asyncio
async def test_a_spent_token_budget_ends_a_child_with_its_partial_result(
    start_baton: Any, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    baton = await start_baton(settings={"delegation": {"tokenBudget": 1000}})
    llm.add(task("explore", "Read.", "read"))
    llm.add(text("Half way."), tool_call("read", {"path": "a.txt"}), usage(input=900, output=200))
    llm.add(text("Stopped."))
    parent = await baton.new_session()
    await baton.prompt(parent, "read")
    output = next(iter(llm.model_requests[-1].tool_outputs().values()))
    assert "status: max_steps" in output
    assert "token budget (1,000 tokens) was reached" in output
    assert "Half way." in output
    assert len(llm.model_requests) == 3


@pytest.mark.asyncio
async def test_a_workspace_agent_is_ignored_until_the_workspace_is_trusted(
    start_baton: Any, llm: FakeLLM, workspace: Path
) -> None:
    agents = workspace / ".baton" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a diff for bugs.\n"
        "tools: read, grep\n---\nYou review code. Say REVIEWER-INSTRUCTIONS.\n"
    )
    baton = await start_baton(trusted=False)
    parent = await baton.new_session()
    trust = await baton.request("baton/workspace/trust", {})
    assert "agent .baton/agents/reviewer.md" in trust["ignored"]
    notice = await baton.wait_update("workspace_trust", parent, include_past=True)
    assert "reviewer.md" in notice["message"]
    llm.add(task("reviewer", "Review it.", "review"))
    llm.add(text("No reviewer."))
    await baton.prompt(parent, "review")
    tools = {t.get("name"): t for t in llm.model_requests[0].tools}
    assert "reviewer" not in tools["task"]["description"]
    output = next(iter(llm.model_requests[1].tool_outputs().values()))
    assert "no agent named 'reviewer'" in output

    await baton.request("baton/workspace/setTrust", {"trusted": True})
    llm.add(task("reviewer", "Review it.", "review"))
    llm.add(text("Looks fine."))
    llm.add(text("Reviewed."))
    await baton.prompt(parent, "review again")
    first = llm.model_requests[2]
    tools = {t.get("name"): t for t in first.tools}
    assert "- reviewer (read-only): Reviews a diff for bugs." in tools["task"]["description"]
    child_request = llm.model_requests[3]
    assert "REVIEWER-INSTRUCTIONS" in child_request.input_text()
    assert set(child_request.tool_names) == {"read", "grep"}


@pytest.mark.asyncio
async def test_a_plan_child_writes_a_plan_of_its_own_for_the_person_to_approve(
    baton: BatonClient, llm: FakeLLM
) -> None:
    plan = "# Cache\n\n- [ ] Add the cache\n- [ ] Test it\n"
    llm.add(task("plan", "Plan a cache.", "plan the cache"))
    llm.add(tool_call("plan_write", {"content": plan}))
    llm.add(text("Two steps: add the cache, test it."))
    llm.add(text("The plan child wrote it."))
    parent = await baton.new_session(mode="plan")
    await baton.prompt(parent, "plan a cache with a child")
    child_request = llm.model_requests[1]
    assert {"plan_write", "plan_edit"} <= set(child_request.tool_names)
    assert not {"write", "edit", "task"} & set(child_request.tool_names)
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    (child,) = child_ids(sessions, parent)
    child_plan = await baton.request("baton/plan/get", {"sessionId": child})
    assert child_plan["content"] == plan
    assert await baton.request("baton/plan/get", {"sessionId": parent}) is None
    output = next(iter(llm.model_requests[-1].tool_outputs().values()))
    assert f"plan: {child_plan['path']}" in output
    assert f"approves it in the child's session {child}" in output


@pytest.mark.asyncio
async def test_in_plan_mode_a_child_that_can_write_is_not_started(
    baton: BatonClient, llm: FakeLLM
) -> None:
    llm.add(task("build", "Change everything.", "change"))
    llm.add(text("Not allowed yet."))
    parent = await baton.new_session(mode="plan")
    await baton.prompt(parent, "build it now")
    output = next(iter(llm.model_requests[1].tool_outputs().values()))
    assert output.startswith("[task not started: the build agent can change files")
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    assert child_ids(sessions, parent) == []


@pytest.mark.asyncio
async def test_a_persons_agent_counts_anywhere_with_its_model_and_steps(
    start_baton: Any, llm: FakeLLM, home: Path
) -> None:
    agents = home / "config" / "baton" / "agents"
    agents.mkdir(parents=True)
    (agents / "scout.md").write_text(
        "---\ndescription: Scouts quickly.\ntools: [glob]\nmodel: gpt-fake-mini\n"
        "maxSteps: 1\n---\nScout. Say SCOUT-WORDS.\n"
    )
    baton = await start_baton(trusted=False)
    llm.add(task("scout", "Scout the files.", "scout"))
    llm.add(tool_call("glob", {"pattern": "*"}))
    llm.add(text("Scouted."))
    parent = await baton.new_session()
    await baton.prompt(parent, "scout")
    child_request = llm.model_requests[1]
    assert child_request.model == "gpt-fake-mini"
    assert llm.model_requests[0].model != "gpt-fake-mini"
    assert child_request.tool_names == ["glob"]
    assert "SCOUT-WORDS" in child_request.input_text()
    output = next(iter(llm.model_requests[-1].tool_outputs().values()))
    assert "status: max_steps" in output and "step limit (1)" in output
