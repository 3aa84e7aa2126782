"""What iterating on a plan costs in tokens: Baton's plan file versus restating the plan.

A 3,000-token plan is written, then revised 10 times with small edits, each
revision answering a short piece of feedback. Two agents do it:

* Baton: the model writes the plan once with `plan_write`, then each round
  makes one small `plan_edit` and resubmits with `plan_exit` (which ends the
  turn, so a round is one model request). The plan reaches the model where it
  changes: in the `plan_write`, then in each `plan_edit`'s result (older copies
  stay as sent, so the provider's prompt cache serves them; see
  `bench/cache.py` for the cache and cost figures).
* Baseline: a plan mode without a file. Each round the model restates the
  whole revised plan in its answer, and every earlier restatement stays in the
  history it is sent next time.

Both run through Baton's real SessionService and ContextBuilder in this process
(the same system prompt, plan-mode tools and message store; the baseline has no
plan source and no plan tools), the Baton side through the real plan tools.
Input is the builder's own count of each request it builds (`baton.agent.tokens.
estimate` over instructions, tool specs and items); output is the same counter
over what the model writes. No model is called: the model's answers are
scripted, as a model following the prompts would give them.

For each scenario (by default a 60-line plan with 3 revisions and a 3,000-token
plan with 10) it prints, per round, the full copies of the plan in the request
(items holding at least 80% of its step lines) and an ideal agent's input: the
plan once, then each edit's diff.

Run: python bench/plan_tokens.py [--scenario lines:60:3 --scenario tokens:3000:10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton import protocol as p
from baton.agent import prompts
from baton.agent.context import item_tokens, tool_specs_tokens
from baton.agent.events import NullChannel
from baton.agent.state import SessionState
from baton.agent.tokens import ITEM_OVERHEAD, estimate
from baton.agent.turn import Turn
from baton.auth import Credentials
from baton.config import ConfigLoader
from baton.delegation.feature import TaskTool
from baton.plan.service import PlanService
from baton.plan.source import PlanContext
from baton.plan.store import PlanStore
from baton.providers.base import AssistantText, Item, ToolCall, ToolSpec
from baton.providers.factory import ProviderRegistry
from baton.providers.openai_responses import to_responses_tool
from baton.session.seams import Contribution, Seams, fold
from baton.session.service import SessionService
from baton.store.db import Database
from baton.store.model import StoredPart, StoredText, ToolResultRecord, part_from_json
from baton.tools.base import ToolContext, ToolServices
from baton.tools.diagnostics import DiagnosticsTool
from baton.tools.files import ReadInput, ReadTool
from baton.tools.plan import plan_tools
from baton.tools.question import QuestionTool
from baton.tools.registry import ToolRegistry, default_registry

TARGET_RATIO = 0.15
# Every built-in tool of a build session, as sent (issue 49), and what `read`'s line
# numbers may add to a file's own text.
TARGET_TOOL_LIST = 1_250
TARGET_READ_OVERHEAD = 0.10
# pi's read, write, edit and bash, as the issue measured them (its only four tools).
PI_FOUR_TOOLS = 722
PI_TOOLS = ("read", "write", "edit", "bash")

_VERBS = ("Add", "Change", "Move", "Rename", "Test", "Document", "Split", "Check")
_THINGS = (
    "the session loader",
    "the token counter",
    "the retry policy",
    "the plan store",
    "the context builder",
    "the permission gate",
    "the tool registry",
    "the provider factory",
)


def make_plan(target_tokens: int, *, target_lines: int | None = None) -> tuple[str, int]:
    """A markdown plan of about `target_tokens` tokens (or of `target_lines` lines) with
    numbered, unique steps."""
    lines = [
        "# Plan: make sessions resumable",
        "",
        "Goal: a session survives a restart of the server with its plan, history and",
        "settings intact, and the person can pick up exactly where the agent stopped.",
        "",
    ]
    step = 0

    def short() -> bool:
        if target_lines is not None:
            return len(lines) < target_lines
        return estimate("\n".join(lines)) < target_tokens

    while short():
        step += 1
        if step % 10 == 1 and (target_lines is None or len(lines) + 4 <= target_lines):
            lines += ["", f"## Part {step // 10 + 1}", ""]
        verb = _VERBS[step % len(_VERBS)]
        thing = _THINGS[(step * 3) % len(_THINGS)]
        lines.append(
            f"- [ ] S{step}. {verb} {thing} in `server/baton/module_{step}.py` so that "
            f"case {step} is handled; cover it in `tests/test_module_{step}.py`."
        )
    return "\n".join(lines) + "\n", step


def revisions(plan: str, steps: int, rounds: int) -> Iterator[tuple[str, str, str, str]]:
    """(feedback, old_string, new_string, revised plan) for each round: one small edit each."""
    for r in range(1, rounds + 1):
        k = 1 + (r * 7) % steps
        old = f"so that case {k} is handled;"
        new = f"so that case {k} is handled and logged;"
        feedback = f"In step S{k}, also log the case."
        plan = plan.replace(old, new, 1)
        yield feedback, old, new, plan


@dataclass
class Round:
    input_tokens: int = 0
    output_tokens: int = 0
    plan_block_tokens: int = 0
    items: list[Item] = field(default_factory=list)
    # Input after the first item that differs from the previous request's: what a
    # provider's prompt cache could not serve.
    fresh_tokens: int = 0


def output_tokens(items: list[Item]) -> int:
    return sum(item_tokens(i) for i in items)


class NoFreshStart:
    """This bench never approves with a fresh context (bench/cache.py measures that)."""

    async def compact(self, session_id: str, *, fresh: bool) -> p.CompactionRecord:
        raise RuntimeError("bench/plan_tokens.py does not approve in a fresh context")


def make_service(
    workspace: Path, db: Database, tools: ToolRegistry, with_plans: bool
) -> tuple[SessionService, PlanService | None]:
    """The sessions (and the plan service on them), wired as `baton.app.build_app` does."""
    config = ConfigLoader(workspace, environ={})
    context = PlanContext(PlanStore(workspace, db), NullChannel()) if with_plans else None
    made: list[PlanService] = []

    def setup(service: SessionService) -> Seams:
        if context is None:
            return Seams()
        made.append(PlanService(context, config, NullChannel(), service, NoFreshStart()))
        return fold(Contribution(tool_services=ToolServices(plan=made[0])))

    service = SessionService(
        workspace,
        db,
        config,
        Credentials({}),
        NullChannel(),
        ProviderRegistry(),
        tools,
        plans=context,
        features=setup,
    )
    return service, (made[0] if made else None)


def measure(service: SessionService, state: SessionState) -> Round:
    """The builder's count of the request it would send now (uncalibrated), and its plan block."""
    built = service.build_context(state, service.settings(), None)
    block = sum(part.tokens for part in built.parts if part.kind == "plan")
    return Round(
        input_tokens=built.estimated_tokens, plan_block_tokens=block, items=built.request.items
    )


