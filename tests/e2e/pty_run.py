"""Run a command with stdout and stderr at a pseudo-terminal, as a person would see it."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path


def run_at_terminal(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 120
) -> tuple[int, str]:
    """(exit code, everything written to the terminal) of `argv` with stdin closed."""
    leader, follower = pty.openpty()
    with subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower
    ) as proc:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process and its children are done
                break
            if not chunk:
                break
            shown += chunk
        code = proc.wait(timeout=timeout)
    os.close(leader)
    return code, shown.decode("utf-8", "replace")
