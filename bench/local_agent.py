"""How well a local model works as Baton's agent: small tasks on a real project, by hand.

    python bench/local_agent.py [--model NAME=PATH ...] [--tasks a,b] [--budget 300]
                                [--project DIR] [--out results.json]

The project is more-itertools 10.5.0's source (a real pure-Python package
nobody here wrote, with its tests), fetched once with `pip download` into the
user cache, or any directory given with `--project`. Each task runs as one
`baton/session/prompt` turn through Baton's own core (`build_app`, the same
path as `baton run`) on a fresh copy of the project, always at the same path
so that the instructions, which name the workspace, stay one cached prefix.
The tasks are the ones a person tries first: locate a definition, explain a
function after reading it, make a one-line fix and run its test, write a
3-step plan with `plan_write`, tick a plan step off with `plan_edit`.

For every model (default: the installed default model) it prints, per task,
success, tool calls, model steps and wall time, then a summary: success
rate, median tool calls and the median and longest turn. The engine stays
loaded across a model's tasks, and its prompt cache is kept (in memory and on
disk), as in real use. The shell and writes are allowed (inside the
temporary copy): the fix tasks need them. It is slow on a CPU (minutes per
model and task on a busy 2-core machine), hence by hand and not in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from platformdirs import user_cache_path

from baton import protocol as p
from baton.errors import BatonError

PROJECT = "more-itertools==10.5.0"
PROJECT_DIR = "more-itertools-10.5.0"
BUDGET = 300.0  # seconds per task
MAX_STEPS = 8

TAKE_BUG = ("    return list(islice(iterable, n))\n", "    return list(islice(iterable, n + 1))\n")
ILEN_BUG = (
    "    return sum(compress(repeat(1), zip(iterable)))\n",
    "    return sum(compress(repeat(1), zip(iterable))) + 1\n",
)
TICK_PLAN = """# Add a positive-n check to chunked

- [ ] Read `chunked` in more_itertools/more.py
- [ ] Raise ValueError in `chunked` when n < 1
- [ ] Add a test to tests/test_more.py and run it
"""


@dataclass
class Outcome:
    """What a task's turn produced."""

    answer: str
    tools: list[str]
    project: Path
    plan: str | None
    stop_reason: str


@dataclass
class Task:
    name: str
    kind: str
    prompt: str
    check: Callable[[Outcome], bool]
    mode: p.Mode = "build"
    setup: Callable[[Path], None] | None = None
    plan: str | None = None  # an approved plan the session starts with


@dataclass
class Result:
    model: str
    task: str
    kind: str
    ok: bool
    tool_calls: int
    tools: list[str]
    steps: int
    seconds: float
    stop_reason: str
    nudges: int = 0  # look-first nudges (agent.nudgeNoTool)
    answer: str = field(repr=False, default="")


def _says(*words: str | tuple[str, ...], looked: bool = False) -> Callable[[Outcome], bool]:
    """The answer has each of `words` (a tuple: any of its alternatives) as a word or path,
    case-insensitive; with `looked`, only after a read or a search."""

    def check(o: Outcome) -> bool:
        if looked and not {"read", "grep", "glob"} & set(o.tools):
            return False
        for word in words:
            options = word if isinstance(word, tuple) else (word,)
            if not any(re.search(rf"(?<![\w/]){re.escape(w)}", o.answer, re.I) for w in options):
                return False
        return True

    return check


def _inject(bug: tuple[str, str], file: str) -> Callable[[Path], None]:
    def setup(project: Path) -> None:
        path = project / file
        text = path.read_text(encoding="utf-8")
        assert bug[0] in text, f"{file} changed upstream"
        path.write_text(text.replace(bug[0], bug[1], 1), encoding="utf-8")

    return setup


def _fixed(test_file: str, selector: str) -> Callable[[Outcome], bool]:
    def check(o: Outcome) -> bool:
        if "bash" not in o.tools:  # asked to run the test
            return False
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                test_file,
                "-k",
                selector,
            ],
            cwd=o.project,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return done.returncode == 0

    return check


def _planned(steps: int) -> Callable[[Outcome], bool]:
    def check(o: Outcome) -> bool:
        lines = (o.plan or "").splitlines()
        return sum(1 for line in lines if line.strip().startswith("- [ ]")) >= steps

    return check


def _ticked_first(o: Outcome) -> bool:
    lines = [line.strip() for line in (o.plan or "").splitlines() if line.strip().startswith("- [")]
    return len(lines) == 3 and lines[0].startswith("- [x]") and lines[1].startswith("- [ ]")


def _locate(name: str, file: str) -> Task:
    return Task(
        f"locate-{name}",
        "locate",
        f"Where is `{name}` defined in this project? Answer with the file path.",
        _says(file),
    )


