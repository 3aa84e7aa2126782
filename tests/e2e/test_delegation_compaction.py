"""Compaction knows children, through the real server: a parent's ledger lists the files
and commands of its children by child id, a compacted `task` result is one `recall`
away, and a child running when its parent compacts keeps running and lands once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_compaction import FACTLESS_SUMMARY
from tests.e2e.test_compaction import start_baton as start_baton  # pins native compaction
from tests.e2e.test_delegation import task
from tests.fake_llm import FakeLLM, delay, text, tool_call


async def big_history(baton: Any, llm: FakeLLM, workspace: Path) -> str:
    """A parent whose history holds a large read, so a compaction has something to do."""
    (workspace / "notes.txt").write_text("alpha line\n" * 300)
    parent = await baton.new_session()
    llm.add(tool_call("read", {"path": "notes.txt"}))
    llm.add(text("Read the notes."))
    await baton.prompt(parent, "read notes.txt")
    return parent


def child_of(sessions: list[dict[str, Any]], parent: str) -> str:
    (child,) = [row["sessionId"] for row in sessions if row["parentId"] == parent]
    return child


@pytest.mark.asyncio
async def test_the_parents_ledger_lists_its_childrens_files_and_commands_by_child(
    start_baton: Any, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow", "write": "allow"}})
    llm.add(task("build", "Write out.txt and check it.", "write out", call_id="call_t1"))
    llm.add(tool_call("write", {"path": "out.txt", "content": "x\n"}))
    llm.add(tool_call("bash", {"command": "cat out.txt"}))
    llm.add(text("Wrote and checked out.txt."))
    llm.add(text("The child did it."))
    parent = await big_history(baton, llm, workspace)
    await baton.prompt(parent, "delegate the file")
    llm.add(text("Second answer."))
    await baton.prompt(parent, "anything else?")
    child = child_of((await baton.request("baton/session/list", {}))["sessions"], parent)

    llm.add(text(FACTLESS_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": parent})
    assert record["ledger"]["children"] == [
        {
            "childId": child,
            "filesModified": ["out.txt"],
            "commands": [
                {"command": "cat out.txt", "exitCode": 0, "exitCodes": [0], "failures": []}
            ],
        }
    ]
    # Not listed as the parent's own work.
    assert record["ledger"]["filesModified"] == []

    llm.add(tool_call("recall", {"call_id": "call_t1"}))
    llm.add(text("Recalled."))
    await baton.prompt(parent, "what did the child say?")
    after = llm.model_requests[-2].input_text()
    assert f"- {child}: out.txt; ran `cat out.txt` → 0" in after
    recalled = llm.model_requests[-1].tool_outputs()
    assert any("Wrote and checked out.txt." in v for v in recalled.values())


@pytest.mark.asyncio
async def test_a_child_running_when_its_parent_compacts_keeps_running_and_lands_once(
    start_baton: Any, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton()
    parent = await big_history(baton, llm, workspace)
    llm.add(task("explore", "Take your time.", "slow look"))
    llm.add(delay(1.5), text("Slow finding."))
    llm.add(text(FACTLESS_SUMMARY))
    llm.add(text("Got it."))
    prompt = asyncio.create_task(baton.prompt(parent, "delegate"))
    await baton.wait_update("child", parent, include_past=True)
    record = await baton.request("baton/session/compact", {"sessionId": parent})
    result = await asyncio.wait_for(prompt, 20)
    assert result["stopReason"] == "end_turn"
    assert record["committed"]
    statuses = [u["status"] for u in baton.updates(parent, "child")]
    assert statuses == ["running", "done"]
    last = llm.model_requests[-1]
    assert last.input_text().count("Slow finding.") == 1
    assert len(last.tool_outputs()) == 1
    sessions = (await baton.request("baton/session/list", {}))["sessions"]
    assert len([row for row in sessions if row["parentId"] == parent]) == 1
