"""One tool call of a turn: the `ToolContext` it runs with and the tool hooks around it.

The context carries what the call may use: the settings with the output limit
sized to the model's window, the permission dialog, the per-call checkpoint
hooks (the review feature), the features behind some tools (plans, recall, the
editor's files and terminal). A `tool_before` hook may refuse the call; a
`tool_after` hook sees its output.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict

from baton import protocol as p
from baton.agent.context import threshold_tokens
from baton.agent.events import ClientChannel
from baton.agent.framing import block as framed_block
from baton.agent.state import SessionState
from baton.agent.turn import parse_arguments
from baton.config import Settings
from baton.providers.base import ProviderIdentity, ToolCall
from baton.providers.windows import context_window
from baton.session.permissions import PermissionDialog
from baton.session.seams import Seams
from baton.tools.base import Allowed, ToolContext, ToolResult
from baton.tools.limits import sized_for_window

if TYPE_CHECKING:
    from baton.agent.turn import Turn
    from baton.tools.registry import ToolRegistry


class ToolCalls:
    def __init__(
        self,
        workspace: Path,
        tools: ToolRegistry,
        channel: ClientChannel,
        seams: Seams,
        permissions: PermissionDialog,
        *,
        settings: Callable[[], Settings],
        identity: Callable[[SessionState, Settings], ProviderIdentity | None],
    ) -> None:
        self.workspace = workspace
        self.tools = tools
        self.channel = channel
        self.seams = seams
        self.permissions = permissions
        self.settings = settings
        self.identity = identity

    async def run(self, turn: Turn, call: ToolCall) -> ToolResult:
        state = turn.state
        ctx = self.context(turn, call)
        # A tool a `task` child is not offered is not run either (seams.tool_offer).
        refusal = self.seams.tool_offer.refusal(state, call.name)
        if refusal is not None:
            return ToolResult(output=refusal, is_error=True)
        hooks = self.seams.tools
        args = parse_arguments(call.arguments) or {}
        denied = await hooks.tool_before(state, call.name, args)
        if denied is not None:
            return ToolResult(output=f"[not run: {denied}]", is_error=True)
        result = await self.tools.run(call.name, call.arguments, ctx)
        await hooks.tool_after(state, call.name, args, result.output)
        return result

    def context(self, turn: Turn, call: ToolCall) -> ToolContext:
        state = turn.state

        async def ask(
            tool: str, tool_call_id: str, input: dict[str, Any], diff: str | None = None
        ) -> bool | Allowed:
            return await self.permissions.ask(state, tool, tool_call_id, input, diff, turn=turn)

        # Per-turn checkpoints (the review feature): the file tools report what they change.
        recorder = self.seams.change_recorder
        changes = recorder(state, call.call_id) if recorder is not None else None
        services = self.seams.tool_services
        return ToolContext(
            session_id=state.id,
            tool_call_id=call.call_id,
            workspace=self.workspace,
            mode=state.row.mode,
            settings=self.tool_settings(state),
            ask_permission=ask,
            notify=lambda method, params: self.channel.notify(method, _RawParams(**params)),
            before_change=changes.before_change if changes else None,
            after_change=changes.after_change if changes else None,
            progress=lambda output: turn.emit(
                p.ToolCallUpdate(tool_call_id=call.call_id, status="in_progress", output=output)
            ),
            plan=services.plan,
            recall=services.recall,
            files=services.files,
            terminal=services.terminal,
            questions=services.questions,
            diagnostics=services.diagnostics,
            frame=framed_block,
            parent_id=state.row.parent_id,
            agent=state.row.agent,
            required=turn.required if turn.required and turn.required.name == call.name else None,
            read_roots=state.read_roots,
            write_roots=state.write_roots,
        )

    def tool_settings(self, state: SessionState) -> Settings:
        """The settings a tool runs with: its output limit sized to the model's window."""
        settings = self.settings()
        window = context_window(settings, self.identity(state, settings))
        usable, _ = threshold_tokens(settings, window)
        return sized_for_window(settings, usable, state.calibration)


class _RawParams(p.WireModel):
    """Params already in wire form (a tool's notification)."""

    model_config = ConfigDict(extra="allow")

    def wire(self) -> dict[str, Any]:
        return dict(self.__pydantic_extra__ or {})
