"""Review and undo through the real server process: diffs before edits, per-turn
checkpoints and `baton/session/revert`, before/after of completed changes, and editor
context attached to prompts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient

ALLOW_WRITES = {"permissions": {"write": "allow", "bash": "allow"}}


async def run_turn(baton: BatonClient, sid: str, text: str) -> str:
    """Run a turn to its end; the id of its prompt message (what revert takes)."""
    result = await baton.prompt(sid, text)
    assert result["stopReason"] == "end_turn", result
    loaded = await baton.load(sid)
    return next(m["id"] for m in reversed(loaded["messages"]) if m["role"] == "user")


# --------------------------------------------------------------------------- diffs


@pytest.mark.asyncio
async def test_a_write_is_asked_with_its_diff_rejected_then_asked_again_and_accepted(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    target = workspace / "greeting.txt"
    target.write_bytes(b"hello\nworld\n")
    seen_on_disk: list[bytes] = []
    answers = iter(["reject_once", "allow_once"])

    def policy(params: dict[str, Any]) -> dict[str, Any]:
        seen_on_disk.append(target.read_bytes())
        return {"outcome": {"optionId": next(answers)}}

    baton.permission_policy = policy
    change = {"path": "greeting.txt", "content": "hello\nthere\n"}
    llm.add(tool_call("write", change, call_id="call_w1"))
    llm.add(tool_call("write", change, call_id="call_w2"))
    llm.add(text("Written the second time."))
    sid = await baton.new_session()
    result = await baton.prompt(sid, "change the greeting")
    assert result["stopReason"] == "end_turn"

    first, second = baton.permission_requests
    for request, call_id in ((first, "call_w1"), (second, "call_w2")):
        assert request["toolCall"] == {"toolCallId": call_id, "name": "write", "input": change}
        assert request["diff"] == (
            "--- a/greeting.txt\n+++ b/greeting.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n"
        )
    # Rejected: nothing was written, and the model was told.
    assert seen_on_disk == [b"hello\nworld\n", b"hello\nworld\n"]
    assert "permission denied" in llm.model_requests[1].tool_outputs()["call_w1"]
    # Accepted: the file now holds exactly the proposed content.
    assert target.read_bytes() == b"hello\nthere\n"

    # The completed write stays reviewable: its before and after, from the checkpoint store.
    changes = await baton.request(
        "baton/session/changes", {"sessionId": sid, "toolCallId": "call_w2"}
    )
    assert changes == {
        "changes": [
            {
                "path": "greeting.txt",
                "existedBefore": True,
                "existsAfter": True,
                "before": "hello\nworld\n",
                "after": "hello\nthere\n",
                "reverted": False,
            }
        ]
    }
    rejected = await baton.request(
        "baton/session/changes", {"sessionId": sid, "toolCallId": "call_w1"}
    )
    assert rejected == {"changes": []}


@pytest.mark.asyncio
async def test_an_edit_is_asked_with_its_diff_and_allow_always_writes_stay_reviewable(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\ny = 2\n")
    baton.permission_policy = lambda params: {"outcome": {"optionId": "allow_always"}}
    llm.add(tool_call("edit", {"path": "app.py", "old_string": "y = 2", "new_string": "y = 3"}))
    llm.add(tool_call("write", {"path": "new.txt", "content": "fresh\n"}, call_id="call_new"))
    llm.add(text("done"))
    sid = await baton.new_session()
    await baton.prompt(sid, "bump y and add a file")
    # Asked once, for the edit, with its diff; the write went through under allow_always.
    assert [r["toolCall"]["name"] for r in baton.permission_requests] == ["edit"]
    assert "-y = 2\n+y = 3\n" in baton.permission_requests[0]["diff"]
    assert (workspace / "new.txt").read_text() == "fresh\n"
    changes = await baton.request(
        "baton/session/changes", {"sessionId": sid, "toolCallId": "call_new"}
    )
    assert changes["changes"] == [
        {
            "path": "new.txt",
            "existedBefore": False,
            "existsAfter": True,
            "after": "fresh\n",
            "reverted": False,
        }
    ]


# --------------------------------------------------------------------------- revert


async def _three_file_turns(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> tuple[str, str, str, dict[str, bytes]]:
    """Turn 1 edits b.py (kept); turn 2 edits a.txt and b.py and creates new/dir/c.txt."""
    (workspace / "a.txt").write_bytes(b"one\r\ntwo\r\nthree")  # CRLF, no final newline
    (workspace / "b.py").write_bytes("π = 3.14\nname = 'old'\n".encode())
    llm.add(tool_call("edit", {"path": "b.py", "old_string": "3.14", "new_string": "3.1416"}))
    llm.add(text("More precise."))
    sid = await baton.new_session()
    first = await run_turn(baton, sid, "turn one: precision")
    after_turn_one = {
        "a.txt": (workspace / "a.txt").read_bytes(),
        "b.py": (workspace / "b.py").read_bytes(),
    }
    llm.add(
        tool_call("edit", {"path": "a.txt", "old_string": "one\ntwo", "new_string": "1\n2"}),
        tool_call("edit", {"path": "b.py", "old_string": "'old'", "new_string": "'new'"}),
        tool_call("write", {"path": "new/dir/c.txt", "content": "created\n"}),
    )
    llm.add(tool_call("edit", {"path": "a.txt", "old_string": "three", "new_string": "3"}))
    llm.add(text("Three files changed."))
    second = await run_turn(baton, sid, "turn two: three files")
    assert (workspace / "a.txt").read_bytes() == b"1\r\n2\r\n3"
    assert (workspace / "b.py").read_bytes() == "π = 3.1416\nname = 'new'\n".encode()
    assert (workspace / "new/dir/c.txt").read_bytes() == b"created\n"
    return sid, first, second, after_turn_one


@pytest.mark.asyncio
async def test_revert_restores_three_files_to_the_exact_bytes_and_removes_a_created_one(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW_WRITES)
    sid, first_id, second_id, before = await _three_file_turns(baton, llm, workspace)

    preview = await baton.request(
        "baton/session/revert", {"sessionId": sid, "messageId": second_id, "dryRun": True}
    )
    assert preview["dryRun"] is True and preview["revertId"] is None
    assert preview["files"] == [
        {"path": "a.txt", "action": "restored"},
        {"path": "b.py", "action": "restored"},
        {"path": "new/dir/c.txt", "action": "removed"},
    ]
    assert preview["conflicts"] == []
    assert (workspace / "new/dir/c.txt").exists(), "a dry run changes nothing"

    result = await baton.request("baton/session/revert", {"sessionId": sid, "messageId": second_id})
    assert result["revertId"] and result["files"] == preview["files"]
    assert (workspace / "a.txt").read_bytes() == before["a.txt"] == b"one\r\ntwo\r\nthree"
    assert (workspace / "b.py").read_bytes() == before["b.py"]
    assert before["b.py"] == "π = 3.1416\nname = 'old'\n".encode(), "turn one's edit stays"
    assert not (workspace / "new").exists(), "the created file and its directories are gone"

    # Turn two's messages are marked reverted in load; turn one's are not.
    loaded = await baton.load(sid)
    marks = {m["id"]: m["reverted"] for m in loaded["messages"]}
    assert set(result["messageIds"]) == {
        m["id"] for m in loaded["messages"] if m["id"] in result["messageIds"]
    }
    assert marks[first_id] is False and marks[second_id] is True
    reverted = [m for m in loaded["messages"] if m["reverted"]]
    assert reverted[0]["id"] == second_id and len(reverted) == 4  # prompt + three steps

    # ... and out of the model's view.
    llm.add(text("Starting over."))
    await baton.prompt(sid, "turn three")
    request = llm.model_requests[-1]
    assert "turn one: precision" in request.input_text()
    assert "turn two" not in request.input_text()
    assert "new/dir/c.txt" not in request.input_text()
    assert request.texts("user")[-1] == "turn three"

    # Reverting again from the same message: nothing left to revert there... except turn three.
    again = await baton.request(
        "baton/session/revert", {"sessionId": sid, "messageId": second_id, "dryRun": True}
    )
    assert again["files"] == [] and len(again["messageIds"]) == 2


@pytest.mark.asyncio
async def test_revert_refused_after_an_outside_edit_then_forced(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW_WRITES)
    sid, _, second_id, before = await _three_file_turns(baton, llm, workspace)
    (workspace / "b.py").write_bytes(b"edited by the person\n")

    error = await baton.error("baton/session/revert", {"sessionId": sid, "messageId": second_id})
    assert error.code == -32011
    assert "b.py (changed since Baton's last change)" in error.message
    assert error.data == {"conflicts": [{"path": "b.py", "reason": "modified"}]}
    # Refused: nothing changed on disk or in the session.
    assert (workspace / "b.py").read_bytes() == b"edited by the person\n"
    assert (workspace / "a.txt").read_bytes() == b"1\r\n2\r\n3"
    assert not any(m["reverted"] for m in (await baton.load(sid))["messages"])

    forced = await baton.request(
        "baton/session/revert", {"sessionId": sid, "messageId": second_id, "force": True}
    )
    assert forced["conflicts"] == [{"path": "b.py", "reason": "modified"}]
    assert (workspace / "b.py").read_bytes() == before["b.py"]
    assert (workspace / "a.txt").read_bytes() == before["a.txt"]
    assert not (workspace / "new").exists()

    # The reverts survive a restart; reverting from the same message again finds nothing.
    await baton.lsp.shutdown_session()
    restarted = await start_baton(settings=ALLOW_WRITES)
    loaded = await restarted.load(sid)
    assert [m["reverted"] for m in loaded["messages"]] == [False] * 3 + [True] * 4
    error = await restarted.error(
        "baton/session/revert", {"sessionId": sid, "messageId": second_id}
    )
    assert error.code == -32602 and "already reverted" in error.message


@pytest.mark.asyncio
async def test_an_edit_between_turns_is_a_conflict_and_a_deleted_file_too(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW_WRITES)
    (workspace / "f.txt").write_text("v0\n")
    llm.add(tool_call("edit", {"path": "f.txt", "old_string": "v0", "new_string": "v1"}))
    llm.add(text("ok"))
    sid = await baton.new_session()
    first = await run_turn(baton, sid, "one")
    (workspace / "f.txt").write_text("vX\n")  # the person edits between turns
    llm.add(tool_call("edit", {"path": "f.txt", "old_string": "vX", "new_string": "v2"}))
    llm.add(tool_call("write", {"path": "g.txt", "content": "g\n"}))
    llm.add(text("ok"))
    await run_turn(baton, sid, "two")
    (workspace / "g.txt").unlink()
    preview = await baton.request(
        "baton/session/revert", {"sessionId": sid, "messageId": first, "dryRun": True}
    )
    assert preview["conflicts"] == [{"path": "f.txt", "reason": "changed_between"}]
    # g.txt was created by Baton and is gone already: nothing to do, no conflict.
    assert {"path": "g.txt", "action": "unchanged"} in preview["files"]
    await baton.request(
        "baton/session/revert",
        {"sessionId": sid, "messageId": first, "force": True},
    )
    assert (workspace / "f.txt").read_text() == "v0\n"


@pytest.mark.asyncio
async def test_revert_while_a_turn_runs_is_refused_as_busy(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    errors: list[Any] = []
    sid = ""

    async def policy(params: dict[str, Any]) -> dict[str, Any]:
        # The turn is waiting for this answer, so it is still running.
        errors.append(
            await baton.error("baton/session/revert", {"sessionId": sid, "messageId": "x"})
        )
        return {"outcome": {"optionId": "reject_once"}}

    baton.permission_policy = policy
    llm.add(tool_call("write", {"path": "a.txt", "content": "a"}))
    llm.add(text("ok"))
    sid = await baton.new_session()
    await baton.prompt(sid, "go")
    assert [e.code for e in errors] == [-32002]
    missing = await baton.error("baton/session/revert", {"sessionId": sid, "messageId": "nope"})
    assert missing.code == -32008
    unknown = await baton.error("baton/session/revert", {"sessionId": "ses_x", "messageId": "m"})
    assert unknown.code == -32001


@pytest.mark.asyncio
async def test_revert_lists_shell_commands_whose_effects_stay(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW_WRITES)
    llm.add(
        tool_call("bash", {"command": "echo made > by-shell.txt"}),
        tool_call("write", {"path": "by-tool.txt", "content": "tool\n"}),
    )
    llm.add(text("ok"))
    sid = await baton.new_session()
    turn = await run_turn(baton, sid, "make two files")
    result = await baton.request("baton/session/revert", {"sessionId": sid, "messageId": turn})
    assert result["files"] == [{"path": "by-tool.txt", "action": "removed"}]
    assert result["shellCommands"] == ["echo made > by-shell.txt"]
    assert any("shell commands are not checkpointed" in n for n in result["notes"])
    assert not (workspace / "by-tool.txt").exists()
    assert (workspace / "by-shell.txt").exists()


@pytest.mark.asyncio
async def test_revert_puts_the_plan_back_as_it_was_before_the_turn(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW_WRITES)
    plan_text = "# Plan\n\n- [ ] Write a.txt\n- [ ] Check it\n"
    llm.add(tool_call("plan_write", {"content": plan_text}))
    llm.add(text("planned"))
    sid = await baton.new_session()
    await run_turn(baton, sid, "plan it")
    before = await baton.request("baton/plan/get", {"sessionId": sid})
    assert "- [ ] Write a.txt" in before["content"]
    llm.add(
        tool_call("write", {"path": "a.txt", "content": "a\n"}),
        tool_call("plan_edit", {"old_string": "- [ ] Write", "new_string": "- [x] Write"}),
    )
    llm.add(text("step one done"))
    turn = await run_turn(baton, sid, "do step one")
    ticked = await baton.request("baton/plan/get", {"sessionId": sid})
    assert "- [x] Write a.txt" in ticked["content"]

    await baton.request("baton/session/revert", {"sessionId": sid, "messageId": turn})
    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    assert plan["content"] == before["content"]
    assert plan["version"] == ticked["version"] + 1
    on_disk = (workspace / plan["path"]).read_text()
    assert on_disk.endswith(before["content"]) and "- [x]" not in on_disk
    history = await baton.request("baton/plan/history", {"sessionId": sid})
    assert [v["author"] for v in history["versions"]][-1] == "user"
    assert not (workspace / "a.txt").exists()


# --------------------------------------------------------------------------- editor context


@pytest.mark.asyncio
async def test_a_selection_is_in_the_next_model_request_once_with_its_path_and_range(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    source = workspace / "src" / "app.py"
    source.parent.mkdir()
    source.write_text("".join(f"line_{n:02d} = {n}\n" for n in range(1, 31)))
    llm.add(text("That is lines 10 to 12."))
    sid = await baton.new_session()
    # An editor selection from line 10 (0-based 9) to the start of line 13: lines 10-12.
    selection = {
        "uri": source.as_uri(),
        "range": {"start": {"line": 9, "character": 4}, "end": {"line": 12, "character": 0}},
    }
    result = await baton.prompt(sid, "What does this do?", context=[selection])
    assert result["stopReason"] == "end_turn"

    sent = llm.model_requests[0].input_text()
    block = (
        '<baton:attachment path="src/app.py" lines="10-12">\n'
        "line_10 = 10\nline_11 = 11\nline_12 = 12\n"
        "</baton:attachment>"
    )
    assert sent.count(block) == 1
    assert sent.count("line_10 = 10") == 1
    assert "line_09" not in sent and "line_13" not in sent
    assert llm.model_requests[0].texts("user")[-1].endswith("What does this do?")

    # Stored with the prompt: shown in load, and still exactly once in later requests.
    loaded = await baton.load(sid)
    prompt = loaded["messages"][0]
    assert prompt["parts"][1] == {
        "type": "attachment",
        "uri": source.as_uri(),
        "path": "src/app.py",
        "startLine": 10,
        "endLine": 12,
        "source": "disk",
        "text": "line_10 = 10\nline_11 = 11\nline_12 = 12",
        "truncated": False,
    }
    llm.add(text("ok"))
    await baton.prompt(sid, "and now?")
    assert llm.model_requests[1].input_text().count("line_10 = 10") == 1


@pytest.mark.asyncio
async def test_unsaved_buffers_whole_files_and_refused_attachments(
    baton: BatonClient, llm: FakeLLM, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.md").write_text("on disk\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret\n")
    sid = await baton.new_session()

    llm.add(text("ok"))
    await baton.prompt(
        sid,
        "compare",
        context=[
            {"uri": (workspace / "notes.md").as_uri(), "text": "unsaved edit\n"},
            {"uri": "untitled:Untitled-1", "text": "scratch\n"},
            {"uri": "notes.md"},
        ],
    )
    sent = llm.model_requests[0].input_text()
    assert (
        '<baton:attachment path="notes.md" source="unsaved editor buffer">\nunsaved edit\n' in sent
    )
    assert '<baton:attachment path="untitled:Untitled-1" source="unsaved editor buffer">' in sent
    # Blank lines at its ends are trimmed by the framing (baton.framing.block).
    assert '<baton:attachment path="notes.md">\non disk\n</baton:attachment>' in sent

    refusals = [
        ({"uri": outside.as_uri()}, "params.context.0.uri: path escapes the workspace"),
        ({"uri": outside.as_uri(), "text": "x"}, "params.context.0.uri: path escapes"),
        ({"uri": "../secret.txt"}, "params.context.0.uri: path escapes the workspace"),
        ({"uri": "untitled:Untitled-2"}, "params.context.0.text: required"),
        ({"uri": (workspace / "missing.py").as_uri()}, "params.context.0.uri: no such file"),
        (
            {
                "uri": "notes.md",
                "range": {"start": {"line": 5, "character": 0}, "end": {"line": 6, "character": 0}},
            },
            "params.context.0.range: line 6 is past the end of notes.md (1 lines)",
        ),
    ]
    before = len((await baton.load(sid))["messages"])
    for item, message in refusals:
        error = await baton.error(
            "baton/session/prompt", {"sessionId": sid, "text": "x", "context": [item]}
        )
        assert error.code == -32602, item
        assert message in error.message, (item, error.message)
    assert len((await baton.load(sid))["messages"]) == before, "a refused prompt stores nothing"
    assert "top secret" not in str(llm.requests)
