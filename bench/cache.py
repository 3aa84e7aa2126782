"""Prompt-cache reuse, plan copies and cost: Baton against restating the plan and the ideal.

    python bench/cache.py [--steps 60] [--ticks 6] [--input 1.25] [--cached 0.125]
                          [--output 10] [--scenario lines:60:3 --scenario tokens:3000:10]

Baton's real core runs in this process (build_app: session service, plan
service, context builder, compaction) against the fake OpenAI Responses server
of the tests (tests/fake_llm, a real HTTP server on 127.0.0.1), whose scripted
answers stand in for the model. Each scenario (by default a 60-line plan with 3
revisions, and a 3,000-token plan with 10 revisions) has two parts:

(a) plan iteration: the plan is written, then revised; each round the person
    asks for a change (baton/plan/requestChanges) and the model answers with
    one small plan_edit and plan_exit in the same response (one request).
    Each scenario runs twice: with no planning reads (the plan is written from
    the prompt alone), and with the exploration a real planning session makes
    first, as every peer's plan mode does: a grep, then four source files of
    120-300 lines read in one response (`EXPLORED`, ~39 characters a line).
(b) build: the approved plan is built in 60 model steps (reads, commands,
    writes) of which 6 tick a step off, with one compaction halfway.

Each is run by Baton as it is, and by the restate-every-round baseline, in
which the model has no plan file and writes the whole plan again as its answer
whenever it changes (each revision; each tick). The ideal for plan iteration
is an agent that sends the plan once and then each edit's diff, with the same
instructions, tools and the person's words, every request a pure extension of
the one before (its new input is the previous answer and the new feedback).
The ideal for the build is Baton's own request sequence with every request a
pure extension of the one before (except the first after a compaction, which
starts a new prefix after the instructions and tools for any agent). A third
run approves with `fresh: true` (build in a fresh context) and compares its
first build request with the last planning request, and prints that request's
parts (instructions, tool list, each input item) with their tokens.

Every request is serialised as the provider sees it (instructions, tools,
input items; tests/fake_llm/prefix.py) and compared with every earlier request
of the run: the longest common prefix is the part a prompt cache serves.
Tokens are characters / 4 of that serialisation (tool specs included), not a
tokenizer; output is characters / 4 of the scripted answers. Cost is at the
list prices given (dollars per million tokens; cached input at a tenth).
A full copy of the plan is an input item (a message, a tool call's arguments,
a tool's output) holding at least 80% of the plan's lines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from tests.fake_llm.records import RecordedRequest, content_text, item_type  # noqa: E402
from tests.fake_llm.script import Text, ToolCall  # noqa: E402

from baton import protocol as p  # noqa: E402
from baton.agent.events import NullChannel  # noqa: E402
from baton.app import App, build_app  # noqa: E402
from plan_tokens import full_copies as count_copies  # noqa: E402
from plan_tokens import revisions, scenario_plan  # noqa: E402

TARGET_BUILD_REUSE = 0.95
TARGET_PLAN_REUSE = 1.0
TARGET_PLAN_COST = 0.15
TARGET_COPIES = 1
TARGET_IDEAL_RATIO = 1.3
TARGET_FRESH_SHARE = 0.25
PROMPT = "Plan how to make sessions resumable."
# What a planning session reads before it writes the plan, as every peer's plan mode
# explores first: the source files the plan is about (100-300 lines each, ~40
# characters a line, as Python is) and one search. Fixed before measuring, not tuned to
# a target.
EXPLORED = (
    ("server/sessions/store.py", 120),
    ("server/sessions/loader.py", 180),
    ("server/sessions/context.py", 240),
    ("server/sessions/config.py", 300),
)
SEARCH = {"pattern": "def (load|save)_", "include": "*.py"}


def source_file(name: str, lines: int) -> str:
    """Deterministic Python of `lines` lines, ~39 characters a line as Baton's own server
    code has: a docstring, imports, then functions of 8 lines each."""
    stem = name.rsplit("/", 1)[-1].removesuffix(".py")
    out = [
        f'"""Sessions: the {stem} (what survives a restart of the server)."""',
        "",
        "from __future__ import annotations",
        "",
        "from baton.store.model import Session, Store, decode",
        "",
    ]
    verbs = ("load", "save", "find", "check", "merge", "drop")
    i = 0
    while len(out) + 8 <= lines:
        verb = verbs[i % len(verbs)]
        out += [
            f"def {verb}_{i}(store: Store, session_id: str) -> Session | None:",
            f'    """{verb.title()} part {i} of the {stem}, or None if it is missing."""',
            f"    row = store.get(session_id, part={i})",
            "    if row is None or row.deleted:",
            "        return None",
            "    items = [decode(m) for m in row.messages]",
            "    return Session(row.id, items, mode=row.mode)",
            "",
        ]
        i += 1
    out += ["# end of " + stem] * (lines - len(out))
    return "\n".join(out) + "\n"


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
    for name, lines in EXPLORED:
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source_file(name, lines))
    return build_app(
        ws,
        NullChannel(),
        environ={"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": llm.base_url},
        client_settings={
            "permissions": {"write": "allow", "bash": "allow"},
            "compaction": {"strategy": "native", "auto": False},
        },
        # The editor's tools, as VS Code offers them: the tool list is the 16 built-in
        # tools of an editor session (the scripted model never calls these two).
        questions=NoOneToAsk(),
        editor_diagnostics=NoEditorProblems(),
    )


class NoOneToAsk:
    async def ask(self, request: p.QuestionRequestParams) -> p.QuestionResponse | None:
        return None


class NoEditorProblems:
    async def diagnostics(self, uris: list[str] | None) -> list[p.EditorFileDiagnostics] | None:
        return None  # not answered: a write or edit waits for nothing


async def wait_idle(app: App, sid: str) -> None:
    state = app.sessions.state(sid)
    while state.busy:
        await asyncio.sleep(0.01)


def exploration() -> list[list[Any]]:
    """The model's answers that explore before it plans: a search, then the files read
    in one response (parallel calls, as peers make them)."""
    return [
        [tool_call("grep", SEARCH)],
        [tool_call("read", {"path": name}) for name, _ in EXPLORED],
    ]


async def plan_iteration(
    app: App, llm: FakeLLM, plan: str, edits: list[Any], restate: bool, reads: bool
) -> tuple[str, int]:
    """Scenario (a); returns the session id and the index of its first request."""
    first = len(llm.model_requests)
    sid = app.sessions.new_session(p.SessionNewParams(mode="plan", title="Resumable")).session_id
    for answer in exploration() if reads else []:
        llm.add(*answer)
    if restate:
        llm.add(text(f"Here is my plan:\n\n{plan}"))
    else:
        llm.add(tool_call("plan_write", {"content": plan}), tool_call("plan_exit", {}))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text=PROMPT))
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
    app: App,
    llm: FakeLLM,
    sid: str,
    plan: str,
    args: argparse.Namespace,
    restate: bool,
    fresh: bool = False,
) -> tuple[int, set[int]]:
    """Scenario (b), after (a) in the same session; returns its first request's index and the
    indexes of requests that start a new prefix (after the compaction)."""
    answers = build_steps(args.steps, args.ticks, plan, restate)
    half = len(answers) // 2
    first = len(llm.model_requests)
    for answer in answers[:half]:
        llm.add(*answer)
    llm.add(text("Half way."))
    if restate:
        app.sessions.set_mode(p.SetModeParams(session_id=sid, mode="build"))
        await app.sessions.prompt(p.PromptParams(session_id=sid, text="Build it."))
    else:
        await app.plans.approve(p.PlanApproveParams(session_id=sid, start=True, fresh=fresh))
        await wait_idle(app, sid)
    llm.on_request(lambda req: text("## Summary\nBuilding the plan.") if req.is_summary else None)
    await app.compaction.compact(sid)
    llm.on_request(lambda req: None)
    after = len(llm.model_requests)
    for answer in answers[half:]:
        llm.add(*answer)
    llm.add(text("Done."))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="Go on."))
    return first, {after}


@dataclass
class Scenario:
    name: str
    plan: str
    steps: int
    edits: list[Any]

    @classmethod
    def parse(cls, spec: str) -> Scenario:
        """`lines:60:3` (a 60-line plan, 3 revisions) or `tokens:3000:10`."""
        name, plan, steps, rounds = scenario_plan(spec)
        return cls(name, plan, steps, list(revisions(plan, steps, rounds)))


@dataclass
class Run:
    plan: list[RecordedRequest]
    build: list[RecordedRequest]
    new_prefix: set[int]


async def run(
    scenario: Scenario,
    args: argparse.Namespace,
    restate: bool,
    fresh: bool = False,
    reads: bool = False,
) -> Run:
    with FakeLLM() as llm, tempfile.TemporaryDirectory(prefix="baton-cache-") as tmp:
        app = start(llm, Path(tmp))
        try:
            sid, first = await plan_iteration(
                app, llm, scenario.plan, scenario.edits, restate, reads
            )
            final = scenario.edits[-1][3] if scenario.edits else scenario.plan
            build_first, new_prefix = await build(app, llm, sid, final, args, restate, fresh)
            requests = llm.model_requests
            return Run(
                requests[first:build_first],
                requests[build_first:],
                {i - build_first for i in new_prefix},
            )
        finally:
            await app.close()


def _item_texts(request: RecordedRequest) -> list[str]:
    """The texts of a request's input items: messages, tool calls' arguments, outputs."""
    out = []
    for item in request.items:
        kind = item_type(item)
        if kind == "function_call":
            try:
                args = json.loads(item.get("arguments") or "{}")
            except ValueError:
                args = {}
            out.append("\n".join(str(v) for v in args.values()) if isinstance(args, dict) else "")
        elif kind == "function_call_output":
            out.append(content_text(item.get("output")))
        elif kind == "message":
            out.append(content_text(item.get("content")))
    return out


def full_copies(request: RecordedRequest, plan: str) -> int:
    """Items of the request that hold the plan whole (plan_tokens.full_copies)."""
    return count_copies(_item_texts(request), plan)


def ideal_plan(scenario: Scenario, requests: list[RecordedRequest], explored: int) -> Figures:
    """Plan once, then each edit's diff: the same instructions, tools and feedback, each
    request the one before plus the answer and the new feedback (served from the cache).
    The first `explored` requests explore the code before the plan is written: the ideal
    makes the same calls and gets the same outputs (what they add to Baton's requests)."""
    first = requests[0]
    fixed = (len(first.segments.instructions) + len(first.segments.tools)) // 4
    f = Figures()
    size = fixed + len(PROMPT) // 4
    f.requests, f.input = 1, size
    for n in range(1, explored + 1):
        grown = (requests[n].segments.chars - requests[n - 1].segments.chars) // 4
        f.hit += size
        f.previous += size
        f.reused += size
        f.output += output_tokens(requests[n - 1])
        size += grown
        f.requests += 1
        f.input += size
    answer = len(scenario.plan) // 4
    f.output += answer
    for feedback, old, new, _ in scenario.edits:
        f.hit += size
        f.previous += size
        f.reused += size
        size += answer + len(feedback) // 4
        answer = (len(old) + len(new)) // 4
        f.requests += 1
        f.input += size
        f.output += answer
    return f


def reuse_between(before: RecordedRequest, after: RecordedRequest) -> float:
    """The part of `before` that `after` repeats as its prefix (what the cache serves)."""
    return shared(before.segments, after.segments).chars / before.segments.chars


def row(name: str, f: Figures, prices: tuple[float, float, float], copies: int | str) -> str:
    hit = f.hit / f.input if f.input else 0.0
    return (
        f"  {name:<20} {f.requests:>4} {f.input:>10,} {f.hit:>10,} ({hit:>4.0%})"
        f" {f.output:>7,}  ${f.cost(prices):>7.4f}  {f.reuse:>6.1%}  {copies!s:>6}"
    )


def report(
    title: str, rows: list[tuple[str, Figures, int | str]], prices: tuple[float, float, float]
) -> None:
    print(title)
    print(
        f"  {'':<20} {'reqs':>4} {'input':>10} {'cache hit':>10}       {'output':>7}"
        f"  {'cost':>8}  {'reuse':>6}  {'copies':>6}"
    )
    for name, figures, copies in rows:
        print(row(name, figures, prices, copies))


def part_of(item: dict[str, Any]) -> str:
    """What an input item of a fresh build's first request is, by its opening words."""
    kind = item_type(item)
    if kind != "message":
        return kind
    body = content_text(item.get("content"))
    for opening, name in (
        ("<baton:requests>", "<baton:requests> (the person's messages)"),
        ("<baton:ledger>", "<baton:ledger>"),
        ("<baton:plan>", "<baton:plan> (the plan block)"),
        ("[mode: ", "[mode: ...] note"),
        ("<baton:summary>", "<baton:summary>"),
    ):
        if body.startswith(opening):
            return name
    return f"{item.get('role')} message: {body[:40]!r}…"


def parts(request: RecordedRequest) -> list[tuple[str, int]]:
    """(part, tokens) of a request as the provider sees it: instructions, tool list, items."""
    seg = request.segments
    out = [("instructions", len(seg.instructions) // 4), ("tool list", len(seg.tools) // 4)]
    for item in request.items:
        out.append((part_of(item), (len(json.dumps(item, ensure_ascii=False)) + 1) // 4))
    return out


def explored_tokens(run: Run, explored: int) -> int:
    """What the exploration added to the request the plan is written in."""
    if not explored:
        return 0
    return (run.plan[explored].segments.chars - run.plan[0].segments.chars) // 4


async def scenario_figures(
    scenario: Scenario,
    args: argparse.Namespace,
    prices: tuple[float, float, float],
    reads: bool,
) -> list[tuple[str, float, str, bool]]:
    explored = len(exploration()) if reads else 0
    baton = await run(scenario, args, restate=False, reads=reads)
    baseline = await run(scenario, args, restate=True, reads=reads)
    fresh = await run(scenario, args, restate=False, fresh=True, reads=reads)
    plan_b, _ = measure(baton.plan, set())
    plan_r, _ = measure(baseline.plan, set())
    plan_i = ideal_plan(scenario, baton.plan, explored)
    build_b, build_i = measure(baton.build, baton.new_prefix)
    build_r, _ = measure(baseline.build, baseline.new_prefix)
    final = scenario.edits[-1][3] if scenario.edits else scenario.plan
    copies_b = max(full_copies(r, final) for r in baton.plan + baton.build)
    copies_r = max(full_copies(r, final) for r in baseline.plan + baseline.build)
    largest = max(baton.plan + baton.build, key=lambda r: r.segments.chars)
    if reads:
        files = ", ".join(f"{name} ({lines} lines)" for name, lines in EXPLORED)
        how = (
            f"planning reads: a grep {json.dumps(SEARCH)}, then {files}: "
            f"{explored_tokens(baton, explored):,} tokens in the plan's request"
        )
    else:
        how = "no planning reads (the plan is written from the prompt alone)"
    print(f"== {scenario.name}; {how}")
    report(
        "(a) plan iteration",
        [
            ("Baton", plan_b, max(full_copies(r, final) for r in baton.plan)),
            ("restate baseline", plan_r, max(full_copies(r, final) for r in baseline.plan)),
            ("ideal: plan + diffs", plan_i, 1),
        ],
        prices,
    )
    report(
        f"(b) build: {args.steps} steps, {args.ticks} ticks, one compaction",
        [
            ("Baton", build_b, max(full_copies(r, final) for r in baton.build)),
            ("restate baseline", build_r, max(full_copies(r, final) for r in baseline.build)),
            ("ideal append-only", build_i, "-"),
        ],
        prices,
    )
    across = reuse_between(baton.plan[-1], baton.build[0])
    first_build, last_plan = fresh.build[0], fresh.plan[-1]
    fresh_share = first_build.segments.chars / last_plan.segments.chars
    print(
        f"  full copies in Baton's largest request ({largest.segments.chars // 4:,} tokens): "
        f"{full_copies(largest, final)}; restate baseline at most {copies_r}"
    )
    print(
        f"  fresh-context build: first request {first_build.segments.chars // 4:,} tokens "
        f"= {fresh_share:.1%} of the last planning request "
        f"{last_plan.segments.chars // 4:,} (the plan is {len(final) // 4:,}); its parts:"
    )
    for name, tokens in parts(first_build):
        print(f"    {tokens:>6,}  {name}")
    print()
    ratio = plan_b.cost(prices) / plan_i.cost(prices)
    return [
        ("full plan copies in any request", copies_b, f"≤ {TARGET_COPIES}", copies_b <= 1),
        ("plan cost / ideal (plan + diffs)", ratio, f"≤ {TARGET_IDEAL_RATIO}×", ratio <= 1.3),
        ("plan cost / restate baseline", plan_b.cost(prices) / plan_r.cost(prices), "", True),
        ("build cost / restate baseline", build_b.cost(prices) / build_r.cost(prices), "", True),
        ("prefix reuse, plan iteration", plan_b.reuse, "100%", plan_b.reuse >= 1.0),
        ("prefix reuse across approval", across, "100%", across >= 1.0),
        ("build reuse / append-only", build_b.reuse / build_i.reuse, "", True),
        (
            "fresh build's first / last planning",
            fresh_share,
            f"≤ {TARGET_FRESH_SHARE:.0%}",
            fresh_share <= TARGET_FRESH_SHARE,
        ),
    ]


def _shown(name: str, value: float) -> str:
    if name.startswith("full"):
        return f"{value:.0f}"
    if "/ ideal" in name:
        return f"{value:.2f}×"
    return f"{value:.1%}"


async def main(args: argparse.Namespace) -> int:
    prices = (args.input, args.cached, args.output)
    scenarios = [Scenario.parse(spec) for spec in args.scenario or ["lines:60:3", "tokens:3000:10"]]
    print(
        "tokens = characters / 4 of each request as the provider sees it (instructions, tools,"
        " items);"
    )
    print(
        f"prices per million: input ${args.input}, cached input ${args.cached},"
        f" output ${args.output}; reuse = the part of each request's predecessor it repeats;"
    )
    print("copies = most full copies of the plan in one request")
    print()
    results = [
        (f"{s.name}, {'planning reads' if reads else 'no planning reads'}", checks)
        for s in scenarios
        for reads in (False, True)
        for checks in [await scenario_figures(s, args, prices, reads)]
    ]
    for name, checks in results:
        print(f"targets, {name}:")
        for label, value, target, ok in checks:
            verdict = f"(target {target}: {'met' if ok else 'missed'})" if target else ""
            print(f"  {label:<38} {_shown(label, value):>8}  {verdict}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scenario",
        action="append",
        help="lines:N:R (an N-line plan, R revisions) or tokens:N:R; default both of the issue's",
    )
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--ticks", type=int, default=6)
    parser.add_argument("--input", type=float, default=1.25, help="$ per million input tokens")
    parser.add_argument("--cached", type=float, default=0.125, help="$ per million cached")
    parser.add_argument("--output", type=float, default=10.0, help="$ per million output tokens")
    raise SystemExit(asyncio.run(main(parser.parse_args())))
