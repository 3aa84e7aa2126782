"""Baton's own strategies: native (prune, then summarise, escalating) and fresh.

Each decision is a pure function of `planning.py`; this module runs them in
order, building candidate views and asking for summaries (`summarise.py`).
"""

from __future__ import annotations

from dataclasses import replace

from baton import protocol as p
from baton.compaction import planning
from baton.compaction.cut import (
    choose_cut,
    keep_budget,
    message_tokens,
    protected_call_ids,
    protected_start,
)
from baton.compaction.job import CompactionJob
from baton.compaction.prune import plan_masks
from baton.compaction.summarise import Summariser
from baton.context import BuiltContext
from baton.errors import CompactionError
from baton.session.state import SessionState, View


class NativeStrategy:
    """Prune old tool outputs; then summarise the oldest messages, escalating if needed.

    Steps: prune (alone enough for an automatic compaction that meets its target);
    summarise the region before the cut; if the view misses its target, keep a
    quarter as much verbatim and update the summary with what that drops; then
    mask every old output too. The runner checks "never bigger" once, after.
    """

    name: p.Strategy = "native"

    def __init__(self) -> None:
        self.summariser = Summariser()

    async def run(self, job: CompactionJob) -> View:
        state, before = job.state, job.before
        old = job.base_view if job.base_view is not None else state.view
        messages = planning.in_view(state.messages, state.reverted, old)
        calib = state.calibration or 1.0
        history_before = planning.history_tokens(before)
        plan = planning.budgets(
            job.request.trigger,
            before=before.tokens,
            history=history_before,
            threshold=before.threshold_tokens,
            usable=before.usable_window,
            protect=job.settings.compaction.protect_tool_output_tokens,
            keep_recent=job.settings.compaction.keep_recent_tokens,
        )
        protected = protected_start(messages, state)
        exempt = protected_call_ids(messages, protected) | _running(state)

        # Step 1: prune.
        job.report("Pruning old tool outputs", 20)
        masks, _saved = plan_masks(
            messages,
            old.masked,
            protect_tokens=plan.protect,
            needed_tokens=max(0, int((before.tokens - plan.target) / calib)),
            exempt=exempt,
        )
        masked = {**old.masked, **masks}
        pruned_view = View(
            compaction_id=old.compaction_id,
            first_kept_seq=old.first_kept_seq,
            summary=old.summary,
            ledger_text=job.ledger_text,
            masked=masked,
        )
        pruned = job.build(pruned_view).tokens if old.server_window is None else None
        if planning.prune_is_enough(pruned, plan):
            job.notes.append(f"pruned {len(masks)} old tool outputs; no summary was needed")
            job.made_by = "pruning"
            return pruned_view

        # Step 2: summarise the region before the cut, escalating until the view fits.
        summary = old.summary if old.server_window is None else None
        summarised = old.first_kept_seq
        messages_tokens = sum(message_tokens(m, masked) for m in messages)
        blocks = job.build(
            View(first_kept_seq=planning.after_last(state.messages), ledger_text=job.ledger_text)
        ).tokens
        keep = min(
            keep_budget(messages_tokens, plan.keep_recent),
            planning.room(plan.target, blocks, messages_tokens, before.usable_window, calib),
        )
        best: tuple[View, BuiltContext] | None = None
        # What the summary request is built over: the session's view first (its prefix is
        # cached), then the previous level's candidate, so an escalation reads the summary
        # it updates plus only what it must now drop, never the whole session again.
        base = old
        for level, keep_tokens in enumerate(planning.level_keeps(keep), start=1):
            if level == len(planning.LEVELS):
                extra, _ = plan_masks(messages, masked, protect_tokens=0, exempt=exempt)
                masked = {**masked, **extra}
                if base is not old:
                    base = replace(base, masked={**base.masked, **extra})
            cut = choose_cut(messages, masked, keep_tokens, protected)
            boundary = messages[cut.index].seq if cut.index < len(messages) else None
            region = planning.region(messages, boundary, summarised)
            region_tokens = sum(message_tokens(m, masked) for m in region)
            if not region or not planning.worth_summarising(
                region_tokens, anchored=summary is not None
            ):
                continue  # nothing (worth) summarising at this level: keep fewer
            job.report(f"Summarising {len(region)} messages (level {level})", 40 + 15 * level)
            summary = await self.summariser.summarise(
                job, region, masked, previous=summary, boundary=boundary, base=base
            )
            summarised = boundary
            view = View(
                first_kept_seq=boundary
                if boundary is not None
                else planning.after_last(state.messages),
                summary=summary,
                ledger_text=job.ledger_text,
                masked=planning.kept_masks(masked, messages, boundary),
            )
            base = view
            built = job.build(view)
            if best is None or built.tokens < best[1].tokens:
                best = (view, built)
            step = planning.after_level(
                level, built.tokens, round(cut.kept_tokens * calib), plan.target
            )
            if step == "done":
                if level > 1:
                    job.notes.append(f"escalated to level {level} to fit the target")
                return view
            if step == "stop":
                break

        choice = planning.outcome(
            best[1].tokens if best else None,
            pruned,
            len(masks),
            threshold=before.threshold_tokens,
            forced=plan.forced,
        )
        if choice == "summary" and best is not None:
            job.notes.append(
                f"history {history_before} → {planning.history_tokens(best[1])} tokens: the "
                f"target ({plan.target} tokens in all) was out of reach (the ledger, plan and "
                "summary alone are larger)"
            )
            return best[0]
        if choice == "pruned":
            job.notes.append(
                f"nothing to summarise; pruned {len(masks)} old tool outputs"
                + ("; the instructions were not applied" if job.request.instructions else "")
            )
            job.made_by = "pruning"
            return pruned_view
        if choice == "too_big" and best is not None:
            raise CompactionError(
                f"the session cannot fit the context window: after compacting as far as "
                f"possible the model would still be sent {best[1].tokens} tokens, over the "
                f"compaction threshold of {before.threshold_tokens} "
                f"({planning.largest_parts(best[1])}). Shorten the plan or the workspace "
                "instruction files, or use a model with a larger window."
            )
        raise planning.NothingToCompact(
            f"nothing to compact: the view is {before.tokens} tokens (history "
            f"{history_before}); everything left is the step in progress, the last complete "
            f"step and messages too small to summarise (under {planning.MIN_REGION_TOKENS} "
            "tokens)"
            + (
                "; the instructions were not applied: nothing to summarise"
                if job.request.instructions
                else ""
            )
        )


