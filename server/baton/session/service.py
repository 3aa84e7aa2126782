"""SessionService: the core's public face. The faces (LSP, ACP, CLI) call only this.

It owns the store and wires the agent loop to providers, tools, the context
builder and the client channel; its parts each do one job: the sessions held in
memory (`cache`), the model in use (`models`), what runs on each session
(`activity`, the one entry every kind of work is admitted through), a turn's
start and end (`turns`), each tool call and its permission dialog (`tool_calls`,
`permissions`). The features (plans, compaction, hooks, review, MCP) act
through the frozen `Seams` they contributed when the service was built
(`baton.features`). Every session, a delegated child's too, is made by
`create_session`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from baton import protocol as p
from baton.agent.attachments import resolve_attachments
from baton.agent.context import BuiltContext, ContextBuilder, SkillBlocks, compact_prompt
from baton.agent.events import ClientChannel
from baton.agent.images import resolve_images
from baton.agent.notes import ContextNotes, PlanVersions
from baton.agent.plan_block import PlanSource
from baton.agent.state import SessionState, View
from baton.agent.turn import Turn
from baton.auth import Credentials
from baton.config import ConfigLoader, Settings
from baton.errors import InvalidParams
from baton.providers.base import Provider, ProviderIdentity, StepChoice, ToolCall
from baton.session.activity import SessionActivity
from baton.session.answers import context_result, load_result
from baton.session.cache import SessionCache
from baton.session.listing import session_rows
from baton.session.model_choice import ProviderSource, SessionModels
from baton.session.permissions import PermissionDialog
from baton.session.seams import Seams
from baton.session.tool_calls import ToolCalls
from baton.session.turns import Turns
from baton.store.db import Database
from baton.store.leases import Leases
from baton.store.lifecycle import delete_session
from baton.store.model import DEFAULT_TITLE, MessageKind, StoredPart
from baton.store.outcomes import TurnOutcomeLog
from baton.store.requests import RequestLog
from baton.store.sessions import SessionStore
from baton.tools.base import ToolResult

if TYPE_CHECKING:
    from baton.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


class PlanFeature(PlanSource, PlanVersions, Protocol):
    """The plan feature as the session sees it (PlanService)."""


class SessionService:
    def __init__(
        self,
        workspace: Path,
        db: Database,
        config: ConfigLoader,
        credentials: Credentials,
        channel: ClientChannel,
        providers: ProviderSource,
        tools: ToolRegistry,
        *,
        plans: PlanFeature | None = None,
        seams: Seams | None = None,
        features: Callable[[SessionService], Seams] | None = None,
        skills: SkillBlocks | None = None,
    ) -> None:
        """`seams`: what the features run at each seam, when they are built without the
        service; `features`: their setup, called once with the service at the end of its
        construction (`baton.features`), when they are built on it. Either way the
        seams are fixed before the service serves anything."""
        self.workspace = workspace.resolve()
        self.db = db
        self.store = SessionStore(db)
        # Every model request's reported tokens, cached ones among them.
        self.requests = RequestLog(db)
        # How each turn ended, for a client that reopens the session.
        self.outcomes = TurnOutcomeLog(db)
        self.config = config
        self.credentials = credentials
        self.channel = channel
        self.models = SessionModels(providers, credentials, self.store)
        self.tools = tools
        self.context = ContextBuilder(self.workspace, plans, skills)
        # What changed since the model was last told (the mode, the plan): appended notes.
        self.notes = ContextNotes(self.store, plans)
        # The sessions held in memory, in step with the store.
        self.cache = SessionCache(db, self.store, self._loaded)
        # Which process works on a session (another `baton serve` may share the store).
        self.leases = Leases(db)
        # How each turn ended, for a client that reopens the session.
        self.outcomes = TurnOutcomeLog(db)
        # Last: a feature's setup may read any of the above.
        self.seams: Seams = features(self) if features is not None else (seams or Seams())
        # What runs on the seams: each tool call, with its permission dialog.
        self.permissions = PermissionDialog(self.workspace, self.settings, channel)
        self.tool_calls = ToolCalls(
            self.workspace,
            tools,
            channel,
            self.seams,
            self.permissions,
            settings=self.settings,
            identity=self.identity_for,
        )
        # The one owner of what runs on each session: every kind of work is admitted there.
        # What the person queued runs after the features' follow-ups (a compaction asked).
        self.activity = SessionActivity(
            self.leases,
            self.seams,
            refresh=self.refresh,
            next_work=(lambda state: self.turns.queue.next_work(state),),
        )
        self.turns = Turns(
            self,
            self.store,
            channel,
            self.leases,
            self.seams,
            self.activity,
            refresh=self.refresh,
            sync_notes=self.sync_notes,
        )

    # ------------------------------------------------------------------ settings & sessions

    def settings(self) -> Settings:
        return self.config.settings()

    @property
    def providers(self) -> ProviderSource:
        """Where providers come from (a bench swaps it on `models`)."""
        return self.models.providers

    def state(self, session_id: str) -> SessionState:
        return self.cache.get(session_id)

    def refresh(self, state: SessionState) -> SessionState:
        """Reload `state` in place if another process committed to it (`SessionCache`)."""
        return self.cache.refresh(state)

    def _loaded(self, state: SessionState) -> None:
        for callback in self.seams.session_loaded:
            callback(state)

    def create_session(self, title: str | None = None, mode: p.Mode = "build") -> SessionState:
        """THE way a session is made, whoever asks for it (`baton/session/new`, a plan's
        session, a child session of a delegation): stored, held, and its features
        attached (the `session_loaded` seam) like any loaded session."""
        return self.cache.create((title or "").strip() or DEFAULT_TITLE, mode)

    def new_session(self, params: p.SessionNewParams) -> p.SessionNewResult:
        if params.plan_path is not None:
            # A session on a plan file is the plan feature's (PlanService.new_session).
            raise InvalidParams("planPath needs the plan feature, which this server lacks")
        return p.SessionNewResult(session_id=self.create_session(params.title, params.mode).id)

    def list_sessions(self) -> p.SessionListResult:
        return p.SessionListResult(sessions=session_rows(self.db, self.store.list_sessions()))

    def load(self, session_id: str) -> p.SessionLoadResult:
        """The session as the client shows it (`baton/session/load`)."""
        state = self.state(session_id)
        return load_result(state, self.identity_for(state, self.settings()), self.outcomes)

    def forget(self, session_id: str) -> None:
        self.cache.forget(session_id)

    def release(self, session_id: str) -> None:
        """Let an idle session go from memory (a `task` child whose call ended); it is read
        again from the store when it is next asked for (`SessionCache`)."""
        self.cache.release(session_id)

    def discard(self, session_id: str) -> None:
        """Remove a session nothing was committed to: a `task` child whose start was
        refused (a child's row exists only once it has started)."""
        with self.leases.hold(session_id, "discard"):
            delete_session(self.db, session_id)
        self.cache.forget(session_id)

    def forget_all(self) -> None:
        self.cache.forget_all()

    def working(self) -> list[str]:
        return self.cache.working()

    def set_mode(self, params: p.SetModeParams) -> p.SetModeResult:
        state = self.state(params.session_id)
        self.change_mode(state, params.mode)
        return p.SetModeResult(mode=params.mode)

    def change_mode(self, state: SessionState, mode: p.Mode) -> None:
        if state.row.mode != mode:
            self.store.update_session(state.id, mode=mode)
            state.row.mode = mode
        self.channel.send_update(state.id, p.ModeUpdate(mode=mode))

    def set_model(self, params: p.SetModelParams) -> p.SetModelResult:
        return self.models.pin(self.state(params.session_id), self.settings(), params)

    def provider_for(self, state: SessionState, settings: Settings) -> Provider:
        return self.models.provider_for(state, settings)

    def identity_for(self, state: SessionState, settings: Settings) -> ProviderIdentity | None:
        return self.models.identity_for(state, settings)

    # ------------------------------------------------------------------ context

    def build_context(
        self,
        state: SessionState,
        settings: Settings,
        identity: ProviderIdentity | None,
        *,
        view: View | None = None,
        before_seq: int | None = None,
    ) -> BuiltContext:
        """What a step would send now; `view`/`before_seq`: another view, or the history
        before a message only (a compaction's candidates and requests, `ContextBuilder`)."""
        running = state.running_call_ids if state.busy else frozenset()
        # Every tool in every mode: the list is part of the cached prefix; a tool the
        # mode forbids is refused when called, with the reason. A small window gets the
        # compact prompt and tool descriptions, for as long as the model is the same.
        compact = compact_prompt(settings, identity)
        return self.context.build(
            state,
            settings,
            # A `task` child is offered its agent's tools only (seams.tool_offer).
            tools=self.seams.tool_offer.specs(state, self.tools.specs(compact=compact)),
            identity=identity,
            running_call_ids=running,
            compact=compact,
            view=view,
            before_seq=before_seq,
        )

    def sync_notes(self, state: SessionState) -> None:
        """Append what the model has not been told yet (the mode, a changed plan)."""
        block = self.context.plan_block(state)
        self.notes.sync(state, block_version=block.version if block is not None else None)

    def context_info(self, session_id: str) -> p.ContextResult:
        state = self.state(session_id)
        settings = self.settings()
        built = self.build_context(state, settings, self.identity_for(state, settings))
        return context_result(built, self.requests.totals(state.id))

    # ------------------------------------------------------------------ turns

    def start_turn(
        self,
        state: SessionState,
        text: str,
        kind: MessageKind = "prompt",
        *,
        extra_parts: Sequence[StoredPart] = (),
        max_steps: int | None = None,
        require_tools: Sequence[StepChoice] = (),
        meta: dict[str, Any] | None = None,
        first_call: ToolCall | None = None,
    ) -> asyncio.Task[p.PromptResult]:
        """Commit the user message and start the turn (`Turns.start`); the returned task
        ends with it. `max_steps` and `require_tools` shape it (`Turn`): `baton demo`
        gives each of its steps the one tool it needs."""
        return self.turns.start(
            state,
            text,
            kind,
            extra_parts=extra_parts,
            max_steps=max_steps,
            require_tools=require_tools,
            meta=meta,
            first_call=first_call,
        )

    async def prompt(self, params: p.PromptParams) -> p.PromptResult:
        state = self.state(params.session_id)
        # Editor context is read (and refused) before anything is stored.
        attachments: list[StoredPart] = [
            *resolve_attachments(self.workspace, params.context or []),
            *resolve_images(params.images or [], self.models.provider_id(state, self.settings())),
        ]
        text, meta, first_call = await self.turns.command(params.text, params.command)
        return await self.turns.until_done(
            self.start_turn(state, text, extra_parts=attachments, meta=meta, first_call=first_call)
        )

    def cancel(self, session_id: str) -> None:
        self.turns.cancel(self.state(session_id))

    # ------------------------------------------------------------------ what a turn calls

    async def before_step(self, turn: Turn) -> None:
        await self.turns.before_step(turn)

    async def run_tool(self, turn: Turn, call: ToolCall) -> ToolResult:
        return await self.tool_calls.run(turn, call)

    def concurrency(self, state: SessionState, calls: Sequence[ToolCall]) -> int:
        """How many of one response's `calls` may run at once (read-only `task` children)."""
        return self.seams.tool_offer.parallel(state, calls)

    async def shutdown(self) -> None:
        tasks = self.activity.running()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        await self.providers.aclose()
        self.leases.release_all()
        self.db.close()
