"""Prompt-cache reuse and cost: Baton versus restating the plan, and an ideal append-only agent.

    python bench/cache.py [--plan-tokens 3000] [--revisions 10] [--steps 60] [--ticks 6]
                          [--input 1.25] [--cached 0.125] [--output 10]

Baton's real core runs in this process (build_app: session service, plan
service, context builder, compaction) against the fake OpenAI Responses server
of the tests (tests/fake_llm, a real HTTP server on 127.0.0.1), whose scripted
answers stand in for the model. Two scenarios:

(a) plan iteration: a plan of about 3,000 tokens is written, then revised 10
    times; each round the person asks for a change (baton/plan/requestChanges)
    and the model answers with one small plan_edit and plan_exit.
(b) build: the approved plan is built in 60 model steps (reads, commands,
    writes) of which 6 tick a step off, with one compaction halfway.

Each is run twice: by Baton as it is, and by the restate-every-round baseline,
in which the model has no plan file and writes the whole plan again as its
answer whenever it changes (each revision; each tick). The ideal append-only
agent is Baton's own request sequence with every request a pure extension of
the one before (except the first after a compaction, which starts a new
prefix after the instructions and tools for any agent).

Every request is serialised as the provider sees it (instructions, tools,
input items; tests/fake_llm/prefix.py) and compared with every earlier request
of the run: the longest common prefix is the part a prompt cache serves.
Tokens are characters / 4 of that serialisation (tool specs included), not a
tokenizer; output is characters / 4 of the scripted answers. Cost is at the
list prices given (dollars per million tokens).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests.fake_llm import FakeLLM, text, tool_call  # noqa: E402
from tests.fake_llm.prefix import Segments, shared  # noqa: E402
from tests.fake_llm.records import RecordedRequest  # noqa: E402
from tests.fake_llm.script import Text, ToolCall  # noqa: E402

from baton import protocol as p  # noqa: E402
from baton.app import App, build_app  # noqa: E402
from baton.session.events import NullChannel  # noqa: E402
from plan_tokens import make_plan, revisions  # noqa: E402

TARGET_BUILD_REUSE = 0.95
TARGET_PLAN_REUSE = 0.85
TARGET_PLAN_COST = 0.15


@dataclass
class Figures:
    requests: int = 0
    input: int = 0  # tokens
    hit: int = 0  # of the input, served by a prefix cache
    output: int = 0
    previous: int = 0  # sum of each request's predecessor's size (the append-only ceiling)
    reused: int = 0  # of that, what the next request repeated as its prefix

    def cost(self, prices: tuple[float, float, float]) -> float:
        fresh, cached, out = prices
        return ((self.input - self.hit) * fresh + self.hit * cached + self.output * out) / 1e6

    @property
    def reuse(self) -> float:
        return self.reused / self.previous if self.previous else 1.0


def output_tokens(request: RecordedRequest) -> int:
    reply = request.reply
    if reply is None:
        return 0
    chars = 0
    for part in reply.output:
        if isinstance(part, Text):
            chars += len(part.content)
        elif isinstance(part, ToolCall):
            chars += len(part.name) + len(part.arguments)
    return chars // 4


def measure(requests: list[RecordedRequest], new_prefix: set[int]) -> tuple[Figures, Figures]:
    """(as sent, ideal append-only) over `requests`; `new_prefix`: indexes of requests that
    follow a compaction (a new prefix for any agent)."""
    real, ideal = Figures(), Figures()
    seen: list[Segments] = []
    for n, request in enumerate(requests):
        seg = request.segments
        size = seg.chars // 4
        best = max((shared(s, seg).chars for s in seen), default=0)
        out = output_tokens(request)
        for figures in (real, ideal):
            figures.requests += 1
            figures.input += size
            figures.output += out
        real.hit += best // 4
        if n in new_prefix:
            ideal.hit += (len(seg.instructions) + len(seg.tools)) // 4
        elif seen:
            previous = seen[-1]
            ideal.hit += previous.chars // 4
            real.previous += previous.chars
            real.reused += shared(previous, seg).chars
            ideal.previous += previous.chars
            ideal.reused += previous.chars
        seen.append(seg)
    return real, ideal


def start(llm: FakeLLM, home: Path) -> App:
    os.environ["XDG_DATA_HOME"] = str(home / "data")
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")
    ws = home / "ws"
    ws.mkdir()
    for n in range(20):
        (ws / f"module_{n}.py").write_text(
            "".join(f"def f{n}_{i}(x):\n    return x * {i}\n" for i in range(40))
        )
    return build_app(
        ws,
        NullChannel(),
        environ={"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": llm.base_url},
        client_settings={
            "permissions": {"write": "allow", "bash": "allow"},
            "compaction": {"strategy": "native", "auto": False},
        },
    )


async def wait_idle(app: App, sid: str) -> None:
    state = app.sessions.state(sid)
    while state.busy:
        await asyncio.sleep(0.01)


async def plan_iteration(
    app: App, llm: FakeLLM, plan: str, edits: list[Any], restate: bool
) -> tuple[str, int]:
    """Scenario (a); returns the session id and the index of its first request."""
    first = len(llm.model_requests)
    sid = app.sessions.new_session(p.SessionNewParams(mode="plan", title="Resumable")).session_id
    if restate:
        llm.add(text(f"Here is my plan:\n\n{plan}"))
    else:
        llm.add(tool_call("plan_write", {"content": plan}), tool_call("plan_exit", {}))
    await app.sessions.prompt(
        p.PromptParams(session_id=sid, text="Plan how to make sessions resumable.")
    )
    for feedback, old, new, revised in edits:
        if restate:
            llm.add(text(f"Here is the revised plan:\n\n{revised}"))
            await app.sessions.prompt(p.PromptParams(session_id=sid, text=feedback))
        else:
            llm.add(
                tool_call("plan_edit", {"old_string": old, "new_string": new}),
                tool_call("plan_exit", {}),
            )
            app.plans.request_changes(p.PlanRequestChangesParams(session_id=sid, feedback=feedback))
            await wait_idle(app, sid)
    return sid, first


def build_steps(steps: int, ticks: int, plan: str, restate: bool) -> list[list[Any]]:
    """The model's answers for the build: tool calls, a tick (or a restatement) every so often."""
    every = max(1, steps // ticks)
    lines = [line for line in plan.splitlines() if line.startswith("- [ ] ")]
    current = plan
    answers: list[list[Any]] = []
    for n in range(steps):
        if (n + 1) % every == 0 and (n + 1) // every <= ticks:
            line = lines[(n + 1) // every - 1]
            ticked = line.replace("- [ ]", "- [x]", 1)
            current = current.replace(line, ticked, 1)
            if restate:
                answers.append(
                    [text(f"Progress:\n\n{current}"), tool_call("bash", {"command": "true"})]
                )
            else:
                answers.append([tool_call("plan_edit", {"old_string": line, "new_string": ticked})])
        elif n % 3 == 0:
            answers.append([tool_call("read", {"path": f"module_{n % 20}.py"})])
        elif n % 3 == 1:
            answers.append([tool_call("bash", {"command": f"echo step {n}; ls"})])
        else:
            content = f"# step {n}\nVALUE = {n}\n"
            answers.append([tool_call("write", {"path": f"out_{n}.py", "content": content})])
    return answers


async def build(
    app: App, llm: FakeLLM, sid: str, plan: str, steps: int, ticks: int, restate: bool
) -> tuple[int, set[int]]:
    """Scenario (b), after (a) in the same session; returns its first request's index and the
    indexes of requests that start a new prefix (after the compaction)."""
    answers = build_steps(steps, ticks, plan, restate)
    half = len(answers) // 2
    first = len(llm.model_requests)
    for answer in answers[:half]:
        llm.add(*answer)
    llm.add(text("Half way."))
    if restate:
        app.sessions.set_mode(p.SetModeParams(session_id=sid, mode="build"))
        await app.sessions.prompt(p.PromptParams(session_id=sid, text="Build it."))
    else:
        await app.plans.approve(p.PlanApproveParams(session_id=sid, start=True))
        await wait_idle(app, sid)
    llm.on_request(lambda req: text("## Summary\nBuilding the plan.") if not req.tools else None)
    await app.compaction.compact(sid)
    llm.on_request(lambda req: None)
    after = len(llm.model_requests)
    for answer in answers[half:]:
        llm.add(*answer)
    llm.add(text("Done."))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="Go on."))
    return first, {after}