def mark_fresh(rounds: list[Round]) -> None:
    """Set each round's fresh input: everything from the first item its predecessor lacked."""
    previous: list[Item] = []
    for n, this in enumerate(rounds):
        same = 0
        for a, b in zip(previous, this.items, strict=False):
            if a != b:
                break
            same += 1
        fixed = this.input_tokens - sum(item_tokens(i) for i in this.items)
        this.fresh_tokens = sum(item_tokens(i) for i in this.items[same:])
        if n == 0:
            this.fresh_tokens += fixed  # instructions and tool specs, cached afterwards
        previous = this.items


async def answer(service: SessionService, state: SessionState, items: list[Item]) -> None:
    """Store the model's scripted answer as the loop does, running its tool calls for real."""
    parts: list[StoredPart] = []
    calls = []
    for item in items:
        if isinstance(item, AssistantText):
            parts.append(StoredText(item.text))
        elif isinstance(item, ToolCall):
            data: dict[str, Any] = {
                "toolCallId": item.call_id,
                "name": item.name,
                "input": json.loads(item.arguments),
                "arguments": item.arguments,
            }
            parts.append(part_from_json("tool_call", data))
            calls.append(item)
    message = service.store.append_message(state.id, "assistant", "step", parts)
    state.add(message)
    turn = Turn(service, state)
    for call in calls:
        result = await service.run_tool(turn, call)
        if result.is_error:
            raise RuntimeError(f"{call.name} failed in the bench: {result.output}")
        record = ToolResultRecord(call.call_id, "completed", result.output)
        service.store.append_tool_result(message, record)


def _call(name: str, args: dict[str, Any], n: int) -> ToolCall:
    return ToolCall(call_id=f"call_{name}_{n}", name=name, arguments=json.dumps(args))


