"""What the demo prints of the agent's work: the terminal face's own rendering
(`terminal.TerminalChannel`: tool calls, failures, mode, plan and compaction lines,
the status line while the model works), with the demo's bookkeeping beside it (the
answer's text, the calls made, the longest model step)."""

from __future__ import annotations

import time
from typing import TextIO

from baton import protocol as p
from baton.agent.events import ProgressScope
from baton.faces.terminal.render import TerminalChannel
from baton.faces.terminal.status import StatusLine


class DemoChannel:
    """The session's channel during the demo: everything shown goes through one
    `TerminalChannel` writing to the demo's output; the answer's text is kept, not
    streamed, so the demo says it after the turn when no tool was called."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.terminal = TerminalChannel(
            out, out, as_json=False, interactive=False, live_status=_isatty(out)
        )
        self.text: list[str] = []
        self.tool_calls: list[str] = []
        # Model steps: when the current one began, and the longest one so far (seconds).
        self.step_began: float | None = None
        self.longest_step = 0.0

    @property
    def status(self) -> StatusLine:
        return self.terminal.status

    def waiting(self, what: str = "waiting for the model") -> None:
        """The model has been asked: say so until it reports more."""
        self.status.show("waiting", what)

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        if parent_id is not None:
            # A `task` child's own tool calls, indented under the call that started it.
            self.terminal.send_update(session_id, update, parent_id=parent_id)
            return
        match update:
            case p.AgentMessageChunk(text=text):
                self.text.append(text)
                return
            case p.ToolCallStarted(name=name):
                self.tool_calls.append(name)
            case p.UsageUpdate() if self.step_began is not None:
                # A step ends with its usage report; the next one begins after its tools ran.
                now = time.monotonic()
                self.longest_step = max(self.longest_step, now - self.step_began)
                self.step_began = now
                return
        self.terminal.send_update(session_id, update)

    def notify(self, method: str, params: p.WireModel) -> None:
        self.terminal.notify(method, params)

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        # Nobody answers during the demo: what it may do is in its settings.
        self.status.clear()
        self.out.write(f"  ✗ {params.tool_call.name} refused: no one to ask during the demo\n")
        self.out.flush()
        return None

    def progress(self, title: str) -> ProgressScope:
        return self.terminal.progress(title)

    def take_text(self) -> str:
        text, self.text = "".join(self.text), []
        return text

    def take_calls(self) -> list[str]:
        calls, self.tool_calls = self.tool_calls, []
        return calls


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
