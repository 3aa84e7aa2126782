"""The bash tool: one command in the workspace, after the person allowed it.

The command runs as `/bin/bash -c` (or `sh`) in its own session and process
group, with stdin from /dev/null and stdout and stderr merged. A timeout or a
cancelled turn kills the whole group (SIGTERM, then SIGKILL after a short
grace), so no child outlives the tool by accident. Credentials are removed from
the environment first (`baton.secret_env`): a command (and whatever it
downloads) never sees an API key, a token or a password variable. Output is kept bounded in memory however much the command prints.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from typing import ClassVar

from pydantic import Field

from baton.secret_env import hidden_names, scrubbed_env
from baton.tools.base import (
    Fact,
    TerminalRun,
    ToolContext,
    ToolFailure,
    ToolInput,
    ToolResult,
    truncate,
)
from baton.tools.policy import permission_denied, refuse_in_plan_mode

MAX_TIMEOUT_MS = 600_000
# Seconds a timed-out group gets between SIGTERM and SIGKILL.
TIMEOUT_GRACE = 2.0
# The same after a cancelled turn: the person is waiting, so shorter.
CANCEL_GRACE = 0.5
# Seconds to keep reading after the shell exits while background children still
# hold the output pipe open.
DRAIN_GRACE = 1.0
# Live output: at most one update per LIVE_INTERVAL seconds, the last LIVE_CHARS
# characters of the output so far (the finished result replaces it).
LIVE_INTERVAL = 0.5
LIVE_CHARS = 4000


class BashInput(ToolInput):
    command: str
    # The tool's description says the default and the limit; the bounds are checked.
    timeout_ms: int | None = Field(None, ge=100, le=MAX_TIMEOUT_MS)


def _shell() -> str:
    if os.access("/bin/bash", os.X_OK):
        return "/bin/bash"
    return shutil.which("bash") or "/bin/sh"


class _Output(asyncio.SubprocessProtocol):
    """Collects merged output, keeping at most `keep` bytes of head and of tail."""

    def __init__(self, keep: int) -> None:
        loop = asyncio.get_running_loop()
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        self.total += len(data)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.keep:
                del self.tail[: len(self.tail) - self.keep]

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and not self.closed.done():
            self.closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def live(self, chars: int) -> str:
        """The last `chars` characters of the output so far (for the person to watch)."""
        data = self.tail if self.total > len(self.head) + len(self.tail) else self.head + self.tail
        text = bytes(data[-chars * 4 :]).decode("utf-8", "replace")[-chars:]
        return text

    def render(self, limit: int) -> str:
        """The output as text, cut to about `limit` characters with a note when longer."""
        dropped = self.total - len(self.head) - len(self.tail)
        if dropped <= 0:
            return truncate(bytes(self.head + self.tail).decode("utf-8", "replace"), limit)
        head_chars = limit * 2 // 3
        tail_chars = limit - head_chars
        head = self.head.decode("utf-8", "replace")[:head_chars]
        tail = self.tail.decode("utf-8", "replace")[-tail_chars:]
        return (
            head + f"\n\n[... output too long: {self.total} bytes in all, the middle was cut; "
            "redirect it to a file and read or grep that ...]\n\n" + tail
        )


async def _stream_live(output: _Output, progress: Callable[[str], None]) -> None:
    """Report the output so far while the command runs, when it has grown."""
    seen = 0
    while True:
        await asyncio.sleep(LIVE_INTERVAL)
        if output.total != seen:
            seen = output.total
            progress(output.live(LIVE_CHARS))


def signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _kill_group(pgid: int, exited: asyncio.Future[None], grace: float) -> None:
    """SIGTERM the group, wait up to `grace` for the shell to exit, then SIGKILL the group.

    Waits (briefly) for the shell to be reaped too, so that no exit notification
    arrives after the caller has moved on (or its event loop has closed).
    """
    signal_group(pgid, signal.SIGTERM)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(exited), grace)
    finally:
        signal_group(pgid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(exited), 1.0)


class BashTool:
    name: ClassVar[str] = "bash"
    description: ClassVar[str] = (
        "Run a bash command in the workspace (no stdin); output cut over 30000 characters; "
        "timeout 2 min (timeout_ms: up to 10)."
    )
    input_model: ClassVar[type[ToolInput]] = BashInput
    read_only: ClassVar[bool] = False

    async def run(self, args: BashInput, ctx: ToolContext) -> ToolResult:
        refuse_in_plan_mode(self.name, ctx)
        if not args.command.strip():
            raise ToolFailure("command is empty")
        allowed = await ctx.ask_permission(
            "bash", ctx.tool_call_id, args.model_dump(exclude_none=True)
        )
        if not allowed:
            return permission_denied(f"running `{args.command}`")
        settings = ctx.settings.tools
        timeout_ms = min(args.timeout_ms or settings.bash_timeout_ms, MAX_TIMEOUT_MS)
        limit = settings.max_output_chars
        if ctx.terminal is not None:
            ran = await ctx.terminal.run(
                ctx.session_id,
                ctx.tool_call_id,
                args.command,
                ctx.workspace,
                timeout_s=timeout_ms / 1000,
                output_bytes=limit * 4,
                hidden_env=hidden_names(ctx.settings),
            )
            if ran is not None:
                return _editor_result(args.command, ran, limit, timeout_ms)

        loop = asyncio.get_running_loop()
        try:
            transport, output = await loop.subprocess_exec(
                lambda: _Output(keep=limit * 4),
                _shell(),
                "-c",
                args.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=ctx.workspace,
                env=scrubbed_env(ctx.settings),
                start_new_session=True,
            )
        except OSError as exc:
            raise ToolFailure(f"cannot start the shell: {exc.strerror or exc}") from exc

        pgid = transport.get_pid()
        timed_out = False
        lingering = False
        live = (
            asyncio.create_task(_stream_live(output, ctx.progress))
            if ctx.progress is not None
            else None
        )
        try:
            try:
                await asyncio.wait_for(asyncio.shield(output.exited), timeout_ms / 1000)
            except TimeoutError:
                timed_out = True
                await _kill_group(pgid, output.exited, TIMEOUT_GRACE)
            try:
                await asyncio.wait_for(asyncio.shield(output.closed), DRAIN_GRACE)
            except TimeoutError:
                lingering = True
        except asyncio.CancelledError:
            await _kill_group(pgid, output.exited, CANCEL_GRACE)
            raise
        finally:
            if live is not None:
                live.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await live
            transport.close()

        code = None if timed_out else transport.get_returncode()
        text = output.render(limit).rstrip("\n")
        lines = [text] if text else ["(no output)"]
        if lingering and not timed_out:
            lines.append(
                "[background processes still hold the output open; later output is not shown]"
            )
        if timed_out:
            lines.append(
                f"[timed out after {timeout_ms} ms; the command and its child processes were killed]"
            )
            exit_code = None
        elif code is not None and code < 0:
            lines.append(f"[killed by signal {_signal_name(-code)}]")
            exit_code = None
        else:
            exit_code = code
            lines.append(f"[exit code {code}]")
        return ToolResult(
            output="\n".join(lines),
            is_error=exit_code != 0,
            facts=[Fact(kind="command", command=args.command, exit_code=exit_code)],
        )


def _editor_result(command: str, ran: TerminalRun, limit: int, timeout_ms: int) -> ToolResult:
    """The result of a command the editor's terminal ran, worded as Baton's shell words it."""
    text = truncate(ran.output, limit).rstrip("\n")
    lines = [text] if text else ["(no output)"]
    if ran.timed_out:
        lines.append(
            f"[timed out after {timeout_ms} ms; the command and its child processes were killed]"
        )
    elif ran.exit_code is None:
        lines.append(f"[killed by signal {ran.signal or 'unknown'}]")
    else:
        lines.append(f"[exit code {ran.exit_code}]")
    return ToolResult(
        output="\n".join(lines),
        is_error=ran.exit_code != 0,
        facts=[Fact(kind="command", command=command, exit_code=ran.exit_code)],
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
