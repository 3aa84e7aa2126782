"""What the model sees of a plan: one current copy in its block, references elsewhere.

The block is built from the file's current content every time a request is
built, so the person's edits in the editor count and a compaction (or a
reload) never loses the plan: the context builder always puts the block in
front of the retained messages. Every earlier place that carried plan text (a
`plan_write` call's content, a `read` of the plan file) is shown as a one-line
reference instead, so the plan's text appears exactly once in any request.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

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


def superseded_calls(
    messages: list[StoredMessage],
    *,
    workspace: Path,
    plan: PlanSnapshot,
    written_by: dict[str, int],
) -> dict[str, str]:
    """Tool calls that carried plan text, mapped to the reference the model sees instead.

    Every `plan_write` call (its `content`; a failed one keeps its error) and
    every successful `read` of the plan file. Once the plan is done, reads made
    after the latest `plan_done` are left as they are: the plan is no longer in
    the block, so such a read is the model's only copy.
    """
    done = plan.status == "done"
    plan_file = _normalise(workspace, plan.path)
    calls = [
        (part.data.get("name"), part.data["toolCallId"], part.data.get("input"), message)
        for message in messages
        for part in message.tool_calls()
        if part.data["toolCallId"] in message.results
    ]
    done_at = -1
    if done:
        done_at = max(
            (i for i, c in enumerate(calls) if c[0] == "plan_done" and _succeeded(c[3], c[1])),
            default=-1,
        )
    out: dict[str, str] = {}
    for index, (name, call_id, arguments, message) in enumerate(calls):
        ok = _succeeded(message, call_id)
        if name == "plan_write":
            if not ok:
                error = message.results[call_id].output.strip().splitlines() or [""]
                out[call_id] = prompts.PLAN_WRITE_FAILED.format(error=error[0][:300])
                continue
            # A write that changed nothing made no version: still the plan's text.
            label = f"v{written_by[call_id]}" if call_id in written_by else "text"
            template = prompts.PLAN_WRITE_REFERENCE_DONE if done else prompts.PLAN_WRITE_REFERENCE
            out[call_id] = template.format(label=label, path=plan.path)
        elif name == "read" and ok and _reads(workspace, arguments, plan_file):
            if not done:
                out[call_id] = prompts.PLAN_READ_REFERENCE
            elif index < done_at:
                out[call_id] = prompts.PLAN_READ_REFERENCE_DONE.format(path=plan.path)
    return out


def _succeeded(message: StoredMessage, call_id: str) -> bool:
    result = message.results.get(call_id)
    return result is not None and result.status == "completed"


def _normalise(workspace: Path, path: str) -> str:
    joined = path if os.path.isabs(path) else os.path.join(workspace, path)
    return os.path.realpath(joined)


def _reads(workspace: Path, arguments: object, plan_file: str) -> bool:
    if not isinstance(arguments, dict):
        return False
    path = arguments.get("path")
    return isinstance(path, str) and bool(path) and _normalise(workspace, path) == plan_file


@dataclass
class _Scan:
    """What `SupersededIndex` has learnt from a prefix of the history."""

    count: int = 0  # messages scanned
    order: int = 0  # calls with a result seen, to order reads against plan_done
    writes: dict[str, tuple[bool, str]] = field(default_factory=dict)  # id → (ok, error)
    reads: list[tuple[int, str]] = field(default_factory=list)  # (order, id) plan-file reads
    last_done: int = -1  # order of the latest successful plan_done

    def copy(self) -> _Scan:
        return _Scan(self.count, self.order, dict(self.writes), list(self.reads), self.last_done)


class SupersededIndex:
    """`superseded_calls`, computed incrementally: the same answer in time independent of
    the history's length.

    A message whose tool calls all have results never changes again, so the
    longest prefix of such messages is scanned once and kept; only the newer
    messages are scanned on each request. Paths are resolved once per distinct
    path and request.
    """

    def __init__(self) -> None:
        self._key: str | None = None
        self._base = _Scan()

    def compute(
        self,
        messages: list[StoredMessage],
        *,
        workspace: Path,
        plan: PlanSnapshot,
        written_by: dict[str, int],
    ) -> dict[str, str]:
        plan_file = _normalise(workspace, plan.path)
        if plan_file != self._key or self._base.count > len(messages):
            self._key, self._base = plan_file, _Scan()
        resolved: dict[str, bool] = {}
        scan = self._base
        for index in range(self._base.count, len(messages)):
            message = messages[index]
            if scan is self._base and not _all_answered(message):
                scan = self._base.copy()
            _scan_message(message, scan, workspace, plan_file, resolved)
            scan.count = index + 1
        return _references(scan, plan, written_by)


def _all_answered(message: StoredMessage) -> bool:
    return all(part.data["toolCallId"] in message.results for part in message.tool_calls())


def _scan_message(
    message: StoredMessage,
    scan: _Scan,
    workspace: Path,
    plan_file: str,
    resolved: dict[str, bool],
) -> None:
    for part in message.tool_calls():
        call_id = part.data["toolCallId"]
        if call_id not in message.results:
            continue
        order = scan.order
        scan.order += 1
        name = part.data.get("name")
        ok = _succeeded(message, call_id)
        if name == "plan_write":
            lines = message.results[call_id].output.strip().splitlines() or [""]
            scan.writes[call_id] = (ok, lines[0][:300])
        elif name == "read" and ok:
            arguments = part.data.get("input")
            path = arguments.get("path") if isinstance(arguments, dict) else None
            if isinstance(path, str) and path:
                if path not in resolved:
                    resolved[path] = _normalise(workspace, path) == plan_file
                if resolved[path]:
                    scan.reads.append((order, call_id))
        elif name == "plan_done" and ok:
            scan.last_done = order


def _references(scan: _Scan, plan: PlanSnapshot, written_by: dict[str, int]) -> dict[str, str]:
    done = plan.status == "done"
    out: dict[str, str] = {}
    for call_id, (ok, error) in scan.writes.items():
        if not ok:
            out[call_id] = prompts.PLAN_WRITE_FAILED.format(error=error)
            continue
        label = f"v{written_by[call_id]}" if call_id in written_by else "text"
        template = prompts.PLAN_WRITE_REFERENCE_DONE if done else prompts.PLAN_WRITE_REFERENCE
        out[call_id] = template.format(label=label, path=plan.path)
    for order, call_id in scan.reads:
        if not done:
            out[call_id] = prompts.PLAN_READ_REFERENCE
        elif order < scan.last_done:
            out[call_id] = prompts.PLAN_READ_REFERENCE_DONE.format(path=plan.path)
    return out