async def run_baton(
    workspace: Path, db: Database, plan: str, edits: list[tuple[str, str, str, str]]
) -> list[Round]:
    tools = default_registry()
    for tool in plan_tools():
        tools.register(tool)
    service, plans = make_service(workspace, db, tools, with_plans=True)
    assert plans is not None
    state = service.state(service.store.create_session("Make sessions resumable", "plan").id)
    rounds: list[Round] = []

    service.turns.add_user_message(state, "Plan how to make sessions resumable.", "prompt")
    first = measure(service, state)
    items: list[Item] = [
        AssistantText(text="Here is my plan; I have submitted it for approval."),
        _call("plan_write", {"content": plan}, 0),
        _call("plan_exit", {}, 0),
    ]
    first.output_tokens = output_tokens(items)
    await answer(service, state, items)
    rounds.append(first)

    for n, (feedback, old, new, _) in enumerate(edits, start=1):
        # What baton/plan/requestChanges does: the plan is a draft again, the
        # feedback arrives as a user message and the agent's turn starts.
        plans.store.set_status(state.id, "draft")
        text = prompts.PLAN_FEEDBACK_MESSAGE.format(feedback=feedback)
        service.turns.add_user_message(state, text, "feedback")
        this = measure(service, state)
        items = [
            AssistantText(text="Done; resubmitted."),
            _call("plan_edit", {"old_string": old, "new_string": new}, n),
            _call("plan_exit", {}, n),
        ]
        this.output_tokens = output_tokens(items)
        await answer(service, state, items)
        rounds.append(this)

    final = plans.get(state.id)
    assert final is not None and final.content == edits[-1][3], "the plan file diverged"
    return rounds


async def run_baseline(
    workspace: Path, db: Database, plan: str, edits: list[tuple[str, str, str, str]]
) -> list[Round]:
    service, _ = make_service(workspace, db, default_registry(), with_plans=False)
    state = service.state(service.store.create_session("Make sessions resumable", "plan").id)
    rounds: list[Round] = []
    texts = [plan] + [revised for *_, revised in edits]
    prompts_ = ["Plan how to make sessions resumable."] + [fb for fb, *_ in edits]
    for n, (prompt, revised) in enumerate(zip(prompts_, texts, strict=True)):
        service.turns.add_user_message(state, prompt, "prompt" if n == 0 else "feedback")
        this = measure(service, state)
        preface = "Here is my plan:" if n == 0 else "Here is the revised plan:"
        items: list[Item] = [AssistantText(text=f"{preface}\n\n{revised}")]
        this.output_tokens = output_tokens(items)
        await answer(service, state, items)
        rounds.append(this)
    return rounds


def totals(rounds: list[Round]) -> tuple[int, int, int]:
    i = sum(r.input_tokens for r in rounds)
    o = sum(r.output_tokens for r in rounds)
    return i, o, i + o


def scenario_plan(spec: str) -> tuple[str, str, int, int]:
    """(name, plan, steps, revisions) of `lines:60:3` (a 60-line plan, 3 revisions) or
    `tokens:3000:10` (a 3,000-token plan, 10 revisions)."""
    kind, size, rounds = spec.split(":")
    if kind == "lines":
        plan, steps = make_plan(0, target_lines=int(size))
        name = f"{int(size)}-line plan ({estimate(plan):,} tokens), {rounds} revisions"
    else:
        plan, steps = make_plan(int(size))
        name = f"{int(size):,}-token plan ({len(plan.splitlines())} lines), {rounds} revisions"
    return name, plan, steps, int(rounds)


def item_text(item: Item) -> str:
    if isinstance(item, ToolCall):
        try:
            args = json.loads(item.arguments)
        except ValueError:
            return item.arguments
        return "\n".join(str(v) for v in args.values()) if isinstance(args, dict) else ""
    return str(getattr(item, "output", None) or getattr(item, "text", ""))


def full_copies(texts: list[str], plan: str) -> int:
    """Texts holding the plan whole: at least 80% of its step lines (compared without the
    box and the part a revision changes)."""

    def key(line: str) -> str:
        return line[6:].split(" so that ")[0]

    keys = {key(line) for line in plan.splitlines() if line.startswith("- [")}
    count = 0
    for text in texts:
        present = {key(line) for line in text.splitlines() if line.startswith("- [")}
        if keys and len(keys & present) >= 0.8 * len(keys):
            count += 1
    return count