async def run(
    args: argparse.Namespace, restate: bool
) -> dict[str, list[RecordedRequest] | set[int]]:
    plan, steps = make_plan(args.plan_tokens)
    edits = list(revisions(plan, steps, args.revisions))
    with FakeLLM() as llm, tempfile.TemporaryDirectory(prefix="baton-cache-") as tmp:
        app = start(llm, Path(tmp))
        try:
            sid, first = await plan_iteration(app, llm, plan, edits, restate)
            final = edits[-1][3] if edits else plan
            build_first, new_prefix = await build(
                app, llm, sid, final, args.steps, args.ticks, restate
            )
            requests = llm.model_requests
            return {
                "plan": requests[first:build_first],
                "build": requests[build_first:],
                "new_prefix": {i - build_first for i in new_prefix},
            }
        finally:
            await app.close()


def row(name: str, f: Figures, prices: tuple[float, float, float]) -> str:
    hit = f.hit / f.input if f.input else 0.0
    return (
        f"  {name:<22} {f.requests:>4} {f.input:>10,} {f.hit:>10,} ({hit:>4.0%})"
        f" {f.output:>8,}  ${f.cost(prices):>7.3f}  {f.reuse:>6.1%}"
    )


def report(
    title: str,
    baton: Figures,
    ideal: Figures,
    baseline: Figures,
    prices: tuple[float, float, float],
) -> None:
    print(title)
    print(
        f"  {'':<22} {'reqs':>4} {'input':>10} {'cache hit':>10}       {'output':>8}"
        f"  {'cost':>8}  {'reuse':>6}"
    )
    print(row("Baton", baton, prices))
    print(row("restate baseline", baseline, prices))
    print(row("ideal append-only", ideal, prices))


