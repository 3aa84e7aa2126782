"""`baton/plan/approve {build: "steps"}`: Baton, not the model, builds an approved plan
one step at a time, each in a fresh `build` child.

Each child is sent the whole plan with its step marked, the ledger so far (the files
and commands of the session and of the children before it), the person's requests
verbatim, and its step. When it ends Baton ticks the step in the plan file and writes
one line of result under it; a step whose child failed, or whose last command failed,
is marked `- [!]` with the error, and the build stops there. The parent's context
grows by one short note per step.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from baton import protocol as p
from baton.agent import framing, prompts
from baton.agent.ledger_text import without_plan_line
from baton.agent.state import SessionState
from baton.compaction.ledger import CHILD_FACTS, build_ledger, render_ledger
from baton.delegation.agents import BUILTIN
from baton.delegation.feature import ChildNotStarted, Delegation, NewChild
from baton.delegation.results import ChildOutcome, cut_to_tokens
from baton.errors import BatonError
from baton.ids import new_id
from baton.labels import label
from baton.plan.steps import PlanStep, parse_steps
from baton.plan.written import plan_text
from baton.session.work import Work
from baton.store.model import StoredMessage

log = logging.getLogger(__name__)

# The one line of result written under a step, at most (tokens).
RESULT_LINE_TOKENS = 40
BUILD = next(agent for agent in BUILTIN if agent.name == "build")


class StepPlans(Protocol):
    """What the step builder needs of the plan feature (baton.plan.service.PlanService)."""

    async def approve(self, params: p.PlanApproveParams) -> p.PlanApproveResult: ...

    def get(self, session_id: str) -> p.PlanInfo | None: ...

    def edit(
        self, session_id: str, old: str, new: str, tool_call_id: str | None = None
    ) -> object: ...

    def finish(self, session_id: str) -> object: ...


class StepBuilder:
    def __init__(self, delegation: Delegation, plans: StepPlans) -> None:
        self.delegation = delegation
        self.sessions = delegation.sessions
        self.plans = plans

    async def approve(self, params: p.PlanApproveParams) -> p.PlanApproveResult:
        """Approve the plan, then build its open steps in children; returns at once."""
        state = self.sessions.state(params.session_id)
        self.sessions.activity.ensure_idle(state)
        plan = self.plans.get(state.id)
        if plan is not None and not _open_steps(plan.content):
            raise BatonError("the plan has no open step to build")
        result = await self.plans.approve(
            p.PlanApproveParams(session_id=state.id, start=False, fresh=False)
        )
        # Admitted as the session's work: busy while its steps are built (a prompt waits,
        # cancel stops them, a compaction asked meanwhile runs between two steps).
        run = self.sessions.activity.admit(
            state, Work("steps", "build steps", lambda: self._run(state))
        )
        self.delegation.step_runs[state.id] = run
        run.add_done_callback(lambda _: self.delegation.step_runs.pop(state.id, None))
        return result

    async def _run(self, parent: SessionState) -> p.PromptResult:
        try:
            result = await self._steps(parent)
        except asyncio.CancelledError:
            result = p.PromptResult(stop_reason="cancelled")
        except Exception as exc:
            log.exception("building the steps of %s failed", parent.id)
            result = p.PromptResult(stop_reason="error", error=f"internal error: {exc}")
        self.sessions.channel.send_update(
            parent.id,
            p.TurnEnded(stop_reason=result.stop_reason, error=result.error, cause=result.cause),
        )
        return result

    async def _steps(self, parent: SessionState) -> p.PromptResult:
        plan = self.plans.get(parent.id)
        assert plan is not None
        todo = _open_steps(plan.content)
        total = len(todo)
        for index, planned in enumerate(todo, start=1):
            if index > 1:
                # Between two steps: a compaction of the parent asked meanwhile runs here.
                await self.sessions.activity.boundary(parent)
            plan = self.plans.get(parent.id)
            assert plan is not None
            step = _find(plan.content, planned.text)
            if step is None:
                return p.PromptResult(
                    stop_reason="error", error=f"step {index} of {total} left the plan"
                )
            call_id = new_id("step")
            text = self._prompt(parent, plan.content, step, index, total)
            description = f"Step {index} of {total}: {step.text}"
            try:
                outcome = await self.delegation.run_child(
                    parent,
                    NewChild(
                        {"description": description, "prompt": text, "callId": call_id},
                        description,
                    ),
                    BUILD,
                    text,
                    call_id=call_id,
                    description=step.text,
                    step=p.ChildStep(index=index, total=total),
                )
            except ChildNotStarted as exc:
                return p.PromptResult(
                    stop_reason="error",
                    error=f"step {index} of {total} could not start: {exc.message}",
                )
            failure = _failure(outcome, outcome.messages)
            line = failure or _result_line(outcome)
            self._mark(parent.id, plan.content, step, failure is None, line)
            facts = [fact.to_json() for fact in self.delegation.child_facts(outcome)]
            self._note(
                parent, index, total, step, outcome, line, failed=failure is not None, facts=facts
            )
            # The step's child is done with: it leaves memory (its session stays listed).
            self.sessions.release(outcome.child_id)
            if outcome.status == "cancelled":
                return p.PromptResult(stop_reason="cancelled")
            if failure is not None:
                return p.PromptResult(
                    stop_reason="error",
                    error=f"step {index} of {total} failed: {failure}; the build stops here",
                )
        self.plans.finish(parent.id)
        return p.PromptResult(stop_reason="end_turn")

    def _prompt(
        self,
        parent: SessionState,
        content: str,
        step: PlanStep,
        index: int,
        total: int,
    ) -> str:
        lines = content.split("\n")
        lines[step.line] = ">> " + lines[step.line]
        ledger = without_plan_line(render_ledger(build_ledger(parent.messages, None))).strip()
        requests = [
            framing.entry(m.text())
            for m in parent.messages
            if m.role == "user" and m.kind in ("prompt", "feedback") and m.text().strip()
        ]
        return prompts.TASK_STEP_PROMPT.format(
            plan=framing.block("plan", "\n".join(lines)),
            ledger=prompts.TASK_STEP_LEDGER.format(ledger=framing.block("ledger", ledger))
            if ledger
            else prompts.TASK_STEP_NO_LEDGER,
            requests=framing.block("requests", "\n".join(f"- {r}" for r in requests)),
            index=index,
            total=total,
            step=framing.inline(step.text),
        )

    def _mark(self, session_id: str, content: str, step: PlanStep, ok: bool, line: str) -> None:
        """Tick the step (or mark it `[!]` with the error) and write its result under it:
        one escaped line after Baton's own prefix (plan/written.py), never a step."""
        line = plan_text(line)
        old = content.split("\n")[step.line]
        box = "[x]" if ok else "[!]"
        head = old.replace("[ ]", box, 1).replace("[~]", box, 1)
        if not ok:
            head = f"{head}: {line}"
        indent = " " * (step.depth + 2)
        new = head if not ok else f"{head}\n{indent}- result: {line}"
        try:
            self.plans.edit(session_id, old, new)
        except BatonError as exc:
            log.warning("could not mark step %r in the plan: %s", step.text, exc.message)

    def _note(
        self,
        parent: SessionState,
        index: int,
        total: int,
        step: PlanStep,
        outcome: ChildOutcome,
        line: str,
        *,
        failed: bool,
        facts: list[dict[str, object]],
    ) -> None:
        """The one short result per step the parent's context grows by."""
        status = "failed" if failed else outcome.status
        body = (
            f"step {index} of {total} ({framing.inline(label(step.text))}): {status}; "
            f"child {outcome.child_id}; {framing.inline(line)}"
        )
        self.sessions.notes.add(
            parent,
            framing.block("step-result", body, trusted=True),
            {"stepResult": index, "childId": outcome.child_id, CHILD_FACTS: facts},
        )


