"""Command hooks: any program, the event as JSON on stdin, the answer as JSON on stdout.

The program runs in the workspace, in its own process group, with an
environment stripped of credentials. It fails when it cannot start, exits
non-zero, runs past its timeout (its whole process group is killed, so a
forgotten background child does not linger), or prints more than
`MAX_OUTPUT` bytes. Parsing and validating the answer is the dispatcher's job.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from baton.config import CommandHook
from baton.tools.shell import signal_group

MAX_OUTPUT = 1_000_000
STDERR_TAIL = 2_000
# After the program exits, how long a background child may keep stdout open.
DRAIN_GRACE = 0.5


class CommandFailed(Exception):
    """The program did not produce an answer; the message says why, for the record."""


@dataclass
class CommandOutput:
    stdout: bytes
    stderr: str


def hook_label(hook: CommandHook) -> str:
    """How a command hook is named in records and logs."""
    return hook.name or shlex.join(hook.command)


class _Collector(asyncio.SubprocessProtocol):
    """Collects stdout (up to the cap) and the tail of stderr; tells when the process exits.

    asyncio's `Process.wait()` also waits for the pipes to close, which a
    background child holding stdout can delay forever; `exited` does not.
    """

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.pid: int | None = None
        self.out = bytearray()
        self.err = bytearray()
        self.oversized = False
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        self._open = {1, 2}

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        if fd == 2:
            self.err = (self.err + data)[-STDERR_TAIL:]
        elif fd == 1 and not self.oversized:
            self.out += data
            if len(self.out) > MAX_OUTPUT:
                self.oversized = True
                if self.pid is not None:
                    signal_group(self.pid, signal.SIGKILL)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._open.discard(fd)
        if not self._open and not self.closed.done():
            self.closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


async def run_command(
    hook: CommandHook, payload: bytes, *, cwd: Path, env: dict[str, str]
) -> CommandOutput:
    """Run one command hook to completion; raise `CommandFailed` with the reason otherwise."""
    loop = asyncio.get_running_loop()
    try:
        transport, proto = await loop.subprocess_exec(
            _Collector,
            *hook.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        raise CommandFailed(f"could not start: {exc.strerror or exc}") from exc
    pid = proto.pid = transport.get_pid()
    try:
        stdin = transport.get_pipe_transport(0)
        # Buffered by the transport; a program that exits without reading it is fine.
        with contextlib.suppress(OSError, RuntimeError):
            if isinstance(stdin, asyncio.WriteTransport):
                stdin.write(payload)
                stdin.close()
        try:
            async with asyncio.timeout(hook.timeout):
                await asyncio.shield(proto.exited)
        except TimeoutError:
            raise CommandFailed(
                f"timed out after {hook.timeout:g} s; its process group was killed"
            ) from None
        try:
            await asyncio.wait_for(asyncio.shield(proto.closed), DRAIN_GRACE)
        except TimeoutError:
            # A background child still holds the pipes: take what was printed, stop it.
            signal_group(pid, signal.SIGKILL)
        if proto.oversized:
            raise CommandFailed(f"printed more than {MAX_OUTPUT} bytes")
        code = transport.get_returncode()
        err = bytes(proto.err).decode("utf-8", "replace").strip()
        if code != 0:
            how = (
                f"was killed by signal {-code}"
                if code is not None and code < 0
                else f"exited with code {code}"
            )
            raise CommandFailed(f"{how}{': ' + err if err else ''}")
        return CommandOutput(stdout=bytes(proto.out), stderr=err)
    finally:
        # Whatever happened (timeout, cancellation, a crash here), nothing is left running.
        if transport.get_returncode() is None:
            signal_group(pid, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(proto.exited), 2.0)
        transport.close()
