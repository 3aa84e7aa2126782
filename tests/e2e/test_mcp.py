"""MCP servers through the real server process, with a stdio server written with the `mcp` SDK
(tests/mcp_servers/demo_server.py): lazy start, tools offered and called, permissions,
results, a crash mid-call, a broken server, stopping with Baton."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import allow_once, stop_client

DEMO = Path(__file__).resolve().parent.parent / "mcp_servers" / "demo_server.py"


def demo(name: str = "demo", **extra: Any) -> dict[str, Any]:
    return {"name": name, "command": [sys.executable, str(DEMO)], **extra}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes.
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


def pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


async def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.05)


@pytest.mark.asyncio
async def test_an_mcp_tool_is_offered_called_and_answered(
    start_baton: StartBaton, llm: FakeLLM, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pids"
    baton = await start_baton(
        settings={
            "mcp": {
                "servers": [demo(env={"DEMO_GREETING": "Ahoy", "DEMO_PID_FILE": str(pid_file)})]
            }
        }
    )
    baton.permission_policy = allow_once
    # Lazy: nothing runs before the first model request.
    servers = (await baton.request("baton/mcp/servers"))["servers"]
    assert servers == [
        {"name": "demo", "transport": "stdio", "enabled": True, "status": "idle", "tools": []}
    ]
    assert pids(pid_file) == []

    sid = await baton.new_session()
    llm.add(
        tool_call("demo__greet", {"name": "Ada"}, call_id="call_greet"),
        tool_call("demo__secrets", {}, call_id="call_secrets"),
        tool_call("demo__picture", {}, call_id="call_picture"),
        tool_call("demo__fail", {"reason": "no"}, call_id="call_fail"),
    )
    llm.add(text("Greeted."))
    result = await baton.prompt(sid, "greet Ada")
    assert result["stopReason"] == "end_turn"

    first, second = llm.model_requests[-2:]
    assert {"demo__echo", "demo__add", "demo__greet", "demo__crash"} <= set(first.tool_names)
    greet_spec = next(t for t in first.tools if t["name"] == "demo__greet")
    assert greet_spec["parameters"]["properties"]["name"]["type"] == "string"
    assert greet_spec["parameters"]["required"] == ["name"]
    outputs = second.tool_outputs()
    assert outputs["call_greet"] == "Ahoy, Ada!"
    assert outputs["call_secrets"] == "none", "Baton's API key never reaches an MCP server"
    assert outputs["call_picture"] == "[image: image/png, 70 bytes; not shown to the model]"
    assert "failed on purpose: no" in outputs["call_fail"]
    statuses = {u["toolCallId"]: u["status"] for u in baton.updates(sid, "tool_call_update")}
    assert statuses == {
        "call_greet": "completed",
        "call_secrets": "completed",
        "call_picture": "completed",
        "call_fail": "failed",
    }
    # Asked like bash, once per call.
    asked = [r["toolCall"]["name"] for r in baton.permission_requests]
    assert asked == ["demo__greet", "demo__secrets", "demo__picture", "demo__fail"]
    ready = baton.updates(sid, "mcp_server")
    assert ready[0]["server"] == "demo" and ready[0]["status"] == "ready"
    assert "demo__greet" in ready[0]["tools"]
    loaded = await baton.load(sid)
    call = loaded["messages"][1]["parts"][0]
    assert call["name"] == "demo__greet" and call["output"] == "Ahoy, Ada!"

    # Stopped with Baton.
    [pid] = pids(pid_file)
    assert alive(pid)

    await stop_client(baton)
    await wait_until(lambda: not alive(pid))


@pytest.mark.asyncio
async def test_allow_in_config_and_rejection(start_baton: StartBaton, llm: FakeLLM) -> None:
    baton = await start_baton(
        settings={"mcp": {"servers": [demo(allow=True), demo("other")]}},
    )
    sid = await baton.new_session()
    llm.add(
        tool_call("demo__add", {"a": 2, "b": 3}, call_id="call_add"),
        tool_call("other__echo", {"text": "hi"}, call_id="call_echo"),
    )
    llm.add(text("ok"))
    await baton.prompt(sid, "add")
    outputs = llm.model_requests[-1].tool_outputs()
    assert outputs["call_add"] == "5"
    assert outputs["call_echo"].startswith("permission denied: calling echo on MCP server other")
    assert [r["toolCall"]["name"] for r in baton.permission_requests] == ["other__echo"]


@pytest.mark.asyncio
async def test_a_crashing_server_does_not_break_the_turn_and_comes_back(
    start_baton: StartBaton, llm: FakeLLM, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pids"
    baton = await start_baton(
        settings={"mcp": {"servers": [demo(allow=True, env={"DEMO_PID_FILE": str(pid_file)})]}}
    )
    sid = await baton.new_session()
    llm.add(tool_call("demo__crash", {}, call_id="call_crash"))
    llm.add(tool_call("demo__echo", {"text": "still there?"}, call_id="call_echo"))
    llm.add(text("Recovered."))
    result = await baton.prompt(sid, "crash it")
    assert result["stopReason"] == "end_turn"

    crash_output = llm.model_requests[1].tool_outputs()["call_crash"]
    assert "stopped while running crash" in crash_output
    assert llm.model_requests[2].tool_outputs()["call_echo"] == "echo: still there?"
    statuses = [u["status"] for u in baton.updates(sid, "mcp_server")]
    assert statuses[0] == "ready" and "restarting" in statuses and statuses[-1] == "ready"
    assert len(pids(pid_file)) == 2, "restarted once"
    assert (await baton.request("baton/mcp/servers"))["servers"][0]["status"] == "ready"


@pytest.mark.asyncio
async def test_a_broken_server_is_reported_and_the_session_stays_usable(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(
        settings={
            "mcp": {
                "servers": [
                    demo("exits", env={"DEMO_EXIT_AT_START": "1"}, startTimeout=10),
                    {"name": "missing", "command": ["/nonexistent/mcp-server"]},
                    {"name": "nothing"},
                    demo("off", enabled=False),
                    demo(),
                ]
            }
        }
    )
    sid = await baton.new_session()
    llm.add(text("Working without them."))
    assert (await baton.prompt(sid, "hello"))["stopReason"] == "end_turn"
    tools = llm.model_requests[-1].tool_names
    assert "demo__echo" in tools
    assert not any(t.startswith(("exits__", "missing__", "off__")) for t in tools)
    failed = {u["server"]: u for u in baton.updates(sid, "mcp_server") if u["status"] == "failed"}
    assert set(failed) == {"exits", "missing"}
    assert "command not found" in failed["missing"]["error"]
    servers = {s["name"]: s for s in (await baton.request("baton/mcp/servers"))["servers"]}
    assert servers["exits"]["status"] == "failed" and servers["exits"]["error"]
    assert servers["nothing"]["status"] == "failed" and "command" in servers["nothing"]["error"]
    assert servers["off"]["status"] == "disabled"
    assert servers["demo"]["status"] == "ready"
    # A call to a tool of a broken server is an error the model can read, not a crash.
    llm.add(tool_call("exits__echo", {"text": "x"}, call_id="call_x"))
    llm.add(text("ok"))
    assert (await baton.prompt(sid, "try it"))["stopReason"] == "end_turn"
    assert "unknown tool exits__echo" in llm.model_requests[-1].tool_outputs()["call_x"]


@pytest.mark.asyncio
async def test_a_streamable_http_server(start_baton: StartBaton, llm: FakeLLM) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, str(DEMO), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def listening() -> bool:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0

        await wait_until(listening, timeout=30)
        baton = await start_baton(
            settings={
                "mcp": {
                    "servers": [
                        {"name": "web", "url": f"http://127.0.0.1:{port}/mcp", "allow": True}
                    ]
                }
            }
        )
        sid = await baton.new_session()
        llm.add(tool_call("web__add", {"a": 20, "b": 22}, call_id="call_add"))
        llm.add(text("42."))
        assert (await baton.prompt(sid, "add"))["stopReason"] == "end_turn"
        assert llm.model_requests[-1].tool_outputs()["call_add"] == "42"
        servers = (await baton.request("baton/mcp/servers"))["servers"]
        assert servers[0]["transport"] == "http" and servers[0]["status"] == "ready"
    finally:
        server.terminate()
        server.wait(timeout=10)
