"""The seams `SessionService` calls: where the features built around it act.

`build_app` builds the features (compaction, hooks, review, MCP, plans) and
hands the service one `Seams` naming what each seam calls; every seam has a
no-op default, so a service built without the features (a unit test, a bench)
runs the bare agent loop. Nothing else plugs into the service: to find what
runs at a seam, read `build_app`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from baton.tools.base import ToolServices

if TYPE_CHECKING:
    from collections.abc import Sequence

    from baton.context import BuiltContext
    from baton.errors import ProviderError
    from baton.providers.base import OpaqueItem, Provider, ToolCall, ToolSpec
    from baton.session.model import StoredMessage
    from baton.session.state import SessionState
    from baton.session.turn import Turn


class TurnHooks(Protocol):
    """Around each model step of a turn (compaction: its trigger and overflow recovery)."""

    async def before_step(self, turn: Turn) -> None: ...

    async def check(self, turn: Turn, built: BuiltContext, provider: Provider) -> BuiltContext:
        """The context to send instead of `built` (compacted when over the threshold)."""
        ...

    async def recover_overflow(self, turn: Turn, error: ProviderError) -> bool:
        """After the provider refused the request for size: True to retry the step once."""
        ...


class NoTurnHooks:
    async def before_step(self, turn: Turn) -> None:
        return None

    async def check(self, turn: Turn, built: BuiltContext, provider: Provider) -> BuiltContext:
        return built

    async def recover_overflow(self, turn: Turn, error: ProviderError) -> bool:
        return False


class ToolHooks(Protocol):
    """Around every tool call (the hooks feature): a guard before, an observer after."""

    async def tool_before(
        self, state: SessionState, name: str, input: dict[str, Any]
    ) -> str | None:
        """Why the call must not run, or None to run it."""
        ...

    async def tool_after(
        self, state: SessionState, name: str, input: dict[str, Any], output: str
    ) -> None: ...


class NoToolHooks:
    async def tool_before(
        self, state: SessionState, name: str, input: dict[str, Any]
    ) -> str | None:
        return None

    async def tool_after(
        self, state: SessionState, name: str, input: dict[str, Any], output: str
    ) -> None:
        return None


class ServerCompactionEvents(Protocol):
    """A compaction item the provider's server emitted mid-stream (OpenAI's
    `context_management`; baton.compaction.server records it)."""

    def on_server_compaction(
        self, turn: Turn, message: StoredMessage, item: OpaqueItem, provider: Provider
    ) -> None: ...


class NoServerCompaction:
    def on_server_compaction(
        self, turn: Turn, message: StoredMessage, item: OpaqueItem, provider: Provider
    ) -> None:
        return None


class ChangeHooks(Protocol):
    """What a file tool reports around a change (ToolContext.before_change/after_change)."""

    async def before_change(self, paths: list[Path]) -> None: ...

    async def after_change(self, paths: list[Path]) -> None: ...


class ToolOffer(Protocol):
    """Which tools a session is offered and may call, and which calls of one response run
    at the same time (delegation: a `task` child gets its agent's tools, no `task`)."""

    def specs(self, state: SessionState, specs: list[ToolSpec]) -> list[ToolSpec]: ...

    def refusal(self, state: SessionState, name: str) -> str | None:
        """Why `state` may not call `name` (not offered to it), or None."""
        ...

    def parallel(self, state: SessionState, calls: Sequence[ToolCall]) -> int:
        """How many of `calls` may run at once (1: one after the other)."""
        ...


class EveryTool:
    def specs(self, state: SessionState, specs: list[ToolSpec]) -> list[ToolSpec]:
        return specs

    def refusal(self, state: SessionState, name: str) -> str | None:
        return None

    def parallel(self, state: SessionState, calls: Sequence[ToolCall]) -> int:
        return 1


@dataclass
class Seams:
    turn: TurnHooks = field(default_factory=NoTurnHooks)
    tools: ToolHooks = field(default_factory=NoToolHooks)
    server_compaction: ServerCompactionEvents = field(default_factory=NoServerCompaction)
    # The features behind some tools (plans, recall, the editor's files and terminal).
    tool_services: ToolServices = field(default_factory=ToolServices)
    # The tools each session is offered (delegation narrows a child's).
    tool_offer: ToolOffer = field(default_factory=EveryTool)
    # Makes the checkpoint hooks of one tool call (the review feature; None: no checkpoints).
    change_recorder: Callable[[SessionState, str], ChangeHooks] | None = None
    # Awaited before each model step (MCP servers start lazily here).
    before_step: list[Callable[[Turn], Awaitable[None]]] = field(default_factory=list)
    # Called with each session state loaded from the store, or reloaded (features attach
    # their per-session data: the compaction view, the reverted messages).
    session_loaded: list[Callable[[SessionState], None]] = field(default_factory=list)
    # Called when a session's turn task ends, however it ended.
    after_turn: list[Callable[[SessionState], None]] = field(default_factory=list)
    # Called on `baton/session/cancel` (features stop work that is not the turn task).
    on_cancel: list[Callable[[SessionState], None]] = field(default_factory=list)
