"""Baton's own strategies: native (prune, then summarise, escalating) and fresh.

Each decision is a pure function of `planning.py`; this module runs them in
order, building candidate views and asking for summaries (`summarise.py`), and
answers with a `Candidate`: the job is only read.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from baton import protocol as p
from baton.agent.state import SessionState, View
from baton.compaction import planning
from baton.compaction.cut import (
    choose_cut,
    keep_budget,
    message_tokens,
    protected_call_ids,
    protected_start,
)
from baton.compaction.job import Candidate, CompactionJob
from baton.compaction.prune import plan_masks
from baton.compaction.summarise import Summariser
from baton.errors import CompactionError
from baton.store.model import StoredMessage


class NativeStrategy:
    """Prune old tool outputs; then summarise the oldest messages, escalating if needed.

    Steps: prune (alone enough for an automatic compaction that meets its target);
    summarise the region before the cut; if the view misses its target, keep a
    quarter as much verbatim and update the summary with what that drops; then
    mask every old output too (`planning.escalation`, run by `planning.escalate`);
    when no level meets the target, `planning.outcome` says which candidate stands.
    The runner checks "never bigger" once, after.
    """

    name: p.Strategy = "native"

    async def run(self, job: CompactionJob) -> Candidate:
        start = _Start.of(job)
        pruned = _prune(start)
        if planning.prune_is_enough(pruned.tokens, start.plan):
            return Candidate(
                pruned.view,
                "native",
                made_by="pruning",
                notes=(f"pruned {pruned.masks} old tool outputs; no summary was needed",),
            )
        levels = _Levels(start, pruned)
        result = await planning.escalate(
            planning.escalation(levels.keep()), levels.attempt, levels.judge
        )
        if result.met is not None and result.level is not None:
            if result.level.number > 1:
                levels.notes.append(f"escalated to level {result.level.number} to fit the target")
            return levels.candidate(result.met.view)
        best = result.best
        if start.job.ceiling is not None:
            # The candidate that fits with the least taken from the last steps' outputs
            # (the first, the least summarised, on a tie): what the model just read stays
            # as whole as the ceiling allows.
            fits = [
                (saved, index, tried, masked)
                for index, tried in enumerate((pruned.view, *levels.tried))
                for masked, saved in [_mask_the_step(start, tried)]
                if masked.tokens <= start.plan.target
            ]
            if fits:
                _saved, _index, tried, masked = min(fits, key=lambda fit: fit[:2])
                levels.notes.append(
                    "masked or cut the outputs of the last steps too (each one `recall` "
                    "away): the view may not be larger than its ceiling"
                )
                if tried is pruned.view:
                    return replace(levels.candidate(masked.view), made_by="pruning")
                return levels.candidate(masked.view)
        return _settle(start, pruned, levels, best)


@dataclass(frozen=True)
class _Start:
    """What every step of one native compaction reads."""

    job: CompactionJob
    old: View  # the view compacted from
    messages: list[StoredMessage]  # the messages it shows
    calibration: float
    history: int  # the history's tokens before
    plan: planning.Budgets
    protected: int  # index of the first message never summarised
    exempt: frozenset[str]  # outputs never masked

    @classmethod
    def of(cls, job: CompactionJob) -> _Start:
        state, before = job.state, job.before
        old = job.base_view if job.base_view is not None else state.view
        messages = planning.in_view(state.messages, state.reverted, old)
        protected = protected_start(messages, state)
        history = planning.history_tokens(before)
        return cls(
            job=job,
            old=old,
            messages=messages,
            calibration=state.calibration or 1.0,
            history=history,
            plan=planning.budgets(
                job.request.trigger,
                before=before.tokens,
                history=history,
                threshold=before.threshold_tokens,
                usable=before.usable_window,
                protect=job.settings.compaction.protect_tool_output_tokens,
                keep_recent=job.settings.compaction.keep_recent_tokens,
                ceiling=job.ceiling,
            ),
            protected=protected,
            exempt=protected_call_ids(messages, protected) | _running(state),
        )


@dataclass(frozen=True)
class _Pruned:
    """Step 1's view: the old one with the oldest outputs masked as far as needed."""

    view: View
    tokens: int | None  # None behind a server chain (its size is not the view's)
    masks: int  # how many outputs it masked


