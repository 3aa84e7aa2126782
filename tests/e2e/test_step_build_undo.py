"""Undo of a step-by-step build restores what its children changed (issue 50, point 3).

The build's steps run in children, so the parent's own turns changed no file and
"Undo" found nothing to restore. A revert from a step's note now takes in the files
of that step's child and of every later one: from the first step's note, the whole
build; from the last one's, that step alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_delegation_steps import approved_steps, ended
from tests.fake_llm import FakeLLM, text, tool_call


def _step_notes(messages: list[dict[str, Any]]) -> list[str]:
    return [
        m["id"]
        for m in messages
        if m["role"] == "system"
        and any(p.get("text", "").startswith("<baton:step-result>") for p in m["parts"])
    ]


@pytest.mark.asyncio
async def test_undo_restores_the_files_of_one_step_or_the_whole_build(
    start_baton: Any, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "bye.txt").write_text("old bye\n")
    baton = await start_baton(settings={"permissions": {"write": "allow", "bash": "allow"}})
    sid = await approved_steps(baton, llm)
    llm.add(tool_call("write", {"path": "hello.txt", "content": "hello\n"}))
    llm.add(text("Wrote hello.txt."))
    llm.add(tool_call("write", {"path": "bye.txt", "content": "bye\n"}))
    llm.add(text("Wrote bye.txt."))
    llm.add(tool_call("write", {"path": "check.txt", "content": "both\n"}))
    llm.add(text("Both are there."))
    await baton.request("baton/plan/approve", {"sessionId": sid, "build": "steps"})
    assert (await ended(baton, sid))["stopReason"] == "end_turn"
    notes = _step_notes((await baton.load(sid))["messages"])
    assert len(notes) == 3

    # The last step alone.
    last = await baton.request("baton/session/revert", {"sessionId": sid, "messageId": notes[2]})
    assert [(f["path"], f["action"]) for f in last["files"]] == [("check.txt", "removed")]
    assert not (workspace / "check.txt").exists()
    assert (workspace / "bye.txt").read_text() == "bye\n"

    # The whole build: what the earlier steps changed, as it was before the build.
    preview = await baton.request(
        "baton/session/revert", {"sessionId": sid, "messageId": notes[0], "dryRun": True}
    )
    assert [(f["path"], f["action"]) for f in preview["files"]] == [
        ("bye.txt", "restored"),
        ("hello.txt", "removed"),
    ]
    assert (workspace / "hello.txt").exists()  # a dry run changes nothing
    await baton.request("baton/session/revert", {"sessionId": sid, "messageId": notes[0]})
    assert not (workspace / "hello.txt").exists()
    assert (workspace / "bye.txt").read_text() == "old bye\n"