async def main(args: argparse.Namespace) -> int:
    prices = (args.input, args.cached, args.output)
    baton = await run(args, restate=False)
    baseline = await run(args, restate=True)
    plan_b, plan_i = measure(baton["plan"], set())  # type: ignore[arg-type]
    plan_r, _ = measure(baseline["plan"], set())  # type: ignore[arg-type]
    build_b, build_i = measure(baton["build"], baton["new_prefix"])  # type: ignore[arg-type]
    build_r, _ = measure(baseline["build"], baseline["new_prefix"])  # type: ignore[arg-type]
    print(
        f"plan ~{args.plan_tokens:,} tokens; tokens = characters / 4 of each request as the"
        " provider sees it (instructions, tools, items);"
    )
    print(
        f"prices per million: input ${args.input}, cached input ${args.cached},"
        f" output ${args.output}; reuse = the part of each request's predecessor it repeats"
    )
    print()
    report(f"(a) plan iteration: write, {args.revisions} revisions", plan_b, plan_i, plan_r, prices)
    print()
    report(
        f"(b) build: {args.steps} steps, {args.ticks} plan ticks, one compaction",
        build_b,
        build_i,
        build_r,
        prices,
    )
    print()
    plan_reuse = plan_b.reuse / plan_i.reuse
    build_reuse = build_b.reuse / build_i.reuse
    plan_cost = plan_b.cost(prices) / plan_r.cost(prices)
    checks = [
        ("build prefix reuse vs append-only", build_reuse, TARGET_BUILD_REUSE, build_reuse >= TARGET_BUILD_REUSE),
        ("plan prefix reuse vs append-only", plan_reuse, TARGET_PLAN_REUSE, plan_reuse >= TARGET_PLAN_REUSE),
        ("plan cost vs restate baseline", plan_cost, TARGET_PLAN_COST, plan_cost <= TARGET_PLAN_COST),
    ]  # fmt: skip
    for name, value, target, ok in checks:
        print(f"{name:<36} {value:>6.1%}  (target {target:.0%}: {'met' if ok else 'missed'})")
    # Any scheme that shows the model the plan's current text after each revision writes
    # the plan once and sends each revised text as new input at least once.
    plan, _ = make_plan(args.plan_tokens)
    size = len(plan) // 4
    floor = (size * args.output + args.revisions * size * args.input) / 1e6
    print(
        f"{'floor: write once, each revision new':<36} {floor / plan_r.cost(prices):>6.1%}"
        "  (of the baseline's cost, for any scheme showing the current text)"
    )
    cost_b = plan_b.cost(prices) + build_b.cost(prices)
    cost_r = plan_r.cost(prices) + build_r.cost(prices)
    print(f"{'both scenarios, cost vs baseline':<36} {cost_b / cost_r:>6.1%}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan-tokens", type=int, default=3000)
    parser.add_argument("--revisions", type=int, default=10)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--ticks", type=int, default=6)
    parser.add_argument("--input", type=float, default=1.25, help="$ per million input tokens")
    parser.add_argument("--cached", type=float, default=0.125, help="$ per million cached")
    parser.add_argument("--output", type=float, default=10.0, help="$ per million output tokens")
    raise SystemExit(asyncio.run(main(parser.parse_args())))
