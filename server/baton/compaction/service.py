"""When compaction runs: manual requests, the automatic trigger, overflow recovery.

It is the agent loop's `TurnHooks`: before each step it runs compactions the
person asked for during the turn, then checks the counted context against the
threshold; when the provider rejects a request for size it compacts and lets
the loop retry the step once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Protocol

from baton import protocol as p
from baton.agent.compact_request import CompactRequest
from baton.agent.context import BuiltContext
from baton.agent.state import PendingCompaction, SessionState
from baton.agent.tokens import MAX_CALIBRATION
from baton.compaction import planning
from baton.compaction.engine import CompactionEngine
from baton.errors import CompactionError, ProviderError, SessionBusy
from baton.providers.base import Provider

if TYPE_CHECKING:
    from baton.agent.turn import Turn
    from baton.session.service import SessionService

log = logging.getLogger(__name__)


class ModelSwitch(Protocol):
    """Before a step: replace what this provider identity cannot replay (a server chain
    another model made; baton.compaction.server.ServerCompactionFeature.model_switch)."""

    async def __call__(
        self, turn: Turn, built: BuiltContext, provider: Provider
    ) -> BuiltContext: ...


class CompactionService:
    """The session's `TurnHooks` seam, and `after_turn` its after-turn seam (baton.features
    connects both)."""

    def __init__(
        self,
        sessions: SessionService,
        engine: CompactionEngine,
        *,
        model_switch: ModelSwitch | None = None,
    ) -> None:
        self.sessions = sessions
        self.engine = engine
        self.model_switch = model_switch
        # The after-turn runs of pending compactions (a task nothing holds may vanish).
        self._running: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ requests

    async def compact(
        self,
        session_id: str,
        *,
        instructions: str | None = None,
        strategy: p.StrategySetting | None = None,
        fresh: bool = False,
    ) -> p.CompactionRecord:
        """A manual compaction; `fresh=True` is the fresh-context start (plan approval's
        `fresh`): no summary, the view becomes the person's messages, ledger and plan."""
        state = self.sessions.state(session_id)
        request = CompactRequest(
            "manual", instructions=instructions, strategy=strategy, fresh=fresh
        )
        if state.busy:
            # During a turn it runs at the next step boundary (or when the turn ends).
            future: asyncio.Future[p.CompactionRecord] = asyncio.get_running_loop().create_future()
            state.pending_compactions.append(PendingCompaction(request, future))
            return await future
        if state.compacting:
            raise SessionBusy(state.id)
        # Another process may be working on the session: its lease first, then its news.
        self.sessions.leases.acquire(state.id, "compaction")
        try:
            self.sessions.refresh(state)
            state.compacting = True
            try:
                return await self.engine.compact(state, request)
            finally:
                state.compacting = False
        finally:
            self.sessions.leases.release(state.id)

    def compactions(self, session_id: str) -> p.CompactionsResult:
        return p.CompactionsResult(compactions=self.engine.records(session_id))

    def uncompact(self, session_id: str, compaction_id: str) -> p.CompactionRecord:
        state = self.sessions.state(session_id)
        if state.busy or state.compacting:
            raise SessionBusy(state.id)
        with self.sessions.leases.hold(state.id, "compaction undo"):
            return self.engine.uncompact(self.sessions.refresh(state), compaction_id)

    async def _run_pending(self, state: SessionState) -> None:
        pending, state.pending_compactions = state.pending_compactions, []
        for entry in pending:
            if entry.done.done():
                continue
            try:
                entry.done.set_result(await self.engine.compact(state, entry.request))
            except Exception as exc:
                entry.done.set_exception(exc)

    def after_turn(self, state: SessionState) -> None:
        if not state.pending_compactions:
            return
        # Still under the turn's lease (released after this callback): keep it for the run.
        self.sessions.leases.acquire(state.id, "compaction")
        # Busy from now, not from when the task first runs: a prompt arriving in between
        # must find the session compacting.
        state.compacting = True
        task = asyncio.get_running_loop().create_task(
            self._run_pending(state), name=f"pending-compactions-{state.id}"
        )
        self._running.add(task)
        task.add_done_callback(lambda t: self._pending_done(t, state))

    def _pending_done(self, task: asyncio.Task[None], state: SessionState) -> None:
        # A done-callback, so it runs even for a task cancelled before it started.
        self._running.discard(task)
        state.compacting = False
        self.sessions.leases.release(state.id)
        if not task.cancelled() and task.exception() is not None:
            log.error("pending compactions of %s failed: %r", state.id, task.exception())

    # ------------------------------------------------------------------ TurnHooks

    async def before_step(self, turn: Turn) -> None:
        if turn.purpose == "pre_compact":
            # A pre-compact round runs inside a compaction: queued ones wait for the turn's
            # next step boundary, never nest in the round.
            return
        await self._run_pending(turn.state)

    async def check(self, turn: Turn, built: BuiltContext, provider: Provider) -> BuiltContext:
        settings = self.sessions.settings()
        if turn.purpose == "pre_compact":
            # The round belongs to the compaction about to run; it never triggers another.
            return built
        if self.model_switch is not None:
            # A server chain another model or route made cannot be replayed: the server
            # feature compacts natively now (lazily, trigger model_switch) and rebuilds.
            built = await self.model_switch(turn, built, provider)
        if not planning.should_compact(
            built.tokens, built.threshold_tokens, auto=settings.compaction.auto
        ):
            return built
        record = await self.engine.compact(
            turn.state, CompactRequest("auto", interrupted=turn.steps > 0)
        )
        rebuilt = self.sessions.build_context(turn.state, settings, provider.identity)
        if rebuilt.tokens >= rebuilt.threshold_tokens and not record.committed:
            raise CompactionError(
                f"the session cannot fit: the context is {rebuilt.tokens} tokens, over the "
                f"threshold of "
                f"{rebuilt.threshold_tokens}, and compaction could not make it smaller "
                f"({record.notes[0]}); stopping instead of compacting again"
            )
        if rebuilt.tokens >= rebuilt.threshold_tokens:
            # The engine escalates until the view fits or fails; this is the loop guard.
            raise CompactionError(
                f"after compaction the context is still {rebuilt.tokens} tokens, over the "
                f"threshold of {rebuilt.threshold_tokens}; stopping instead of compacting again"
            )
        return rebuilt

    async def recover_overflow(self, turn: Turn, error: ProviderError) -> bool:
        if turn.purpose == "pre_compact":
            # No nested compaction: the round fails (recorded) and the compaction goes on.
            return False
        log.info("provider rejected the request for size in %s; compacting", turn.state.id)
        state = turn.state
        settings = self.sessions.settings()
        identity = self.sessions.identity_for(state, settings)
        built = self.sessions.build_context(state, settings, identity)
        if built.estimated_tokens:
            # The provider counted more than we estimated: trust it from now on.
            state.calibration = min(
                MAX_CALIBRATION,
                max(state.calibration, built.usable_window / built.estimated_tokens),
            )
        record = await self.engine.compact(
            turn.state, CompactRequest("overflow", interrupted=turn.steps > 0)
        )
        # Nothing could be gained: retrying the same request would overflow again.
        return record.committed
