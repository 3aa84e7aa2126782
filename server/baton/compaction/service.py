"""When compaction runs: manual requests, the automatic trigger, overflow recovery.

It is the agent loop's `TurnHooks`: before each step it runs compactions the
person asked for during the turn, then checks the counted context against the
threshold; when the provider rejects a request for size it compacts and lets
the loop retry the step once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
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
from baton.session.work import Work

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
    """The session's `TurnHooks` seam; `next_work` and `run_pending` run what was asked
    while other work ran, when it ends or at its boundaries (baton.features connects them)."""

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

    # ------------------------------------------------------------------ requests

    async def compact(
        self,
        session_id: str,
        *,
        instructions: str | None = None,
        strategy: p.StrategySetting | None = None,
        fresh: bool = False,
        prepare: Callable[[], None] | None = None,
        then: Callable[[p.CompactionRecord], None] | None = None,
    ) -> p.CompactionRecord:
        """A manual compaction; `fresh=True` is the fresh-context start (plan approval's
        `fresh`): no summary, the view becomes the person's messages, ledger and plan.
        On an idle session it is admitted as work of its own (`prepare` under its lease,
        `then` with its record before anything else may start); while other work runs
        it waits for that work's next step boundary or its end, and is answered then."""
        state = self.sessions.state(session_id)
        request = CompactRequest(
            "manual", instructions=instructions, strategy=strategy, fresh=fresh
        )
        activity = self.sessions.activity
        if not activity.idle(state) and prepare is None and then is None:
            future: asyncio.Future[p.CompactionRecord] = asyncio.get_running_loop().create_future()
            state.pending_compactions.append(PendingCompaction(request, future))
            return await future
        work = Work(
            "compaction",
            "compaction",
            lambda: self.engine.compact(state, request),
            prepare=prepare,
            then=then,
        )
        result: p.CompactionRecord = await activity.admit(state, work)
        return result

    def compactions(self, session_id: str) -> p.CompactionsResult:
        return p.CompactionsResult(compactions=self.engine.records(session_id))

    def uncompact(self, session_id: str, compaction_id: str) -> p.CompactionRecord:
        state = self.sessions.state(session_id)
        if state.busy or state.compacting:
            raise SessionBusy(state.id)
        with self.sessions.leases.hold(state.id, "compaction undo"):
            return self.engine.uncompact(self.sessions.refresh(state), compaction_id)

    async def run_pending(self, state: SessionState) -> None:
        """The compactions asked while other work ran, in order, each answered as it ends
        (at a turn's step boundary, between a step build's steps, or after the work)."""
        pending, state.pending_compactions = state.pending_compactions, []
        await self._run(state, pending)

    async def _run(self, state: SessionState, pending: list[PendingCompaction]) -> None:
        for entry in pending:
            if entry.done.done():
                continue
            try:
                entry.done.set_result(await self.engine.compact(state, entry.request))
            except Exception as exc:
                entry.done.set_exception(exc)

    def next_work(self, state: SessionState) -> Work | None:
        """The compactions the ended work left pending, as the work that follows it. Taken
        off the state now: the admission may reload the state from the store."""
        pending = [entry for entry in state.pending_compactions if not entry.done.done()]
        state.pending_compactions = []
        if not pending:
            return None
        return Work(
            "compaction",
            "compaction",
            lambda: self._run(state, pending),
            refused=lambda exc: _refuse(pending, exc),
        )

    # ------------------------------------------------------------------ TurnHooks

    async def before_step(self, turn: Turn) -> None:
        if turn.purpose == "pre_compact":
            # A pre-compact round runs inside a compaction: queued ones wait for the turn's
            # next step boundary, never nest in the round.
            return
        await self.run_pending(turn.state)

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


def _refuse(pending: list[PendingCompaction], exc: BaseException) -> None:
    """The compactions could not be admitted: each request is answered with why."""
    for entry in pending:
        if not entry.done.done():
            entry.done.set_exception(exc)
