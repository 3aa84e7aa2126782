"""bash: exit codes, output, timeouts and cancellation that kill the whole group, env."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from baton.config import Settings
from baton.secret_env import scrubbed_env
from baton.tools.base import Fact, ToolFailure
from baton.tools.shell import BashInput, BashTool


async def _bash(ctx: Any, command: str, timeout_ms: int | None = None) -> Any:
    return await BashTool().run(BashInput(command=command, timeout_ms=timeout_ms), ctx)


def _gone(pid: int) -> bool:
    """True when `pid` no longer runs (a zombie awaiting its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


async def _wait_gone(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        await asyncio.sleep(0.05)
    return _gone(pid)


async def _wait_for_file(path: Path, within: float = 5.0) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


@pytest.mark.asyncio
async def test_success_and_exit_code_line(workspace: Path, ctx: Any, gate: Any) -> None:
    result = await _bash(ctx, "echo hello; echo oops >&2")
    assert result.output == "hello\noops\n[exit code 0]"
    assert not result.is_error
    assert result.facts == [Fact(kind="command", command="echo hello; echo oops >&2", exit_code=0)]
    assert gate.calls == [("bash", "call-1", {"command": "echo hello; echo oops >&2"}, None)]


@pytest.mark.asyncio
async def test_failure_exit_code(ctx: Any) -> None:
    result = await _bash(ctx, "echo bad; exit 2")
    assert result.output.endswith("[exit code 2]")
    assert result.is_error
    assert result.facts[0].exit_code == 2


@pytest.mark.asyncio
async def test_runs_in_workspace_with_no_stdin(workspace: Path, ctx: Any) -> None:
    result = await _bash(ctx, "pwd; cat; echo done", timeout_ms=5000)
    assert result.output.splitlines() == [str(workspace), "done", "[exit code 0]"]
    empty = await _bash(ctx, "true")
    assert empty.output == "(no output)\n[exit code 0]"


@pytest.mark.asyncio
async def test_denied_runs_nothing(workspace: Path, ctx: Any, gate: Any) -> None:
    gate.allow = False
    result = await _bash(ctx, "touch ran.txt")
    assert result.is_error and result.output.startswith("permission denied:")
    assert not (workspace / "ran.txt").exists()
    assert result.facts == []


@pytest.mark.asyncio
async def test_refused_in_plan_mode(workspace: Path, make_ctx: Any, gate: Any) -> None:
    with pytest.raises(ToolFailure, match="bash is not available in plan mode"):
        await _bash(make_ctx(mode="plan"), "touch ran.txt")
    assert gate.calls == []
    assert not (workspace / "ran.txt").exists()


@pytest.mark.asyncio
async def test_timeout_kills_the_process_group(workspace: Path, ctx: Any) -> None:
    started = time.monotonic()
    result = await _bash(ctx, "sleep 60 & echo $! > child.pid; echo started; wait", timeout_ms=500)
    assert time.monotonic() - started < 5
    assert "started" in result.output
    assert "[timed out after 500 ms" in result.output
    assert result.is_error
    assert result.facts[0].exit_code is None
    child = int((workspace / "child.pid").read_text())
    assert await _wait_gone(child)


@pytest.mark.asyncio
async def test_timeout_survives_a_term_ignoring_child(workspace: Path, ctx: Any) -> None:
    command = "trap '' TERM; sleep 60 & echo $! > child.pid; wait"
    result = await _bash(ctx, command, timeout_ms=300)
    assert "timed out" in result.output
    assert await _wait_gone(int((workspace / "child.pid").read_text()))


@pytest.mark.asyncio
async def test_cancellation_kills_promptly(workspace: Path, ctx: Any) -> None:
    task = asyncio.create_task(_bash(ctx, "sleep 60 & echo $! > child.pid; wait"))
    child = int(await _wait_for_file(workspace / "child.pid"))
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 2
    assert await _wait_gone(child)


@pytest.mark.asyncio
async def test_credentials_are_scrubbed(
    workspace: Path, make_ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-no")
    monkeypatch.setenv("AWS_SECRET", "no")
    monkeypatch.setenv("MY_PROVIDER_CREDENTIAL", "configured-no")
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    ctx = make_ctx(settings={"apiKeyEnv": "MY_PROVIDER_CREDENTIAL"})
    result = await _bash(ctx, "env")
    assert "sk-should-not-leak" not in result.output
    assert "FAKE_API_KEY" not in result.output
    assert "GITHUB_TOKEN" not in result.output
    assert "AWS_SECRET" not in result.output
    assert "MY_PROVIDER_CREDENTIAL" not in result.output
    assert "HARMLESS_SETTING=visible" in result.output


def test_scrubbed_env_unit() -> None:
    env = {"A_API_KEY": "1", "b_token": "2", "X_SECRET": "3", "OPENAI_API_KEY": "4", "PATH": "/bin"}
    assert scrubbed_env(Settings(), env) == {"PATH": "/bin"}


@pytest.mark.asyncio
async def test_output_is_truncated_with_a_note(make_ctx: Any) -> None:
    ctx = make_ctx(settings={"tools": {"maxOutputChars": 1000}})
    result = await _bash(ctx, "head -c 5000 /dev/zero | tr '\\0' a; echo; echo END")
    assert "characters cut of" in result.output
    assert result.output.endswith("END\n[exit code 0]")
    assert len(result.output) < 1300


@pytest.mark.asyncio
async def test_huge_output_keeps_memory_bounded(make_ctx: Any) -> None:
    ctx = make_ctx(settings={"tools": {"maxOutputChars": 1000}})
    result = await _bash(ctx, "echo BEGIN; head -c 3000000 /dev/zero | tr '\\0' b; echo; echo END")
    assert result.output.startswith("BEGIN")
    assert "output too long: 3000011 bytes" in result.output
    assert result.output.endswith("END\n[exit code 0]")
    assert len(result.output) < 1400


@pytest.mark.asyncio
async def test_background_job_does_not_hold_the_tool(workspace: Path, ctx: Any) -> None:
    started = time.monotonic()
    result = await _bash(ctx, "sleep 30 & echo $! > bg.pid; echo launched")
    elapsed = time.monotonic() - started
    bg = int((workspace / "bg.pid").read_text())
    try:
        assert elapsed < 4
        assert result.output.startswith("launched")
        assert result.output.endswith("[exit code 0]")
    finally:
        os.kill(bg, 9)


@pytest.mark.asyncio
async def test_timeout_bounds_are_validated() -> None:
    with pytest.raises(ValueError):
        BashInput(command="x", timeout_ms=600_001)
    with pytest.raises(ValueError):
        BashInput(command="x", timeout_ms=0)