def ideal_inputs(first: Round, plan: str, edits: list[tuple[str, str, str, str]]) -> list[int]:
    """Each round's input for an agent that sends the plan once, then each edit's diff (the
    same instructions, tools and the person's words as Baton's requests)."""
    size = first.input_tokens
    out = [size]
    answer = estimate(plan) + ITEM_OVERHEAD
    for feedback, old, new, _ in edits:
        size += answer + estimate(prompts.PLAN_FEEDBACK_MESSAGE.format(feedback=feedback))
        size += ITEM_OVERHEAD
        out.append(size)
        answer = estimate(old) + estimate(new) + ITEM_OVERHEAD
    return out


def builtin_registry() -> ToolRegistry:
    """Every built-in tool a build session is offered: the workspace tools, `recall`, the
    plan tools and `task` (its spec is the class's: the built-in agents)."""
    tools = default_registry()
    for tool in plan_tools():
        tools.register(tool)
    tools.register(TaskTool(None))  # type: ignore[arg-type]  # only its spec is read
    for tool in extra_tools():
        tools.register(tool)
    return tools


def extra_tools() -> list[Any]:
    """The tools a client's capabilities add: `question` (someone to ask) and `diagnostics`
    (an editor that offers its problems); `webfetch` is in the default registry."""
    return [QuestionTool(), DiagnosticsTool()]


def sent_tokens(specs: list[ToolSpec]) -> int:
    """Characters / 4 of the tool list as the Responses provider sends it (what
    bench/cache.py counts as the tool list)."""
    return len(json.dumps([to_responses_tool(s) for s in specs], ensure_ascii=False)) // 4


def tool_table() -> None:
    """Tokens of each tool spec, the system prompt and the mode notes, as the context
    builder counts them (`baton.agent.context.tool_specs_tokens`) and as sent (characters
    / 4 of the provider's JSON), against pi's four tools."""
    tools = builtin_registry()
    full = {s.name: tool_specs_tokens([s]) for s in tools.specs()}
    sent = {s.name: sent_tokens([s]) for s in tools.specs()}
    compact = {s.name: tool_specs_tokens([s]) for s in tools.specs(compact=True)}
    print(
        "== what every request carries (baton.agent.tokens.estimate; the same in plan and build mode)"
    )
    print(f"{'tool':<12} {'full':>6} {'sent':>6} {'compact':>8}")
    for name, tokens in full.items():
        print(f"{name:<12} {tokens:>6,} {sent[name]:>6,} {compact[name]:>8,}")
    total_sent = sent_tokens(tools.specs())
    print(
        f"{'all ' + str(len(full)):<12} {sum(full.values()):>6,} {total_sent:>6,} "
        f"{sum(compact.values()):>8,}"
    )
    verdict = "meets" if total_sent <= TARGET_TOOL_LIST else "misses"
    print(
        f"tool list as sent: {total_sent:,} tokens for {len(full)} tools "
        f"({verdict} the {TARGET_TOOL_LIST:,}-token target)"
    )
    four = sum(full[name] for name in PI_TOOLS)
    print(
        f"{' + '.join(PI_TOOLS)}: {four:,} tokens; pi's four: {PI_FOUR_TOOLS:,} "
        f"({four / PI_FOUR_TOOLS:.0%} of pi's); the other {len(full) - len(PI_TOOLS)} tools "
        f"{sum(full.values()) - four:,} (pi has none of them)"
    )
    workspace = "/home/user/project"
    print(
        f"system prompt {estimate(prompts.SYSTEM.format(workspace=workspace)):,} "
        f"(compact {estimate(prompts.SYSTEM_COMPACT.format(workspace=workspace)):,}); "
        f"plan mode's note {estimate(prompts.MODE_PLAN):,}, build mode's "
        f"{estimate(prompts.MODE_BUILD):,}"
    )


async def read_cost(workspace: Path, text: str) -> tuple[int, int]:
    """Tokens of `read`'s answer for a file holding `text`, and of `text` itself."""
    (workspace / "module.py").write_text(text)

    async def allow(*_: Any, **__: Any) -> bool:
        return True

    ctx = ToolContext(
        session_id="s",
        tool_call_id="c",
        workspace=workspace,
        mode="build",
        settings=ConfigLoader(workspace, environ={}).settings(),
        ask_permission=allow,
    )
    result = await ReadTool().run(ReadInput(path="module.py"), ctx)
    return estimate(result.output), estimate(text)