class FreshStrategy:
    """A fresh-context start: no summary model call. The new view is the person's
    messages (the `<baton:requests>` block), the ledger and the plan; every earlier
    message leaves it, one `recall` away. The step in progress, if a turn runs, stays.

    Asked for, not needed: it is exempt from "never bigger" (a fresh start of a tiny
    session is what was asked), but must fit the usable window (the runner checks).
    """

    name: p.Strategy = "fresh"

    async def run(self, job: CompactionJob) -> View:
        state = job.state
        messages = planning.in_view(state.messages, state.reverted, state.view)
        protected = protected_start(messages, state)
        first = (
            messages[protected].seq
            if protected < len(messages)
            else planning.after_last(state.messages)
        )
        hidden = sum(1 for m in messages if m.seq < first)
        job.notes.append(
            f"fresh start: {hidden} message(s) left the view without a summary "
            "(the person's messages, the ledger and the plan stand in; the rest is one "
            "`recall` away)"
        )
        if job.request.instructions or job.hook_context or job.prompt_override:
            job.notes.append("summary instructions were not applied: a fresh start has no summary")
        return View(first_kept_seq=first, ledger_text=job.ledger_text)


def _running(state: SessionState) -> frozenset[str]:
    """Outputs never masked: calls of the turn still running."""
    return state.running_call_ids if state.busy else frozenset()
