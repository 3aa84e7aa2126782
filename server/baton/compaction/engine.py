"""The compaction engine: one entry point for manual, automatic and overflow compaction.

Phases, in order: pre-compact hooks (an autonomous round, if a hook asks for
one), compacting hooks (instructions), the strategy (prune first; summarise
only the oldest messages and only as far as needed; escalate if the result
still does not fit), one store transaction that writes the record and the
new view, compacted hooks, then a continue message when automatic compaction
interrupted work. Nothing is deleted: a compaction only changes the view.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from baton import protocol as p
from baton.compaction import summary as summaries
from baton.compaction.artifacts import window_from_json, window_to_json
from baton.compaction.compact_request import CompactRequest
from baton.compaction.cut import (
    KEEP_SHARE,
    choose_cut,
    keep_budget,
    message_tokens,
    protected_call_ids,
    protected_start,
)
from baton.compaction.ledger import build_ledger, render_ledger
from baton.compaction.prune import plan_masks
from baton.compaction.summarise import Summariser
from baton.config import Settings
from baton.context import BuiltContext
from baton.errors import BatonError, CompactionError, NotFound, SessionBusy
from baton.ids import new_id, utc_now
from baton.providers.base import (
    Provider,
)
from baton.session.events import ProgressReporter
from baton.session.model import StoredMessage, StoredPart
from baton.session.state import SessionState, View
from baton.store.compactions import CompactionStore, StoredCompaction
from baton.tokens import FIXED_KINDS, ITEM_OVERHEAD

if TYPE_CHECKING:
    from baton.session.service import SessionService

log = logging.getLogger(__name__)

# After compacting, aim this far below the trigger so work can go on before the next one.
TARGET_FRACTION = 0.6
CONTINUE_TEXT = (
    "[Baton] The conversation was compacted to fit the context window while you were working. "
    "Your summary, the ledger of exact facts and the plan above are current. Continue the task "
    "from where you left off; do not start over."
)


class CompactionHooks(Protocol):
    """The seams the hooks feature fills; with no hooks each is a no-op."""

    async def pre_compact(
        self, state: SessionState, request: CompactRequest
    ) -> list[p.PreCompactOutcome]: ...

    async def compacting(
        self, state: SessionState, request: CompactRequest
    ) -> tuple[list[str], str | None]: ...

    async def compacted(self, state: SessionState, record: p.CompactionRecord) -> None: ...


class NoHooks:
    async def pre_compact(
        self, state: SessionState, request: CompactRequest
    ) -> list[p.PreCompactOutcome]:
        return []

    async def compacting(
        self, state: SessionState, request: CompactRequest
    ) -> tuple[list[str], str | None]:
        return [], None

    async def compacted(self, state: SessionState, record: p.CompactionRecord) -> None:
        return None


class Strategy(Protocol):
    """How a compaction produces the new view (native summary, server-side artifact)."""

    name: p.Strategy

    async def run(self, job: CompactionJob) -> View: ...


@dataclass
class CompactionJob:
    """Everything one compaction knows while it runs."""

    engine: CompactionEngine
    state: SessionState
    request: CompactRequest
    settings: Settings
    provider: Provider
    before: BuiltContext
    report: ProgressReporter
    hook_context: list[str] = field(default_factory=list)
    prompt_override: str | None = None
    notes: list[str] = field(default_factory=list)
    ledger_text: str = ""
    ledger: p.Ledger = field(default_factory=p.Ledger)
    # Summary model calls made so far (the record's notes report them).
    summary_calls: int = 0
    # The view a native compaction starts from instead of the session's current one
    # (the server feature: a native view of the local history behind a server chain).
    base_view: View | None = None

    def build(self, view: View) -> BuiltContext:
        return self.engine.build_with_view(self.state, self.settings, self.provider, view)


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


def in_view(state: SessionState, view: View) -> list[StoredMessage]:
    first = view.first_kept_seq
    return [
        m
        for m in state.messages
        if m.kind != "compaction"
        and (first is None or m.seq >= first)
        and m.id not in state.reverted  # taken back by a revert: not summarised
    ]


class NothingToCompact(Exception):
    """Nothing can be gained: the result is not committed; the message has the figures."""


# A region smaller than this is not worth a summary request (the summary and the
# request's own overhead would be about as large as what they replace).
MIN_REGION_TOKENS = 200


def history_tokens(built: BuiltContext) -> int:
    """The view's tokens that are history (the target "history at most half" ignores the
    fixed parts: system prompt, instructions, tools)."""
    return built.tokens - sum(part.tokens for part in built.parts if part.kind in FIXED_KINDS)


class NativeStrategy:
    """Prune old tool outputs; then summarise the oldest messages, escalating if needed.

    Targets: a manual or overflow compaction brings the history (everything but
    instructions and tools) to at most half of what it was; an automatic one
    brings the whole view to TARGET_FRACTION of the threshold. Whatever the
    trigger, the committed view is smaller than the one before, or nothing is
    committed (`NothingToCompact`).
    """

    name: p.Strategy = "native"

    async def run(self, job: CompactionJob) -> View:
        state, settings = job.state, job.settings
        before = job.before
        old = job.base_view if job.base_view is not None else state.view
        messages = in_view(state, old)
        calib = state.calibration or 1.0
        usable = before.usable_window
        forced = job.request.trigger in ("manual", "overflow")
        history_before = history_tokens(before)
        if forced:
            target = before.tokens - history_before + history_before // 2
        else:
            target = int(before.threshold_tokens * TARGET_FRACTION)
        if job.request.trigger != "model_switch":
            # A model switch replaces a chain the new model cannot be sent: the local
            # history needs only to fit. Every other compaction must shrink the view.
            target = min(target, before.tokens - 1)
        protect = settings.compaction.protect_tool_output_tokens
        if protect is None:
            protect = min(40_000, usable // 4)
        keep_recent = settings.compaction.keep_recent_tokens
        if keep_recent is None:
            keep_recent = max(1_000, min(20_000, usable // 4))
        protected = protected_start(messages, state)
        exempt = protected_call_ids(messages, protected) | self._exempt(state)

        # Phase 1: prune.
        job.report("Pruning old tool outputs", 20)
        masks, _saved = plan_masks(
            messages,
            old.masked,
            protect_tokens=protect,
            needed_tokens=max(0, int((before.tokens - target) / calib)),
            exempt=exempt,
        )
        masked = {**old.masked, **masks}
        pruned_view = View(
            compaction_id=old.compaction_id,
            first_kept_seq=old.first_kept_seq,
            summary=old.summary,
            server_window=None,
            ledger_text=job.ledger_text,
            masked=masked,
        )
        pruned: BuiltContext | None = None
        if old.server_window is None:
            pruned = job.build(pruned_view)
            if not forced and pruned.tokens <= target:
                job.notes.append(f"pruned {len(masks)} old tool outputs; no summary was needed")
                return pruned_view

        # Phase 2+: summarise the oldest messages, escalating until the view fits.
        summary = old.summary if old.server_window is None else None
        summarised = old.first_kept_seq
        messages_tokens = sum(message_tokens(m, masked) for m in messages)
        keep = min(
            keep_budget(messages_tokens, keep_recent),
            self._room(job, target, messages_tokens, calib),
        )
        last: tuple[View, BuiltContext] | None = None
        # What the summary request is built over: the session's view first (its prefix is
        # cached), then the previous level's candidate, so an escalation reads the summary
        # it updates plus only what it must now drop, never the whole session again.
        base = old
        for level, keep_tokens in enumerate((keep, keep // 4, 0), start=1):
            if level == 3:
                extra, _ = plan_masks(messages, masked, protect_tokens=0, exempt=exempt)
                masked = {**masked, **extra}
                if base is not old:
                    base = replace(base, masked={**base.masked, **extra})
            cut = choose_cut(messages, masked, keep_tokens, protected)
            boundary = messages[cut.index].seq if cut.index < len(messages) else None
            region = _region(messages, boundary, summarised)
            region_tokens = sum(message_tokens(m, masked) for m in region)
            if not region or (summary is None and region_tokens < MIN_REGION_TOKENS):
                continue  # nothing (worth) summarising at this level: keep fewer
            job.report(f"Summarising {len(region)} messages (level {level})", 40 + 15 * level)
            summary = await job.engine.summariser.summarise(
                job, region, masked, previous=summary, boundary=boundary, base=base
            )
            summarised = boundary
            view = View(
                first_kept_seq=boundary if boundary is not None else _after_last(state),
                summary=summary,
                ledger_text=job.ledger_text,
                masked={k: v for k, v in masked.items() if _kept(k, messages, boundary)},
            )
            base = view
            built = job.build(view)
            if last is None or built.tokens < last[1].tokens:
                last = (view, built)
            if built.tokens <= target:
                if level > 1:
                    job.notes.append(f"escalated to level {level} to fit the target")
                return view
            kept = round(cut.kept_tokens * calib)
            if built.tokens - kept > target and level < 3:
                # Even summarising every kept message would miss the target (the ledger,
                # plan and summary alone are too big): another call would gain nothing.
                break
        if last is not None and last[1].tokens < before.tokens:
            view, built = last
            if forced or built.tokens <= before.threshold_tokens:
                job.notes.append(
                    f"history {history_before} → {history_tokens(built)} tokens: the target "
                    f"({target} tokens in all) was out of reach (the ledger, plan and summary "
                    "alone are larger)"
                )
                return view
        if last is None and pruned is not None and pruned.tokens < before.tokens and masks:
            job.notes.append(
                f"nothing to summarise; pruned {len(masks)} old tool outputs"
                + ("; the instructions were not applied" if job.request.instructions else "")
            )
            return pruned_view
        if last is None or last[1].tokens >= before.tokens:
            after = last[1].tokens if last else before.tokens
            raise NothingToCompact(
                f"nothing to compact: the view is {before.tokens} tokens (history "
                f"{history_before}); "
                + (
                    f"a summary would make it {after}"
                    if last
                    else "everything left is the step in progress, the last complete step "
                    f"and messages too small to summarise (under {MIN_REGION_TOKENS} tokens)"
                )
                + (
                    "; the instructions were not applied: nothing to summarise"
                    if job.request.instructions and last is None
                    else ""
                )
            )
        built = last[1]
        raise CompactionError(
            f"the session cannot fit the context window: after compacting as far as possible the "
            f"model would still be sent {built.tokens} tokens, over the compaction threshold of "
            f"{before.threshold_tokens} ({_largest_parts(built)}). Shorten the plan or the "
            f"workspace instruction files, or use a model with a larger window."
        )

    def _room(self, job: CompactionJob, target: int, messages_tokens: int, calib: float) -> int:
        """Estimated tokens of verbatim messages that still let the view meet `target`
        with a summary at its full budget: so one summary call is the norm.

        Continuous in the history's size, so the kept part grows smoothly with it.
        """
        blocks = job.build(
            View(first_kept_seq=_after_last(job.state), ledger_text=job.ledger_text)
        ).tokens
        summary = summaries.summary_budget(
            int(messages_tokens * (1 - KEEP_SHARE)), job.before.usable_window
        )
        return max(0, int((target - blocks) / calib) - summary - ITEM_OVERHEAD)

    def _exempt(self, state: SessionState) -> frozenset[str]:
        """Outputs never masked: calls of the turn still running."""
        return state.running_call_ids if state.busy else frozenset()


class FreshStrategy:
    """A fresh-context start: no summary model call. The new view is the person's
    messages (the `<baton:requests>` block), the ledger and the plan; every earlier
    message leaves it, one `recall` away. The step in progress, if a turn runs, stays.

    Asked for, not needed: it is exempt from "never bigger" (a fresh start of a tiny
    session is what was asked), but must fit the usable window.
    """

    name: p.Strategy = "fresh"

    async def run(self, job: CompactionJob) -> View:
        state = job.state
        messages = in_view(state, state.view)
        protected = protected_start(messages, state)
        first = messages[protected].seq if protected < len(messages) else _after_last(state)
        hidden = sum(1 for m in messages if m.seq < first)
        job.notes.append(
            f"fresh start: {hidden} message(s) left the view without a summary "
            "(the person's messages, the ledger and the plan stand in; the rest is one "
            "`recall` away)"
        )
        if job.request.instructions or job.hook_context or job.prompt_override:
            job.notes.append("summary instructions were not applied: a fresh start has no summary")
        return View(first_kept_seq=first, ledger_text=job.ledger_text)


def _region(
    messages: Sequence[StoredMessage], boundary: int | None, since: int | None
) -> list[StoredMessage]:
    return [
        m
        for m in messages
        if (boundary is None or m.seq < boundary) and (since is None or m.seq >= since)
    ]


def _after_last(state: SessionState) -> int:
    return (state.messages[-1].seq + 1) if state.messages else 0


def _kept(call_id: str, messages: Sequence[StoredMessage], boundary: int | None) -> bool:
    for m in messages:
        if boundary is not None and m.seq < boundary:
            continue
        if call_id in m.results or any(
            part.data.get("toolCallId") == call_id for part in m.tool_calls()
        ):
            return True
    return False


def _largest_parts(built: BuiltContext) -> str:
    parts = sorted(built.parts, key=lambda part: part.tokens, reverse=True)[:3]
    return ", ".join(f"{part.kind} {part.tokens}" for part in parts)


def choose_boundary(
    messages: Sequence[StoredMessage],
    masked: dict[str, str],
    keep_tokens: int,
    state: SessionState,
) -> int | None:
    """The seq of the oldest message kept verbatim (None: keep everything before it)."""
    if not messages:
        return None
    cut = choose_cut(messages, masked, keep_tokens, protected_start(messages, state))
    if cut.index >= len(messages):
        return _after_last(state)
    return messages[cut.index].seq


FRESH = FreshStrategy()


class CompactionEngine:
    def __init__(
        self,
        service: SessionService,
        store: CompactionStore,
        *,
        hooks: CompactionHooks | None = None,
        plan_state: Callable[[SessionState], p.PlanState | None] | None = None,
    ) -> None:
        self.service = service
        self.store = store
        self.hooks: CompactionHooks = hooks if hooks is not None else NoHooks()
        self.strategies: dict[str, Strategy] = {"native": NativeStrategy()}
        self.summariser = Summariser(self)
        # Chooses the strategy for a job; the server-side feature replaces it.
        self.choose_strategy: Callable[[CompactionJob], Strategy] = self._native_only
        # The ledger's plan line (the plan feature's PlanContext.ledger_state).
        self.plan_state = plan_state if plan_state is not None else _no_plan

    # ------------------------------------------------------------------ views

    def restore_view(self, state: SessionState) -> None:
        entry = self.store.active(state.id)
        state.view = self.view_of(entry) if entry else View()

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

    def _native_only(self, job: CompactionJob) -> Strategy:
        if job.request.strategy == "server":
            job.notes.append(
                "server-side compaction is not available for this provider; used native"
            )
        return self.strategies["native"]

    # ------------------------------------------------------------------ compaction

    async def compact(self, state: SessionState, request: CompactRequest) -> p.CompactionRecord:
        """Run one compaction now. Callers make sure no other one runs in this session."""
        settings = self.service.settings()
        provider = self.service.provider_for(state, settings)
        channel = self.service.channel
        strategy_name: p.Strategy = "native"
        started = False
        try:
            async with channel.progress("Compacting session") as report:
                report("Running pre-compact hooks", 5)
                pre = await self.hooks.pre_compact(state, request)
                before = self.service.build_context(state, settings, provider.identity)
                job = CompactionJob(
                    engine=self,
                    state=state,
                    request=request,
                    settings=settings,
                    provider=provider,
                    before=before,
                    report=report,
                )
                job.hook_context, job.prompt_override = await self.hooks.compacting(state, request)
                job.notes.extend(request.notes)
                strategy = FRESH if request.fresh else self.choose_strategy(job)
                strategy_name = strategy.name
                channel.send_update(
                    state.id, p.CompactionStarted(trigger=request.trigger, strategy=strategy.name)
                )
                started = True
                ledger = build_ledger(
                    [m for m in state.messages if m.id not in state.reverted],
                    self.plan_state(state),
                )
                job.ledger_text = render_ledger(ledger)
                job.ledger = ledger
                try:
                    view = await strategy.run(job)
                    view.ledger_text = job.ledger_text
                    after = job.build(view)
                    # A server artifact's size is the provider's to know (its estimate is a
                    # guess from encrypted bytes), so only native views are held to it.
                    if (
                        strategy.name == "native"
                        and request.trigger != "model_switch"
                        and after.tokens >= job.before.tokens
                    ):
                        raise NothingToCompact(
                            f"nothing to compact: the new view would be {after.tokens} tokens, "
                            f"not smaller than the {job.before.tokens} before it"
                        )
                    if strategy.name == "fresh" and after.tokens > after.usable_window:
                        raise CompactionError(
                            f"a fresh start would still send {after.tokens} tokens, over the "
                            f"usable window of {after.usable_window} ({_largest_parts(after)})"
                        )
                except NothingToCompact as nothing:
                    if request.trigger != "manual" and before.tokens >= before.threshold_tokens:
                        # It had to fit and cannot: a failure, not a no-op.
                        raise CompactionError(
                            f"the session cannot fit the context window: {nothing} "
                            f"({_largest_parts(before)}). Shorten the plan or the workspace "
                            "instruction files, or use a model with a larger window."
                        ) from nothing
                    report("Nothing to compact", 100)
                    record = self._uncommitted(job, ledger, pre, strategy.name, str(nothing))
                else:
                    record = self._commit(job, view, ledger, pre, strategy.name)
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
        channel.send_update(state.id, p.CompactionFinished(compaction=record))
        if not record.committed:
            return record
        try:
            await self.hooks.compacted(state, record)
        except Exception:
            log.exception("a compacted hook failed; the compaction stands")
        return record

    def _commit(
        self,
        job: CompactionJob,
        view: View,
        ledger: p.Ledger,
        pre: list[p.PreCompactOutcome],
        strategy: p.Strategy,
    ) -> p.CompactionRecord:
        state = job.state
        compaction_id = new_id("cmp")
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
            ledger=ledger,
            pre_compact=pre,
            created_at=utc_now(),
            notes=job.notes,
        )
        interrupted = job.request.interrupted and job.settings.compaction.auto_continue
        continue_text = CONTINUE_TEXT if interrupted else None
        marker, follow = self.store.commit(
            record,
            first_kept_seq=view.first_kept_seq,
            view=self.serialise_view(view),
            marker_parts=[StoredPart("compaction", {"compactionId": compaction_id})],
            continue_text=continue_text,
        )
        state.add(marker)
        if follow is not None:
            state.add(follow)
            self.service.channel.send_update(
                state.id, p.UserMessageUpdate(message_id=follow.id, text=follow.text())
            )
        state.view = view
        return record

    def _uncommitted(
        self,
        job: CompactionJob,
        ledger: p.Ledger,
        pre: list[p.PreCompactOutcome],
        strategy: p.Strategy,
        reason: str,
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
            ledger=ledger,
            pre_compact=pre,
            created_at=utc_now(),
            notes=[reason, *job.notes],
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
        record = target.record.model_copy(update={"undone": True})
        return record


def _no_plan(state: SessionState) -> p.PlanState | None:
    return None