async def read_table(lines: int = 150) -> None:
    """What `read` of a `lines`-line file costs against the file's own text: the first
    `lines` lines of each of Baton's own modules that long (real code, real line lengths)."""
    server = Path(__file__).resolve().parent.parent / "server" / "baton"
    texts = []
    for path in sorted(server.rglob("*.py")):
        head = path.read_text().splitlines(keepends=True)[:lines]
        if len(head) == lines:
            texts.append("".join(head))
    overheads = []
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as tmp:
        workspace = Path(tmp).resolve()
        for text in texts:
            shown, own = await read_cost(workspace, text)
            overheads.append(shown / own - 1)
    overheads.sort()
    median = overheads[len(overheads) // 2]
    within = sum(1 for o in overheads if o <= TARGET_READ_OVERHEAD)
    verdict = "meets" if median <= TARGET_READ_OVERHEAD else "misses"
    print(
        f"read of a {lines}-line file ({len(texts)} of Baton's modules, their first {lines} "
        f"lines): +{median:.1%} tokens over the text at the median ({verdict} the "
        f"+{TARGET_READ_OVERHEAD:.0%} target), +{overheads[0]:.1%} to +{overheads[-1]:.1%}; "
        f"{within} of {len(texts)} within +{TARGET_READ_OVERHEAD:.0%}"
    )


async def main(specs: list[str]) -> int:
    for spec in specs:
        await one(*scenario_plan(spec))
        print()
    tool_table()
    await read_table()
    return 0


async def one(name: str, plan: str, steps: int, rounds: int) -> None:
    edits = list(revisions(plan, steps, rounds))
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as tmp:
        workspace = Path(tmp, "workspace").resolve()
        workspace.mkdir()
        db = Database(Path(tmp, "baton.db"))
        try:
            baton = await run_baton(workspace, db, plan, edits)
            baseline = await run_baseline(workspace, db, plan, edits)
        finally:
            db.close()

    ideal = ideal_inputs(baton[0], plan, edits)
    print(f"== {name}: {steps} steps, one small edit a revision (round 0 writes the plan)")
    print(
        "tokens counted by baton.agent.tokens.estimate over requests built by the real ContextBuilder"
    )
    print()
    print(
        f"{'round':>5} | {'Baton in':>9} {'out':>6} {'copies':>6} | "
        f"{'baseline in':>11} {'out':>6} {'copies':>6} | {'ideal in':>8}"
    )
    for n, (b, a) in enumerate(zip(baton, baseline, strict=True)):
        bc = full_copies([item_text(i) for i in b.items], plan)
        ac = full_copies([item_text(i) for i in a.items], plan)
        print(
            f"{n:>5} | {b.input_tokens:>9,} {b.output_tokens:>6,} {bc:>6} | "
            f"{a.input_tokens:>11,} {a.output_tokens:>6,} {ac:>6} | {ideal[n]:>8,}"
        )
    bi, bo, bt = totals(baton)
    ai, ao, at = totals(baseline)
    mark_fresh(baton)
    mark_fresh(baseline)
    print()
    print(f"Baton    : input {bi:>9,}  output {bo:>7,}  total {bt:>9,}")
    print(f"baseline : input {ai:>9,}  output {ao:>7,}  total {at:>9,}")
    print(f"ideal    : input {sum(ideal):>9,}  (plan once, then each edit's diff)")
    ratio = bt / at
    verdict = "meets" if ratio <= TARGET_RATIO else "misses"
    print(
        f"Baton / baseline: {ratio:.1%} of the total ({verdict} the {TARGET_RATIO:.0%} target); "
        f"output alone {bo / ao:.1%}"
    )
    # Any scheme whose model sees the current plan in each revision request sends
    # the plan at least once per revision, and writes it once: a floor that holds
    # even with no system prompt, tools or history at all.
    floor = (rounds + 1) * estimate(plan)
    print(
        f"floor for any scheme that shows the plan once per revision request: "
        f"{floor:,} tokens = {floor / at:.1%} of the baseline"
    )
    bf = sum(r.fresh_tokens for r in baton) + bo
    af = sum(r.fresh_tokens for r in baseline) + ao
    print(
        f"with a prompt cache (input from the first changed item on, plus output): "
        f"Baton {bf:,}, baseline {af:,} ({bf / af:.1%})"
    )
    print(
        f"context after the last revision: Baton {baton[-1].input_tokens:,} tokens, "
        f"baseline {baseline[-1].input_tokens + baseline[-1].output_tokens:,}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scenario",
        action="append",
        help="lines:N:R (an N-line plan, R revisions) or tokens:N:R; default both of the issue's",
    )
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main(args.scenario or ["lines:60:3", "tokens:3000:10"])))