def _prune(start: _Start) -> _Pruned:
    job, old = start.job, start.old
    job.report("Pruning old tool outputs", 20)
    masks, _saved = plan_masks(
        start.messages,
        old.masked,
        protect_tokens=start.plan.protect,
        needed_tokens=max(0, int((job.before.tokens - start.plan.target) / start.calibration)),
        exempt=start.exempt,
    )
    view = View(
        compaction_id=old.compaction_id,
        first_kept_seq=old.first_kept_seq,
        summary=old.summary,
        ledger_text=job.ledger_text,
        masked={**old.masked, **masks},
    )
    tokens = job.build(view).tokens if old.server_window is None else None
    return _Pruned(view, tokens, len(masks))


class _Levels:
    """Step 2, one level at a time: summarise the region before the level's cut.

    What the summary request is built over (`base`) is the session's view first (its
    prefix is cached), then the previous level's candidate, so an escalation reads the
    summary it updates plus only what it must now drop, never the whole session again.
    """

    def __init__(self, start: _Start, pruned: _Pruned) -> None:
        self.start = start
        old = start.old
        self.masked = dict(pruned.view.masked)
        self.summary = old.summary if old.server_window is None else None
        self.summarised = old.first_kept_seq
        self.base = old
        self.notes: list[str] = []
        self.calls = 0
        self.corrections: list[p.ClaimCorrection] = []
        # The view each level made, in order.
        self.tried: list[View] = []

    def keep(self) -> int:
        """The verbatim budget at level 1: the kept share, and no more than leaves room
        for the summary within the target."""
        start, job = self.start, self.start.job
        messages_tokens = sum(message_tokens(m, self.masked) for m in start.messages)
        blocks = job.build(
            View(
                first_kept_seq=planning.after_last(job.state.messages),
                ledger_text=job.ledger_text,
            )
        ).tokens
        return min(
            keep_budget(messages_tokens, start.plan.keep_recent),
            planning.room(
                start.plan.target,
                blocks,
                messages_tokens,
                job.before.usable_window,
                start.calibration,
            ),
        )

    async def attempt(self, level: planning.Level) -> planning.Tried | None:
        start, job = self.start, self.start.job
        messages = start.messages
        if level.last:
            extra, _ = plan_masks(messages, self.masked, protect_tokens=0, exempt=start.exempt)
            self.masked = {**self.masked, **extra}
            if self.base is not start.old:
                self.base = replace(self.base, masked={**self.base.masked, **extra})
        cut = choose_cut(messages, self.masked, level.keep, start.protected)
        boundary = messages[cut.index].seq if cut.index < len(messages) else None
        region = planning.region(messages, boundary, self.summarised)
        region_tokens = sum(message_tokens(m, self.masked) for m in region)
        if not region or not planning.worth_summarising(
            region_tokens, anchored=self.summary is not None
        ):
            return None  # nothing (worth) summarising at this level: keep fewer
        job.report(
            f"Summarising {len(region)} messages (level {level.number})", 40 + 15 * level.number
        )
        made = await Summariser().summarise(
            job, region, self.masked, previous=self.summary, boundary=boundary, base=self.base
        )
        self.notes.extend(made.notes)
        self.calls += made.calls
        self.corrections.extend(c.wire() for c in made.corrections)
        self.summary, self.summarised = made.text, boundary
        view = View(
            first_kept_seq=boundary
            if boundary is not None
            else planning.after_last(job.state.messages),
            summary=made.text,
            ledger_text=job.ledger_text,
            masked=planning.kept_masks(self.masked, messages, boundary),
        )
        self.base = view
        self.tried.append(view)
        built = job.build(view)
        return planning.Tried(
            view, built.tokens, round(cut.kept_tokens * start.calibration), built=built
        )

    def judge(self, level: planning.Level, tried: planning.Tried) -> planning.AfterLevel:
        return planning.after_level(level.number, tried.tokens, tried.kept, self.start.plan.target)

    def candidate(self, view: View, note: str | None = None) -> Candidate:
        notes = (*self.notes, note) if note is not None else tuple(self.notes)
        return Candidate(
            view,
            "native",
            notes=notes,
            summary_calls=self.calls,
            corrections=tuple(self.corrections),
        )


# Tokens a cut saves beyond what the view is over: the count of the view may differ
# from the estimate by a few tokens (the note's own, a line boundary).
_CUT_MARGIN = 16


