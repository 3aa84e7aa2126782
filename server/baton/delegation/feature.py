"""Delegation: the `task` tool's children, run as sessions of their own.

A child is made the way `baton/session/new` makes a session (a row in the store, then
`SessionService.state`), marked with its parent, agent and task; it runs as an
ordinary turn of its own session (`start_turn`), with its own context (its agent's
instructions and the task prompt, nothing of the parent's), compaction and ledger.
What it takes from its parent (mode, grants, tools) is one rule, in `inherit.py`;
its permission requests name it, its parent and its agent. What comes back
to the parent is one bounded result (`results.py`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import Field

from baton import protocol as p
from baton.agent import framing, prompts
from baton.agent.state import SessionState
from baton.agent.turn import parse_arguments
from baton.config import ConfigLoader
from baton.delegation.agents import (
    BUILTIN,
    DESCRIBED_MAX,
    EXPLORE_TOOLS,
    TASK_TOOL,
    Agent,
    AgentFilesKey,
    AgentSet,
    agent_files_key,
    describe,
    load_agents,
    names_of,
)
from baton.delegation.channel import DelegationChannel, LiveChild
from baton.delegation.inherit import inherit
from baton.delegation.inherit import refusal as inherited_refusal
from baton.delegation.results import ChildOutcome, render_result
from baton.errors import BatonError
from baton.providers.base import StepChoice, ToolCall, ToolSpec
from baton.store.children import TASK_CALL_META, call_messages, final_message
from baton.tools.base import Fact, ToolContext, ToolInput, ToolResult

if TYPE_CHECKING:
    from baton.agent.turn import Turn
    from baton.session.service import SessionService

log = logging.getLogger(__name__)

_STATUS: dict[str, p.ChildStatus] = {
    "end_turn": "done",
    "cancelled": "cancelled",
    "max_steps": "max_steps",
    "refusal": "failed",
    "error": "failed",
}


class BudgetReached(BatonError):
    """A child spent its token budget: it ends with what it did so far."""


class ChildNotStarted(BatonError):
    """A new child's start was refused; its session was removed (nothing is listed)."""


@dataclass(frozen=True)
class NewChild:
    """A child to make when it starts: its task as its row keeps it, and its title."""

    task: dict[str, Any]
    title: str


class TaskInput(ToolInput):
    agent: str = Field(min_length=1, max_length=40)
    description: str = Field(min_length=1, max_length=200)
    prompt: str = Field(min_length=1, max_length=100_000)
    resume: str | None = Field(
        default=None, max_length=200, description="A child's session id, to continue it."
    )


class TaskTool:
    name: ClassVar[str] = TASK_TOOL
    # The agents are listed when the tool is offered (Delegation.specs): they depend on
    # the files and on trust.
    description: ClassVar[str] = prompts.TASK_TOOL_DESCRIPTION.format(agents=describe(BUILTIN))
    input_model: ClassVar[type[ToolInput]] = TaskInput
    read_only: ClassVar[bool] = False
    modes: ClassVar[tuple[str, ...]] = ("build", "plan")

    def __init__(self, delegation: Delegation) -> None:
        self.delegation = delegation

    async def run(self, args: TaskInput, ctx: ToolContext) -> ToolResult:
        child_steps = ctx.required.child if ctx.required is not None else ()
        return await self.delegation.run_task(
            ctx.session_id, ctx.tool_call_id, args, require_tools=child_steps
        )


class PlanLookup(Protocol):
    """A session's plan (baton.plan.service.PlanService.get): a plan child's is named in
    its result, for the person to approve in the child's session."""

    def get(self, session_id: str) -> p.PlanInfo | None: ...


