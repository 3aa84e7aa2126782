"""SessionService: the core's public face. The LSP server and the CLI call only this.

It owns the store, the in-memory sessions, the running turns, and wires the
agent loop to providers, tools, the context builder and the client channel.
Features that arrive later (plans, compaction, hooks) plug in through the
seams marked below rather than through the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ConfigDict

from baton import protocol as p
from baton.auth import Credentials
from baton.config import ConfigLoader, Settings
from baton.context import (
    BuiltContext,
    ContextBuilder,
    compact_prompt,
    context_window,
    threshold_tokens,
)
from baton.errors import InvalidParams, ProviderError, SessionBusy, SessionNotFound
from baton.plan.source import PlanSource
from baton.providers.base import OpaqueItem, Provider, ProviderIdentity, RequiredCall, ToolCall
from baton.review.attachments import resolve_attachments
from baton.session.events import ClientChannel
from baton.session.grants import permission_category
from baton.session.listing import session_rows
from baton.session.model import (
    DEFAULT_TITLE,
    MessageKind,
    SessionRow,
    StoredMessage,
    StoredPart,
    title_from_prompt,
)
from baton.session.notes import ContextNotes, PlanVersions
from baton.session.reopen import fill_compaction_figures, turn_outcomes
from baton.session.seams import Seams
from baton.session.state import SessionState, View
from baton.session.turn import Turn, parse_arguments
from baton.session.usage import usage_totals
from baton.store.db import Database
from baton.store.leases import Leases
from baton.store.outcomes import TurnOutcomeLog
from baton.store.requests import RequestLog
from baton.store.sessions import SessionStore
from baton.tokens import calibration
from baton.tools.base import ToolContext, ToolResult
from baton.tools.limits import sized_for_window
from baton.tools.policy import protected_reason

if TYPE_CHECKING:
    from baton.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


class PlanFeature(PlanSource, PlanVersions, Protocol):
    """The plan feature as the session sees it (PlanService)."""


class ProviderSource(Protocol):
    def get(
        self,
        settings: Settings,
        credentials: Credentials,
        *,
        provider: str | None = None,
        model: str | None = None,
    ) -> Provider: ...

    async def aclose(self) -> None: ...


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
    ) -> None:
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
        self.providers = providers
        self.tools = tools
        self.context = ContextBuilder(self.workspace, plans)
        # What changed since the model was last told (the mode, the plan): appended notes.
        self.notes = ContextNotes(self.store, plans)
        # What the features do at each seam of the loop (build_app fills it; no-ops here).
        self.seams = seams if seams is not None else Seams()
        self._sessions: dict[str, SessionState] = {}
        # Which process works on a session (another `baton serve` may share the store).
        self.leases = Leases(db)
        # Per session: the store's data version and the session's signature when its
        # state was last known to match the store (see `refresh`).
        self._seen: dict[str, tuple[int, tuple[Any, ...]]] = {}

    # ------------------------------------------------------------------ settings & sessions

    def settings(self) -> Settings:
        return self.config.settings()

    def state(self, session_id: str) -> SessionState:
        state = self._sessions.get(session_id)
        if state is not None:
            return self.refresh(state)
        version = self.db.data_version()
        signature = self.store.signature(session_id)
        row = self.store.get_session(session_id)
        if signature is None or row is None:
            raise SessionNotFound(session_id)
        state = SessionState(row=row, messages=[])
        self._fill(state, row)
        self._sessions[session_id] = state
        self._seen[session_id] = (version, signature)
        return state

    def _fill(self, state: SessionState, row: SessionRow) -> None:
        """(Re)load everything of `state` that the store holds, and let features attach."""
        state.reset(row, self.store.load_messages(row.id))
        for message in state.messages:
            usage = message.meta.get("usage")
            if usage and message.meta.get("estimatedInput"):
                state.calibration = calibration(usage["input"], message.meta["estimatedInput"])
                parts = message.meta.get("estimatedParts")
                if isinstance(parts, dict):
                    state.token_model.observe(usage["input"], parts)
        for callback in self.seams.session_loaded:
            callback(state)

    def refresh(self, state: SessionState) -> SessionState:
        """Reload `state` in place if another process committed to its session since it
        was loaded (two editor windows on one workspace). A session this process is
        working on is left as it is: its lease keeps other processes' turns out."""
        if state.busy or state.compacting:
            return state
        version = self.db.data_version()
        seen = self._seen.get(state.id)
        if seen is not None and seen[0] == version:
            return state  # no other connection committed anything since
        signature = self.store.signature(state.id)
        if signature is None:
            self.forget(state.id)
            raise SessionNotFound(state.id)
        if seen is None or seen[1] != signature:
            row = self.store.get_session(state.id)
            if row is None:
                self.forget(state.id)
                raise SessionNotFound(state.id)
            log.info("session %s changed in the store: reloading it", state.id)
            self._fill(state, row)
        self._seen[state.id] = (version, signature)
        return state

    def new_session(self, params: p.SessionNewParams) -> p.SessionNewResult:
        if params.plan_path is not None:
            # A session on a plan file is the plan feature's (PlanService.new_session).
            raise InvalidParams("planPath needs the plan feature, which this server lacks")
        title = (params.title or "").strip() or DEFAULT_TITLE
        row = self.store.create_session(title, params.mode)
        self.state(row.id)
        return p.SessionNewResult(session_id=row.id)

    def list_sessions(self) -> p.SessionListResult:
        return p.SessionListResult(sessions=session_rows(self.db, self.store.list_sessions()))

    def compacted_ids(self, state: SessionState) -> set[str]:
        first = state.view.first_kept_seq
        if first is None:
            return set()
        return {m.id for m in state.messages if m.seq < first and m.kind != "compaction"}

    def load(self, session_id: str) -> p.SessionLoadResult:
        state = self.state(session_id)
        compacted = self.compacted_ids(state)
        running = state.running_call_ids if state.busy else frozenset()
        messages = [
            m.to_wire(
                compacted=m.id in compacted,
                running=bool(running & _call_ids(m)),
            )
            for m in state.messages
        ]
        for wire in messages:
            wire.reverted = wire.id in state.reverted
        fill_compaction_figures(messages, state.id, self.outcomes)
        return p.SessionLoadResult(
            session_id=state.id,
            title=state.row.title,
            mode=state.row.mode,
            messages=messages,
            turns=turn_outcomes(state, self.outcomes),
            **self._load_extras(state),
        )

    def _load_extras(self, state: SessionState) -> dict[str, Any]:
        """The extension fields of `baton/session/load`: usage totals and the model in use."""
        extras: dict[str, Any] = {"usage": usage_totals(state)}
        identity = self.identity_for(state, self.settings())
        if identity is not None:
            extras["provider"] = identity.provider
            extras["model"] = identity.model
        else:
            extras["provider"] = state.row.provider
            extras["model"] = state.row.model
        return extras

    def forget(self, session_id: str) -> None:
        """Drop a deleted session from memory (its rows are gone from the store)."""
        self._sessions.pop(session_id, None)
        self._seen.pop(session_id, None)

    def forget_all(self) -> None:
        """Drop every session from memory: the store was replaced (`baton/store/repair`)."""
        self._sessions.clear()
        self._seen.clear()

    def working(self) -> list[str]:
        """Sessions with a turn or a compaction running in this process."""
        return [s.id for s in self._sessions.values() if s.busy or s.compacting]

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
        state = self.state(params.session_id)
        settings = self.settings()
        provider_id = params.provider or state.row.provider or settings.provider
        # Resolve now so a bad combination fails here, not at the next prompt.
        provider = self.providers.get(
            settings, self.credentials, provider=provider_id, model=params.model
        )
        self.store.update_session(state.id, provider=provider.identity.provider, model=params.model)
        state.row.provider = provider.identity.provider
        state.row.model = params.model
        return p.SetModelResult(provider=provider.identity.provider, model=params.model)

    def provider_for(self, state: SessionState, settings: Settings) -> Provider:
        return self.providers.get(
            settings, self.credentials, provider=state.row.provider, model=state.row.model
        )

    def identity_for(self, state: SessionState, settings: Settings) -> ProviderIdentity | None:
        try:
            return self.provider_for(state, settings).identity
        except Exception:
            return None

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
            tools=self.tools.specs(compact=compact),
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
        totals = self.requests.totals(state.id)
        return p.ContextResult(
            cached_tokens=totals.cached_tokens,
            cache_hit_rate=totals.cache_hit_rate,
            tokens=built.tokens,
            context_window=built.context_window,
            threshold=built.threshold_tokens,
            items=[p.ContextItem(kind=part.kind, tokens=part.tokens) for part in built.parts],
            server_artifact=built.server_artifact,
        )

    # ------------------------------------------------------------------ turns

    def add_user_message(
        self,
        state: SessionState,
        text: str,
        kind: MessageKind,
        meta: dict[str, Any] | None = None,
        *,
        extra_parts: list[StoredPart] | None = None,
    ) -> StoredMessage:
        parts = [StoredPart("text", {"text": text}), *(extra_parts or [])]
        message = self.store.append_message(state.id, "user", kind, parts, meta=meta)
        state.add(message)
        if kind != "prompt":
            self.channel.send_update(
                state.id,
                p.UserMessageUpdate(message_id=message.id, text=text, origin=message.origin()),
            )
        return message

    def _ensure_idle(self, state: SessionState) -> None:
        if state.busy or state.compacting:
            raise SessionBusy(state.id)

    def start_turn(
        self,
        state: SessionState,
        text: str,
        kind: MessageKind = "prompt",
        *,
        extra_parts: list[StoredPart] | None = None,
        max_steps: int | None = None,
        require_tools: Sequence[str | RequiredCall] = (),
    ) -> asyncio.Task[p.PromptResult]:
        """Commit the user message and start the turn; the returned task ends with it.
        `max_steps` and `require_tools` shape it (`Turn`): `baton demo` gives each of its
        steps the one tool it needs.

        The session's lease is taken first (SessionBusy if another process works on it),
        then what another process committed is loaded, so the request is built on the
        whole history and no turn interleaves with another's in the store."""
        self._ensure_idle(state)
        if not text.strip():
            raise InvalidParams("params.text: must not be empty")
        self.leases.acquire(state.id, "turn")
        try:
            self.refresh(state)
            if kind == "prompt" and state.row.title == DEFAULT_TITLE:
                title = title_from_prompt(text)
                self.store.update_session(state.id, title=title)
                state.row.title = title
            self.sync_notes(state)
            self.add_user_message(state, text, kind, extra_parts=extra_parts)
        except BaseException:
            self.leases.release(state.id)
            raise
        turn = Turn(self, state, max_steps=max_steps, require_tools=require_tools)
        task = asyncio.create_task(turn.run(), name=f"turn-{state.id}")
        state.turn_task = task
        task.add_done_callback(lambda t: self._turn_done(t, state))
        return task

    def _turn_done(self, task: asyncio.Task[Any], state: SessionState) -> None:
        _log_task_failure(task, state.id)
        try:
            for callback in self.seams.after_turn:
                try:
                    callback(state)
                except Exception:
                    log.exception("after-turn callback failed")
        finally:
            # After the callbacks: work they start on the session holds the lease too.
            self.leases.release(state.id)

    async def prompt(self, params: p.PromptParams) -> p.PromptResult:
        state = self.state(params.session_id)
        # Editor context is read (and refused) before anything is stored.
        attachments = resolve_attachments(self.workspace, params.context or [])
        task = self.start_turn(state, params.text, extra_parts=attachments)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            # The request itself was cancelled ($/cancelRequest): stop the turn too.
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise

    def cancel(self, session_id: str) -> None:
        state = self.state(session_id)
        if state.turn_task is not None and not state.turn_task.done():
            state.turn_task.cancel()
        for callback in self.seams.on_cancel:
            callback(state)

    # ------------------------------------------------------------------ seams for the loop

    async def before_step(self, turn: Turn) -> None:
        if turn.state.id in self.leases.held and not self.leases.holds(turn.state.id):
            # Taken over after it expired (this process stalled longer than its TTL).
            raise SessionBusy(
                turn.state.id,
                f"this process's lease on {turn.state.id!r} expired and another Baton "
                "process took the session over; the turn stops here",
            )
        for prepare in self.seams.before_step:
            await prepare(turn)
        await self.seams.turn.before_step(turn)
        # After a compaction the hooks may have run: its notes go after its marker.
        self.sync_notes(turn.state)

    async def check_compaction(
        self, turn: Turn, built: BuiltContext, provider: Provider
    ) -> BuiltContext:
        return await self.seams.turn.check(turn, built, provider)

    async def recover_overflow(self, turn: Turn, error: ProviderError) -> bool:
        return await self.seams.turn.recover_overflow(turn, error)

    def on_server_compaction(
        self, turn: Turn, message: StoredMessage, item: OpaqueItem, provider: Provider
    ) -> None:
        self.seams.server_compaction.on_server_compaction(turn, message, item, provider)

    async def run_tool(self, turn: Turn, call: ToolCall) -> ToolResult:
        state = turn.state
        settings = self.tool_settings(state)

        async def ask(
            tool: str, tool_call_id: str, input: dict[str, Any], diff: str | None = None
        ) -> bool:
            return await self.ask_permission(state, tool, tool_call_id, input, diff, turn=turn)

        # Per-turn checkpoints (the review feature): the file tools report what they change.
        recorder = self.seams.change_recorder
        changes = recorder(state, call.call_id) if recorder is not None else None
        services = self.seams.tool_services
        ctx = ToolContext(
            session_id=state.id,
            tool_call_id=call.call_id,
            workspace=self.workspace,
            mode=state.row.mode,
            settings=settings,
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
        )
        hooks = self.seams.tools
        args = parse_arguments(call.arguments) or {}
        denied = await hooks.tool_before(state, call.name, args)
        if denied is not None:
            return ToolResult(output=f"[not run: {denied}]", is_error=True)
        result = await self.tools.run(call.name, call.arguments, ctx)
        await hooks.tool_after(state, call.name, args, result.output)
        return result

    def tool_settings(self, state: SessionState) -> Settings:
        """The settings a tool runs with: its output limit sized to the model's window."""
        settings = self.settings()
        window = context_window(settings, self.identity_for(state, settings))
        usable, _ = threshold_tokens(settings, window)
        return sized_for_window(settings, usable, state.calibration)

    async def ask_permission(
        self,
        state: SessionState,
        tool: str,
        tool_call_id: str,
        input: dict[str, Any],
        diff: str | None = None,
        *,
        turn: Turn | None = None,
    ) -> bool:
        settings = self.settings()
        category = permission_category(tool)
        policy = getattr(settings.permissions, category, "ask")
        if policy == "deny":
            return False
        # A protected path (.baton, .git, ...) asks whatever the policy or an earlier
        # "Always allow" says, and no "Always allow" is offered for it.
        reason = protected_reason(self.workspace, tool, input)
        grants = state.grants
        if reason is None and (policy == "allow" or grants.covers(self.workspace, tool, input)):
            return True
        options = [p.PermissionOption(option_id="allow_once", kind="allow_once", name="Allow once")]
        if reason is None:
            options.extend(grants.options(self.workspace, tool, input))
        options.append(
            p.PermissionOption(option_id="reject_once", kind="reject_once", name="Reject")
        )
        params = p.PermissionRequestParams(
            session_id=state.id,
            tool_call=p.PermissionToolCall(tool_call_id=tool_call_id, name=tool, input=input),
            options=options,
            diff=diff,
            reason=reason,
        )
        answer = await self._permission_answer(params, turn)
        if answer is None or answer.outcome == "cancelled":
            return False
        assert isinstance(answer.outcome, p.SelectedOutcome)
        chosen = answer.outcome.option_id
        if chosen == "allow_once":
            return True
        if chosen not in {o.option_id for o in options if o.kind == "allow_always"}:
            # Not offered: an "always" answer to a protected path (a client that ignores
            # the options) counts as once; anything else is a rejection.
            return chosen.startswith("allow_always")
        return grants.grant(self.workspace, chosen, tool, input)

    async def _permission_answer(
        self, params: p.PermissionRequestParams, turn: Turn | None
    ) -> p.PermissionResponse | None:
        timeout = turn.permission_timeout if turn is not None else None
        if timeout is None:
            return await self.channel.request_permission(params)
        try:
            return await asyncio.wait_for(self.channel.request_permission(params), timeout)
        except TimeoutError:
            assert turn is not None
            turn.stop_after_step(
                f"the permission request for {params.tool_call.name} was not answered"
                f" within {timeout:g} s"
            )
            return None

    async def shutdown(self) -> None:
        tasks = [
            s.turn_task for s in self._sessions.values() if s.turn_task and not s.turn_task.done()
        ]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        await self.providers.aclose()
        self.leases.release_all()
        self.db.close()


class _RawParams(p.WireModel):
    """Params already in wire form (a tool's notification)."""

    model_config = ConfigDict(extra="allow")

    def wire(self) -> dict[str, Any]:
        return dict(self.__pydantic_extra__ or {})


def _call_ids(message: StoredMessage) -> set[str]:
    return {part.data["toolCallId"] for part in message.tool_calls()}


def _log_task_failure(task: asyncio.Task[Any], session_id: str) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None and not isinstance(exc, ProviderError):
        log.error("turn task of session %s ended with %r", session_id, exc)
