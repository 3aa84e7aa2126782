"""What the model sees of a plan: its text where it changed, appended, never rewritten.

Requests only grow between compactions (providers cache exact prefixes), so
the plan's text enters the history where it changes and stays as it was sent:
a `plan_write` carries it in its arguments; the result of a step's last
`plan_edit` carries the new text (`copy_calls`); a change made outside the
tools (the person's edit in the editor) is appended as a message by the
session's context notes. The latest copy is the current plan; the system
prompt says older copies are out of date. After a compaction the plan's block
(`block_text`) stands in front of the retained messages, with the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass

from baton import prompts
from baton import protocol as p
from baton.plan.steps import current_step, parse_steps
from baton.session.model import StoredMessage


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


def block_text(plan: PlanSnapshot, mode: p.Mode) -> str:
    """The `<baton:plan>` block's text: header, a direction fitting the status, the plan."""
    if plan.status == "done":
        return prompts.PLAN_DONE_BLOCK.format(path=plan.path, version=plan.version)
    lines = [
        prompts.PLAN_BLOCK_HEADER.format(path=plan.path, status=plan.status, version=plan.version)
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
                prompts.PLAN_ONLY_BLOCKED.format(steps="; ".join(blocked))
                if blocked
                else prompts.PLAN_ALL_CHECKED
            )
        else:
            lines.append(prompts.PLAN_CONTINUE.format(step=step.text))
        lines.append(prompts.PLAN_STEP_STATES)
    return "\n".join(lines) + "\n\n" + plan.content.strip("\n")


# The tools whose successful call may make a new plan version.
CHANGING_TOOLS = frozenset({"plan_write", "plan_edit"})


def copy_calls(messages: list[StoredMessage], written_by: dict[str, int]) -> dict[str, int]:
    """Tool calls whose result carries the plan's text: call id → the version it shows.

    In each message, the last call that made a new version, when it is a
    `plan_edit` (a `plan_write` already carries its text, in its arguments).
    Every such copy is the current plan when it is sent; later copies make it
    out of date, and it stays as it was sent.
    """
    out: dict[str, int] = {}
    for message in messages:
        out.update(_message_copy(message, written_by))
    return out


def _message_copy(message: StoredMessage, written_by: dict[str, int]) -> dict[str, int]:
    last: tuple[str, str] | None = None
    for part in message.tool_calls():
        call_id = part.data["toolCallId"]
        if part.data.get("name") in CHANGING_TOOLS and call_id in written_by:
            last = (part.data["name"], call_id)
    if last is None or last[0] != "plan_edit":
        return {}
    return {last[1]: written_by[last[1]]}


class CopyIndex:
    """`copy_calls`, computed incrementally: a message whose tool calls all have
    results never changes again, so the longest prefix of such messages is
    scanned once; only newer messages are scanned on each request."""

    def __init__(self) -> None:
        self._count = 0
        self._copies: dict[str, int] = {}

    def compute(self, messages: list[StoredMessage], written_by: dict[str, int]) -> dict[str, int]:
        if self._count > len(messages):
            self._count, self._copies = 0, {}
        out = dict(self._copies)
        settled = True
        for index in range(self._count, len(messages)):
            message = messages[index]
            found = _message_copy(message, written_by)
            out.update(found)
            settled = settled and _all_answered(message)
            if settled:
                self._copies.update(found)
                self._count = index + 1
        return out


def _all_answered(message: StoredMessage) -> bool:
    return all(part.data["toolCallId"] in message.results for part in message.tool_calls())


def copy_text(plan_path: str, version: int, content: str) -> str:
    """What a copy adds to its call's result."""
    step = first_unchecked(content)
    return prompts.PLAN_COPY.format(
        version=version,
        path=plan_path,
        next=prompts.PLAN_COPY_NEXT.format(step=step) if step else "",
        content=content.strip("\n"),
    )