def _open_steps(content: str) -> list[PlanStep]:
    return [s for s in parse_steps(content) if s.state in ("open", "in_progress")]


def _find(content: str, text: str) -> PlanStep | None:
    return next(
        (s for s in parse_steps(content) if s.text == text and s.state != "done"),
        None,
    )


def _failure(outcome: ChildOutcome, messages: list[StoredMessage]) -> str | None:
    """Why a step failed: its child did not finish, or its last command failed."""
    if outcome.status != "done":
        return f"the child ended {outcome.status}" + (f": {outcome.error}" if outcome.error else "")
    last: tuple[str, int | None] | None = None
    for message in messages:
        for part in message.tool_calls():
            result = message.results.get(part.tool_call_id)
            for fact in result.facts if result is not None else []:
                if fact.kind == "command" and fact.command:
                    last = (fact.command, fact.exit_code)
    if last is not None and last[1] != 0:
        code = "was killed" if last[1] is None else f"exited {last[1]}"
        return f"its last check `{framing.inline(last[0])}` {code}"
    return None


def _result_line(outcome: ChildOutcome) -> str:
    first = " ".join(outcome.final.split()) or "done"
    line, cut = cut_to_tokens(first, RESULT_LINE_TOKENS)
    return framing.inline(line + (" …" if cut else ""))
