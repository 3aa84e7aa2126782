"""The compaction runner: one entry point for manual, automatic, overflow and fresh compaction.

`CompactionEngine.compact` runs the phases in order, each once:

1. hooks: pre-compact (an autonomous round, if a hook asks for one), then
   compacting (summary instructions);
2. the ledger, built by code from the whole history (`ledger.py`), with the plan;
3. the strategy answers with a candidate (`native.py`: prune, summarise,
   escalate; `server.py`: the provider's artifact; `native.FreshStrategy`: no
   summary): its view, what made it and its notes, from a job it only reads;
4. the check: "never bigger" for native views (`planning.never_bigger`), and a
   fresh view must fit the usable window;
5. the commit: the record and the new view in one store transaction, then the
   compacted hooks and, when automatic compaction interrupted work, a continue
   message.

Every decision is a pure function in `planning.py`; this module does the I/O.
Nothing is deleted: a compaction only changes the view.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from baton import protocol as p
from baton.agent.compact_request import CompactRequest
from baton.agent.context import BuiltContext
from baton.agent.events import ProgressReporter
from baton.agent.state import SessionState, View
from baton.agent.tokens import FIXED_KINDS
from baton.compaction import planning, room
from baton.compaction.cut import KEEP_SHARE
from baton.compaction.job import (
    Candidate,
    Choice,
    CompactionHooks,
    CompactionJob,
    NoHooks,
    Strategy,
)
from baton.compaction.ledger import (
    build_ledger,
    leaving,
    ledger_budget,
    ledger_limits,
    ledger_rate,
    ledger_score,
    render_ledger,
)
from baton.compaction.native import FreshStrategy, NativeStrategy
from baton.compaction.planning import NothingToCompact
from baton.compaction.summary import summary_budget
from baton.config import Settings
from baton.errors import BatonError, CompactionError, NotFound, SessionBusy
from baton.ids import new_id, utc_now
from baton.providers.artifacts import window_from_json, window_to_json
from baton.providers.base import Progress, Provider, Usage
from baton.store.compactions import CompactionStore, StoredCompaction
from baton.store.model import StoredCompactionMarker

# The parts of the view before a compaction the view after it keeps as they are.
EXPECTED_KINDS = FIXED_KINDS | {"requests", "plan"}

if TYPE_CHECKING:
    from baton.session.service import SessionService

__all__ = [
    "Candidate",
    "Choice",
    "CompactRequest",
    "CompactionEngine",
    "CompactionHooks",
    "CompactionJob",
    "NoHooks",
    "Strategy",
    "view_from_json",
    "view_to_json",
]

log = logging.getLogger(__name__)

CONTINUE_TEXT = (
    "[Baton] The conversation was compacted to fit the context window while you were working. "
    "Your summary, the ledger of exact facts and the plan above are current. Continue the task "
    "from where you left off; do not start over."
)
FRESH = FreshStrategy()
# In a stored view: the most the next compaction's view may hold (`planning.ceiling_after`).
CEILING = "ceiling"
# In a view stored before the ceiling was: it or one before it was at its budgets, and
# so its own size is the ceiling.
BUDGETS_REACHED = "budgetsReached"
# How many ledger budgets the room is filled with at most, and how close to its limit
# (the provider's tokens) a fitting one is close enough: less than a line of the ledger,
# so each fill loses next to nothing of the room the one before kept.
FILL_TRIES = 6
FILL_SLACK = 8


def view_to_json(view: View) -> dict[str, Any]:
    return {
        "compactionId": view.compaction_id,
        "firstKeptSeq": view.first_kept_seq,
        "summary": view.summary,
        "ledgerText": view.ledger_text,
        "masked": view.masked,
        "serverWindow": window_to_json(view.server_window),
    }


def view_from_json(data: dict[str, Any]) -> View:
    return View(
        compaction_id=data.get("compactionId"),
        first_kept_seq=data.get("firstKeptSeq"),
        summary=data.get("summary"),
        ledger_text=data.get("ledgerText"),
        masked=dict(data.get("masked") or {}),
        server_window=window_from_json(data.get("serverWindow")),
    )


class StrategyChooser(Protocol):
    """Chooses how a compaction job produces its view; given the engine it runs in."""

    def choose(self, engine: CompactionEngine, job: CompactionJob) -> Choice: ...


class NativeOnly:
    """The chooser without server-side compaction: always the native strategy."""

    def choose(self, engine: CompactionEngine, job: CompactionJob) -> Choice:
        if job.request.strategy == "server":
            return Choice(
                engine.native,
                ("server-side compaction is not available for this provider; used native",),
            )
        return Choice(engine.native)


class CompactionEngine:
    def __init__(
        self,
        service: SessionService,
        store: CompactionStore,
        *,
        hooks: CompactionHooks | None = None,
        plan_state: Callable[[SessionState], p.PlanState | None] | None = None,
        chooser: StrategyChooser | None = None,
    ) -> None:
        self.service = service
        self.store = store
        self.hooks: CompactionHooks = hooks if hooks is not None else NoHooks()
        self.native = NativeStrategy()
        # Chooses the strategy for a job (the server-side feature's ServerStrategies
        # where server compaction may be used; native only otherwise).
        self.chooser: StrategyChooser = chooser if chooser is not None else NativeOnly()
        # The ledger's plan line (the plan feature's PlanContext.ledger_state).
        self.plan_state = plan_state if plan_state is not None else _no_plan

    # ------------------------------------------------------------------ views

    def restore_view(self, state: SessionState) -> None:
        entry = self.store.active(state.id)
        state.view = self.view_of(entry) if entry else View()
        self.store.sessions.settle(state.messages, state.view.first_kept_seq)

    def view_of(self, entry: StoredCompaction) -> View:
        view = view_from_json(entry.view)
        view.compaction_id = entry.record.compaction_id
        return view

    def build_with_view(
        self,
        state: SessionState,
        settings: Settings,
        provider: Provider,
        view: View,
        before_seq: int | None = None,
    ) -> BuiltContext:
        """What the model would be sent with `view` (only the messages before
        `before_seq`, when given); the session's own view and caches are left alone."""
        return self.service.build_context(
            state, settings, provider.identity, view=view, before_seq=before_seq
        )

    def records(self, session_id: str) -> list[p.CompactionRecord]:
        self.service.state(session_id)
        return [entry.record for entry in self.store.all(session_id)]

    # ------------------------------------------------------------------ compaction

    def new_job(
        self,
        state: SessionState,
        request: CompactRequest,
        settings: Settings,
        provider: Provider,
        report: ProgressReporter,
        *,
        hook_context: Sequence[str] = (),
        prompt_override: str | None = None,
        notes: Sequence[str] = (),
    ) -> CompactionJob:
        """A job over the session as it is now (its `before` is what a step would send)."""

        def build(view: View, before_seq: int | None) -> BuiltContext:
            return self.build_with_view(state, settings, provider, view, before_seq)

        def record_usage(usage: Usage, by: Provider) -> None:
            # Counted with the session's turns: `cachedTokens` and `cacheHitRate` include
            # what the summary request's reused prefix saved.
            self.service.requests.record(state.id, "summary", usage, by.identity)

        def show_progress(event: Progress) -> None:
            self.service.channel.send_update(
                state.id,
                p.ModelProgress(
                    phase=event.phase, done=event.done, total=event.total, cached=event.cached
                ),
            )

        before = self.service.build_context(state, settings, provider.identity)
        previous = self.store.active(state.id)
        return CompactionJob(
            state=state,
            request=request,
            settings=settings,
            provider=provider,
            before=before,
            report=report,
            builder=build,
            summary_provider=self._summary_provider(settings, provider),
            record_usage=record_usage,
            show_progress=show_progress,
            hook_context=tuple(hook_context),
            prompt_override=prompt_override,
            notes=tuple(notes),
            ceiling=planning.ceiling(
                request.trigger,
                previous.record if previous is not None else None,
                handed_on=_handed_on(previous),
                window=before.context_window,
                fresh=request.fresh,
            ),
        )

    def prepare(self, job: CompactionJob, choice: Choice, ledger: p.Ledger) -> CompactionJob:
        """The job the strategy runs: with the choice's notes and base view (then `before`
        is measured over it) and the ledger."""
        if choice.base_view is not None:
            job = replace(job, base_view=choice.base_view, before=job.build(choice.base_view))
        job = replace(
            job,
            notes=(*job.notes, *choice.notes),
            ledger=ledger,
            ledger_text=render_ledger(ledger, ledger_budget(job)),
        )
        shown_before = (job.base_view or job.state.view).ledger_text or ""
        return replace(
            job, ledger_leaving=tuple(leaving(ledger, self._expected_budget(job), shown_before))
        )

    def _expected_budget(self, job: CompactionJob) -> int:
        """The ledger's budget this compaction expects before its strategy runs (estimated
        tokens): the room less what the view before holds besides its history, the most
        the cut keeps verbatim and the summary's bound. The room left after the strategy
        (`_fill_room`) is as large or larger as a rule, so what folds within this budget
        is what the summary request is told folds."""
        before = job.before
        history = planning.history_tokens(before)
        keep = planning.keep_recent_tokens(
            job.settings.compaction.keep_recent_tokens, before.usable_window
        )
        blocks = sum(part.tokens for part in before.parts if part.kind in EXPECTED_KINDS)
        others = (
            blocks
            + min(keep, int(history * KEEP_SHARE))
            + summary_budget(history, before.usable_window)
        )
        floor, cap = ledger_limits(job)
        room_left = room.ledger_tokens(self._room(job, before.usable_window), others, floor, cap)
        return ledger_budget(job, room_left)

    @staticmethod
    def _room(job: CompactionJob, usable_window: int) -> int:
        """What the view after this compaction may hold: the room, within the ceiling."""
        tokens = room.room_tokens(usable_window)
        return tokens if job.ceiling is None else min(tokens, job.ceiling)

    def _summary_provider(self, settings: Settings, provider: Provider) -> Provider:
        model = settings.compaction.model
        if not model:
            return provider
        return self.service.providers.get(
            settings, self.service.credentials, provider=provider.identity.provider, model=model
        )

    async def compact(self, state: SessionState, request: CompactRequest) -> p.CompactionRecord:
        """Run one compaction now. Callers make sure no other one runs in this session."""
        settings = self.service.settings()
        provider = self.service.provider_for(state, settings)
        channel = self.service.channel
        strategy_name: p.Strategy = "native"
        started = False
        try:
            async with channel.progress("Compacting session") as report:
                # 1. Hooks.
                report("Running pre-compact hooks", 5)
                pre = await self.hooks.pre_compact(state, request)
                hook_context, prompt_override = await self.hooks.compacting(state, request)
                job = self.new_job(
                    state,
                    request,
                    settings,
                    provider,
                    report,
                    hook_context=hook_context,
                    prompt_override=prompt_override,
                    notes=request.notes,
                )
                choice = Choice(FRESH) if request.fresh else self.chooser.choose(self, job)
                strategy = choice.strategy
                strategy_name = strategy.name
                channel.send_update(
                    state.id, p.CompactionStarted(trigger=request.trigger, strategy=strategy.name)
                )
                started = True
                # 2. The ledger (and the plan's line in it).
                ledger = build_ledger(
                    [m for m in state.messages if m.id not in state.reverted],
                    self.plan_state(state),
                )
                job = self.prepare(job, choice, ledger)
                try:
                    # 3. The strategy: prune, summarise, escalate (or the server, or fresh).
                    candidate = await strategy.run(job)
                    # Its id now: the view is measured as it will be sent (the plan block
                    # is frozen by compaction id), so the ceiling holds for the record.
                    compaction_id = new_id("cmp")
                    view, budget = self._fill_room(
                        job,
                        replace(
                            candidate.view,
                            ledger_text=job.ledger_text,
                            compaction_id=compaction_id,
                        ),
                        bounded=candidate.author == "native",
                    )
                    if candidate.before is not None:
                        # Measured against the local history behind a server chain.
                        job = replace(job, before=candidate.before)
                    # 4. The check, once.
                    after = job.build(view, None)
                    self._check(job, candidate, after)
                    if (
                        job.ceiling is not None
                        and candidate.author == "native"
                        and after.tokens > job.ceiling
                    ):
                        candidate = replace(
                            candidate,
                            notes=(
                                *candidate.notes,
                                f"the view is {after.tokens} tokens, over its ceiling of "
                                f"{job.ceiling} (the last view at its budgets): the rest of "
                                f"the view outgrew it ({planning.largest_parts(after)})",
                            ),
                        )
                except NothingToCompact as nothing:
                    before = job.before
                    if request.trigger != "manual" and before.tokens >= before.threshold_tokens:
                        # It had to fit and cannot: a failure, not a no-op.
                        raise CompactionError(
                            f"the session cannot fit the context window: {nothing} "
                            f"({planning.largest_parts(before)}). Shorten the plan or the "
                            "workspace instruction files, or use a model with a larger window."
                        ) from nothing
                    report("Nothing to compact", 100)
                    record = self._uncommitted(
                        job,
                        pre,
                        nothing.author or strategy.name,
                        str(nothing),
                        (*job.notes, *nothing.notes),
                    )
                else:
                    # 5. The commit.
                    record = self._commit(
                        job,
                        view,
                        pre,
                        candidate.author,
                        (*job.notes, *candidate.notes),
                        candidate.corrections,
                        ledger_tokens=budget,
                        compaction_id=compaction_id,
                    )
                    report("Done", 100)
        except BaseException as exc:
            if isinstance(exc, BatonError):
                message = exc.message
            elif isinstance(exc, Exception):
                message = f"{type(exc).__name__}: {exc}"
            else:
                message = "compaction was cancelled"
            if not started:
                channel.send_update(
                    state.id, p.CompactionStarted(trigger=request.trigger, strategy=strategy_name)
                )
            channel.send_update(state.id, p.CompactionFailed(error=message))
            log.warning("compaction failed in %s: %s", state.id, message)
            if isinstance(exc, CompactionError | SessionBusy) or not isinstance(exc, Exception):
                raise
            if not isinstance(exc, BatonError):
                log.error("compaction crashed", exc_info=exc)
            raise CompactionError(f"compaction failed: {message}") from exc
        finished = p.CompactionFinished(compaction=record)
        channel.send_update(state.id, finished)
        if not record.committed:
            # No record is stored: the update is, so a reopened session still shows it.
            last = state.messages[-1].seq if state.messages else None
            try:
                self.service.outcomes.record_shown(state.id, last, finished)
            except Exception:
                log.exception("an uncommitted compaction of %s was not kept", state.id)
            return record
        try:
            await self.hooks.compacted(state, record)
        except Exception:
            log.exception("a compacted hook failed; the compaction stands")
        return record

    def _fill_room(
        self, job: CompactionJob, view: View, *, bounded: bool = True
    ) -> tuple[View, int]:
        """The view with its ledger re-rendered in the room the rest of the view leaves it
        (`room.py`): the candidate was made with the ledger's floor; what the kept
        messages, the checkpoint and the other blocks leave of the room goes to facts.
        The room stops at the ceiling (`planning.ceiling`) when the view is `bounded` (a
        native one: a server window's size is a guess). The view as it was when that
        gains nothing or would make it no smaller than the view before. With the
        ledger's budget (estimated tokens)."""
        floor_budget = ledger_budget(job)
        if not view.ledger_text:
            return view, floor_budget
        built = job.build(view, None)
        ledger_part = sum(part.tokens for part in built.parts if part.kind == "ledger")
        floor, cap = ledger_limits(job)
        limit = (
            self._room(job, built.usable_window)
            if bounded
            else room.room_tokens(built.usable_window)
        )
        tokens = room.ledger_tokens(limit, built.tokens - ledger_part, floor, cap)
        best: tuple[View, int] = (view, floor_budget)
        # The parts are estimated and the view counted as the provider would, so the first
        # budget misses the limit by the rate between them: measured and corrected, then
        # halved between the largest budget that fits and the smallest that does not.
        budget, too_big = ledger_budget(job, tokens), ledger_budget(job, cap) + 1
        for _ in range(FILL_TRIES):
            if budget <= best[1] or budget >= too_big:
                break
            text = render_ledger(job.ledger, budget)
            if text == view.ledger_text:
                break  # the floor shows as much: nothing to gain
            wider = replace(view, ledger_text=text)
            after = job.build(wider, None).tokens
            if built.tokens < job.before.tokens <= after:
                break
            if not bounded:
                return wider, budget
            if after <= limit:
                best = (wider, budget)
                if limit - after <= FILL_SLACK:
                    break
            else:
                too_big = budget
            if too_big > ledger_budget(job, cap):
                # Nothing passed the limit yet: grow by what is left of it.
                budget = min(too_big - 1, budget + int((limit - after) / ledger_rate(job.state)))
            else:
                budget = (best[1] + too_big) // 2
        return best

    def _check(self, job: CompactionJob, candidate: Candidate, after: BuiltContext) -> None:
        """Never bigger (native views), and a fresh view must fit the usable window."""
        reason = planning.never_bigger(
            candidate.author,
            job.request.trigger,
            before=job.before.tokens,
            history=planning.history_tokens(job.before),
            after=after.tokens,
            made_by=candidate.made_by,
        )
        if reason is not None:
            raise NothingToCompact(reason, candidate.notes, candidate.author)
        if candidate.author == "fresh" and after.tokens > after.usable_window:
            raise CompactionError(
                f"a fresh start would still send {after.tokens} tokens, over the usable "
                f"window of {after.usable_window} ({planning.largest_parts(after)})"
            )

    def _commit(
        self,
        job: CompactionJob,
        view: View,
        pre: list[p.PreCompactOutcome],
        strategy: p.Strategy,
        notes: Sequence[str],
        corrections: Sequence[p.ClaimCorrection] = (),
        ledger_tokens: int | None = None,
        compaction_id: str | None = None,
    ) -> p.CompactionRecord:
        state = job.state
        compaction_id = compaction_id or new_id("cmp")
        view.compaction_id = compaction_id
        after = job.build(view)
        first_kept = next(
            (
                m
                for m in state.messages
                if m.kind != "compaction"
                and view.first_kept_seq is not None
                and m.seq >= view.first_kept_seq
            ),
            None,
        )
        if view.first_kept_seq is None and state.messages:
            first_kept = next((m for m in state.messages if m.kind != "compaction"), None)
        record = p.CompactionRecord(
            compaction_id=compaction_id,
            session_id=state.id,
            trigger=job.request.trigger,
            strategy=strategy,
            tokens_before=job.before.tokens,
            tokens_after=after.tokens,
            first_kept_message_id=first_kept.id if first_kept else None,
            summary=view.summary if strategy == "native" else None,
            ledger=job.ledger,
            pre_compact=pre,
            created_at=utc_now(),
            notes=list(notes),
            corrections=list(corrections),
            score=self._score(job, view, after, ledger_tokens),
        )
        interrupted = job.request.interrupted and job.settings.compaction.auto_continue
        continue_text = CONTINUE_TEXT if interrupted else None
        stored_view = self.serialise_view(view)
        handed_on = planning.ceiling_after(record, job.ceiling)
        if handed_on is not None and strategy == "native":
            stored_view[CEILING] = handed_on
        marker, follow = self.store.commit(
            record,
            first_kept_seq=view.first_kept_seq,
            view=stored_view,
            marker_parts=[StoredCompactionMarker(compaction_id)],
            continue_text=continue_text,
        )
        state.add(marker)
        if follow is not None:
            state.add(follow)
            self.service.channel.send_update(
                state.id, p.UserMessageUpdate(message_id=follow.id, text=follow.text())
            )
        state.view = view
        # What the view left behind is never sent again: it leaves memory (read back on use).
        self.store.sessions.settle(state.messages, view.first_kept_seq)
        return record

    def _score(
        self, job: CompactionJob, view: View, after: BuiltContext, ledger_tokens: int | None
    ) -> p.CompactionScore | None:
        """What the view keeps of the facts Baton tracks (None: the view has no ledger)."""
        if not view.ledger_text:
            return None
        budget = ledger_tokens if ledger_tokens is not None else ledger_budget(job)
        facts, shown, folded = ledger_score(job.ledger, budget)
        return p.CompactionScore(
            facts=facts,
            in_view=shown,
            one_recall=folded,
            view_tokens=after.tokens,
            window=after.context_window,
        )

    def _uncommitted(
        self,
        job: CompactionJob,
        pre: list[p.PreCompactOutcome],
        strategy: p.Strategy,
        reason: str,
        notes: Sequence[str],
    ) -> p.CompactionRecord:
        """The answer when nothing could be gained: record-shaped, stored nowhere."""
        log.info("compaction of %s not committed: %s", job.state.id, reason)
        return p.CompactionRecord(
            compaction_id="",
            session_id=job.state.id,
            trigger=job.request.trigger,
            strategy=strategy,
            tokens_before=job.before.tokens,
            tokens_after=job.before.tokens,
            first_kept_message_id=None,
            ledger=job.ledger,
            pre_compact=pre,
            created_at=utc_now(),
            notes=[reason, *notes],
            committed=False,
        )

    def serialise_view(self, view: View) -> dict[str, Any]:
        return view_to_json(view)

    # ------------------------------------------------------------------ undo

    def uncompact(self, state: SessionState, compaction_id: str) -> p.CompactionRecord:
        if state.busy or state.compacting:
            raise SessionBusy(state.id)
        entries = self.store.all(state.id)
        index = next(
            (i for i, e in enumerate(entries) if e.record.compaction_id == compaction_id), None
        )
        if index is None:
            raise NotFound(f"compaction not found: {compaction_id!r}")
        target = entries[index]
        if target.undone:
            raise CompactionError(f"compaction {compaction_id} is already undone")
        later = [e for e in entries[index:] if not e.undone]
        previous = next((e for e in reversed(entries[:index]) if not e.undone), None)
        view = self.view_of(previous) if previous else View()
        settings = self.service.settings()
        provider = self.service.provider_for(state, settings)
        built = self.build_with_view(state, settings, provider, view)
        if built.tokens > built.usable_window:
            raise CompactionError(
                f"the view before this compaction needs {built.tokens} tokens and the usable "
                f"window is {built.usable_window}; it cannot be restored with this model"
            )
        self.store.undo([e.record.compaction_id for e in later])
        state.view = view
        # The messages back in view are sent again: held in memory again.
        self.store.sessions.settle(state.messages, view.first_kept_seq)
        record = target.record.model_copy(update={"undone": True})
        return record


def _handed_on(previous: StoredCompaction | None) -> int | None:
    """The ceiling the compaction that stands handed on (`planning.ceiling_after`)."""
    if previous is None:
        return None
    value = previous.view.get(CEILING)
    if isinstance(value, int):
        return value
    if previous.view.get(BUDGETS_REACHED):
        return previous.record.tokens_after
    return None


def _no_plan(state: SessionState) -> p.PlanState | None:
    return None
