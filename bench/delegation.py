"""Delegation: a plan built in one context against step by step in builder children, and
parallel explore children against the slowest one alone.

    python bench/delegation.py [--input 1.25] [--cached 0.125] [--output 10]

Baton's real core runs in this process (build_app) against the fake OpenAI Responses
server of the tests (tests/fake_llm), whose scripted answers stand in for the model
(one run; the figures are deterministic but for the timings).

(a) one context: a 6-step plan is approved with `start: true` and the model builds it
    in the session's own context: each step reads two modules, writes a file, runs a
    check and ticks the step with `plan_edit` (5 requests a step).
(b) step by step: the same plan approved with `build: "steps"`: Baton runs each step in
    a fresh `build` child (the same reads, write and check, then its one-line answer;
    Baton ticks the step), and the parent is asked once for a report at the end.

For each: the parent's context after each step (tokens as Baton counts them), total
input tokens over every request (parent and children), cost at the prices given with
the input a prompt cache serves (the longest prefix shared with any earlier request
of the run) at the cached price, and prefix reuse (of each request's predecessor in
the same session, what the next repeats as its prefix) in the parent and inside the
children. Tokens are characters / 4 of each request as the provider sees it
(tests/fake_llm/prefix.py), as in bench/cache.py.

Parallel: four explore children in one response, answering after 0.6, 0.8, 1.0 and 1.2
s, against a parent sending only the slowest; the ratio of the two turns' wall times.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests.fake_llm import FakeLLM, delay, text, tool_call  # noqa: E402
from tests.fake_llm.records import RecordedRequest  # noqa: E402

from baton import protocol as p  # noqa: E402
from baton.agent.state import SessionState  # noqa: E402
from baton.app import App  # noqa: E402
from cache import Figures, measure, output_tokens, start, wait_idle  # noqa: E402

STEPS = 6
TARGET_GROWTH = 400  # tokens a step, at most, in the parent
TARGET_COST_RATIO = 1.0  # (b) against (a), at most
TARGET_PARENT_REUSE = 1.0
TARGET_PARALLEL = 1.3
DELAYS = (0.6, 0.8, 1.0, 1.2)
PLAN = "# Features\n\n" + "".join(
    f"- [ ] Step {k}: add feature_{k}.py and check it imports\n" for k in range(1, STEPS + 1)
)
STEP_MARK = "Your step ("


def feature(k: int) -> str:
    return "".join(f"def feature_{k}_{i}(x):\n    return x + {i}\n" for i in range(30))


def step_work(k: int) -> list[list[Any]]:
    """What the model does for step k, request by request (without the tick)."""
    return [
        [tool_call("read", {"path": f"module_{2 * k}.py"})],
        [tool_call("read", {"path": f"module_{2 * k + 1}.py"})],
        [tool_call("write", {"path": f"feature_{k}.py", "content": feature(k)})],
        [tool_call("bash", {"command": f"python3 -c 'import feature_{k}'"})],
    ]


async def planned(app: App, llm: FakeLLM) -> str:
    sid = app.sessions.new_session(p.SessionNewParams(mode="plan", title="Features")).session_id
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Planned."), tool_call("plan_exit", {}))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="Add six feature modules."))
    return sid


def _ticks(state: SessionState) -> int:
    return sum(
        1
        for m in state.messages
        for part in m.tool_calls()
        if part.name == "plan_edit" and part.tool_call_id in m.results
    )


async def per_step(app: App, sid: str, done: Callable[[SessionState], int]) -> list[int]:
    """The session's context (tokens, as Baton counts them) each time `done` counts one
    more finished step, while its build runs."""
    state = app.sessions.state(sid)
    after: list[int] = []
    while len(after) < STEPS:
        if done(state) > len(after):
            after.append(app.sessions.context_info(sid).tokens)
        elif not state.busy:
            break
        await asyncio.sleep(0.002)
    return after


async def one_context(app: App, llm: FakeLLM) -> tuple[list[int], list[RecordedRequest]]:
    sid = await planned(app, llm)
    for k in range(1, STEPS + 1):
        llm.script(step_work(k))
        line = f"- [ ] Step {k}: add feature_{k}.py and check it imports"
        llm.add(
            tool_call("plan_edit", {"old_string": line, "new_string": line.replace("[ ]", "[x]")})
        )
    llm.add(tool_call("plan_done", {}))
    llm.add(text("All six steps are built."))
    await app.plans.approve(p.PlanApproveParams(session_id=sid, start=True))
    after = await per_step(app, sid, lambda state: _ticks(state))
    await wait_idle(app, sid)
    return after, llm.model_requests


async def step_children(app: App, llm: FakeLLM) -> tuple[list[int], list[RecordedRequest]]:
    sid = await planned(app, llm)
    for k in range(1, STEPS + 1):
        llm.script(step_work(k))
        llm.add(text(f"Added feature_{k}.py; `python3 -c 'import feature_{k}'` passes."))
    await app.steps.approve(p.PlanApproveParams(session_id=sid, build="steps"))
    after = await per_step(
        app, sid, lambda state: sum(1 for m in state.messages if "stepResult" in m.meta)
    )
    llm.add(text("All six steps are built."))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="Report."))
    return after, llm.model_requests


def split(
    requests: list[RecordedRequest],
) -> tuple[list[RecordedRequest], list[list[RecordedRequest]]]:
    parent: list[RecordedRequest] = []
    children: dict[str, list[RecordedRequest]] = {}
    for request in requests:
        body = request.input_text()
        if STEP_MARK in body:
            key = body.split(STEP_MARK, 1)[1].split(")", 1)[0]
            children.setdefault(key, []).append(request)
        else:
            parent.append(request)
    return parent, list(children.values())


def totals(requests: list[RecordedRequest]) -> Figures:
    real, _ = measure(requests, set())
    return real


def reuse(groups: list[list[RecordedRequest]]) -> float:
    previous = reused = 0
    for group in groups:
        real, _ = measure(group, set())
        previous += real.previous
        reused += real.reused
    return reused / previous if previous else 1.0


async def parallel(app: App, llm: FakeLLM, delays: tuple[float, ...]) -> float:
    sid = app.sessions.new_session(p.SessionNewParams()).session_id
    calls = [
        tool_call(
            "task",
            {"agent": "explore", "description": f"look {n}", "prompt": f"Look at part {n}."},
        )
        for n in range(len(delays))
    ]
    llm.add(*calls)

    def answer(request: RecordedRequest) -> Any:
        body = request.input_text()
        for n, seconds in enumerate(delays):
            if f"Look at part {n}." in body and not request.tool_outputs():
                return [delay(seconds), text(f"Part {n} seen.")]
        return text("Seen.")  # the parent, once every result is in

    llm.on_request(answer)
    began = time.monotonic()
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="Look at the parts."))
    took = time.monotonic() - began
    llm.on_request(None)
    return took


async def fresh_app(llm: FakeLLM, home: Path) -> App:
    llm.reset()
    home.mkdir()
    return start(llm, home)


async def main(args: argparse.Namespace) -> int:
    prices = (args.input, args.cached, args.output)
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as llm:
        app = await fresh_app(llm, Path(tmp) / "a")
        after_a, requests_a = await one_context(app, llm)
        await app.close()
        app = await fresh_app(llm, Path(tmp) / "b")
        after_b, requests_b = await step_children(app, llm)
        await app.close()
        app = await fresh_app(llm, Path(tmp) / "p1")
        slowest = await parallel(app, llm, DELAYS[-1:])
        await app.close()
        app = await fresh_app(llm, Path(tmp) / "p4")
        four = await parallel(app, llm, DELAYS)
        await app.close()

    figures_a, figures_b = totals(requests_a), totals(requests_b)
    parent_b, children_b = split(requests_b)
    growth_a = [b - a for a, b in itertools.pairwise(after_a)]
    growth_b = [b - a for a, b in itertools.pairwise(after_b)]
    cost_a, cost_b = figures_a.cost(prices), figures_b.cost(prices)
    print(f"{STEPS}-step plan, prices ${args.input}/${args.cached}/${args.output} per M tokens")
    print("parent context after each step (tokens):")
    print(f"  (a) one context   {after_a}  growth/step max {max(growth_a):,}")
    print(f"  (b) step children {after_b}  growth/step max {max(growth_b):,}")
    for name, f, cost in (("(a)", figures_a, cost_a), ("(b)", figures_b, cost_b)):
        print(
            f"  {name} requests {f.requests}, input {f.input:,} tokens ({f.hit:,} cached), "
            f"output {sum(output_tokens(r) for r in (requests_a if name == '(a)' else requests_b)):,}, "
            f"cost ${cost:.4f}"
        )
    parent_reuse = reuse([parent_b])
    child_reuse = reuse(children_b)
    print(
        f"  prefix reuse: (a) {reuse([requests_a]):.1%}; (b) parent {parent_reuse:.1%} "
        f"({len(parent_b)} requests), inside children {child_reuse:.1%} "
        f"({len(children_b)} children)"
    )
    ratio = four / slowest
    print(
        f"parallel: 4 explore children {four:.2f} s, the slowest alone {slowest:.2f} s: "
        f"{ratio:.2f}x"
    )
    checks = {
        f"parent growth <= {TARGET_GROWTH} tokens a step": max(growth_b) <= TARGET_GROWTH,
        "cost (b) <= cost (a)": cost_b <= cost_a * TARGET_COST_RATIO,
        "prefix reuse 100% in the parent": parent_reuse >= TARGET_PARENT_REUSE,
        f"4 parallel within {TARGET_PARALLEL}x the slowest": ratio <= TARGET_PARALLEL,
    }
    for name, ok in checks.items():
        print(f"  {'ok  ' if ok else 'MISS'} {name}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=float, default=1.25)
    parser.add_argument("--cached", type=float, default=0.125)
    parser.add_argument("--output", type=float, default=10.0)
    sys.exit(asyncio.run(main(parser.parse_args())))
