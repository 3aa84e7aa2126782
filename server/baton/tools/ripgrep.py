"""Running ripgrep for glob and grep: finding the binary, bounded runs, killing on cancel.

`rg` comes from the `ripgrep` wheel, a dependency of Baton, so it sits in the
same environment as the server and nothing is fetched at run time. Its regex
engine is linear-time (no catastrophic backtracking), and it runs in its own
process group outside the server's GIL: a slow search never stalls the server,
a time limit or a cancelled turn kills it, and the caller stops reading as soon
as it has enough. `--no-config` keeps a `RIPGREP_CONFIG_PATH` from adding
options (such as `--follow`) behind Baton's back.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.metadata
import os
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass

from baton.tools.base import ToolFailure
from baton.tools.sandbox import SKIP_DIRS

# Seconds one search may take before it is killed (and says so).
RG_TIME_LIMIT = 30.0
# Bytes of rg's error output kept for the message.
_STDERR_KEEP = 4096

# Options every run shares: no config file, dotfiles included (as the walk always
# did), links never followed, the heavy directories skipped below the start.
COMMON_ARGS: tuple[str, ...] = (
    "--no-config",
    "--hidden",
    "--no-follow",
    "--no-ignore-parent",
    *(arg for name in sorted(SKIP_DIRS) for arg in ("--glob", f"!{name}")),
)


@functools.cache
def rg_binary() -> str:
    """The `rg` installed with the `ripgrep` wheel in this environment."""
    candidates: list[str] = []
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        dist = importlib.metadata.distribution("ripgrep")
        for entry in dist.files or ():
            if entry.name in ("rg", "rg.exe"):
                candidates.append(os.path.realpath(str(dist.locate_file(entry))))
    for scripts in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        if scripts:
            candidates.append(os.path.join(scripts, "rg"))
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise ToolFailure(
        "ripgrep (rg) is missing from Baton's environment; reinstall Baton "
        "(it depends on the `ripgrep` package)"
    )


@dataclass
class RgRun:
    returncode: int | None
    stderr: str
    # The caller said it had enough (rg was killed).
    stopped: bool = False
    timed_out: bool = False


class _Records(asyncio.SubprocessProtocol):
    """Splits rg's output into records for the caller; keeps the head of its errors."""

    def __init__(self, on_record: Callable[[bytes], bool], separator: bytes) -> None:
        loop = asyncio.get_running_loop()
        self.on_record = on_record
        self.separator = separator
        self.pending = b""
        self.errors = bytearray()
        self.stopped = False
        self.done: asyncio.Future[None] = loop.create_future()
        self.exited: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        if fd == 2:
            self.errors.extend(data[: max(0, _STDERR_KEEP - len(self.errors))])
            return
        if self.stopped:
            return
        records = (self.pending + data).split(self.separator)
        self.pending = records.pop()
        for record in records:
            if not self.on_record(record):
                self._stop()
                return

    def _stop(self) -> None:
        self.stopped = True
        self.pending = b""
        if not self.done.done():
            self.done.set_result(None)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1 and not self.done.done():
            if self.pending and not self.stopped and not self.on_record(self.pending):
                self.stopped = True
            self.pending = b""
            self.done.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


async def run_rg(
    args: list[str],
    cwd: str,
    on_record: Callable[[bytes], bool],
    *,
    separator: bytes = b"\n",
    time_limit: float | None = None,
) -> RgRun:
    """Run rg with `args` in `cwd`, handing each output record to `on_record`.

    `on_record` returns False to stop (rg is killed). A timeout kills rg too; a
    cancelled caller kills it before the cancellation goes on.
    """
    limit = RG_TIME_LIMIT if time_limit is None else time_limit
    loop = asyncio.get_running_loop()
    try:
        transport, records = await loop.subprocess_exec(
            lambda: _Records(on_record, separator),
            rg_binary(),
            *args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise ToolFailure(f"cannot start ripgrep: {exc.strerror or exc}") from exc
    timed_out = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(records.done), limit)
        except TimeoutError:
            timed_out = True
        if not (timed_out or records.stopped):
            # Its output is closed: rg is exiting; let it say with which status.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(records.exited), 5.0)
    finally:
        # rg has no children; its group is killed at once when it is not done.
        if transport.get_returncode() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(transport.get_pid(), signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(records.exited), 5.0)
        transport.close()
    return RgRun(
        returncode=transport.get_returncode(),
        stderr=records.errors.decode("utf-8", "replace"),
        stopped=records.stopped,
        timed_out=timed_out,
    )
