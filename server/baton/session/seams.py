"""The seams `SessionService` calls: where the features built around it act.

Each feature's setup (`baton.features`) returns a `Contribution`, what it adds at
which seam; `fold` makes them one frozen `Seams`, which the service is given when
it is built and never changes. Every seam has a no-op default, so a service built
without the features (a unit test, a bench) runs the bare agent loop. Nothing
else plugs into the service: to find what runs at a seam, read `baton.features`.
The two seams a turn calls itself (`TurnHooks`, `ServerCompactionEvents`) are
declared in `baton.session.turn`, beside the turn they are called with.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from baton.tools.base import ToolServices

if TYPE_CHECKING:
    from baton.agent.context import BuiltContext
    from baton.agent.state import SessionState
    from baton.agent.turn import ServerCompactionEvents, Turn, TurnHooks
    from baton.errors import ProviderError
    from baton.providers.base import OpaqueItem, Provider, ToolCall, ToolSpec
    from baton.session.work import Work
    from baton.store.model import StoredMessage


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


class NoServerCompaction:
    def on_server_compaction(
        self, turn: Turn, message: StoredMessage, item: OpaqueItem, provider: Provider
    ) -> None:
        return None


class ChangeHooks(Protocol):
    """What a file tool reports around a change (ToolContext.before_change/after_change)."""

    async def before_change(self, paths: list[Path]) -> None: ...

    async def after_change(self, paths: list[Path]) -> None: ...


LoadedHook = Callable[["SessionState"], None]
BoundaryHook = Callable[["SessionState"], Awaitable[None]]
# What should run on a session next, asked when its work ends (baton.session.activity).
NextWork = Callable[["SessionState"], "Work | None"]
StepHook = Callable[["Turn"], Awaitable[None]]
ChangeRecorder = Callable[["SessionState", str], ChangeHooks]


class CommandPrompt(Protocol):
    """A person's slash command as the message it expands into."""

    @property
    def text(self) -> str: ...

    @property
    def meta(self) -> dict[str, Any]: ...


class PromptCommands(Protocol):
    """Slash commands typed as a prompt (the skills feature: skills and command files)."""

    async def expand(self, text: str, command: Any) -> CommandPrompt | None:
        """The message `text` (or the explicit `command`) expands into; None: as typed."""
        ...


class NoPromptCommands:
    async def expand(self, text: str, command: Any) -> CommandPrompt | None:
        return None


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


@dataclass(frozen=True)
class Seams:
    turn: TurnHooks = field(default_factory=NoTurnHooks)
    tools: ToolHooks = field(default_factory=NoToolHooks)
    server_compaction: ServerCompactionEvents = field(default_factory=NoServerCompaction)
    # The features behind some tools (plans, recall, the editor's files and terminal).
    tool_services: ToolServices = field(default_factory=ToolServices)
    # Makes the checkpoint hooks of one tool call (the review feature; None: no checkpoints).
    change_recorder: ChangeRecorder | None = None
    # Awaited before each model step (MCP servers start lazily here).
    before_step: tuple[StepHook, ...] = ()
    # Called with each session state loaded from the store, or reloaded (features attach
    # their per-session data: the compaction view, the reverted messages).
    session_loaded: tuple[LoadedHook, ...] = ()
    # Called when any work admitted on a session (baton.session.activity) ends, however it
    # ended: a turn, a step build, a compaction.
    after_turn: tuple[LoadedHook, ...] = ()
    # Asked in order when a session's work ends: the first work offered is admitted at
    # once, with no moment in which the session is idle (a compaction asked meanwhile).
    next_work: tuple[NextWork, ...] = ()
    # Awaited at a boundary inside long work that is not a turn (between the steps of a
    # step build): what was asked meanwhile may run there.
    at_boundary: tuple[BoundaryHook, ...] = ()
    # Called on `baton/session/cancel` (features stop work that is not the turn task).
    on_cancel: tuple[LoadedHook, ...] = ()
    # Slash commands typed as a prompt (the skills feature).
    commands: PromptCommands = field(default_factory=NoPromptCommands)
    # Which tools a session is offered and may call, and which run at once (delegation).
    tool_offer: ToolOffer = field(default_factory=EveryTool)


@dataclass(frozen=True)
class Contribution:
    """What one feature adds at the seams. A one-of seam (`turn`, `tools`, ...) may be
    given by one feature only; the lists run in the order the features are folded."""

    turn: TurnHooks | None = None
    tools: ToolHooks | None = None
    server_compaction: ServerCompactionEvents | None = None
    tool_services: ToolServices | None = None
    change_recorder: ChangeRecorder | None = None
    before_step: tuple[StepHook, ...] = ()
    session_loaded: tuple[LoadedHook, ...] = ()
    after_turn: tuple[LoadedHook, ...] = ()
    next_work: tuple[NextWork, ...] = ()
    at_boundary: tuple[BoundaryHook, ...] = ()
    on_cancel: tuple[LoadedHook, ...] = ()
    commands: PromptCommands | None = None
    tool_offer: ToolOffer | None = None


_ONE_OF = ("turn", "tools", "server_compaction", "change_recorder", "commands", "tool_offer")
_LISTS = (
    "before_step",
    "session_loaded",
    "after_turn",
    "next_work",
    "at_boundary",
    "on_cancel",
)


def fold(*contributions: Contribution) -> Seams:
    """One `Seams` from every feature's contribution. Two features giving the same
    one-of seam (or the same tool service) is a wiring mistake, raised here."""
    values: dict[str, Any] = {}
    for name in _ONE_OF:
        given = [getattr(c, name) for c in contributions if getattr(c, name) is not None]
        if len(given) > 1:
            raise ValueError(f"two features contribute the {name} seam")
        if given:
            values[name] = given[0]
    for name in _LISTS:
        values[name] = tuple(hook for c in contributions for hook in getattr(c, name))
    services: dict[str, Any] = {}
    for c in contributions:
        if c.tool_services is None:
            continue
        for f in fields(ToolServices):
            value = getattr(c.tool_services, f.name)
            if value is None:
                continue
            if f.name in services:
                raise ValueError(f"two features contribute the {f.name} tool service")
            services[f.name] = value
    values["tool_services"] = ToolServices(**services)
    return Seams(**values)