def _mask_the_step(start: _Start, view: View) -> tuple[planning.Tried, int]:
    """`view` with the outputs of the last complete step and of the step in progress
    masked too (not those still running), the last of them only cut: once the budgets
    are reached the view may not be larger than its ceiling, and a large output the
    model just read is what it can `recall` (the note says how) where the view cannot
    grow for it. With the tokens (estimated) taken from those outputs."""
    job = start.job
    over = job.build(view).tokens - start.plan.target
    extra, saved = plan_masks(
        planning.in_view(start.messages, job.state.reverted, view),
        view.masked,
        protect_tokens=0,
        # Oldest first, no more than the view is over (with a margin for the estimate
        # against the count): what stays is the model's to read.
        needed_tokens=max(1, int(over / start.calibration) + _CUT_MARGIN),
        exempt=_running(job.state),
        # The last of them cut, not masked whole: a view left far under the ceiling
        # would hold the next compaction (which keeps its own step) under it too.
        cut_last=True,
    )
    masked = replace(view, masked={**view.masked, **extra})
    return planning.Tried(masked, job.build(masked).tokens), saved


def _settle(
    start: _Start, pruned: _Pruned, levels: _Levels, best: planning.Tried | None
) -> Candidate:
    """No level met the target: the smallest summary, pruning alone, or an error."""
    job, before = start.job, start.job.before
    choice = planning.outcome(
        best.tokens if best else None,
        pruned.tokens,
        pruned.masks,
        threshold=before.threshold_tokens,
        forced=start.plan.forced,
    )
    if choice == "summary" and best is not None and best.built is not None:
        return levels.candidate(
            best.view,
            f"history {start.history} → {planning.history_tokens(best.built)} tokens: the "
            f"target ({start.plan.target} tokens in all) was out of reach (the ledger, plan "
            "and summary alone are larger)",
        )
    if choice == "pruned":
        note = f"nothing to summarise; pruned {pruned.masks} old tool outputs" + (
            "; the instructions were not applied" if job.request.instructions else ""
        )
        return replace(levels.candidate(pruned.view, note), made_by="pruning")
    if choice == "too_big" and best is not None and best.built is not None:
        raise CompactionError(
            f"the session cannot fit the context window: after compacting as far as "
            f"possible the model would still be sent {best.tokens} tokens, over the "
            f"compaction threshold of {before.threshold_tokens} "
            f"({planning.largest_parts(best.built)}). Shorten the plan or the workspace "
            "instruction files, or use a model with a larger window."
        )
    raise planning.NothingToCompact(
        f"nothing to compact: the view is {before.tokens} tokens (history "
        f"{start.history}); everything left is the step in progress, the last complete "
        f"step and messages too small to summarise (under {planning.MIN_REGION_TOKENS} "
        "tokens)"
        + (
            "; the instructions were not applied: nothing to summarise"
            if job.request.instructions
            else ""
        ),
        notes=levels.notes,
    )


class FreshStrategy:
    """A fresh-context start: no summary model call. The new view is the person's
    messages (the `<baton:requests>` block), the ledger and the plan; every earlier
    message leaves it, one `recall` away. The step in progress, if a turn runs, stays.

    Asked for, not needed: it is exempt from "never bigger" (a fresh start of a tiny
    session is what was asked), but must fit the usable window (the runner checks).
    """

    name: p.Strategy = "fresh"

    async def run(self, job: CompactionJob) -> Candidate:
        state = job.state
        messages = planning.in_view(state.messages, state.reverted, state.view)
        protected = protected_start(messages, state)
        first = (
            messages[protected].seq
            if protected < len(messages)
            else planning.after_last(state.messages)
        )
        hidden = sum(1 for m in messages if m.seq < first)
        notes = [
            f"fresh start: {hidden} message(s) left the view without a summary "
            "(the person's messages, the ledger and the plan stand in; the rest is one "
            "`recall` away)"
        ]
        if job.request.instructions or job.hook_context or job.prompt_override:
            notes.append("summary instructions were not applied: a fresh start has no summary")
        return Candidate(
            View(first_kept_seq=first, ledger_text=job.ledger_text), "fresh", notes=tuple(notes)
        )


def _running(state: SessionState) -> frozenset[str]:
    """Outputs never masked: calls of the turn still running."""
    return state.running_call_ids if state.busy else frozenset()