TASKS: list[Task] = [
    _locate("chunked", "more_itertools/more.py"),
    _locate("take", "more_itertools/recipes.py"),
    _locate("windowed", "more_itertools/more.py"),
    _locate("first_true", "more_itertools/recipes.py"),
    _locate("SequenceView", "more_itertools/more.py"),
    Task(
        "explain-chunked-strict",
        "explain",
        "Read the code of `chunked` before answering: what does it do when strict=True and "
        "the length of the iterable is not divisible by n?",
        _says("ValueError", looked=True),
    ),
    Task(
        "explain-ilen",
        "explain",
        "Read the code of `ilen` before answering: what does it return, and what happens to "
        "the iterable?",
        _says(("consumes", "consumed", "exhaust"), ("number", "count", "length"), looked=True),
    ),
    Task(
        "explain-take-short",
        "explain",
        "Read `take` in more_itertools/recipes.py before answering: what does it return when "
        "the iterable has fewer than n items?",
        _says(("all of them", "all the items", "all items", "all elements", "fewer"), looked=True),
    ),
    Task(
        "fix-take",
        "fix",
        "take() in more_itertools/recipes.py returns one item too many, so "
        "tests/test_recipes.py's TakeTests fail. Fix that one line, then run "
        "`python -m pytest -q tests/test_recipes.py -k TakeTests`.",
        _fixed("tests/test_recipes.py", "TakeTests"),
        setup=_inject(TAKE_BUG, "more_itertools/recipes.py"),
    ),
    Task(
        "fix-ilen",
        "fix",
        "ilen() in more_itertools/more.py counts one item too many, so tests/test_more.py's "
        "IlenTests fail. Fix that one line, then run "
        "`python -m pytest -q tests/test_more.py -k IlenTests`.",
        _fixed("tests/test_more.py", "IlenTests"),
        setup=_inject(ILEN_BUG, "more_itertools/more.py"),
    ),
    Task(
        "plan-windowed-strict",
        "plan",
        "Plan how to add a strict=True option to `windowed` in more_itertools/more.py: call "
        "plan_write with a markdown checklist of 3 steps (`- [ ] ...`): the code change, the "
        "test to add, the command to run.",
        _planned(3),
        mode="plan",
    ),
    Task(
        "plan-chunked-check",
        "plan",
        "Plan how to make `chunked` raise ValueError when n is less than 1: call plan_write "
        "with a markdown checklist of 3 steps (`- [ ] ...`).",
        _planned(3),
        mode="plan",
    ),
    Task(
        "tick-step",
        "tick",
        "You have done the plan's first step (reading `chunked`). Tick it off: call plan_edit "
        "to change its `- [ ]` to `- [x]`. Change nothing else.",
        _ticked_first,
        plan=TICK_PLAN,
    ),
]


class Channel:
    """Collects the answer, the tool calls and the model steps of one turn."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.tools: list[str] = []
        self.steps = 0
        self.nudges = 0

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        if parent_id is not None:
            # A `task` child's own progress: shown through its parent's `child` updates.
            return
        match update:
            case p.AgentMessageChunk(text=text):
                self.text.append(text)
            case p.ToolCallStarted(name=name):
                self.tools.append(name)
            case p.UsageUpdate():
                self.steps += 1
            case p.NoteUpdate(reason="no_tool"):
                self.nudges += 1

    def notify(self, method: str, params: p.WireModel) -> None:
        pass

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        return None

    def progress(self, title: str) -> Any:
        from baton.agent.events import no_progress

        return no_progress()


def fetch_project() -> Path:
    """more-itertools' source, downloaded once with pip into the user cache."""
    cache = user_cache_path("baton", appauthor=False) / "bench" / "projects"
    root = cache / PROJECT_DIR
    if (root / "more_itertools" / "more.py").is_file():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--quiet",
                "--dest",
                tmp,
                PROJECT,
            ],
            check=True,
        )
        [archive] = Path(tmp).glob("*.tar.gz")
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        shutil.move(str(Path(tmp) / PROJECT_DIR), root)
    return root


def settings_for(model: Path, agent: dict[str, Any] | None = None) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "provider": "local",
        "local": {"modelPath": str(model)},
        "maxSteps": MAX_STEPS,
        "permissions": {"write": "allow", "bash": "allow"},
    }
    if agent:
        settings["agent"] = agent
    return settings


