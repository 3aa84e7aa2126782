"""The bash tool's editor seam over ACP's `terminal/*`: the command runs in the editor's
terminal, where the person watches its output live (the tool call embeds the terminal).

Permission is asked by the tool before this runs, as for Baton's own shell. The
editor starts the process with its own environment, so the credential variables
Baton would remove are set empty instead; a timeout or a cancelled turn kills the
command, and the terminal is always released.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from acp.schema import EnvVariable, TerminalToolCallContent, ToolCallProgress

from baton.tools.base import TerminalRun, ToolFailure

if TYPE_CHECKING:
    from acp.interfaces import Client

    from baton.faces.acp.channel import AcpChannel


class AcpEditorTerminal:
    def __init__(self, client: Client, channel: AcpChannel) -> None:
        self.client = client
        self.channel = channel

    async def run(
        self,
        session_id: str,
        tool_call_id: str,
        command: str,
        cwd: Path,
        *,
        timeout_s: float,
        output_bytes: int,
        hidden_env: list[str],
    ) -> TerminalRun | None:
        try:
            created = await self.client.create_terminal(
                session_id=session_id,
                command="bash",
                args=["-c", command],
                cwd=str(cwd),
                env=[EnvVariable(name=name, value="") for name in hidden_env],
                output_byte_limit=output_bytes,
            )
        except Exception as exc:
            raise ToolFailure(f"the editor could not start a terminal: {exc}") from exc
        terminal = created.terminal_id
        self.channel.view(session_id).terminals[tool_call_id] = terminal
        # The call shows the terminal (its live output) in the editor.
        self.channel.update(
            session_id,
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=tool_call_id,
                status="in_progress",
                content=[TerminalToolCallContent(type="terminal", terminal_id=terminal)],
            ),
        )
        timed_out = False
        try:
            try:
                exited = await asyncio.wait_for(
                    self.client.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal),
                    timeout_s,
                )
                exit_code, signal = exited.exit_code, exited.signal
            except TimeoutError:
                timed_out = True
                exit_code, signal = None, None
                await self.client.kill_terminal(session_id=session_id, terminal_id=terminal)
            output = await self.client.terminal_output(session_id=session_id, terminal_id=terminal)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await self.client.kill_terminal(session_id=session_id, terminal_id=terminal)
            raise
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(
                    self.client.release_terminal(session_id=session_id, terminal_id=terminal)
                )
        text = output.output
        if output.truncated:
            text = "[... the start of the output was cut by the editor ...]\n" + text
        return TerminalRun(output=text, exit_code=exit_code, signal=signal, timed_out=timed_out)
