"""What the model sees of a plan: one full copy, then what changed, appended, never rewritten.

Requests only grow between compactions (providers cache exact prefixes), and a
revision should cost what it changes. So the plan's whole text enters the
history only where it has to: a `plan_write` carries it in its arguments, the
plan block (`block_text`) stands after a compaction's checkpoint, and a
session's context note carries it when the model has not seen the plan yet
(a session started on, or attached to, an existing plan file). Every other
change is shown as its changed lines: a `plan_edit` result (`edit_text`), and
a note when the person changed the file outside the tools (`baton.plan.source`,
the whole block instead when that is smaller than the diff).
"""

from __future__ import annotations

from dataclasses import dataclass

from baton import protocol as p
from baton.agent import framing, prompts
from baton.plan.diff import changed_lines
from baton.plan.steps import current_step, parse_steps


def first_unchecked(content: str) -> str | None:
    """The text of the step work goes on from (in progress, else the first open one)."""
    step = current_step(content)
    return step.text if step else None


@dataclass
class PlanSnapshot:
    """A plan as the view needs it: where it is, its status and version, its current text."""

    path: str
    status: p.PlanStatus
    version: int
    content: str
    missing_on_disk: bool = False


def block_text(plan: PlanSnapshot, mode: p.Mode, *, text_below: bool = False) -> str:
    """The `<baton:plan>` block's text: header, a direction fitting the status, the plan
    (or, `text_below`, a line saying the retained `plan_write` below carries it)."""
    if plan.status == "done":
        return prompts.PLAN_DONE_BLOCK.format(path=framing.inline(plan.path), version=plan.version)
    lines = [
        prompts.PLAN_BLOCK_HEADER.format(
            path=framing.inline(plan.path), status=plan.status, version=plan.version
        )
    ]
    if plan.missing_on_disk:
        lines.append(prompts.PLAN_MISSING.format(version=plan.version))
    if plan.status == "awaiting_approval":
        lines.append(prompts.PLAN_AWAITING)
    elif plan.status == "draft" and mode == "plan":
        lines.append(prompts.PLAN_DRAFT)
    else:
        # Approved, or a draft followed in build mode: say where to pick up, so that
        # after a compaction or a reload the work goes on from the right step.
        lines.append(
            prompts.BUILD_MODE_WITH_PLAN
            if plan.status == "approved"
            else prompts.PLAN_DRAFT_IN_BUILD
        )
        step = current_step(plan.content)
        if step is None:
            blocked = [s.text for s in parse_steps(plan.content) if s.state == "blocked"]
            lines.append(
                prompts.PLAN_ONLY_BLOCKED.format(steps="; ".join(map(framing.inline, blocked)))
                if blocked
                else prompts.PLAN_ALL_CHECKED
            )
        else:
            lines.append(prompts.PLAN_CONTINUE.format(step=framing.inline(step.text)))
        lines.append(prompts.PLAN_STEP_STATES)
    if text_below:
        return "\n".join([*lines, prompts.PLAN_TEXT_BELOW.format(version=plan.version)])
    # Neutralised here, not only in the block: a note carries this text outside one.
    return "\n".join(lines) + "\n\n" + framing.neutralise(plan.content.strip("\n"))


def edit_text(version: int, status: p.PlanStatus, before: str, after: str) -> str:
    """A `plan_edit` result: the changed lines with a little context, the version and the
    next open step; never the whole text (the model has it, plus the changes since)."""
    step = first_unchecked(after)
    return prompts.PLAN_EDITED.format(
        version=version,
        status=status,
        changes=framing.neutralise(changed_lines(before, after)) or "(no line changed)",
        next=prompts.PLAN_NEXT.format(step=framing.inline(step)) if step else prompts.PLAN_NO_NEXT,
    )