async def run_task(
    task: Task,
    model_name: str,
    model: Path,
    source: Path,
    root: Path,
    budget: float,
    agent: dict[str, Any] | None = None,
) -> Result:
    from baton.app import build_app

    project = root / "project"  # the same path every time: one cached prefix
    shutil.rmtree(project, ignore_errors=True)
    shutil.rmtree(root / "data", ignore_errors=True)
    shutil.copytree(source, project)
    if task.setup is not None:
        task.setup(project)
    channel = Channel()
    app = build_app(project, channel, client_settings=settings_for(model, agent))
    started = time.monotonic()
    reason = "error"
    try:
        sid = app.sessions.new_session(p.SessionNewParams(mode=task.mode)).session_id
        if task.plan is not None:
            app.plans.update(p.PlanUpdateParams(session_id=sid, content=task.plan, base_version=0))
            await app.plans.approve(p.PlanApproveParams(session_id=sid))
        state = app.sessions.state(sid)
        turn = app.sessions.start_turn(state, task.prompt)
        try:
            result = await asyncio.wait_for(asyncio.shield(turn), budget)
            reason = str(result.stop_reason)
        except TimeoutError:
            app.sessions.cancel(sid)
            await asyncio.gather(turn, return_exceptions=True)
            reason = "timeout"
        except BatonError as exc:
            reason = f"error: {exc.message}"
        plan = app.plans.get(sid)
        outcome = Outcome(
            answer="".join(channel.text),
            tools=channel.tools,
            project=project,
            plan=plan.content if plan else None,
            stop_reason=reason,
        )
        ok = task.check(outcome)
    finally:
        await app.close()
    return Result(
        model=model_name,
        task=task.name,
        kind=task.kind,
        ok=ok,
        tool_calls=len(channel.tools),
        tools=channel.tools,
        steps=channel.steps,
        seconds=round(time.monotonic() - started, 1),
        stop_reason=reason,
        nudges=channel.nudges,
        answer=outcome.answer[-300:],
    )


async def run_model(
    name: str,
    model: Path,
    tasks: list[Task],
    source: Path,
    budget: float,
    agent: dict[str, Any] | None = None,
) -> list[Result]:
    from baton.config import LocalSettings
    from baton.local.engine import EngineConfig, default_manager

    # Held for the whole run: the engine (and its prompt cache) outlives each task's app.
    manager = default_manager()
    engine = manager.acquire(EngineConfig.from_settings(LocalSettings(model_path=str(model))))
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as tmp:
        os.environ["XDG_DATA_HOME"] = str(Path(tmp) / "data")
        try:
            for task in tasks:
                result = await run_task(task, name, model, source, Path(tmp), budget, agent)
                results.append(result)
                mark = "ok  " if result.ok else "FAIL"
                print(
                    f"  {mark} {result.task:<24} {result.seconds:>6.1f} s  "
                    f"{result.steps} steps  tools: {','.join(result.tools) or '-'}"
                    f"{'  nudged' if result.nudges else ''}"
                    f"  [{result.stop_reason}]",
                    flush=True,
                )
        finally:
            await asyncio.to_thread(manager.release, engine)
    return results


def summary(results: list[Result]) -> str:
    rows = ["| model | success | tool calls (median) | turn (median) | turn (longest) |"]
    rows.append("| --- | --- | --- | --- | --- |")
    for model in dict.fromkeys(r.model for r in results):
        mine = [r for r in results if r.model == model]
        ok = sum(r.ok for r in mine)
        rows.append(
            f"| {model} | {ok}/{len(mine)} | {statistics.median(r.tool_calls for r in mine):g} "
            f"| {statistics.median(r.seconds for r in mine):.0f} s "
            f"| {max(r.seconds for r in mine):.0f} s |"
        )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a GGUF model to run (repeatable); default: the installed default model",
    )
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--budget", type=float, default=BUDGET, help="seconds per task")
    parser.add_argument("--project", type=Path, help="the project (default: more-itertools)")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    parser.add_argument(
        "--compact-prompt",
        choices=["auto", "always", "never"],
        help="agent.compactPrompt for every task (default: Baton's default, auto)",
    )
    parser.add_argument(
        "--no-nudge", action="store_true", help="agent.nudgeNoTool = false for every task"
    )
    args = parser.parse_args()
    agent: dict[str, Any] = {}
    if args.compact_prompt:
        agent["compactPrompt"] = args.compact_prompt
    if args.no_nudge:
        agent["nudgeNoTool"] = False

    from baton.local.model_files import DEFAULT_MODEL, model_path

    models = [tuple(m.split("=", 1)) for m in args.model] or [
        (DEFAULT_MODEL.key, str(model_path(DEFAULT_MODEL)))
    ]
    tasks = TASKS
    if args.tasks:
        wanted = args.tasks.split(",")
        tasks = [t for t in TASKS if t.name in wanted]
        unknown = set(wanted) - {t.name for t in tasks}
        if unknown:
            parser.error(f"unknown tasks: {sorted(unknown)}; known: {[t.name for t in TASKS]}")
    source = args.project or fetch_project()
    print(
        f"project: {source}; {len(tasks)} tasks; agent settings {agent or 'default'};"
        f" load average {os.getloadavg()[0]:.1f}"
    )
    results: list[Result] = []
    for name, path in models:
        print(f"== {name} ({path})", flush=True)
        results += asyncio.run(run_model(name, Path(path), tasks, source, args.budget, agent))
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(summary(results))
    if args.out:
        args.out.write_text(
            json.dumps([{**asdict(r)} for r in results], indent=2, default=str), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
