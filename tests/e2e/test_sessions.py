"""The session methods, their errors, and a turn's life, through the real server process."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import (
    FakeLLM,
    error,
    invalid_tool_args,
    rate_limit,
    reasoning,
    text,
    tool_call,
    usage,
)
from tests.harness import TEST_KEY, BatonClient, allow_once, never_answer


@pytest.mark.asyncio
async def test_new_list_load_and_modes(baton: BatonClient, llm: FakeLLM) -> None:
    sid = await baton.new_session(title="Refactor parser", mode="plan")
    listed = await baton.request("baton/session/list", {})
    assert [s["sessionId"] for s in listed["sessions"]] == [sid]
    info = listed["sessions"][0]
    assert info["title"] == "Refactor parser" and info["mode"] == "plan"
    assert info["createdAt"].endswith("Z")

    assert await baton.request("baton/session/setMode", {"sessionId": sid, "mode": "build"}) == {
        "mode": "build"
    }
    assert baton.updates(sid, "mode") == [{"kind": "mode", "mode": "build"}]
    loaded = await baton.load(sid)
    assert {k: loaded[k] for k in ("sessionId", "title", "mode", "messages")} == {
        "sessionId": sid,
        "title": "Refactor parser",
        "mode": "build",
        "messages": [],
    }

    # A session with no title is named after its first request.
    other = await baton.new_session()
    llm.add(text("ok"))
    await baton.prompt(other, "Explain   the build\nsystem please")
    titles = {
        s["sessionId"]: s["title"] for s in (await baton.request("baton/session/list"))["sessions"]
    }
    assert titles[other] == "Explain the build system please"


@pytest.mark.asyncio
async def test_a_request_without_params_is_answered(baton: BatonClient) -> None:
    # pygls as shipped never answers a request whose JSON has no "params" member.
    result = await asyncio.wait_for(baton.request("baton/session/list"), 5)
    assert result == {"sessions": []}


@pytest.mark.asyncio
async def test_streaming_order_reasoning_text_usage(baton: BatonClient, llm: FakeLLM) -> None:
    llm.add(reasoning("Thinking it over."), text("Hel", "lo ", "world"), usage(input=321, output=9))
    sid = await baton.new_session()
    result = await baton.prompt(sid, "hi")
    assert result == {"stopReason": "end_turn"}
    kinds = [u["kind"] for u in baton.updates(sid)]
    assert kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk")
    assert kinds.index("agent_message_chunk") < kinds.index("usage") < kinds.index("turn_ended")
    chunks = [u["text"] for u in baton.updates(sid, "agent_message_chunk")]
    assert chunks == ["Hel", "lo ", "world"], "chunks are forwarded as they arrive"
    usage_update = baton.updates(sid, "usage")[0]
    assert usage_update["tokens"] == 330
    assert usage_update["contextWindow"] > 0
    loaded = await baton.load(sid)
    user, assistant = loaded["messages"]
    assert user["role"] == "user" and user["parts"] == [{"type": "text", "text": "hi"}]
    assert assistant["parts"] == [
        {"type": "reasoning", "text": "Thinking it over."},
        {"type": "text", "text": "Hello world"},
    ]


@pytest.mark.asyncio
async def test_tool_round_trip(baton: BatonClient, llm: FakeLLM, workspace: Path) -> None:
    (workspace / "hello.txt").write_text("greetings from the workspace\n")
    llm.add(text("Let me look."), tool_call("read", {"path": "hello.txt"}, call_id="call_1"))
    llm.add(text("It says greetings."))
    sid = await baton.new_session()
    result = await baton.prompt(sid, "what does hello.txt say?")
    assert result["stopReason"] == "end_turn"

    started = baton.updates(sid, "tool_call")
    assert started == [
        {
            "kind": "tool_call",
            "toolCallId": "call_1",
            "name": "read",
            "input": {"path": "hello.txt"},
            "status": "pending",
        }
    ]
    statuses = [u["status"] for u in baton.updates(sid, "tool_call_update")]
    assert statuses == ["in_progress", "completed"]
    second = llm.model_requests[1]
    outputs = second.tool_outputs()
    assert "greetings from the workspace" in outputs["call_1"]
    assert second.function_calls()[0]["name"] == "read"
    assert second.tool_names[:6] == ["read", "write", "edit", "glob", "grep", "bash"]

    loaded = await baton.load(sid)
    call = loaded["messages"][1]["parts"][1]
    assert call["type"] == "tool_call" and call["status"] == "completed"
    assert "greetings from the workspace" in call["output"]


@pytest.mark.asyncio
async def test_invalid_tool_arguments_reach_the_model_as_a_tool_error(
    baton: BatonClient, llm: FakeLLM
) -> None:
    llm.add(invalid_tool_args("read", "{not json"))
    llm.add(text("Sorry, fixed."))
    sid = await baton.new_session()
    result = await baton.prompt(sid, "read something")
    assert result["stopReason"] == "end_turn"
    output = next(iter(llm.model_requests[1].tool_outputs().values()))
    assert "not valid JSON" in output
    assert baton.updates(sid, "tool_call_update")[-1]["status"] == "failed"


@pytest.mark.asyncio
async def test_permission_rejected_means_nothing_runs(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = lambda params: {"outcome": {"optionId": "reject_once"}}
    llm.add(tool_call("bash", {"command": "touch created-by-bash"}))
    llm.add(tool_call("write", {"path": "new.txt", "content": "hi"}))
    llm.add(text("Both were refused."))
    sid = await baton.new_session()
    await baton.prompt(sid, "make files")
    assert not (workspace / "created-by-bash").exists()
    assert not (workspace / "new.txt").exists()
    asked = [r["toolCall"]["name"] for r in baton.permission_requests]
    assert asked == ["bash", "write"]
    request = baton.permission_requests[1]
    assert request["sessionId"] == sid
    assert {o["kind"] for o in request["options"]} == {"allow_once", "allow_always", "reject_once"}
    assert "+hi" in request["diff"]
    outputs = list(llm.model_requests[-1].tool_outputs().values())
    assert all("permission denied" in o for o in outputs)


@pytest.mark.asyncio
async def test_permission_allow_always_is_remembered_for_the_session(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = lambda params: {"outcome": {"optionId": "allow_always"}}
    llm.add(tool_call("bash", {"command": "echo one > one.txt"}))
    llm.add(tool_call("bash", {"command": "echo two > two.txt"}))
    llm.add(text("done"))
    sid = await baton.new_session()
    await baton.prompt(sid, "make two files")
    assert (workspace / "one.txt").read_text() == "one\n"
    assert (workspace / "two.txt").read_text() == "two\n"
    assert len(baton.permission_requests) == 1


@pytest.mark.asyncio
async def test_permission_cancelled_answer_is_a_rejection(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = lambda params: {"outcome": "cancelled"}
    llm.add(tool_call("bash", {"command": "touch nope"}))
    llm.add(text("ok"))
    sid = await baton.new_session()
    await baton.prompt(sid, "try")
    assert not (workspace / "nope").exists()


@pytest.mark.asyncio
async def test_cancel_while_asking_permission_withdraws_the_request(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    withdrawn = asyncio.Event()
    baton.permission_policy = never_answer(withdrawn)
    llm.add(tool_call("bash", {"command": "touch nope"}))
    sid = await baton.new_session()
    prompt = asyncio.ensure_future(baton.prompt(sid, "try"))
    while not baton.permission_requests:
        await asyncio.sleep(0.05)
    baton.notify("baton/session/cancel", {"sessionId": sid})
    assert await asyncio.wait_for(prompt, 10) == {"stopReason": "cancelled"}
    # The editor is told to close its prompt ($/cancelRequest), and nothing ran.
    await asyncio.wait_for(withdrawn.wait(), 5)
    assert not (workspace / "nope").exists()
    llm.add(text("still here"))
    assert (await baton.prompt(sid, "again"))["stopReason"] == "end_turn"


@pytest.mark.asyncio
async def test_configured_permissions_skip_or_refuse_without_asking(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "deny", "write": "allow"}})
    llm.add(tool_call("write", {"path": "a.txt", "content": "A"}))
    llm.add(tool_call("bash", {"command": "touch b.txt"}))
    llm.add(text("ok"))
    sid = await baton.new_session()
    await baton.prompt(sid, "go")
    assert (workspace / "a.txt").read_text() == "A"
    assert not (workspace / "b.txt").exists()
    assert baton.permission_requests == []


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "path",
    ["../outside.txt", "sub/../../outside.txt", "{outside}", "link-to-outside/secret.txt"],
)
async def test_sandbox_escapes_are_refused(
    baton: BatonClient, llm: FakeLLM, workspace: Path, path: str
) -> None:
    outside = workspace.parent / "outside-dir"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("top secret")
    (workspace.parent / "outside.txt").write_text("top secret")
    (workspace / "link-to-outside").symlink_to(outside, target_is_directory=True)
    path = path.format(outside=workspace.parent / "outside.txt")
    baton.permission_policy = allow_once
    llm.add(tool_call("read", {"path": path}), tool_call("write", {"path": path, "content": "x"}))
    llm.add(text("refused"))
    sid = await baton.new_session()
    await baton.prompt(sid, "escape")
    outputs = list(llm.model_requests[-1].tool_outputs().values())
    assert len(outputs) == 2
    assert all("outside the workspace" in o or "escapes the workspace" in o for o in outputs), (
        outputs
    )
    assert "top secret" not in "".join(outputs)
    assert (workspace.parent / "outside.txt").read_text() == "top secret"
    assert (outside / "secret.txt").read_text() == "top secret"


@pytest.mark.asyncio
async def test_cancel_during_a_long_bash_kills_it_promptly(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow"}})
    llm.add(tool_call("bash", {"command": "echo $$ > shell.pid; sleep 30; touch finished"}))
    sid = await baton.new_session()
    prompt = asyncio.ensure_future(baton.prompt(sid, "wait"))
    await baton.wait_update("tool_call_update", sid)
    pid_file = workspace / "shell.pid"
    await _until(lambda: pid_file.exists() and pid_file.read_text().strip() != "")  # it runs
    started = time.monotonic()
    baton.notify("baton/session/cancel", {"sessionId": sid})
    result = await asyncio.wait_for(prompt, 10)
    assert result == {"stopReason": "cancelled"}
    assert time.monotonic() - started < 3
    # The shell is gone (killed with its process group), so `touch finished` never runs.
    pid = int(pid_file.read_text())
    await _until(lambda: _gone(pid))
    assert not (workspace / "finished").exists()
    loaded = await baton.load(sid)
    call = loaded["messages"][-1]["parts"][0]
    assert call["status"] == "failed" and "cancelled" in call["output"]
    # The session is usable afterwards, and the history is well formed for the model.
    llm.add(text("still here"))
    assert (await baton.prompt(sid, "again"))["stopReason"] == "end_turn"


@pytest.mark.asyncio
async def test_cancel_during_streaming_keeps_the_partial_answer(
    baton: BatonClient, llm: FakeLLM
) -> None:
    from tests.fake_llm import pace

    llm.add(text(*[f"word{i} " for i in range(200)]), pace(0.02))
    sid = await baton.new_session()
    prompt = asyncio.ensure_future(baton.prompt(sid, "talk"))
    await baton.wait_update("agent_message_chunk", sid)
    baton.notify("baton/session/cancel", {"sessionId": sid})
    assert (await asyncio.wait_for(prompt, 10)) == {"stopReason": "cancelled"}
    assistant = (await baton.load(sid))["messages"][-1]
    assert assistant["incomplete"] is True
    assert assistant["parts"][0]["text"].startswith("word0 ")


@pytest.mark.asyncio
async def test_errors_use_the_protocol_codes(baton: BatonClient, llm: FakeLLM) -> None:
    missing = await baton.error("baton/session/load", {"sessionId": "ses_missing"})
    assert missing.code == -32001 and "session not found" in missing.message
    invalid = await baton.error("baton/session/new", {"mode": "sideways"})
    assert invalid.code == -32602 and "mode" in invalid.message
    missing_field = await baton.error("baton/session/prompt", {"text": "hi"})
    assert missing_field.code == -32602 and "sessionId" in missing_field.message
    wrong_type = await baton.error("baton/session/prompt", {"sessionId": 5, "text": "hi"})
    assert wrong_type.code == -32602 and "sessionId" in wrong_type.message
    extra = await baton.error("baton/session/list", {"bogus": 1})
    assert extra.code == -32602 and "bogus" in extra.message
    not_object = await baton.error("baton/session/load", ["ses_x"])
    assert not_object.code == -32602
    unknown = await baton.error("baton/nope", {})
    assert unknown.code == -32601

    llm.add(tool_call("bash", {"command": "sleep 5"}))
    sid = await baton.new_session()
    baton.permission_policy = lambda params: asyncio.sleep(2, {"outcome": "cancelled"})
    running = asyncio.ensure_future(baton.prompt(sid, "slow"))
    await baton.wait_update("tool_call", sid)
    busy = await baton.error("baton/session/prompt", {"sessionId": sid, "text": "again"})
    assert busy.code == -32002 and "busy" in busy.message
    await running
    # The server is still alive and well.
    assert (await baton.request("baton/session/list"))["sessions"]


@pytest.mark.asyncio
async def test_provider_error_is_reported_and_the_session_stays_usable(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(settings={"maxRetries": 1})
    llm.add(error(500, {"error": {"message": "upstream exploded", "type": "server_error"}}))
    llm.add(error(500, {"error": {"message": "upstream exploded", "type": "server_error"}}))
    sid = await baton.new_session()
    failure = await baton.error("baton/session/prompt", {"sessionId": sid, "text": "hi"})
    assert failure.code == -32003
    assert "500" in failure.message and "upstream exploded" in failure.message
    assert TEST_KEY not in failure.message
    llm.add(text("recovered"))
    assert (await baton.prompt(sid, "again"))["stopReason"] == "end_turn"
    # Both prompts are in the history.
    texts = [p.get("text") for m in (await baton.load(sid))["messages"] for p in m["parts"]]
    assert "hi" in texts and "again" in texts


@pytest.mark.asyncio
async def test_rate_limit_is_retried_honouring_retry_after(
    baton: BatonClient, llm: FakeLLM
) -> None:
    llm.add(rate_limit(retry_after=1))
    llm.add(text("after the wait"))
    sid = await baton.new_session()
    started = time.monotonic()
    assert (await baton.prompt(sid, "hi"))["stopReason"] == "end_turn"
    assert time.monotonic() - started >= 0.9
    assert len(llm.model_requests) == 2


@pytest.mark.asyncio
async def test_max_steps_ends_the_turn(start_baton: StartBaton, llm: FakeLLM) -> None:
    baton = await start_baton(settings={"maxSteps": 2})
    llm.on_request(lambda req: tool_call("glob", {"pattern": "*"}))
    sid = await baton.new_session()
    assert await baton.prompt(sid, "loop") == {"stopReason": "max_steps"}
    assert len(llm.model_requests) == 2


@pytest.mark.asyncio
async def test_set_model_reaches_the_next_request(baton: BatonClient, llm: FakeLLM) -> None:
    sid = await baton.new_session()
    result = await baton.request(
        "baton/session/setModel", {"sessionId": sid, "model": "gpt-fake-mini"}
    )
    assert result == {"provider": "openai", "model": "gpt-fake-mini"}
    llm.add(text("ok"))
    await baton.prompt(sid, "hi")
    assert llm.model_requests[-1].model == "gpt-fake-mini"


@pytest.mark.asyncio
async def test_auth_set_key_is_used_and_never_echoed(start_baton: StartBaton, llm: FakeLLM) -> None:
    baton = await start_baton(api_key=None, settings={"provider": "openai"})
    sid = await baton.new_session()
    no_key = await baton.prompt(sid, "hi")
    assert no_key["stopReason"] == "error" and "OPENAI_API_KEY" in no_key["error"]
    key = "sk-client-set-key-abcdef123456"
    assert await baton.request("baton/auth/set", {"provider": "openai", "apiKey": key}) == {}
    llm.add(text("authorised"))
    assert (await baton.prompt(sid, "hi"))["stopReason"] == "end_turn"
    assert llm.model_requests[-1].api_key == key
    assert key not in json.dumps(baton.notifications)


@pytest.mark.asyncio
async def test_context_reports_what_the_model_would_be_sent(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Always answer in French.")
    sid = await baton.new_session()
    llm.add(text("bonjour"), usage(input=1000, output=10))
    await baton.prompt(sid, "hello")
    context = await baton.request("baton/session/context", {"sessionId": sid})
    kinds = [i["kind"] for i in context["items"]]
    assert kinds[:3] == ["system", "instructions", "tools"]
    assert "messages" in kinds
    assert context["tokens"] == sum(i["tokens"] for i in context["items"])
    assert 0 < context["threshold"] < context["contextWindow"]
    assert "Always answer in French." in (llm.model_requests[-1].instructions or "")


@pytest.mark.asyncio
async def test_history_survives_a_restart(start_baton: StartBaton, llm: FakeLLM) -> None:
    first = await start_baton()
    sid = await first.new_session(title="persistent")
    llm.add(text("remember me"))
    await first.prompt(sid, "hello")
    before = await first.load(sid)
    await first.lsp.shutdown_session()
    first.dead = True

    second = await start_baton()
    assert await second.load(sid) == before
    llm.add(text("still here"))
    await second.prompt(sid, "again")
    assert "remember me" in llm.model_requests[-1].input_text()


@pytest.mark.asyncio
async def test_sigkill_mid_turn_keeps_every_completed_step(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow"}})
    (workspace / "a.txt").write_text("A")
    llm.add(tool_call("read", {"path": "a.txt"}, call_id="call_read"))
    llm.add(tool_call("bash", {"command": "sleep 30"}, call_id="call_sleep"))
    sid = await baton.new_session()
    prompt = asyncio.ensure_future(baton.prompt(sid, "read then sleep"))
    await baton.wait_for(
        lambda m, p: (
            m == "baton/session/update"
            and p["update"].get("toolCallId") == "call_sleep"
            and p["update"].get("status") == "in_progress"
        )
    )
    baton.kill()
    with pytest.raises(ConnectionError):
        await prompt

    again = await start_baton()
    loaded = await again.load(sid)
    parts = [p for m in loaded["messages"] for p in m["parts"]]
    read = next(p for p in parts if p.get("toolCallId") == "call_read")
    assert read["status"] == "completed" and "A" in read["output"]
    sleep = next(p for p in parts if p.get("toolCallId") == "call_sleep")
    assert sleep["status"] == "failed"
    # The model gets a well-formed history (the fake rejects orphan calls).
    llm.add(text("resumed"))
    assert (await again.prompt(sid, "continue"))["stopReason"] == "end_turn"


async def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until `condition()` holds (something outside the test process happened)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


def _gone(pid: int) -> bool:
    """Whether process `pid` has ended (no longer exists, or is a zombie)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
