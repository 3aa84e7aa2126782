"""Command hooks: stdin/stdout, exit status, timeouts that kill the group, output cap, env."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from baton.config import CommandHook
from baton.hooks.commands import MAX_OUTPUT, CommandFailed, hook_label, run_command

PY = sys.executable


def _hook(code: str, timeout: float = 10.0) -> CommandHook:
    return CommandHook(command=[PY, "-c", code], timeout=timeout)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.asyncio
async def test_event_on_stdin_answer_on_stdout(tmp_path: Path) -> None:
    hook = _hook(
        "import json, os, sys; e = json.load(sys.stdin); "
        "print(json.dumps({'got': e['x'], 'cwd': os.getcwd()}))"
    )
    out = await run_command(hook, b'{"x": 42}', cwd=tmp_path, env={})
    assert json.loads(out.stdout) == {"got": 42, "cwd": str(tmp_path)}


@pytest.mark.asyncio
async def test_non_zero_exit_is_an_error_with_stderr(tmp_path: Path) -> None:
    hook = _hook("import sys; print('{}'); sys.stderr.write('boom happened'); sys.exit(3)")
    with pytest.raises(CommandFailed, match="exited with code 3: boom happened"):
        await run_command(hook, b"{}", cwd=tmp_path, env={})


@pytest.mark.asyncio
async def test_a_crash_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CommandFailed, match=r"(?s)exited with code 1: .*ZeroDivisionError"):
        await run_command(_hook("1/0"), b"{}", cwd=tmp_path, env={})


@pytest.mark.asyncio
async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    hook = _hook(
        "import subprocess, time; "
        f"p = subprocess.Popen(['sleep', '60']); open({str(pidfile)!r}, 'w').write(str(p.pid)); "
        "time.sleep(60)",
        timeout=1.0,
    )
    started = time.monotonic()
    with pytest.raises(CommandFailed, match=r"timed out after 1 s; its process group was killed"):
        await run_command(hook, b"{}", cwd=tmp_path, env={})
    assert time.monotonic() - started < 5
    child = int(pidfile.read_text())
    for _ in range(50):
        if _gone(child):
            break
        time.sleep(0.05)
    assert _gone(child), "the hook's child process survived the timeout"


@pytest.mark.asyncio
async def test_output_over_the_cap_is_an_error(tmp_path: Path) -> None:
    hook = _hook(
        f"import sys; sys.stdout.write('x' * {MAX_OUTPUT + 10}); import time; time.sleep(30)"
    )
    started = time.monotonic()
    with pytest.raises(CommandFailed, match="printed more than"):
        await run_command(hook, b"{}", cwd=tmp_path, env={})
    assert time.monotonic() - started < 5, "the oversized command is stopped at once"


@pytest.mark.asyncio
async def test_a_program_that_ignores_stdin_is_fine(tmp_path: Path) -> None:
    out = await run_command(_hook("print('{}')"), b"x" * 500_000, cwd=tmp_path, env={})
    assert out.stdout.strip() == b"{}"


@pytest.mark.asyncio
async def test_a_missing_program_is_an_error(tmp_path: Path) -> None:
    hook = CommandHook(command=["/nonexistent/hook"])
    with pytest.raises(CommandFailed, match="could not start"):
        await run_command(hook, b"{}", cwd=tmp_path, env={})


@pytest.mark.asyncio
async def test_a_background_child_holding_stdout_does_not_hang_the_hook(tmp_path: Path) -> None:
    hook = CommandHook(command=["sh", "-c", "sleep 30 & echo '{}'"], timeout=10)
    started = time.monotonic()
    out = await run_command(hook, b"{}", cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == b"{}"
    assert time.monotonic() - started < 3


@pytest.mark.asyncio
async def test_the_environment_is_exactly_what_the_caller_gives(tmp_path: Path) -> None:
    hook = _hook("import json, os; print(json.dumps(dict(os.environ)))")
    out = await run_command(hook, b"{}", cwd=tmp_path, env={"ONLY": "this"})
    env = json.loads(out.stdout)
    assert env.get("ONLY") == "this"
    assert "OPENAI_API_KEY" not in env


def test_label_is_the_name_or_the_command_line() -> None:
    assert hook_label(CommandHook(command=["python3", "a b.py"])) == "python3 'a b.py'"
    assert hook_label(CommandHook(command=["x"], name="guard")) == "guard"
