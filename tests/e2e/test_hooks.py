"""Hooks and plugins end to end through the real server and the scripted model.

The examples from docs/plugins.md (docs/examples/) are installed into the
workspace and run as a person would use them.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from baton.compaction import summary as summaries
from baton.hooks.lifecycle import DEFAULT_PROMPT
from tests.conftest import StartBaton
from tests.e2e.test_compaction import FULL_SUMMARY
from tests.fake_llm import FakeLLM, overflow, stall, text, tool_call
from tests.harness import REPO, TEST_KEY, BatonClient, allow_once, never_answer

EXAMPLES = REPO / "docs" / "examples"
PY = sys.executable
CHECKPOINT_HOOK = "python3 .baton/hooks/checkpoint.py"


@pytest_asyncio.fixture
async def start_baton(start_baton: StartBaton) -> StartBaton:
    """Pin native compaction: these tests read the summary request, which only it makes."""

    async def start(*, settings: dict[str, Any] | None = None, **kwargs: Any) -> BatonClient:
        merged = dict(settings or {})
        merged["compaction"] = {"strategy": "native", **merged.get("compaction", {})}
        return await start_baton(settings=merged, **kwargs)

    return start


def is_summary_request(req: Any) -> bool:
    return bool(req.is_summary)


def install_command_examples(workspace: Path) -> None:
    hooks = workspace / ".baton" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    for path in (EXAMPLES / "hooks").iterdir():
        shutil.copy(path, hooks / path.name)
    shutil.copy(EXAMPLES / "config.toml", workspace / ".baton" / "config.toml")


def install_plugin_example(workspace: Path) -> None:
    plugins = workspace / ".baton" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLES / "archive_notes.py", plugins / "archive_notes.py")


def command(code: str, **extra: Any) -> dict[str, Any]:
    """A command hook running a line of Python."""
    return {"command": [PY, "-c", code], **extra}


def answering(answer: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return command(
        f"import sys; sys.stdin.read(); print({json.dumps(json.dumps(answer))})", **extra
    )


def dumping(path: Path, answer: dict[str, Any] | None = None) -> dict[str, Any]:
    """A command hook appending its stdin and environment to `path` as a JSON line."""
    code = (
        "import json, os, sys; "
        f"open({str(path)!r}, 'a').write(json.dumps({{'stdin': sys.stdin.read(), "
        "'env': dict(os.environ)}) + '\\n'); "
        f"print({json.dumps(json.dumps(answer or {}))})"
    )
    return command(code)


def pre_compact_parts(loaded: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for m in loaded["messages"] for p in m["parts"] if p["type"] == "pre_compact"]


async def short_history(baton: BatonClient, llm: FakeLLM) -> str:
    sid = await baton.new_session()
    # Long enough to be worth a summary: a tiny session has nothing to compact. The bulk
    # is the agent's (the person's words stay in the view verbatim in any case).
    llm.add(text("hello " + "with some context " * 60))
    assert (await baton.prompt(sid, "hi"))["stopReason"] == "end_turn"
    return sid


# --------------------------------------------------------------------------- pre_compact


@pytest.mark.asyncio
async def test_command_hook_runs_a_pre_compact_round_with_the_full_tool_set(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    install_command_examples(workspace)
    baton = await start_baton()
    baton.permission_policy = allow_once
    sid = await short_history(baton, llm)
    llm.add(tool_call("write", {"path": "CHECKPOINT.md", "content": "# Checkpoint\nstep 3 of 5\n"}))
    llm.add(text("Checkpoint written."))
    llm.add(text(FULL_SUMMARY))

    record = await baton.request("baton/session/compact", {"sessionId": sid})

    turn_request, round_first, round_second, summary_request = llm.model_requests
    # The round is an ordinary agent step: the same tools as a turn, the hook's prompt last.
    assert round_first.tool_names == turn_request.tool_names
    assert {"read", "write", "edit", "bash", "plan_write"} <= set(round_first.tool_names)
    assert (round_first.last_user_text() or "").startswith("Before this conversation is compacted")
    assert round_second.tool_outputs()
    # The write asked the person, as in any turn, and the file exists afterwards.
    assert [r["toolCall"]["name"] for r in baton.permission_requests] == ["write"]
    assert (workspace / "CHECKPOINT.md").read_text() == "# Checkpoint\nstep 3 of 5\n"
    # The round came before the summary and is part of what was summarised.
    assert is_summary_request(summary_request)
    assert "CHECKPOINT.md" in summary_request.input_text()
    assert record["preCompact"] == [{"hook": CHECKPOINT_HOOK, "ran": True}]
    assert record.get("summary") == FULL_SUMMARY, record["notes"]

    loaded = await baton.load(sid)
    started, closed = pre_compact_parts(loaded)
    assert started == {
        "type": "pre_compact",
        "hook": CHECKPOINT_HOOK,
        "prompt": round_first.last_user_text(),
        "trigger": "manual",
        "status": "started",
    }
    assert closed["status"] == "completed" and "error" not in closed
    roles = [
        m["role"] for m in loaded["messages"] if any(p["type"] == "pre_compact" for p in m["parts"])
    ]
    assert roles == ["user", "system"]
    # The round's end is not the end of a turn.
    assert len(baton.updates(sid, "turn_ended")) == 1
    assert any(u["text"] == started["prompt"] for u in baton.updates(sid, "user_message"))


@pytest.mark.asyncio
async def test_python_plugin_archives_notes_and_runs_a_round_each_compaction(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    install_plugin_example(workspace)
    baton = await start_baton(settings={"permissions": {"write": "allow"}})
    sid = await short_history(baton, llm)
    scratch = workspace / "notes" / "scratch.md"

    llm.add(tool_call("write", {"path": "notes/scratch.md", "content": "first notes: port 8123"}))
    llm.add(text("Notes saved."))
    llm.add(text(FULL_SUMMARY))
    first = await baton.request("baton/session/compact", {"sessionId": sid})
    assert scratch.read_text() == "first notes: port 8123"
    assert first["preCompact"] == [{"hook": "archive_notes", "ran": True}]
    round_request = llm.model_requests[1]
    assert "notes/scratch.md" in (round_request.last_user_text() or "")
    assert round_request.tool_names == llm.model_requests[0].tool_names
    # The plugin's compacting context reached the summary request.
    summary_request = llm.model_requests[3]
    assert is_summary_request(summary_request)
    assert "The agent's working notes are in notes/scratch.md; say so." in (
        summary_request.input_text()
    )

    llm.add(text("more"))
    await baton.prompt(sid, "carry on")
    llm.add(tool_call("write", {"path": "notes/scratch.md", "content": "second notes"}))
    llm.add(text("Saved again."))
    llm.add(text(FULL_SUMMARY))
    second = await baton.request("baton/session/compact", {"sessionId": sid})
    assert scratch.read_text() == "second notes"

    archive = workspace / ".baton" / "archive" / sid
    archived = sorted(archive.glob("scratch-*.md"))
    assert [p.read_text() for p in archived] == ["first notes: port 8123"]
    log = (archive / "compactions.log").read_text().splitlines()
    assert [line.split()[1] for line in log] == [first["compactionId"], second["compactionId"]]

    loaded = await baton.load(sid)
    assert [(p["hook"], p["status"]) for p in pre_compact_parts(loaded)] == [
        ("archive_notes", "started"),
        ("archive_notes", "completed"),
    ] * 2


@pytest.mark.asyncio
async def test_failing_hooks_leave_the_compaction_complete_with_errors_recorded(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    child_pid = workspace / "child.pid"
    plugins = workspace / ".baton" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "a_broken_import.py").write_text("raise RuntimeError('missing dependency')\n")
    (plugins / "b_raises.py").write_text(
        "from baton.hooks import hookimpl\n\n"
        "@hookimpl\ndef baton_pre_compact(event):\n    raise ValueError('plugin bug')\n"
    )
    hooks = [
        command("import sys; sys.stdin.read(); raise RuntimeError('hook crashed')", name="crash"),
        command(
            "import subprocess, time; "
            f"p = subprocess.Popen(['sleep', '60']); open({str(child_pid)!r}, 'w').write(str(p.pid)); "
            "time.sleep(60)",
            name="hang",
            timeout=1,
        ),
        command("print('this is not json')", name="garbage"),
        command("import sys; print('{\"shouldRun\": true}'); sys.exit(3)", name="exit3"),
        answering({"shouldRun": True, "prompt": "Write saved.txt now."}, name="good"),
    ]
    baton = await start_baton(
        settings={"hooks": {"preCompact": hooks}, "permissions": {"write": "allow"}}
    )
    sid = await short_history(baton, llm)
    # The plugin that cannot import was skipped and the editor was told.
    for _ in range(50):
        warnings = [m.message for m in baton.lsp.messages]
        if any(
            "a_broken_import.py was skipped: RuntimeError: missing dependency" in w
            for w in warnings
        ):
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"no warning about the broken plugin in {warnings}")
    llm.add(tool_call("write", {"path": "saved.txt", "content": "kept"}))
    llm.add(text("done"))
    llm.add(text(FULL_SUMMARY))

    started = time.monotonic()
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert time.monotonic() - started < 20

    outcomes = {o["hook"]: o for o in record["preCompact"]}
    assert list(outcomes) == ["crash", "hang", "garbage", "exit3", "good", "b_raises"]
    assert "hook crashed" in outcomes["crash"]["error"]
    assert "timed out after 1 s" in outcomes["hang"]["error"]
    assert "not JSON: this is not json" in outcomes["garbage"]["error"]
    assert "exited with code 3" in outcomes["exit3"]["error"]
    assert outcomes["b_raises"]["error"] == "ValueError: plugin bug"
    assert all(not o["ran"] for name, o in outcomes.items() if name != "good")
    assert outcomes["good"] == {"hook": "good", "ran": True}
    assert (workspace / "saved.txt").read_text() == "kept"
    assert record.get("summary") == FULL_SUMMARY, record["notes"]
    assert not baton.updates(sid, "compaction_failed")
    # The hung hook's child was killed with its process group.
    pid = int(child_pid.read_text())
    for _ in range(40):
        if not Path(f"/proc/{pid}").exists() or "Z" in _state(pid):
            break
        await asyncio.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


@pytest.mark.asyncio
async def test_round_limits_time_and_steps_are_recorded(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    hooks = [
        answering({"shouldRun": True, "prompt": "slow round"}, name="slow"),
        answering({"shouldRun": True, "prompt": "busy round"}, name="busy"),
    ]
    baton = await start_baton(
        settings={"hooks": {"preCompact": hooks, "preCompactTimeout": 1, "preCompactMaxSteps": 2}}
    )
    sid = await short_history(baton, llm)
    llm.add(text("thinking"), stall(30, after=2))
    llm.add(tool_call("glob", {"pattern": "*"}))
    llm.add(tool_call("glob", {"pattern": "**/*"}))
    llm.add(text(FULL_SUMMARY))
    try:
        record = await baton.request("baton/session/compact", {"sessionId": sid})
    finally:
        llm.release()
    assert record["preCompact"] == [
        {"hook": "slow", "ran": True, "error": "timed out after 1 s"},
        {"hook": "busy", "ran": True, "error": "stopped at the step limit (2 steps)"},
    ]
    assert record.get("summary") == FULL_SUMMARY, record["notes"]
    parts = pre_compact_parts(await baton.load(sid))
    assert [(p["hook"], p["status"], p.get("error")) for p in parts] == [
        ("slow", "started", None),
        ("slow", "failed", "timed out after 1 s"),
        ("busy", "started", None),
        ("busy", "failed", "stopped at the step limit (2 steps)"),
    ]


@pytest.mark.asyncio
async def test_an_unanswered_permission_ends_the_round_and_the_compaction_goes_on(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    withdrawn = asyncio.Event()
    hook = answering({"shouldRun": True, "prompt": "Save notes."}, name="notes")
    baton = await start_baton(
        settings={"hooks": {"preCompact": [hook], "preCompactPermissionTimeout": 1}}
    )
    sid = await short_history(baton, llm)
    baton.permission_policy = never_answer(withdrawn)
    llm.add(tool_call("bash", {"command": "echo saved > notes.txt"}))
    llm.add(text(FULL_SUMMARY))
    started = time.monotonic()
    record = await asyncio.wait_for(baton.request("baton/session/compact", {"sessionId": sid}), 20)
    error = "the permission request for bash was not answered within 1 s"
    assert record["preCompact"] == [{"hook": "notes", "ran": True, "error": error}]
    assert record.get("summary") == FULL_SUMMARY, record["notes"]
    assert time.monotonic() - started < 10
    await asyncio.wait_for(withdrawn.wait(), 5)
    assert not (workspace / "notes.txt").exists()
    parts = pre_compact_parts(await baton.load(sid))
    assert [(p["status"], p.get("error")) for p in parts] == [("started", None), ("failed", error)]
    # The round ended at once: no model request after the unanswered one.
    assert len(llm.model_requests) == 3


@pytest.mark.asyncio
async def test_cancel_stops_the_round_and_the_compaction_goes_on(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    hook = answering({"shouldRun": True, "prompt": "a long round"}, name="long")
    baton = await start_baton(settings={"hooks": {"preCompact": [hook]}})
    sid = await short_history(baton, llm)
    llm.add(text("working"), stall(30, after=2))
    llm.add(text(FULL_SUMMARY))
    compact = asyncio.ensure_future(baton.request("baton/session/compact", {"sessionId": sid}))
    await llm.wait_for_requests_async(2)
    await asyncio.sleep(0.3)
    baton.notify("baton/session/cancel", {"sessionId": sid})
    try:
        record = await asyncio.wait_for(compact, 15)
    finally:
        llm.release()
    assert record["preCompact"] == [{"hook": "long", "ran": True, "error": "cancelled"}]
    assert record.get("summary") == FULL_SUMMARY, record["notes"]


@pytest.mark.asyncio
async def test_round_inside_a_running_turn_then_the_turn_finishes(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    hook = answering({"shouldRun": True, "prompt": "Save round.txt."}, name="saver")
    baton = await start_baton(
        settings={
            "hooks": {"preCompact": [hook]},
            "permissions": {"bash": "allow", "write": "allow"},
        }
    )
    sid = await baton.new_session()
    llm.add(tool_call("bash", {"command": "sleep 1; echo slept"}))
    llm.add(tool_call("write", {"path": "round.txt", "content": "from the round"}))
    llm.add(text("saved"))
    llm.add(text(FULL_SUMMARY))
    llm.add(text("finished"))
    # Long enough to be worth a summary: a tiny session has nothing to compact.
    prompt = asyncio.ensure_future(baton.prompt(sid, "sleep then answer " + "context " * 120))
    await baton.wait_update("tool_call_update", sid)
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    result = await asyncio.wait_for(prompt, 20)

    assert result["stopReason"] == "end_turn"
    assert record["preCompact"] == [{"hook": "saver", "ran": True}]
    assert (workspace / "round.txt").read_text() == "from the round"
    assert "finished" in baton.streamed_text(sid)
    # One turn, one end: the nested round did not end it early.
    assert [u["stopReason"] for u in baton.updates(sid, "turn_ended")] == ["end_turn"]
    kinds = [u["kind"] for u in baton.updates(sid)]
    assert kinds.index("compaction_finished") < kinds.index("turn_ended")


@pytest.mark.asyncio
async def test_auto_compaction_round_never_compacts_itself(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    prompt = "Write progress.txt."
    hook = answering({"shouldRun": True, "prompt": prompt}, name="progress")
    baton = await start_baton(
        settings={
            "contextWindow": 8000,
            "maxSteps": 20,
            "permissions": {"bash": "allow", "write": "allow"},
            "hooks": {"preCompact": [hook]},
        }
    )
    counter = {"steps": 0, "rounds": 0}

    def handler(req: Any) -> Any:
        if is_summary_request(req):
            return text(FULL_SUMMARY)
        if req.last_user_text() == prompt:
            if req.items[-1].get("role") == "user":
                counter["rounds"] += 1
                return tool_call(
                    "write", {"path": "progress.txt", "content": f"r{counter['rounds']}"}
                )
            return text("noted")
        if counter["steps"] < 6:
            counter["steps"] += 1
            return tool_call(
                "bash", {"command": f"python3 -c \"print('x' * 6000)\" # {counter['steps']}"}
            )
        return text("All steps done.")

    llm.on_request(handler)
    sid = await baton.new_session()
    result = await baton.prompt(sid, "run the six commands")
    assert result["stopReason"] == "end_turn"
    records = (await baton.request("baton/session/compactions", {"sessionId": sid}))["compactions"]
    started = baton.updates(sid, "compaction_started")
    assert records and len(started) == len(records) == counter["rounds"]
    assert all(r["trigger"] == "auto" for r in records)
    assert all(r["preCompact"] == [{"hook": "progress", "ran": True}] for r in records)
    assert not baton.updates(sid, "compaction_failed")
    assert [u["stopReason"] for u in baton.updates(sid, "turn_ended")] == ["end_turn"]


@pytest.mark.asyncio
async def test_a_provider_error_in_the_round_is_recorded_without_a_nested_compaction(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    hook = answering({"shouldRun": True}, name="asks")
    baton = await start_baton(settings={"hooks": {"preCompact": [hook]}})
    sid = await short_history(baton, llm)
    llm.add(overflow())
    llm.add(text(FULL_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    [outcome] = record["preCompact"]
    assert outcome["ran"] is True
    assert outcome["error"].startswith("provider error:")
    assert record.get("summary") == FULL_SUMMARY, record["notes"]
    # Without a prompt the round gets Baton's default one.
    assert llm.model_requests[1].last_user_text() == DEFAULT_PROMPT
    # The overflow in the round did not start a compaction of its own.
    assert len(baton.updates(sid, "compaction_started")) == 1


@pytest.mark.asyncio
async def test_round_before_server_side_compaction(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    hook = answering({"shouldRun": True, "prompt": "Write server.txt."}, name="saver")
    baton = await start_baton(
        settings={
            "compaction": {"strategy": "server"},
            "hooks": {"preCompact": [hook]},
            "permissions": {"write": "allow"},
        }
    )
    sid = await short_history(baton, llm)
    llm.add(tool_call("write", {"path": "server.txt", "content": "saved before compaction"}))
    llm.add(text("saved"))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["strategy"] == "server"
    assert record["preCompact"] == [{"hook": "saver", "ran": True}]
    assert (workspace / "server.txt").read_text() == "saved before compaction"
    # The round is part of what the server compacted.
    [compact_request] = llm.compact_requests
    assert "server.txt" in compact_request.input_text()


# --------------------------------------------------------------------------- compacting / compacted


@pytest.mark.asyncio
async def test_compacting_context_and_prompt_shape_the_summary_request(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    hooks = [
        answering({"context": ["Keep the port number 8123."]}, name="ctx"),
        command("import sys; sys.exit(2)", name="broken"),
        answering({"prompt": "Summarise for the BATON-TEST handover."}, name="prompt"),
    ]
    baton = await start_baton(settings={"hooks": {"compacting": hooks}})
    sid = await short_history(baton, llm)
    llm.add(text(FULL_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    summary_request = llm.model_requests[-1]
    assert is_summary_request(summary_request)
    user_part = summary_request.last_user_text() or ""
    assert "- Keep the port number 8123." in user_part
    # The hook's prompt replaces Baton's instructions line, right after Baton's opening.
    assert "is being compacted. Summarise for the BATON-TEST handover." in user_part
    assert summaries.INSTRUCTIONS not in user_part
    # Baton's own requirements stay, after the hook's part; the session's instructions
    # are reused unchanged (the prompt cache holds).
    assert "Write markdown with exactly these five sections" in user_part
    assert summary_request.instructions == llm.model_requests[0].instructions
    assert any("compacting hook broken failed: exited with code 2" in n for n in record["notes"])


@pytest.mark.asyncio
async def test_compacted_hook_gets_the_committed_record_and_cannot_undo_it(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    dump = workspace / "compacted.jsonl"
    hooks = [command("import sys; sys.exit(1)", name="fails"), dumping(dump)]
    baton = await start_baton(settings={"hooks": {"compacted": hooks}})
    sid = await short_history(baton, llm)
    llm.add(text(FULL_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    event = json.loads(json.loads(dump.read_text())["stdin"])
    assert event == {"sessionId": sid, "compaction": record}
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert [c["compactionId"] for c in listed["compactions"]] == [record["compactionId"]]
    assert not baton.updates(sid, "compaction_failed")


# --------------------------------------------------------------------------- tools


@pytest.mark.asyncio
async def test_tool_before_denial_reaches_the_model_and_tool_after_sees_output(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    install_command_examples(workspace)
    after = workspace / "after.jsonl"
    (workspace / "build").mkdir()
    baton = await start_baton(
        settings={"permissions": {"bash": "allow"}, "hooks": {"toolAfter": [dumping(after)]}}
    )
    sid = await baton.new_session()
    llm.add(tool_call("bash", {"command": "rm -rf build"}))
    llm.add(tool_call("bash", {"command": "echo kept"}))
    llm.add(text("ok"))
    result = await baton.prompt(sid, "clean up")
    assert result["stopReason"] == "end_turn"

    assert (workspace / "build").is_dir(), "the denied command must not run"
    denied = list(llm.model_requests[1].tool_outputs().values())[-1]
    assert denied == (
        "[not run: denied by hook guard: rm -rf is not allowed in this workspace; "
        "remove files one at a time]"
    )
    updates = [u for u in baton.updates(sid, "tool_call_update") if u["status"] == "failed"]
    assert updates and "denied by hook guard" in updates[0]["output"]
    # Only the command that ran was seen by tool_after, with its output.
    seen = [json.loads(json.loads(line)["stdin"]) for line in after.read_text().splitlines()]
    assert [(e["name"], e["input"]) for e in seen] == [("bash", {"command": "echo kept"})]
    assert seen[0]["output"].startswith("kept")
    assert seen[0]["sessionId"] == sid


@pytest.mark.asyncio
async def test_an_installed_entry_point_plugin_is_loaded(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    (site / "audit_plugin").mkdir(parents=True)
    (site / "audit_plugin" / "__init__.py").write_text(
        "from baton.hooks import hookimpl\n\n"
        "@hookimpl\nasync def baton_tool_after(event, workspace):\n"
        "    with open(workspace / 'audit.log', 'a') as log:\n"
        "        log.write(f'{event.name} {event.input}\\n')\n"
    )
    info = site / "audit_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: audit-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[baton.plugins]\naudit = audit_plugin\n")
    baton = await start_baton(env={"PYTHONPATH": f"{REPO / 'server'}{os.pathsep}{site}"})
    sid = await baton.new_session()
    llm.add(tool_call("glob", {"pattern": "*.nothing"}))
    llm.add(text("none"))
    await baton.prompt(sid, "look")
    assert (workspace / "audit.log").read_text() == "glob {'pattern': '*.nothing'}\n"


# --------------------------------------------------------------------------- credentials


@pytest.mark.asyncio
async def test_no_hook_input_contains_an_api_key(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    client_key = "client-set-key-0123456789ZYXW"
    dumps = {name: workspace / f"{name}.jsonl" for name in ("pre", "ing", "ed", "before", "after")}
    spy = workspace / "plugin.jsonl"
    plugins = workspace / ".baton" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "spy.py").write_text(
        "from baton.hooks import hookimpl\n\n"
        "def _dump(event):\n"
        f"    open({str(spy)!r}, 'a').write(event.model_dump_json() + '\\n')\n\n"
        "@hookimpl\ndef baton_pre_compact(event):\n    _dump(event)\n\n"
        "@hookimpl\ndef baton_tool_before(event):\n    _dump(event)\n\n"
        "@hookimpl\ndef baton_tool_after(event):\n    _dump(event)\n\n"
        "@hookimpl\ndef baton_compacted(event):\n    _dump(event)\n"
    )
    baton = await start_baton(
        settings={
            "permissions": {"write": "allow"},
            "hooks": {
                "preCompact": [dumping(dumps["pre"], {"shouldRun": False})],
                "compacting": [dumping(dumps["ing"])],
                "compacted": [dumping(dumps["ed"])],
                "toolBefore": [dumping(dumps["before"])],
                "toolAfter": [dumping(dumps["after"])],
            },
        }
    )
    await baton.request("baton/auth/set", {"provider": "openai", "apiKey": client_key})
    sid = await baton.new_session()
    llm.add(tool_call("write", {"path": "keys.txt", "content": f"{TEST_KEY} {client_key}"}))
    llm.add(text(f"I wrote {TEST_KEY} and {client_key} " + "as asked " * 150))
    await baton.prompt(sid, f"store my keys {TEST_KEY} and {client_key} in keys.txt")
    llm.add(text(FULL_SUMMARY))
    await baton.request("baton/session/compact", {"sessionId": sid})
    # The client's key was used for the model, and the tool really got the keys.
    assert llm.model_requests[-1].api_key == client_key
    assert (workspace / "keys.txt").read_text() == f"{TEST_KEY} {client_key}"

    for name, path in [*dumps.items(), ("plugin", spy)]:
        content = path.read_text()
        assert content, name
        assert TEST_KEY not in content, name
        assert client_key not in content, name
    for path in dumps.values():
        for line in path.read_text().splitlines():
            env = json.loads(line)["env"]
            assert "OPENAI_API_KEY" not in env
            assert not any(v in (TEST_KEY, client_key) for v in env.values())
    pre = json.loads(json.loads(dumps["pre"].read_text())["stdin"])
    assert "[REDACTED]" in json.dumps(pre["messages"])
