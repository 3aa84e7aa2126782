"""`baton acp` end to end: the SDK's client drives the real agent process and the scripted
model, as Zed or JetBrains would."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import (
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    ResourceContentBlock,
    TextContentBlock,
)

from baton.compaction.summary import SECTIONS
from tests.acp.conftest import StartAcp, allow_once
from tests.fake_llm import FakeLLM, reasoning, stall, text, tool_call, usage
from tests.harness import server_env

SUMMARY = "\n\n".join(f"## {name}\nsummary of {name.lower()}" for name in SECTIONS)
NATIVE = {"BATON_COMPACTION__STRATEGY": "native"}
PLAN = """# Greeting

- [ ] Write hello.py
- [ ] Run it
- [!] Deploy: waiting for keys
"""


async def error_of(call: Any) -> RequestError:
    try:
        result = await call
    except RequestError as exc:
        return exc
    raise AssertionError(f"succeeded with {result!r}; an error was expected")


@pytest.mark.asyncio
async def test_initialize_sessions_modes_models_and_auth(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp()
    init = await acp.client.raw("initialize", {"protocolVersion": 99})
    assert init["protocolVersion"] == 1  # negotiated down to the SDK's version
    caps = init["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": True}
    assert caps["mcpCapabilities"]["http"] is True
    session_caps = caps["sessionCapabilities"]
    assert {k: session_caps[k] for k in ("list", "resume", "close", "delete")} == {
        "list": {},
        "resume": {},
        "close": {},
        "delete": {},
    }
    # Subagent sessions only for a client that opted in.
    assert "subagents" not in session_caps
    method, claude = init["authMethods"]
    assert (method["id"], method["type"], method["vars"][0]["name"]) == (
        "openai-api-key",
        "env_var",
        "OPENAI_API_KEY",
    )
    assert (claude["id"], claude["vars"][0]["name"]) == ("anthropic-api-key", "ANTHROPIC_API_KEY")

    new = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[])
    assert new.modes is not None and new.modes.current_mode_id == "build"
    assert [m.id for m in new.modes.available_modes] == ["build", "plan"]
    mode, model = new.config_options or []
    assert (mode.id, mode.category, mode.current_value) == ("mode", "mode", "build")
    assert model.id == "model" and model.category == "model"
    await acp.client.wait(lambda: acp.client.of(new.session_id, "available_commands_update"))
    [commands] = acp.client.of(new.session_id, "available_commands_update")
    assert [c["name"] for c in commands["availableCommands"]] == [
        "compact",
        "plan",
        "approve",
        "review",
        "changes",
        "undo",
        "context",
    ]

    # Model choice through the config option: the next request goes to it.
    options = await acp.conn.set_config_option(
        config_id="model", session_id=new.session_id, value="gpt-test-mini"
    )
    assert options.config_options[1].current_value == "gpt-test-mini"
    llm.add(reasoning("weighing the greeting"), text("ok"), usage(input=120, output=7))
    answer = await acp.say(new.session_id, "hello")
    assert llm.model_requests[-1].body["model"] == "gpt-test-mini"
    sid = new.session_id
    assert "weighing the greeting" in acp.client.text(sid, "agent_thought_chunk")
    assert acp.client.text(sid) == "ok"
    [used] = acp.client.of(sid, "usage_update")
    assert used["used"] == 127 and used["size"] > 0
    # The turn's tokens in `_meta` (the stable schema's result has no `usage`).
    assert answer.usage is None
    assert answer.field_meta is not None
    turn_usage = answer.field_meta["usage"]
    assert (turn_usage["inputTokens"], turn_usage["outputTokens"]) == (120, 7)

    # The key travels as baton/auth/set's does and is used from then on.
    await acp.conn.authenticate(method_id="openai-api-key", apiKey="sk-acp-key-000111222333")
    llm.add(text("ok"))
    await acp.say(new.session_id, "again")
    assert llm.model_requests[-1].headers["authorization"] == "Bearer sk-acp-key-000111222333"
    bad = await error_of(acp.conn.authenticate(method_id="password"))
    assert bad.code == -32602 and "openai-api-key" in str(bad.data)

    # The first prompt named the session.
    assert acp.client.of(new.session_id, "session_info_update")[0]["title"] == "hello"
    # The mode is a config option too (for clients that use config options for modes).
    switched = await acp.conn.set_config_option(
        config_id="mode", session_id=new.session_id, value="plan"
    )
    assert switched.config_options[0].current_value == "plan"
    assert acp.client.of(new.session_id, "current_mode_update")[-1]["currentModeId"] == "plan"

    listed = await acp.conn.list_sessions(cwd=str(workspace))
    assert [(s.session_id, s.cwd, s.title) for s in listed.sessions] == [
        (new.session_id, str(workspace), "hello")
    ]


@pytest.mark.asyncio
async def test_plan_mode_plan_arrives_as_plan_updates_and_ticks_off(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp()
    sid = await acp.new()
    await acp.conn.set_session_mode(session_id=sid, mode_id="plan")
    assert acp.client.of(sid, "current_mode_update")[-1]["currentModeId"] == "plan"

    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Drafted."))
    assert (await acp.say(sid, "Plan a greeting script")).stop_reason == "end_turn"
    first = acp.client.of(sid, "plan")[-1]["entries"]
    assert first == [
        {"content": "Write hello.py", "status": "pending", "priority": "medium"},
        {"content": "Run it", "status": "pending", "priority": "medium"},
        {
            "content": "Deploy: waiting for keys",
            "status": "pending",
            "priority": "medium",
            "_meta": {"baton": {"state": "blocked"}},
        },
    ]
    [write_call] = [u for u in acp.client.of(sid, "tool_call") if u["rawInput"].get("content")]
    assert write_call["kind"] == "think"

    # /approve: build mode, and the build turn ticks the steps off.
    llm.add(tool_call("plan_edit", {"old_string": "- [ ] Write", "new_string": "- [~] Write"}))
    llm.add(tool_call("plan_edit", {"old_string": "- [~] Write", "new_string": "- [x] Write"}))
    llm.add(text("Built."))
    assert (await acp.say(sid, "/approve")).stop_reason == "end_turn"
    assert acp.client.of(sid, "current_mode_update")[-1]["currentModeId"] == "build"
    options = acp.client.of(sid, "config_option_update")[-1]["configOptions"]
    assert options[0]["id"] == "mode" and options[0]["currentValue"] == "build"
    statuses = [[e["status"] for e in u["entries"]] for u in acp.client.of(sid, "plan")]
    assert ["in_progress", "pending", "pending"] in statuses
    assert statuses[-1] == ["completed", "pending", "pending"]
    # Without the draft capability there is no plan_update.
    assert acp.client.of(sid, "plan_update") == []


@pytest.mark.asyncio
async def test_review_numbers_the_plan_and_changes_sends_line_notes_as_one_message(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp()
    sid = await acp.new()
    await acp.conn.set_session_mode(session_id=sid, mode_id="plan")
    llm.add(tool_call("plan_write", {"content": PLAN}), tool_call("plan_exit", {}))
    await acp.say(sid, "Plan a greeting script")
    before = len(acp.client.text(sid))
    assert (await acp.say(sid, "/review")).stop_reason == "end_turn"
    shown = acp.client.text(sid)[before:]
    assert "3| - [ ] Write hello.py\n4| - [ ] Run it" in shown and "/changes" in shown
    requests = len(llm.model_requests)

    llm.add(tool_call("plan_edit", {"old_string": "Run it", "new_string": "Run it twice"}))
    llm.add(tool_call("plan_exit", {}))
    notes = "/changes 3: use Python 3.12\n4 replace: - [ ] Run it twice\n5 delete\nKeep it short."
    assert (await acp.say(sid, notes)).stop_reason == "end_turn"
    sent = llm.model_requests[requests].last_user_text() or ""
    assert sent.startswith("Changes requested to the plan (v1), 3 note(s) on its lines:")
    assert "1. line 3 (comment):\n> 3| - [ ] Write hello.py\nComment: use Python 3.12" in sent
    assert "2. line 4 (replace):\n> 4| - [ ] Run it\nReplace with:\n- [ ] Run it twice" in sent
    assert "3. line 5 (delete):\n> 5| - [!] Deploy: waiting for keys\nDelete it." in sent
    assert "Overall: Keep it short." in sent
    # A note on a line the plan does not have changes nothing and says why.
    requests = len(llm.model_requests)
    bad = await error_of(acp.say(sid, "/changes 40: what?"))
    assert bad.code == -32602 and "not lines of the plan" in str(bad)
    assert len(llm.model_requests) == requests


@pytest.mark.asyncio
async def test_plan_file_update_for_clients_that_opt_in(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp(capabilities={"plan": {}})
    sid = await acp.new()
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Drafted."))
    # /plan with a request: plan mode, then the request as a prompt.
    await acp.say(sid, "/plan Plan it")
    assert acp.client.of(sid, "current_mode_update")[-1]["currentModeId"] == "plan"
    assert llm.model_requests[0].input_text().count("Plan it") >= 1
    [update] = acp.client.of(sid, "plan_update")
    [path] = sorted((workspace / ".baton" / "plans").glob("*.md"))
    plan_id = f".baton/plans/{path.name}"
    # The stable shape: the whole Markdown plan with its file's absolute path.
    assert update["plan"] == {
        "type": "markdown",
        "planId": plan_id,
        "content": PLAN,
        "path": str(path.resolve()),
    }
    assert update["_meta"]["baton"] == {"status": "draft", "version": 1}
    assert acp.client.of(sid, "plan")  # the entries are sent as well
    assert acp.client.checked["session/update plan_update"] == 1

    # An edit sends the whole plan again, under the same id.
    llm.add(tool_call("plan_edit", {"old_string": "Run it", "new_string": "Run it twice"}))
    llm.add(text("Edited."))
    await acp.say(sid, "run it twice")
    latest = acp.client.of(sid, "plan_update")[-1]["plan"]
    assert latest["planId"] == plan_id and "- [ ] Run it twice" in latest["content"]
    assert acp.client.of(sid, "plan_removed") == []

    # The person deletes the plan file: after the next turn the plan is removed, once.
    path.unlink()
    llm.add(text("Noted."))
    await acp.say(sid, "I deleted the plan")
    assert acp.client.of(sid, "plan_removed") == [
        {"sessionUpdate": "plan_removed", "planId": plan_id}
    ]
    llm.add(text("Still noted."))
    await acp.say(sid, "anything else?")
    assert len(acp.client.of(sid, "plan_removed")) == 1
    # Written again, it is back under its id.
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Rewritten."))
    await acp.say(sid, "write the plan again")
    assert path.is_file()
    assert acp.client.of(sid, "plan_update")[-1]["plan"]["planId"] == plan_id
    assert acp.client.checked["session/update plan_removed"] == 1


@pytest.mark.asyncio
async def test_edit_shows_a_diff_and_asks_permission(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    target = workspace / "app.py"
    target.write_text("print('hi')\n")
    acp = await start_acp()
    sid = await acp.new()
    acp.client.policy = allow_once
    llm.add(tool_call("read", {"path": "app.py"}))
    llm.add(tool_call("edit", {"path": "app.py", "old_string": "'hi'", "new_string": "'hello'"}))
    llm.add(text("Done."))
    assert (await acp.say(sid, "greet properly")).stop_reason == "end_turn"
    assert target.read_text() == "print('hello')\n"

    calls = acp.client.of(sid, "tool_call")
    assert [(c["kind"], c["title"]) for c in calls] == [
        ("read", "Read app.py"),
        ("edit", "Edit app.py"),
    ]
    assert calls[0]["locations"] == [{"path": str(target)}]
    diff = {
        "type": "diff",
        "path": str(target),
        "oldText": "print('hi')\n",
        "newText": "print('hello')\n",
    }
    assert calls[1]["content"] == [diff]
    [asked] = acp.client.permission_requests
    assert asked["toolCall"]["content"] == [diff]
    assert [(o["kind"], o.get("name")) for o in asked["options"]] == [
        ("allow_once", "Allow once"),
        ("allow_always", "Always allow changes to app.py in this session"),
        ("allow_always", "Always allow every file change in this session"),
        ("reject_once", "Reject"),
    ]
    finished = [
        u
        for u in acp.client.of(sid, "tool_call_update")
        if u["toolCallId"] == calls[1]["toolCallId"] and u["status"] == "completed"
    ]
    assert finished and finished[0]["content"][0] == diff

    # Loaded elsewhere, the edit shows the same diff (from Baton's checkpoints).
    viewer = await start_acp()
    await viewer.conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    [replayed] = [c for c in viewer.client.of(sid, "tool_call") if c["kind"] == "edit"]
    assert replayed["content"][0] == diff and replayed["status"] == "completed"

    # /undo takes the prompt back, file change included.
    assert (await acp.say(sid, "/undo")).stop_reason == "end_turn"
    assert target.read_text() == "print('hi')\n"
    assert "app.py: restored" in acp.client.text(sid)

    # Rejected: nothing is written and the tool call fails.
    acp.client.policy = lambda _req: _answer("reject_once")
    llm.add(tool_call("write", {"path": "app.py", "content": "gone\n"}))
    llm.add(text("Not allowed."))
    await acp.say(sid, "replace it")
    assert target.read_text() == "print('hi')\n"
    assert len(acp.client.permission_requests) == 2


@pytest.mark.asyncio
async def test_file_tools_use_the_editors_buffers_when_offered(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path, tmp_path: Path
) -> None:
    target = workspace / "app.py"
    target.write_text("x = 1\n")
    acp = await start_acp(fs=True)
    acp.client.buffers[str(target)] = "x = 2  # unsaved\n"
    (tmp_path / "secret.txt").write_text("outside\n")
    acp.client.policy = allow_once
    sid = await acp.new()
    llm.add(tool_call("read", {"path": "app.py"}))
    llm.add(tool_call("read", {"path": str(tmp_path / "secret.txt")}))
    llm.add(tool_call("edit", {"path": "app.py", "old_string": "x = 2", "new_string": "x = 3"}))
    llm.add(text("Done."))
    await acp.say(sid, "bump x")
    outputs = llm.model_requests[-1].tool_outputs()
    reads = [outputs[c["call_id"]] for c in llm.model_requests[-1].function_calls()]
    assert "x = 2  # unsaved" in reads[0]
    assert "outside" not in reads[1] and "workspace" in reads[1]
    # The edit matched the buffer's text and went back to the editor, not the disk.
    assert acp.client.buffers[str(target)] == "x = 3  # unsaved\n"
    assert target.read_text() == "x = 1\n"
    assert ("write", str(target)) in acp.client.fs_calls
    assert all(str(tmp_path / "secret.txt") != path for _, path in acp.client.fs_calls)
    [edit] = [c for c in acp.client.of(sid, "tool_call") if c["kind"] == "edit"]
    assert (edit["content"][0]["oldText"], edit["content"][0]["newText"]) == (
        "x = 2  # unsaved\n",
        "x = 3  # unsaved\n",
    )


@pytest.mark.asyncio
async def test_bash_runs_in_the_editors_terminal_when_offered(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp(terminal=True, env={"GITHUB_TOKEN": "ghp-secret-123"})
    acp.client.policy = allow_once
    sid = await acp.new()
    llm.add(tool_call("bash", {"command": "echo from-terminal; echo tok=$GITHUB_TOKEN; pwd"}))
    llm.add(tool_call("bash", {"command": "sleep 20", "timeout_ms": 500}))
    llm.add(text("Ran."))
    await acp.say(sid, "run it")
    first, second = acp.client.terminals.values()
    assert first["command"][:2] == ["bash", "-c"] and first["released"]
    # Credentials the agent would scrub are blanked for the editor's process too.
    assert first["env"].get("GITHUB_TOKEN") == "" and first["env"].get("OPENAI_API_KEY") == ""
    outputs = llm.model_requests[-1].tool_outputs()
    calls = llm.model_requests[-1].function_calls()
    ran = outputs[calls[0]["call_id"]]
    assert "from-terminal" in ran and "ghp-secret" not in ran and str(workspace) in ran
    assert ran.endswith("[exit code 0]")
    assert "timed out after 500 ms" in outputs[calls[1]["call_id"]] and second["killed"]
    shown = [
        u
        for u in acp.client.of(sid, "tool_call_update")
        if any(c.get("type") == "terminal" for c in u.get("content") or [])
    ]
    assert [u["content"][0]["terminalId"] for u in shown] == [
        "term-1",
        "term-1",
        "term-2",
        "term-2",
    ]
    assert [u["status"] for u in shown] == ["in_progress", "completed", "in_progress", "failed"]
    [start] = [c for c in acp.client.of(sid, "tool_call") if c["toolCallId"] == calls[0]["call_id"]]
    assert start["kind"] == "execute"


@pytest.mark.asyncio
async def test_the_editors_mcp_servers_join_the_session(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    demo = Path(__file__).resolve().parent.parent / "mcp_servers" / "demo_server.py"
    acp = await start_acp()
    acp.client.policy = allow_once
    new = await acp.conn.new_session(
        cwd=str(workspace),
        mcp_servers=[
            McpServerStdio(
                name="editor demo",
                command=sys.executable,
                args=[str(demo)],
                env=[EnvVariable(name="DEMO_GREETING", value="Ahoy")],
            ),
            McpServerStdio(
                name="broken",
                command=sys.executable,
                args=[str(demo)],
                env=[EnvVariable(name="DEMO_EXIT_AT_START", value="1")],
            ),
        ],
    )
    llm.add(tool_call("editor-demo__greet", {"name": "Ada"}, call_id="call_greet"))
    llm.add(text("Greeted."))
    await acp.say(new.session_id, "greet Ada")
    assert "editor-demo__greet" in llm.model_requests[0].tool_names
    assert llm.model_requests[-1].tool_outputs()["call_greet"] == "Ahoy, Ada!"
    # A server that cannot start is said plainly (ACP has no MCP status update).
    assert "[MCP server broken failed:" in acp.client.text(new.session_id)
    # Asked like any MCP call.
    assert [r["toolCall"]["rawInput"] for r in acp.client.permission_requests] == [{"name": "Ada"}]

    # A server Baton cannot connect to is left out and said, the session still starts.
    other = await acp.conn.new_session(
        cwd=str(workspace),
        mcp_servers=[
            HttpMcpServer(
                type="http",
                name="web",
                url="http://127.0.0.1:9/mcp",
                headers=[HttpHeader(name="Authorization", value="x")],
            )
        ],
    )
    await acp.client.wait(lambda: "left out" in acp.client.text(other.session_id))
    assert "web: Baton's HTTP MCP client sends no headers" in acp.client.text(other.session_id)


@pytest.mark.asyncio
async def test_workspace_trust_as_for_the_other_faces(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / ".baton").mkdir()
    (workspace / ".baton" / "config.toml").write_text('[permissions]\nbash = "allow"\n')
    command = {"command": "echo ran-it"}

    # Not trusted: the workspace may not relax a permission; the person is told once.
    acp = await start_acp()
    sid = await acp.new()
    llm.add(tool_call("bash", command))
    llm.add(text("Asked."))
    await acp.say(sid, "run it")
    assert len(acp.client.permission_requests) == 1
    assert "not trusted" in acp.client.text(sid) and "baton trust" in acp.client.text(sid)

    # Trusted by the editor's own setting (as VS Code's workspaceTrusted).
    trusted = await start_acp(meta={"baton": {"workspaceTrusted": True}})
    sid = await trusted.new()
    llm.add(tool_call("bash", command))
    llm.add(text("Ran."))
    await trusted.say(sid, "run it")
    assert trusted.client.permission_requests == []
    assert "not trusted" not in trusted.client.text(sid)

    # Trusted with `baton trust` in a terminal: the record counts for ACP too.
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "baton",
        "trust",
        str(workspace),
        env=server_env(home, None, None),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert await proc.wait() == 0
    recorded = await start_acp()
    sid = await recorded.new()
    llm.add(tool_call("bash", command))
    llm.add(text("Ran."))
    await recorded.say(sid, "run it")
    assert recorded.client.permission_requests == []

    bad = await error_of(
        recorded.conn.initialize(protocol_version=1, baton={"workspaceTrusted": "yes"})
    )
    assert bad.code == -32602 and "workspaceTrusted" in str(bad.data)


@pytest.mark.asyncio
async def test_a_missing_key_asks_the_editor_to_authenticate(
    start_acp: StartAcp, llm: FakeLLM
) -> None:
    acp = await start_acp(api_key=None, env={"BATON_PROVIDER": "openai"})
    sid = await acp.new()
    needed = await error_of(acp.say(sid, "hello"))
    assert needed.code == -32000 and "no OpenAI API key" in str(needed.data)
    await acp.conn.authenticate(method_id="openai-api-key", apiKey="sk-from-the-editor-0042")
    llm.add(text("Hi."))
    assert (await acp.say(sid, "hello again")).stop_reason == "end_turn"
    assert llm.model_requests[-1].headers["authorization"] == "Bearer sk-from-the-editor-0042"
    # The key never reaches the store.
    data = (acp.cwd.parent / "home" / "data").rglob("*")
    assert not any(b"sk-from-the-editor" in f.read_bytes() for f in data if f.is_file())


async def _answer(option: str) -> str:
    return option


@pytest.mark.asyncio
async def test_prompt_with_a_resource_link_attaches_the_file(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("QUOKKA-4411\n")
    acp = await start_acp()
    sid = await acp.new()
    llm.add(text("Seen."))
    await acp.conn.prompt(
        session_id=sid,
        prompt=[
            TextContentBlock(type="text", text="what does this say?"),
            ResourceContentBlock(
                type="resource_link", name="notes.md", uri=(workspace / "notes.md").as_uri()
            ),
        ],
    )
    assert "QUOKKA-4411" in llm.model_requests[-1].input_text()


@pytest.mark.asyncio
async def test_compact_with_instructions_then_load_the_compacted_session(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp(env=NATIVE)
    sid = await acp.new()
    # Enough history that a summary is worth a model call (a tiny range is never sent).
    detail = " ".join(f"note {n} about the build." for n in range(120))
    llm.add(text("First answer. " + detail))
    await acp.say(sid, "first question")
    llm.add(text("Second answer. " + detail))
    await acp.say(sid, "second question")

    llm.add(text(SUMMARY))
    assert (await acp.say(sid, "/compact keep the PELICAN notes")).stop_reason == "end_turn"
    assert "keep the PELICAN notes" in llm.model_requests[-1].input_text()
    # Without the draft capability, the compaction is told as an agent message.
    assert "conversation compacted (manual, native)" in acp.client.text(sid)
    assert acp.client.of(sid, "compaction_update") == []

    # /context answers from the core without a model call.
    requests = len(llm.model_requests)
    await acp.say(sid, "/context")
    assert "Context:" in acp.client.text(sid) and len(llm.model_requests) == requests

    # A new editor process loads it: history replayed, compacted messages marked,
    # the compaction as a draft update with its summary for a client that opts in.
    again = await start_acp(env=NATIVE, capabilities={"session": {"compaction": {}}})
    await again.conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    replayed = again.client.of(sid)
    users = [u for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert [u["content"]["text"] for u in users][:2] == ["first question", "second question"]
    assert all(u.get("_meta", {}).get("baton", {}).get("compacted") for u in users[:1])
    [compaction] = [u for u in replayed if u["sessionUpdate"] == "compaction_update"]
    assert compaction["status"] == "completed"
    assert compaction["summary"] == [{"type": "text", "text": SUMMARY}]
    agent = [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "agent_message_chunk"]
    assert [a.split(" ", 2)[:2] for a in agent[:2]] == [["First", "answer."], ["Second", "answer."]]

    # A further compaction, live, is a compaction_update pair with one id.
    llm.add(text("Third answer."))
    await again.say(sid, "third question")
    llm.add(text(SUMMARY))
    await again.say(sid, "/compact")
    live = again.client.of(sid, "compaction_update")[1:]
    assert [u["status"] for u in live] == ["in_progress", "completed"]
    assert live[0]["compactionId"] == live[1]["compactionId"]
    # The score of the compaction (issue 45) beside Baton's record id.
    score = live[1]["_meta"]["baton"]["score"]
    assert score["facts"] == score["inView"] + score["oneRecall"]
    assert 0 < score["viewTokens"] <= score["window"]
    # The summary streamed into it in between, as the schema's summary chunk.
    [chunk] = again.client.of(sid, "compaction_summary_chunk")
    assert chunk["compactionId"] == live[0]["compactionId"]
    assert chunk["content"] == {"type": "text", "text": SUMMARY}
    kinds = [u["sessionUpdate"] for u in again.client.of(sid)]
    assert kinds.index("compaction_summary_chunk") < len(kinds) - 1 - kinds[::-1].index(
        "compaction_update"
    )

    # A client asks for one itself, with instructions, by Baton's extension method:
    # reported with the same updates, answered with the record's id.
    llm.add(text("Fourth answer. " + detail))
    await again.say(sid, "fourth question")
    llm.add(text(SUMMARY))
    asked = await again.client.raw(
        "_baton/session/compact", {"sessionId": sid, "instructions": "keep the HERON notes"}
    )
    assert "keep the HERON notes" in llm.model_requests[-1].input_text()
    assert asked["committed"] is True and asked["compactionId"]
    third = again.client.of(sid, "compaction_update")[3:]
    assert [u["status"] for u in third] == ["in_progress", "completed"]
    assert third[1]["_meta"]["baton"]["compactionId"] == asked["compactionId"]
    bad = await error_of(again.client.raw("_baton/session/compact", {"sessionId": 7}))
    assert bad.code == -32602
    unknown = await error_of(again.client.raw("_baton/session/nothing", {"sessionId": sid}))
    assert unknown.code == -32601


@pytest.mark.asyncio
async def test_cancel_stops_the_turn(start_acp: StartAcp, llm: FakeLLM) -> None:
    acp = await start_acp()
    sid = await acp.new()
    llm.add(text("working", " on", " it"), stall(30, after=4))
    turn = asyncio.ensure_future(acp.say(sid, "do a long thing"))
    await llm.wait_for_requests_async(1)
    # The model has the request: the turn is running, mid-stream; cancel it now.
    await acp.conn.cancel(session_id=sid)
    result = await asyncio.wait_for(turn, 10)
    assert result.stop_reason == "cancelled"
    llm.add(text("fresh"))
    assert (await acp.say(sid, "next")).stop_reason == "end_turn"

    # Cancelled while the editor asks for permission: the question is dropped, nothing runs.
    asking = asyncio.Event()

    async def never(_req: dict[str, Any]) -> str | None:
        asking.set()
        await asyncio.sleep(3600)
        return None

    acp.client.policy = never
    llm.add(tool_call("bash", {"command": "touch ran.txt"}))
    turn = asyncio.ensure_future(acp.say(sid, "run something"))
    await asyncio.wait_for(asking.wait(), 10)
    await acp.conn.cancel(session_id=sid)
    assert (await asyncio.wait_for(turn, 10)).stop_reason == "cancelled"
    assert not (acp.cwd / "ran.txt").exists()


@pytest.mark.asyncio
async def test_bad_input_gets_clear_errors_and_the_agent_lives(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp()
    unknown = await error_of(acp.say("ses_nope", "hi"))
    assert unknown.code == -32002 and "ses_nope" in str(unknown)

    malformed = await error_of(acp.client.raw("session/prompt", {"sessionId": 5}))
    assert malformed.code == -32602
    missing = await error_of(acp.client.raw("session/new", {"mcpServers": []}))
    assert missing.code == -32602 and "cwd" in str(missing.data)
    relative = await error_of(acp.conn.new_session(cwd="relative/dir", mcp_servers=[]))
    # A broken settings file is said in the session, not only in a log.
    broken = workspace / "sub"
    (broken / ".baton").mkdir(parents=True)
    (broken / ".baton" / "config.toml").write_text("maxSteps = [\n")
    told = (await acp.conn.new_session(cwd=str(broken), mcp_servers=[])).session_id
    await acp.client.wait(lambda: "Baton configuration:" in acp.client.text(told))
    assert "not valid TOML" in acp.client.text(told)
    assert relative.code == -32602 and "absolute" in str(relative.data)

    sid = await acp.new()
    mode = await error_of(acp.conn.set_session_mode(session_id=sid, mode_id="yolo"))
    assert mode.code == -32602 and "build" in str(mode.data)
    empty = await error_of(acp.say(sid, "   "))
    assert empty.code == -32602

    # A prompt while another runs waits for its own turn (issue 50: it was refused as
    # busy); the running one is unharmed, and a cancel answers both.
    llm.add(text("slow", " and", " steady"), stall(30, after=4))
    first = asyncio.ensure_future(acp.say(sid, "long"))
    await llm.wait_for_requests_async(1)
    waiting = asyncio.ensure_future(acp.say(sid, "another"))
    await asyncio.sleep(0.3)
    assert not waiting.done() and not first.done()
    await acp.conn.cancel(session_id=sid)
    assert (await asyncio.wait_for(first, 10)).stop_reason == "cancelled"
    assert (await asyncio.wait_for(waiting, 10)).stop_reason == "cancelled"

    # A line that is JSON but not a message is answered, not fatal.
    acp.process.stdin.write(b"[1, 2]\n")
    await acp.process.stdin.drain()
    listed = await acp.conn.list_sessions(cwd=str(workspace))
    assert [s.session_id for s in listed.sessions] == [sid]


@pytest.mark.asyncio
async def test_approve_fresh_builds_in_a_fresh_context(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp()
    sid = await acp.new()
    await acp.conn.set_session_mode(session_id=sid, mode_id="plan")
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Drafted after a long discussion of the options."), tool_call("plan_exit", {}))
    await acp.say(sid, "Plan a greeting script; keep it in one file")
    seen = len(llm.model_requests)
    bad = await error_of(acp.say(sid, "/approve now"))
    assert bad.code == -32602 and "fresh" in str(bad)

    llm.add(text("Building."))
    assert (await acp.say(sid, "/approve fresh")).stop_reason == "end_turn"
    assert acp.client.of(sid, "current_mode_update")[-1]["currentModeId"] == "build"
    [build] = llm.model_requests[seen:]  # no summary call: one request, the build's
    sent = build.input_text()
    assert "keep it in one file" in sent and "<baton:plan>" in sent
    assert "long discussion of the options" not in sent


def _skill_file(root: Path, name: str, description: str) -> None:
    path = root / ".baton" / "skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nDo {name} with $1.\n")


@pytest.mark.asyncio
async def test_available_commands_list_the_skills_and_change_when_a_file_is_added(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    _skill_file(workspace, "deploy", "Deploy the service")
    _skill_file(workspace, "compact", "A skill that has a built-in's name")
    hint = workspace / ".claude" / "commands" / "greet.md"
    hint.parent.mkdir(parents=True)
    hint.write_text("---\ndescription: Greet someone\nargument-hint: <name>\n---\nGreet $1.\n")
    acp = await start_acp(meta={"baton": {"workspaceTrusted": True}})
    sid = await acp.new()
    await acp.client.wait(lambda: acp.client.of(sid, "available_commands_update"))
    [first] = acp.client.of(sid, "available_commands_update")
    names = [c["name"] for c in first["availableCommands"]]
    assert names[:7] == ["compact", "plan", "approve", "review", "changes", "undo", "context"]
    assert names[7:] == ["deploy", "greet"]  # `compact` the skill is not a second /compact
    greet = next(c for c in first["availableCommands"] if c["name"] == "greet")
    assert greet["description"] == "Greet someone" and greet["input"]["hint"] == "<name>"

    # A skill's command runs expanded; the model is sent the framed body.
    llm.add(text("Deployed."))
    await acp.say(sid, "/deploy staging")
    assert llm.model_requests[-1].last_user_text() == (
        '<baton:skill name="deploy">\nDo deploy with staging.\n</baton:skill>'
    )
    assert len(acp.client.of(sid, "available_commands_update")) == 1

    _skill_file(workspace, "release", "Cut a release")
    llm.add(text("ok"))
    await acp.say(sid, "hello")
    updates = acp.client.of(sid, "available_commands_update")
    assert len(updates) == 2
    assert [c["name"] for c in updates[1]["availableCommands"]][7:] == [
        "deploy",
        "greet",
        "release",
    ]

    # Loaded again, the command replays as typed, its expansion in _meta.
    again = await start_acp(meta={"baton": {"workspaceTrusted": True}})
    await again.conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    users = again.client.of(sid, "user_message_chunk")
    assert users[0]["content"]["text"] == "/deploy staging"
    assert users[0]["_meta"]["batonCommand"]["expanded"].startswith('<baton:skill name="deploy">')


@pytest.mark.asyncio
async def test_a_failed_turn_is_titled_by_its_cause(start_acp: StartAcp, llm: FakeLLM) -> None:
    from tests.fake_llm import rate_limit

    acp = await start_acp(env={"BATON_MAX_RETRIES": "1"})
    sid = await acp.new()
    llm.add(rate_limit(0))
    llm.add(rate_limit(0))
    limited = await error_of(acp.say(sid, "hello"))
    # The editor shows the message: the same title `baton run` and the sidebar give.
    assert str(limited) == (
        "The model server is rate-limiting requests. Baton retried 1 time."
        " Wait a moment, then retry."
    )
    assert limited.data["cause"] == "rate_limit"
    assert "returned HTTP 429" in limited.data["details"]
    llm.add(text("Hi."))
    assert (await acp.say(sid, "hello again")).stop_reason == "end_turn"


@pytest.mark.asyncio
async def test_a_prompt_sent_during_a_turn_is_queued_as_the_next_turn(
    start_acp: StartAcp, llm: FakeLLM
) -> None:
    acp = await start_acp()
    sid = await acp.new()
    llm.add(text("working", " on", " it"), stall(30, after=4))
    first = asyncio.ensure_future(acp.say(sid, "do a long thing"))
    await llm.wait_for_requests_async(1)
    # Sent while the turn runs: no "session busy", it waits for its own turn.
    second = asyncio.ensure_future(acp.say(sid, "then say bye"))
    await asyncio.sleep(0.5)
    assert not second.done()
    llm.add(text("Bye."))
    llm.release()
    assert (await asyncio.wait_for(first, 20)).stop_reason == "end_turn"
    assert (await asyncio.wait_for(second, 20)).stop_reason == "end_turn"
    assert len(llm.model_requests) == 2
    assert llm.model_requests[1].last_user_text() == "then say bye"

    # Cancelling the running turn answers the waiting prompt too; nothing of it runs.
    llm.add(text("working", " again"), stall(30, after=2))
    third = asyncio.ensure_future(acp.say(sid, "another long thing"))
    await llm.wait_for_requests_async(3)
    fourth = asyncio.ensure_future(acp.say(sid, "never mind"))
    await asyncio.sleep(0.5)
    await acp.conn.cancel(session_id=sid)
    assert (await asyncio.wait_for(third, 10)).stop_reason == "cancelled"
    assert (await asyncio.wait_for(fourth, 10)).stop_reason == "cancelled"
    llm.release()
    await asyncio.sleep(0.5)
    assert not any("never mind" in t for r in llm.model_requests for t in r.texts("user"))