class Delegation:
    """Runs `task` children; the sessions' `ToolOffer` (what each session is offered)."""

    def __init__(
        self,
        workspace: Path,
        config: ConfigLoader,
        sessions: SessionService,
        channel: DelegationChannel,
        *,
        plans: PlanLookup | None = None,
        person_dir: Path | None = None,
    ) -> None:
        self.plans = plans
        self.workspace = workspace
        self.config = config
        self.sessions = sessions
        self.channel = channel
        self.person_dir = person_dir
        self._agents: tuple[AgentFilesKey, AgentSet] | None = None
        self._readers: asyncio.Semaphore | None = None
        self._writer: asyncio.Lock | None = None
        # Build-by-steps runs per parent session (steps.py), cancelled with the parent.
        self.step_runs: dict[str, asyncio.Task[Any]] = {}
        # Per parent session: children started in its running turn, and in its latest
        # response (delegation.maxChildrenPerTurn / maxChildrenPerResponse).
        self._started: dict[str, list[int]] = {}

    # ------------------------------------------------------------------ agents

    def agents(self) -> AgentSet:
        """The agents in force. Asked for on every request (the `task` tool lists them), so
        this answers from what the last look found: the folders are looked at again at
        each turn's first step, in a worker thread (`refresh_agents`), and here only on
        first use or when trust changed. A broken file is reported once, not per request."""
        trusted = self.config.trust.trusted
        if self._agents is None or self._agents[0][0] != trusted:
            self._reload(trusted)
        assert self._agents is not None
        return self._agents[1]

    async def refresh_agents(self) -> None:
        """Look at the agent folders again, off the event loop (bounded: folder_scan)."""
        await asyncio.to_thread(self._reload, self.config.trust.trusted)

    def _reload(self, trusted: bool) -> None:
        key = agent_files_key(self.workspace, trusted=trusted, person_dir=self.person_dir)
        if self._agents is None or self._agents[0] != key:
            loaded = load_agents(self.workspace, trusted=trusted, person_dir=self.person_dir)
            self._agents = (key, loaded)

    def ignored(self) -> list[str]:
        """The workspace's agent files not in force (an untrusted workspace)."""
        return self.agents().ignored

    def agent_of(self, state: SessionState) -> Agent | None:
        """A child's agent (None for a top-level session); a custom agent whose file is
        gone since gets explore's tools."""
        name = state.row.agent
        if state.row.parent_id is None or name is None:
            return None
        agent = self.agents().get(name)
        return agent or Agent(name, "", "", EXPLORE_TOOLS)

    # ------------------------------------------------------------------ ToolOffer

    def specs(self, state: SessionState, specs: list[ToolSpec]) -> list[ToolSpec]:
        agent = self.agent_of(state)
        if agent is None:
            return [
                ToolSpec(spec.name, self._described(spec), spec.parameters)
                if spec.name == TASK_TOOL
                else spec
                for spec in specs
            ]
        return [spec for spec in specs if agent.offers(spec.name)]

    def _described(self, spec: ToolSpec) -> str:
        """The `task` tool's description with the agents in force now: each with its own
        description, or by name only in the compact wording of a small window."""
        agents = list(self.agents().agents.values())
        if spec.description == TaskTool.description:
            return prompts.TASK_TOOL_DESCRIPTION.format(agents=describe(agents))
        head = spec.description.split(" Agents:")[0]
        return f"{head} Agents: {names_of(agents, DESCRIBED_MAX)}."

    def refusal(self, state: SessionState, name: str) -> str | None:
        agent = self.agent_of(state)
        if agent is None:
            return None
        if agent.offers(name):
            return inherited_refusal(self.sessions, state, name)
        if name == TASK_TOOL:
            return "[not run: a child cannot start children; do the work yourself]"
        return f"[not run: {name} is not one of the {agent.name} agent's tools]"

    def parallel(self, state: SessionState, calls: Sequence[ToolCall]) -> int:
        """Task calls of one response run together when none of their agents can write."""
        if state.row.parent_id is not None:
            return 1
        agents = self.agents()
        for call in calls:
            if call.name != TASK_TOOL:
                return 1
            args = parse_arguments(call.arguments) or {}
            agent = agents.get(str(args.get("agent", "")))
            if agent is None or agent.writes:
                return 1
        return self.sessions.settings().delegation.max_parallel

    # ------------------------------------------------------------------ running a child

    def _gates(self) -> tuple[asyncio.Semaphore, asyncio.Lock]:
        if self._readers is None or self._writer is None:
            width = self.sessions.settings().delegation.max_parallel
            self._readers, self._writer = asyncio.Semaphore(width), asyncio.Lock()
        return self._readers, self._writer

    async def run_task(
        self,
        parent_id: str,
        call_id: str,
        args: TaskInput,
        *,
        require_tools: Sequence[StepChoice] = (),
    ) -> ToolResult:
        over = self._count_start(parent_id)
        if over is not None:
            return ToolResult(output=f"[task not started: {over}]", is_error=True)
        try:
            parent = self.sessions.state(parent_id)
            agent, child, text = self._prepare(parent, call_id, args)
            outcome = await self.run_child(
                parent,
                child,
                agent,
                text,
                call_id=call_id,
                description=args.description,
                require_tools=require_tools,
            )
        except BatonError as exc:
            return ToolResult(output=f"[task not started: {exc.message}]", is_error=True)
        try:
            return self.result(outcome, call_id)
        finally:
            # Its call is over: the child leaves memory (a resume reads it from the store).
            self.sessions.release(outcome.child_id)

    def _count_start(self, parent_id: str) -> str | None:
        """Count one more child of `parent_id`'s turn and response; why not, past a cap."""
        settings = self.sessions.settings().delegation
        turn, response = self._started.setdefault(parent_id, [0, 0])
        if response >= settings.max_children_per_response:
            return (
                f"this response already started {response} children, the most one response "
                f"may (delegation.maxChildrenPerResponse); wait for their results"
            )
        if turn >= settings.max_children_per_turn:
            return (
                f"this turn already started {turn} children, the most one turn may "
                f"(delegation.maxChildrenPerTurn); do the rest yourself or end the turn"
            )
        self._started[parent_id] = [turn + 1, response + 1]
        return None

    def result(self, outcome: ChildOutcome, call_id: str) -> ToolResult:
        settings = self.sessions.settings().delegation
        plan = self.plans.get(outcome.child_id) if self.plans is not None else None
        output = render_result(
            outcome,
            outcome.messages,
            call_id=call_id,
            result_tokens=settings.result_tokens,
            plan=plan,
        )
        return ToolResult(
            output=output, is_error=outcome.status == "failed", facts=self.child_facts(outcome)
        )

    def child_facts(self, outcome: ChildOutcome) -> list[Fact]:
        """The files and commands of the child's call, marked as its, for the parent's
        ledger (those of its earlier calls were in their own results)."""
        return [
            replace(fact, session=outcome.child_id)
            for message in outcome.messages
            for result in message.results.values()
            for fact in result.facts
            if fact.kind in ("modified", "command") and fact.session is None
        ]

    def _prepare(
        self, parent: SessionState, call_id: str, args: TaskInput
    ) -> tuple[Agent, SessionState | NewChild, str]:
        if parent.row.parent_id is not None:
            raise BatonError("a child cannot start children; do the work yourself")
        agents = self.agents()
        agent = agents.get(args.agent)
        if agent is None:
            names = names_of(agents.agents.values())
            raise BatonError(f"no agent named {args.agent!r}; the agents are: {names}")
        if parent.row.mode == "plan" and agent.writes:
            raise BatonError(
                f"the {agent.name} agent can change files, and this session is in plan mode: "
                "use a read-only agent (explore, plan) until the plan is approved"
            )
        if args.resume:
            child = self.sessions.state(args.resume)
            if child.row.parent_id != parent.id:
                raise BatonError(f"{args.resume!r} is not a child of this session")
            if child.row.agent != agent.name:
                raise BatonError(f"{args.resume!r} is a {child.row.agent} child, not {agent.name}")
            return agent, child, args.prompt
        task = {"description": args.description, "prompt": args.prompt, "callId": call_id}
        instructions = framing.block("agent", agent.instructions, {"name": agent.name})
        return agent, NewChild(task, args.description), f"{instructions}\n\n{args.prompt}"

    def _open(self, parent: SessionState, agent: Agent, new: NewChild) -> SessionState:
        """The new child's session, made when it is about to start (no row for a child
        that never starts); a refusal here leaves nothing behind."""
        row = self.sessions.store.create_child(
            parent.id, agent.name, new.task, title=new.title, mode="build"
        )
        # The construction every session has (as `baton/session/new`): state from the store.
        child = self.sessions.state(row.id)
        if agent.model:
            try:
                self.sessions.set_model(p.SetModelParams(session_id=child.id, model=agent.model))
            except BaseException:
                self._discard(child)
                raise
        return child

    def _discard(self, child: SessionState) -> None:
        """Remove a child that never started: no message of it exists, nothing is lost."""
        try:
            self.sessions.discard(child.id)
        except Exception:
            log.exception("could not remove child %s that did not start", child.id)

    async def run_child(
        self,
        parent: SessionState,
        child: SessionState | NewChild,
        agent: Agent,
        text: str,
        *,
        call_id: str,
        description: str,
        step: p.ChildStep | None = None,
        require_tools: Sequence[StepChoice] = (),
    ) -> ChildOutcome:
        """Run one turn of `child` to its end, the parent's stream told as it goes; a
        cancelled parent cancels it (and is cancelled itself). `require_tools` holds its
        steps as a parent's turn's are held (the call that started it said so). A new
        child's session is made once it has its turn in the gate; ChildNotStarted when
        its start is refused (its session is removed: nothing listed)."""
        settings = self.sessions.settings().delegation
        readers, writer = self._gates()
        gate: asyncio.Semaphore | asyncio.Lock = writer if agent.writes else readers
        async with gate:
            new = isinstance(child, NewChild)
            if isinstance(child, NewChild):
                child = self._open(parent, agent, child)
            # Its parent's mode, the person's answers given in it, its directories (inherit.py).
            inherit(self.sessions, parent, child)
            live = LiveChild(call_id, parent.id, child.id, agent.name, description, step=step)
            live.tokens = live.tokens_before = self._tokens(child.id)
            self.channel.live[child.id] = live
            limit = min(settings.max_steps, agent.max_steps or settings.max_steps)
            try:
                task = self.sessions.start_turn(
                    child,
                    text,
                    max_steps=limit,
                    meta={TASK_CALL_META: call_id},
                    require_tools=require_tools,
                )
            except BatonError as exc:
                self.channel.live.pop(child.id, None)
                if new:
                    self._discard(child)
                    raise ChildNotStarted(exc.message) from exc
                return self._end(live, child, "failed", exc.message)
            self.channel.tell_parent(live)
            try:
                result = await asyncio.shield(task)
            except asyncio.CancelledError:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                self._end(live, child, "cancelled", "the parent was cancelled")
                raise
            except BatonError as exc:
                return self._end(live, child, "failed", exc.message)
            except Exception as exc:
                log.exception("child %s failed", child.id)
                return self._end(live, child, "failed", f"internal error: {exc}")
        status = _STATUS.get(result.stop_reason, "failed")
        error = result.error
        if live.budget_spent:
            status = "max_steps"
            error = f"its token budget ({settings.token_budget:,} tokens) was reached in this call"
        elif status == "max_steps":
            error = f"it reached its step limit ({limit})"
        elif status == "cancelled":
            error = "the person stopped it"
        return self._end(live, child, status, error)

    def _tokens(self, child_id: str) -> int:
        totals = self.sessions.requests.totals(child_id)
        return totals.input_tokens + totals.output_tokens

    def _end(
        self, live: LiveChild, child: SessionState, status: p.ChildStatus, error: str | None
    ) -> ChildOutcome:
        live.status = status
        live.current_tool = None
        live.tokens = self._tokens(child.id)
        self.channel.tell_parent(live)
        self.channel.live.pop(child.id, None)
        outcome = ChildOutcome(
            status=status,
            child_id=child.id,
            agent=live.agent,
            tokens=live.tokens - live.tokens_before,
            final=final_message(child.messages, live.call_id),
            error=error if status != "done" else None,
            total_tokens=live.tokens,
            messages=call_messages(child.messages, live.call_id),
        )
        return outcome

    # ------------------------------------------------------------------ seams

    async def before_step(self, turn: Turn) -> None:
        """At a turn's first step the agent folders are looked at again (off the event
        loop); a child over its token budget for this call ends here, before spending more
        (a resumed child has its budget again: the budget and the step limit are per call)."""
        if not turn.steps:
            await self.refresh_agents()
        if turn.state.row.parent_id is None:
            # A new turn counts its children from none; each response from none.
            counts = self._started.setdefault(turn.state.id, [0, 0])
            self._started[turn.state.id] = [counts[0] if turn.steps else 0, 0]
        live = self.channel.live.get(turn.state.id)
        if live is None:
            return
        budget = self.sessions.settings().delegation.token_budget
        if self._tokens(turn.state.id) - live.tokens_before >= budget:
            live.budget_spent = True
            raise BudgetReached(f"the child's token budget ({budget:,} tokens) is spent")

    def cancel_children(self, state: SessionState) -> None:
        """`baton/session/cancel` of a parent: its running children stop too."""
        run = self.step_runs.get(state.id)
        if run is not None and not run.done():
            run.cancel()
        for live in list(self.channel.live.values()):
            if live.parent_id == state.id:
                self.sessions.cancel(live.child_id)
