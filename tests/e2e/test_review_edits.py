"""Editing a proposal before accepting it, through the real server process: the
permission answer's `outcome.editedContent` is what the write or edit leaves, the
model is told plainly (with a bounded diff from its proposal), the change is
checkpointed like any other, and malformed answers write nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient


def answer_with(option: str, edited: Any) -> Any:
    def policy(_: dict[str, Any]) -> dict[str, Any]:
        return {"outcome": {"optionId": option, "editedContent": edited}}

    return policy


async def last_user_message_id(baton: BatonClient, sid: str) -> str:
    loaded = await baton.load(sid)
    return next(m["id"] for m in reversed(loaded["messages"]) if m["role"] == "user")


@pytest.mark.asyncio
async def test_an_edited_acceptance_writes_the_persons_text_and_the_model_is_told_the_diff(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    target = workspace / "greeting.py"
    target.write_text("def greet():\n    return 'hello'\n")
    proposed = "def greet():\n    return 'hello there'\n\n\ndef shout():\n    return 'HEY'\n"
    # The person kept the first hunk, changed it a little, and undid the second.
    mine = "def greet():\n    return 'hello, there'\n"
    baton.permission_policy = answer_with("allow_once", mine)
    llm.add(tool_call("write", {"path": "greeting.py", "content": proposed}, call_id="call_w"))
    llm.add(text("Done."))
    sid = await baton.new_session()
    result = await baton.prompt(sid, "make the greeting longer")
    assert result["stopReason"] == "end_turn"

    # Asked with the model's proposal; written with the person's version, byte for byte.
    (request,) = baton.permission_requests
    assert request["toolCall"]["input"]["content"] == proposed
    assert target.read_text() == mine

    # The model's next request says its text did not land, with the diff to what did.
    output = llm.model_requests[1].tool_outputs()["call_w"]
    assert "the person's version" in output and "changed your proposal" in output
    assert "--- proposed/greeting.py\n+++ written/greeting.py\n" in output
    assert "\n-    return 'hello there'\n" in output
    assert "\n-def shout():\n-    return 'HEY'\n" in output
    assert "\n+    return 'hello, there'\n" in output
    assert "diff cut" not in output

    # Reviewable as what was written, and a revert takes it back with no conflict: the
    # checkpoint recorded the person's version as Baton's change.
    changes = await baton.request(
        "baton/session/changes", {"sessionId": sid, "toolCallId": "call_w"}
    )
    assert changes["changes"][0]["after"] == mine
    message_id = await last_user_message_id(baton, sid)
    reverted = await baton.request(
        "baton/session/revert", {"sessionId": sid, "messageId": message_id}
    )
    assert reverted["conflicts"] == []
    assert reverted["files"] == [{"path": "greeting.py", "action": "restored"}]
    assert target.read_text() == "def greet():\n    return 'hello'\n"


@pytest.mark.asyncio
async def test_an_edited_edit_of_many_lines_is_told_with_a_cut_diff_and_same_text_says_nothing(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    lines = [f"line {i}\n" for i in range(400)]
    (workspace / "big.txt").write_text("".join(lines))
    (workspace / "small.txt").write_text("a\nb\n")
    # The person rewrote every line of the file the model meant to change in one place.
    mine = "".join(f"mine {i}\n" for i in range(400))
    answers = iter(
        [
            {"outcome": {"optionId": "allow_once", "editedContent": mine}},
            # Unchanged from the proposal: an ordinary acceptance.
            {"outcome": {"optionId": "allow_once", "editedContent": "a\nB\n"}},
        ]
    )
    baton.permission_policy = lambda _: next(answers)
    llm.add(
        tool_call(
            "edit",
            {"path": "big.txt", "old_string": "line 7\n", "new_string": "line seven\n"},
            call_id="call_big",
        )
    )
    llm.add(
        tool_call(
            "edit", {"path": "small.txt", "old_string": "b", "new_string": "B"}, call_id="call_s"
        )
    )
    llm.add(text("Done."))
    sid = await baton.new_session()
    assert (await baton.prompt(sid, "edit both"))["stopReason"] == "end_turn"

    assert (workspace / "big.txt").read_text() == mine
    outputs = llm.model_requests[2].tool_outputs()
    big = outputs["call_big"]
    assert big.startswith("wrote big.txt (400 lines) with the person's version")
    assert "\n-line 0\n" in big
    assert "[... diff cut:" in big and "read big.txt to see what it holds" in big
    assert "+mine 399\n" not in big
    assert len(big) < 5000
    assert (workspace / "small.txt").read_text() == "a\nB\n"
    assert outputs["call_s"].startswith("edited small.txt: replaced 1 occurrence")


@pytest.mark.asyncio
async def test_malformed_or_misplaced_edited_content_writes_nothing_it_should_not(
    start_baton: Any, llm: FakeLLM, workspace: Path
) -> None:
    baton: BatonClient = await start_baton(settings={"permissions": {"bash": "ask"}})
    target = workspace / "notes.txt"
    target.write_text("keep\n")
    proposal = {"path": "notes.txt", "content": "model\n"}
    answers = iter(
        [
            # Not a string: a malformed answer, so nothing runs.
            {"outcome": {"optionId": "allow_once", "editedContent": 42}},
            # With a rejection: the content is ignored, nothing is written.
            {"outcome": {"optionId": "reject_once", "editedContent": "sneaky\n"}},
            # For bash: ignored; the command runs as proposed.
            {"outcome": {"optionId": "allow_once", "editedContent": "echo edited > bash.txt"}},
            # Every hunk undone: accepted, but nothing to write.
            {"outcome": {"optionId": "allow_once", "editedContent": "keep\n"}},
        ]
    )
    baton.permission_policy = lambda _: next(answers)
    llm.add(tool_call("write", proposal, call_id="call_1"))
    llm.add(tool_call("write", proposal, call_id="call_2"))
    llm.add(tool_call("bash", {"command": "echo proposed > bash.txt"}, call_id="call_3"))
    llm.add(tool_call("write", proposal, call_id="call_4"))
    llm.add(text("Done."))
    sid = await baton.new_session()
    assert (await baton.prompt(sid, "try things"))["stopReason"] == "end_turn"

    outputs = llm.model_requests[4].tool_outputs()
    assert "permission denied" in outputs["call_1"]
    assert "permission denied" in outputs["call_2"]
    assert (workspace / "bash.txt").read_text() == "proposed\n"
    assert "undid every change you proposed to notes.txt" in outputs["call_4"]
    assert target.read_text() == "keep\n"
    for call in ("call_1", "call_2", "call_4"):
        changes = await baton.request(
            "baton/session/changes", {"sessionId": sid, "toolCallId": call}
        )
        assert changes == {"changes": []}

    # The server is still there and answers as before.
    llm.add(text("still here"))
    assert (await baton.prompt(sid, "hello?"))["stopReason"] == "end_turn"


@pytest.mark.asyncio
async def test_undoing_one_hunk_of_an_applied_change_is_an_outside_change_a_forced_revert_takes(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    # What the extension's per-hunk undo does: the person's editor writes the file with
    # one hunk of Baton's change taken back. A later revert of the turn reports it as
    # changed outside Baton (refused, -32011), and `force` restores the turn's before.
    before = "".join(f"line {i}\n" for i in range(30))
    target = workspace / "two_hunks.txt"
    target.write_text(before)
    after = before.replace("line 2\n", "line two\n").replace("line 25\n", "line twenty-five\n")
    baton.permission_policy = lambda _: {"outcome": {"optionId": "allow_once"}}
    llm.add(tool_call("write", {"path": "two_hunks.txt", "content": after}, call_id="call_2h"))
    llm.add(text("Done."))
    sid = await baton.new_session()
    assert (await baton.prompt(sid, "change two lines"))["stopReason"] == "end_turn"
    assert target.read_text() == after
    message_id = await last_user_message_id(baton, sid)

    # One hunk undone in the editor: the first change is gone, the second stays.
    target.write_text(after.replace("line two\n", "line 2\n"))
    dry = await baton.request(
        "baton/session/revert", {"sessionId": sid, "messageId": message_id, "dryRun": True}
    )
    assert dry["conflicts"] == [{"path": "two_hunks.txt", "reason": "modified"}]
    error = await baton.error("baton/session/revert", {"sessionId": sid, "messageId": message_id})
    assert error.code == -32011
    assert target.read_text() == after.replace("line two\n", "line 2\n")
    forced = await baton.request(
        "baton/session/revert", {"sessionId": sid, "messageId": message_id, "force": True}
    )
    assert forced["files"] == [{"path": "two_hunks.txt", "action": "restored"}]
    assert target.read_text() == before

    # Every hunk undone by hand is the file as it was: a revert finds nothing to restore.
    llm.add(tool_call("write", {"path": "two_hunks.txt", "content": after}, call_id="call_3"))
    llm.add(text("Again."))
    assert (await baton.prompt(sid, "again"))["stopReason"] == "end_turn"
    target.write_text(before)
    again = await baton.request(
        "baton/session/revert",
        {"sessionId": sid, "messageId": await last_user_message_id(baton, sid)},
    )
    assert again["conflicts"] == []
    assert again["files"] == [{"path": "two_hunks.txt", "action": "unchanged"}]
