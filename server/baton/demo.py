"""`baton demo`: a short headless session that shows what Baton is for.

In a temporary copy of a small project (`baton/demo_project`: `stats.py` with
three TODOs) it runs, through the same core the editor uses:

1. plan: in plan mode the agent reads the code and writes a plan of several
   steps to a file (`plan_write`);
2. approval: the person edits the plan (`baton/plan/update`; the model is told
   the change as a diff) and approves it (`baton/plan/approve`): build mode;
3. compaction: the person asks for one (`baton/session/compact`): the planning
   conversation leaves the model's view, tokens before -> after, the ledger;
4. plan back: the next request carries the plan, re-read from its file;
5. edit: the agent builds the first step (`read`, then `edit`); the demo checks
   the edit as a person reviewing it would (reads mean(), runs it on a few
   lists) and, when it falls short, shows the model what it found: one more try;
6. tick: and ticks it off in the plan (`plan_edit`).

Where a person would act, the demo sends the JSON-RPC request an editor sends,
to the server's own method handlers (params validated, the result serialised as
on the wire), and prints both. Each of the agent's model steps is told the one
tool it needs (`tool_choice` naming it; for llama.cpp a JSON schema of that
tool's calls only): what makes a 1.5B model on a CPU do the step. The build's calls
are narrowed further (`RequiredCall`): the path is stats.py, and the edit's
old_string one of mean()'s lines as they are, so the model chooses where to edit
among text that is there. What each step does is still the model's (the plan, the
line to replace, the code of the edit). A phase that does
not succeed is said plainly, the demo stands in where the rest needs it (a plan
written as a person would), and it exits 1.

No API key: the embedded local model (`baton model install`). With
`OPENAI_API_KEY` set: OpenAI. The session's store lives in the temporary
directory (XDG_DATA_HOME points there), so the demo leaves nothing in the
person's own Baton data except the model it uses. The directory is kept so
that the plan file and the session can be looked at; `--clean` removes it.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import inspect
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from baton import protocol as p
from baton.errors import BatonError
from baton.providers.base import RequiredCall
from baton.session.events import ProgressReporter, ProgressScope
from baton.terminal_status import StatusLine, describe_progress

# Seconds. The whole demo, model download excluded, should fit in a few minutes on
# two CPU cores; each turn gets at most its share and what is left of the total.
TOTAL_BUDGET = 1200.0
TURN_BUDGET = 420.0
COMPACT_BUDGET = 300.0

# The phases, in order, as the closing line names them (bench/demo_runs.py reads it).
PHASES = ("plan", "approval", "compaction", "plan back", "edit", "tick")

PLAN_PROMPT = (
    "stats.py has three TODO comments. Read stats.py, then find its TODO comments with "
    "grep (pattern `TODO`), then write the plan with plan_write: a title line starting "
    "with `# `, then for each line grep found, in the same order, a step `- [ ] <the "
    "function's name>(): TODO <the rest of that line after `TODO:`>`. Only those three "
    "steps."
)
# The grep puts the three TODO lines right before the plan: a 1.5B model given the
# whole file alone made a step of every function. Asked for "what its TODO says" or "the
# words after `TODO:`", it wrote the docstrings (3 of 3 runs on 2026-12-02); asked to
# start each step with `TODO` and the rest of the line, it wrote the TODOs.
PLAN_TOOLS = (RequiredCall("read"), RequiredCall("grep"), RequiredCall("plan_write"))
# The person's edit before approving: a line the model did not write, which it is
# then told as a diff and which comes back in the plan block after the compaction.
PERSON_NOTE = "Keep every docstring as it is."
BUILD_PROMPT = (
    "Build the plan's first step now: the TODO in mean(). Read mean() in stats.py (read "
    "with offset {offset} and limit {limit}), then call edit to do what its TODO says: "
    "old_string is the line of mean()'s code that your code replaces (its TODO comment "
    "or its return line), new_string your code, each line indented as in the file. "
    "mean() must still return the mean of a non-empty list."
)
# A few lines to read (mean() alone) rather than the file: less for the model to read
# before the edit. The edit's old_string is one of those lines (a RequiredCall: for
# llama.cpp an enum in the call's schema), so the model chooses where, among text that is
# there, and writes the code itself. Copying a line exactly was what the 1.5B model got
# wrong most; told to copy two lines it replaced the return line with `return 0.0`.
# The tick is a turn of its own: with the plan line in the same prompt, the 1.5B model
# copied it into the edit's old_string.
TICK_PROMPT = 'Now tick the step off with plan_edit: old_string "{step}", new_string "{done}".'
TICK_TOOLS = (RequiredCall("plan_edit"),)
# After the edit the demo checks it, as a person reviewing it would (the checks of
# edit_departures), and when it falls short shows the model what it found: one more try,
# mean() as it is now in front of the model.
FIX_PROMPT = (
    "I checked stats.py after your edit: {found}. Fix mean() so that it returns 0.0 for "
    "an empty list and still returns the mean of a non-empty list: read mean() again "
    "(read with offset {offset} and limit {limit}), then call edit: old_string is the one "
    "line of mean() to replace, new_string the code that replaces it, indented as in the "
    "file."
)
# The path the build's calls are held to, where the schema is enforced: after the
# compaction the 1.5B model read and edited the plan file, the path it had last seen.
STATS_PATH: dict[str, Any] = {"enum": ["stats.py"]}
# Words that tell the plan line for mean()'s TODO apart (its name, or what the TODO says).
MEAN_WORDS = ("mean", "empty", "zerodivision", "0.0")
# Per function, words of what its TODO asks (not of its docstring): a plan whose steps
# restate the docstrings ("mean(): The arithmetic mean of `values`.", bench run of
# 2026-12-02) says nothing of the work and is no plan to build from.
TODO_WORDS: dict[str, tuple[str, ...]] = {
    "mean": ("empty", "0.0", "zerodivision"),
    "median": ("implement", "sort"),
    "mode": ("tie", "smallest"),
}
OTHER_WORDS = ("median", "middle", "notimplemented", "sort", "mode", "tie", "common")
# Past-tense claims of a change, and words that make a sentence not such a claim.
CHANGE_CLAIMS = ("modified", "edited", "changed", "updated", "fixed", "implemented", "rewrote")
NOT_A_CLAIM = ("not ", "no ", "n't", "none", "will ", "to be", "next", "pending", "todo", "plan")
# What `baton/session/compact` accepts as `instructions`: here, a summary short enough
# for a small model on a CPU to write in one go.
COMPACT_INSTRUCTIONS = "Keep it short: at most three brief bullet points per section."
FALLBACK_PLAN = """# Fix the TODOs in stats.py

- [ ] `mean()`: return 0.0 for an empty list instead of raising ZeroDivisionError
- [ ] `median()`: implement it (sort a copy, take the middle value or the mean of the two middle ones)
- [ ] `mode()`: on a tie, return the smallest of the most common values
"""
LOCAL_SETTINGS: dict[str, Any] = {
    # Bounds every response: a small model that starts repeating itself costs minutes.
    # Enough for the short summary COMPACT_INSTRUCTIONS asks for.
    "maxTokens": 480,
    # Each step is told its tool; what remains is to copy exact text: no creativity.
    "temperature": 0.0,
}


def _sample_project() -> dict[str, str]:
    root = resources.files("baton").joinpath("demo_project")
    return {
        entry.name: entry.read_text(encoding="utf-8")
        for entry in root.iterdir()
        if entry.is_file() and entry.name.endswith((".py", ".md"))
    }


class DemoChannel:
    """Prints what the agent does, briefly: tool calls and results, mode and plan changes.

    While the model works and nothing is printed (loading, reading the prompt, writing
    an answer or a summary) it shows the same status as `baton run`
    (`terminal_status`: a spinner at a terminal, an occasional plain line otherwise)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.status = StatusLine(out, live=_isatty(out))
        self.text: list[str] = []
        self.tool_calls: list[dict[str, Any]] = []
        # Model steps: when the current one began, and the longest one so far (seconds).
        self.step_began: float | None = None
        self.longest_step = 0.0

    def _say(self, line: str) -> None:
        self.status.clear()  # the spinner redraws itself on its next tick
        self.out.write(line + "\n")
        self.out.flush()

    def waiting(self, what: str = "waiting for the model") -> None:
        """The model has been asked: say so until it reports more."""
        self.status.show("waiting", what)

    def send_update(self, session_id: str, update: p.Update) -> None:
        data = update.wire()
        kind = data.get("kind")
        if kind == "agent_message_chunk":
            self.text.append(data["text"])
        elif isinstance(update, p.ModelProgress):
            self.status.show(*describe_progress(update))
        elif kind == "tool_call":
            self.tool_calls.append(data)
            args = json.dumps(data.get("input", {}), ensure_ascii=False)
            self._say(f"    → {data['name']} {_clip(args, 160)}")
            self.status.show("tool", f"running {data['name']}")
        elif kind == "tool_call_update" and data.get("status") in ("completed", "failed"):
            mark = "✓" if data["status"] == "completed" else "✗"
            first = (str(data.get("output") or "").strip().splitlines() or [""])[0]
            self._say(f"      {mark} {_clip(first, 140)}")
            self.waiting()
        elif kind == "turn_ended":
            self.status.hide()
        elif kind == "usage" and self.step_began is not None:
            # A step ends with its usage report; the next one begins after its tools ran.
            now = time.monotonic()
            self.longest_step = max(self.longest_step, now - self.step_began)
            self.step_began = now
        elif kind == "mode":
            self._say(f"    [mode: {data['mode']}]")
        elif kind == "compaction_failed":
            self._say(f"    [compaction failed: {data['error']}]")

    def notify(self, method: str, params: p.WireModel) -> None:
        data = params.wire()
        if method == "baton/plan/didChange":
            self._say(
                f"    [plan v{data['version']} ({data['status']}, by {data['author']}): "
                f"{data['path']}]"
            )

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        self._say(f"      (no one to ask: {params.tool_call.name} refused)")
        return None

    def progress(self, title: str) -> ProgressScope:
        return self._progress(title)

    @asynccontextmanager
    async def _progress(self, title: str) -> AsyncIterator[ProgressReporter]:
        self._say(f"    [{title}]")

        def report(message: str, percentage: int | None = None) -> None:
            self._say(f"      {message}")

        yield report

    def take_text(self) -> str:
        text, self.text = "".join(self.text), []
        return text


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _open_steps(plan: str) -> list[str]:
    return [line.strip() for line in plan.splitlines() if line.strip().startswith("- [ ]")]


def _step_matching(plan: str, words: tuple[str, ...], others: tuple[str, ...]) -> str | None:
    """The one open step the model wrote about `words` and not about `others`, else None.

    None when no line, or more than one, can be told apart: naming the wrong line
    would have the model tick off a step it did not do."""
    found = [
        line
        for line in _open_steps(plan)
        if any(w in line.lower() for w in words) and not any(o in line.lower() for o in others)
    ]
    return found[0] if len(found) == 1 else None


def mean_departures(source: str) -> list[str]:
    """How `mean()` in the edited `stats.py` falls short of the step, read from its code:
    it must still divide the sum by the length, and return 0.0 under a test of the list
    (`if not values:` ... `return 0.0`, or `... if values else 0.0`). Which way round
    the test goes, `mean_results` finds out by running it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ["stats.py does not parse"]
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "mean"]
    if not found:
        return ["stats.py has no mean() any more"]
    nodes = list(ast.walk(found[0]))
    out: list[str] = []
    if not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) for n in nodes):
        out.append("mean() no longer divides the sum by the count")

    def zero(node: ast.AST | None) -> bool:
        return isinstance(node, ast.Constant) and node.value == 0

    guarded = any(
        (
            isinstance(n, ast.If)
            and any(isinstance(r, ast.Return) and zero(r.value) for r in ast.walk(n))
        )
        or (isinstance(n, ast.IfExp) and (zero(n.body) or zero(n.orelse)))
        for n in nodes
    )
    if not guarded:
        out.append("mean() has no `if` that returns 0.0 for an empty list")
    return out


# What the edited mean() must return, run as a person would after the edit.
MEAN_CASES: tuple[tuple[list[float], float], ...] = (
    ([], 0.0),
    ([1.0, 2.0, 3.0], 2.0),
    ([2.5], 2.5),
    ([-1.0, 5.0], 2.0),
)
_RUN_MEAN = """
import json, sys
sys.path.insert(0, ".")
from stats import mean
out = []
for values in json.loads(sys.argv[1]):
    try:
        got = mean(values)
        out.append(["returns", got if isinstance(got, (int, float)) else repr(got)])
    except Exception as exc:
        out.append(["raises", type(exc).__name__])
print(json.dumps(out))
"""
RUN_TIMEOUT = 20.0


def mean_results(project: Path) -> list[str]:
    """Runs the edited mean() on MEAN_CASES (a child Python in the demo's copy of the
    project, time-limited) and says each case it gets wrong."""
    cases = json.dumps([values for values, _ in MEAN_CASES])
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-B", "-c", _RUN_MEAN, cases],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return [f"mean() did not return within {RUN_TIMEOUT:.0f} s"]
    try:
        results = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [f"importing stats.py failed: {_clip(last, 120)}"]
    out: list[str] = []
    for (values, want), (how, got) in zip(MEAN_CASES, results, strict=True):
        if how == "returns" and isinstance(got, (int, float)) and math.isclose(got, want):
            continue
        shown = "[" + ", ".join(f"{v:g}" for v in values) + "]"
        out.append(f"mean({shown}) {how} {got}, not {want}")
    return out


def edit_departures(original: str, after: str, project: Path | None = None) -> list[str]:
    """How the edited `stats.py` falls short of the first step: it must have changed,
    still parse, change code (not only a comment), its `mean()` must pass
    `mean_departures` and, given the project, return what MEAN_CASES say."""
    if after == original:
        return ["the edit did not change stats.py"]
    try:
        tree = ast.parse(after)
    except SyntaxError as exc:
        return [f"stats.py no longer parses after the edit: {exc.msg}, line {exc.lineno}"]
    # Comments are not code: an edit that only rewords one builds nothing.
    if ast.dump(tree) == ast.dump(ast.parse(original)):
        return ["the edit changed only comments or layout, not the code"]
    out = mean_departures(after)
    if project is not None and "stats.py has no mean() any more" not in out:
        out += mean_results(project)
    return out


def function_lines(source: str, name: str) -> tuple[int, list[str]]:
    """The lines of top-level function `name` in `source` and the 1-based number of its
    `def` line, up to the next top-level line (read as text: an edit may have broken the
    file); (0, []) when there is no such function."""
    lines = source.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f"def {name}(")), None)
    if start is None:
        return 0, []
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0].isspace()):
        end += 1
    body = lines[start:end]
    while body and not body[-1].strip():
        body.pop()
    return start + 1, body


def _read_span(source: str) -> dict[str, int]:
    """The read that shows mean() alone: its offset and limit."""
    first, lines = function_lines(source, "mean")
    return {"offset": max(first, 1), "limit": max(len(lines), 1)}


def _body_start(lines: list[str]) -> int:
    """The index of the first line of a function's code: after its `def` line and its
    docstring (read as text, like `function_lines`)."""
    at = 1
    if at < len(lines) and lines[at].strip()[:3] in ('"""', "'''"):
        quote = lines[at].strip()[:3]
        # A one-line docstring opens and closes on its line.
        while at < len(lines) and not (
            lines[at].rstrip().endswith(quote) and (at > 1 or len(lines[at].strip()) >= 6)
        ):
            at += 1
        at += 1
    return min(at, len(lines))


def _edit_call(source: str) -> RequiredCall:
    """The edit the build step must make: in stats.py, its old_string one of the lines of
    mean()'s code as they are (not its `def` line nor its docstring: in 2 of 2 bench runs
    the 1.5B model replaced the `def` line, putting the new code above the docstring), the
    new_string the model's. A line found elsewhere too (`return 0.0` after an edit) comes
    with the lines above it that make it unique: the edit tool refuses an old_string found
    more than once."""
    _, lines = function_lines(source, "mean")
    choices: list[str] = []
    for end in range(_body_start(lines), len(lines)):
        if not lines[end].strip():
            continue
        for start in range(end, -1, -1):
            text = "\n".join(lines[start : end + 1])
            if source.count(text) == 1:
                choices.append(text)
                break
    if not choices:
        return RequiredCall("edit")
    return RequiredCall("edit", {"path": STATS_PATH, "old_string": {"enum": choices}})


def _read_call() -> RequiredCall:
    """The read of mean(): the file the prompt names (the offset and limit are the model's)."""
    return RequiredCall("read", {"path": STATS_PATH})


def plan_departures(plan: str) -> list[str]:
    """How the model's plan falls short of what the demo needs: several steps, one of
    them told apart as the step for mean()."""
    out: list[str] = []
    steps = _open_steps(plan)
    if len(steps) < 3:
        out.append(f"the plan has {len(steps)} open steps (asked: one per TODO, 3)")
    if _step_matching(plan, MEAN_WORDS, OTHER_WORDS) is None:
        out.append("no plan step can be told apart as the one for mean()")
    for name, words in TODO_WORDS.items():
        named = [step for step in steps if f"{name}(" in step.lower()]
        if named and not any(w in step.lower() for step in named for w in words):
            out.append(f"the step for {name}() does not say what its TODO asks")
    return out


def summary_departures(summary: str | None, ledger: p.Ledger, files: list[str]) -> list[str]:
    """Sentences of the summary saying a file was changed that the ledger says was not.

    The ledger is built from the tools' own records; a summary is the model's prose."""
    if not summary:
        return []
    modified = {touch.path for touch in ledger.files_modified}
    claimed: set[str] = set()  # one departure per file
    out: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n", summary):
        lowered = sentence.lower()
        if not any(c in lowered for c in CHANGE_CLAIMS) or any(n in lowered for n in NOT_A_CLAIM):
            continue
        for name in files:
            if name in claimed or name.lower() not in lowered:
                continue
            if not any(m.endswith(name) for m in modified):
                claimed.add(name)
                out.append(
                    f"the summary says {name} was changed ({_clip(sentence, 80)!r}), "
                    "but the ledger records no change to it"
                )
    return out


def corrected_departures(notes: list[str]) -> list[str]:
    """File-change claims the compaction removed from the summary because the ledger
    contradicted them (its notes say which): still a departure of the model's."""
    out: list[str] = []
    for note in notes:
        if "summary statement(s) the ledger contradicts" not in note:
            continue
        for name in re.findall(r"the ledger records no change to ([^ (;]+)", note):
            out.append(
                f"the summary says {name} was changed, but the ledger records no change to it "
                "(Baton removed the statement from the summary)"
            )
    return out


def _describe_call(call: RequiredCall) -> str:
    narrowed = ", ".join(
        f"{key} {schema['enum'][0]!r}"
        if len(schema.get("enum", ())) == 1
        else f"{key} one of {len(schema['enum'])} lines"
        if "enum" in schema
        else key
        for key, schema in call.narrowed.items()
    )
    return f"{call.name} ({narrowed})" if narrowed else call.name


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.rstrip().splitlines())


class MethodCaller:
    """The person's side: JSON-RPC requests as an editor sends them, answered by the
    server's own method handlers (`baton.lsp.features`: params validated with the
    protocol's models, errors mapped, the result serialised as on the wire), in this
    process and on the demo's app."""

    def __init__(self, app: Any, say: Any) -> None:
        from baton.lsp.features import register_all
        from baton.lsp.server import BatonServer

        self.server = BatonServer()
        register_all(self.server)
        self.server.app = app
        self.say = say

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send `method` with `params`; a JSON-RPC error is raised as RpcError."""
        from pygls.exceptions import JsonRpcException

        self.say(f"  → {method} {_clip(json.dumps(params, ensure_ascii=False), 150)}")
        handler = self.server.protocol.fm.features[method]
        try:
            result = handler(params)
            if inspect.isawaitable(result):
                result = await result
        except JsonRpcException as exc:
            self.say(f"  ← error {exc.code}: {exc.message}")
            raise RpcError(method, str(exc.message)) from None
        shown = json.dumps(result, ensure_ascii=False) if result is not None else "null"
        self.say(f"  ← {_clip(shown, 150)}")
        return result


class RpcError(Exception):
    def __init__(self, method: str, message: str) -> None:
        super().__init__(f"{method}: {message}")
        self.message = message


class Demo:
    def __init__(self, out: TextIO, root: Path, settings: dict[str, Any], label: str) -> None:
        self.out = out
        self.root = root
        self.project = root / "project"
        self.settings = settings
        self.label = label
        self.channel = DemoChannel(out)
        self.started = time.monotonic()
        # Phase -> None when it succeeded, else why not (in PHASES order).
        self.outcomes: dict[str, str | None] = {}
        self.notes: list[str] = []

    def say(self, line: str = "") -> None:
        self.channel.status.clear()
        self.out.write(line + "\n")
        self.out.flush()

    def heading(self, text: str) -> None:
        self.say()
        self.say(f"== {text}  [{time.monotonic() - self.started:.0f} s]")

    def outcome(self, phase: str, failure: str | None) -> None:
        """Record a phase's result and say it."""
        self.outcomes[phase] = failure
        if failure is None:
            self.say(f"  [{phase}: done]")
        else:
            self.say(f"  [{phase}: FAILED: {failure}]")

    def left(self, budget: float) -> float:
        return max(5.0, min(budget, TOTAL_BUDGET - (time.monotonic() - self.started)))

    async def turn(
        self, app: Any, session_id: str, text: str, tools: Sequence[RequiredCall]
    ) -> tuple[str, list[str]]:
        """Run one prompt whose steps must call `tools`, one each, then stop; returns the
        stop reason and the tools called. "timeout" when the budget ran out."""
        self.say(_indent(f"> {text}", "  "))
        names = [_describe_call(t) for t in tools]
        self.say(f"    (each model step is told its tool: {', '.join(names)})")
        state = app.sessions.state(session_id)
        started = time.monotonic()
        try:
            task = app.sessions.start_turn(state, text, max_steps=len(tools), require_tools=tools)
        except BatonError as exc:
            self.say(f"    [could not start the turn: {exc.message}]")
            return "error", []
        self.channel.step_began = started
        self.channel.waiting()
        reason = ""
        done, _ = await asyncio.wait({task}, timeout=self.left(TURN_BUDGET))
        if not done:
            reason = "timeout"
            app.sessions.cancel(session_id)
            await asyncio.gather(task, return_exceptions=True)
        self.channel.step_began = None
        self.channel.status.hide()
        if not reason:
            try:
                result = task.result()
                reason = str(result.stop_reason)
                if result.error:
                    self.say(f"    [error: {result.error}]")
            except BatonError as exc:
                self.say(f"    [error: {exc.message}]")
                reason = "error"
        text = self.channel.take_text().strip()
        if text and not self.channel.tool_calls:
            self.say(f"    model: {_clip(text, 300)}")
        called = [str(call["name"]) for call in self.channel.tool_calls]
        self.channel.tool_calls.clear()
        note = " (out of time for this step)" if reason == "timeout" else ""
        self.say(f"    [turn ended: {reason}, {time.monotonic() - started:.0f} s]{note}")
        return reason, called

    async def run(self) -> int:
        from baton.app import build_app

        self.project.mkdir(parents=True)
        originals = _sample_project()
        for name, content in originals.items():
            (self.project / name).write_text(content, encoding="utf-8")
        self.say(f"Baton demo: {self.label}")
        self.say(f"project: {self.project} (a copy of baton/demo_project)")

        app = build_app(self.project, self.channel, client_settings=self.settings)
        try:
            rpc = MethodCaller(app, self.say)
            await self._run(app, rpc, originals)
        finally:
            await app.close()
        return self._finish()

    async def _run(self, app: Any, rpc: MethodCaller, originals: dict[str, str]) -> None:
        sid = (await rpc.request("baton/session/new", {"mode": "plan", "title": "Baton demo"}))[
            "sessionId"
        ]
        await self._warm_up(app, app.sessions.state(sid))
        self.sid = sid

        self.heading("1/6 Plan mode: the agent reads the code and writes a plan to a file")
        plan = await self._plan(app, rpc, sid)

        self.heading("2/6 The person edits the plan and approves it")
        await self._approve(rpc, sid, plan)

        self.heading("3/6 The person asks for a compaction")
        await self._compact(rpc, sid)

        self.heading("4/6 The plan back in front of the model")
        step = self._plan_back(app, sid)

        self.heading("5/6 Build mode, after the compaction: the agent builds the first step")
        await self._build(app, sid, step, originals)

        self.heading("What the model is sent next")
        self._show_context(app, sid)

    async def _plan(self, app: Any, rpc: MethodCaller, sid: str) -> dict[str, Any]:
        _, called = await self.turn(app, sid, PLAN_PROMPT, PLAN_TOOLS)
        plan = await rpc.request("baton/plan/get", {"sessionId": sid})
        failure: str | None = None
        if plan is None:
            failure = "the model did not write a plan with plan_write"
            self.say(
                "  The demo writes the plan the way a person would in the editor, and goes on."
            )
            await rpc.request(
                "baton/plan/update",
                {"sessionId": sid, "content": FALLBACK_PLAN, "baseVersion": 0},
            )
            plan = await rpc.request("baton/plan/get", {"sessionId": sid})
        else:
            departures = plan_departures(plan["content"])
            failure = "; ".join(departures) or None
        if "read" not in called:
            self.notes.append("the model wrote the plan without reading stats.py")
        self.say(f"  plan file: {self.project / plan['path']}")
        self.say(f"  status {plan['status']}, version {plan['version']}:")
        self.say(_indent(plan["content"]))
        self.outcome("plan", failure)
        return dict(plan)

    async def _approve(self, rpc: MethodCaller, sid: str, plan: dict[str, Any]) -> None:
        content = plan["content"]
        if self.outcomes.get("plan") is not None and plan_departures(content):
            # As a person would, the demo rewrites a plan it cannot build from.
            self.say("  The plan does not say which step is mean()'s: the person rewrites it.")
            content = FALLBACK_PLAN
        lines = content.rstrip("\n").splitlines()
        # Under the title: the person's own line.
        at = 1 if lines and lines[0].startswith("#") else 0
        edited = "\n".join([*lines[:at], "", PERSON_NOTE, *lines[at:]]) + "\n"
        failure: str | None = None
        try:
            await rpc.request(
                "baton/plan/update",
                {"sessionId": sid, "content": edited, "baseVersion": plan["version"]},
            )
            approved = await rpc.request("baton/plan/approve", {"sessionId": sid})
            if (approved["status"], approved["mode"]) != ("approved", "build"):
                failure = f"approve answered {approved}"
        except RpcError as exc:
            failure = exc.message
        self.outcome("approval", failure)

    async def _compact(self, rpc: MethodCaller, sid: str) -> None:
        self.say(f"  instructions: {COMPACT_INSTRUCTIONS}")
        self.channel.waiting("compacting: waiting for the model to summarise")
        failure: str | None = None
        record: dict[str, Any] | None = None
        try:
            record = await asyncio.wait_for(
                rpc.request(
                    "baton/session/compact",
                    {"sessionId": sid, "instructions": COMPACT_INSTRUCTIONS},
                ),
                self.left(COMPACT_BUDGET),
            )
        except TimeoutError:
            failure = "the compaction did not finish in time"
        except RpcError as exc:
            failure = f"the compaction failed: {exc.message}"
        finally:
            self.channel.status.hide()
        if record is not None:
            self._show_record(record)
            if not record.get("compactionId"):
                failure = "nothing was compacted: " + "; ".join(record.get("notes") or [])
            elif record["tokensAfter"] >= record["tokensBefore"]:
                failure = f"the view did not shrink ({record['tokensBefore']} tokens before)"
            ledger = p.Ledger.model_validate(record["ledger"])
            claims = summary_departures(record.get("summary"), ledger, ["stats.py", "README.md"])
            self.notes.extend(claims or corrected_departures(record.get("notes") or []))
        self.outcome("compaction", failure)

    def _plan_back(self, app: Any, sid: str) -> str | None:
        """Show the plan block of the next request; returns the step for mean()."""
        plan = app.plans.get(sid)
        block = self._plan_block(app, sid)
        failure: str | None = None
        if block is None:
            failure = "no plan block in the next request"
        elif plan is None or PERSON_NOTE not in block:
            failure = "the plan block is not the current plan (the person's line is missing)"
        if block is not None:
            self.say("  the plan block in the next request, re-read from the plan file:")
            self.say(_indent(block, "    | "))
        self.outcome("plan back", failure)
        return _step_matching(plan.content, MEAN_WORDS, OTHER_WORDS) if plan else None

    def _plan_block(self, app: Any, sid: str) -> str | None:
        sessions = app.sessions
        state = sessions.state(sid)
        settings = sessions.settings()
        built = sessions.build_context(state, settings, sessions.identity_for(state, settings))
        blocks = [i for i in built.request.items if getattr(i, "name", None) == "plan"]
        return str(blocks[0].text) if blocks else None

    async def _build(self, app: Any, sid: str, step: str | None, originals: dict[str, str]) -> None:
        stats = self.project / "stats.py"
        original = originals["stats.py"]
        if step is None:
            step = next(iter(_open_steps(app.plans.get(sid).content)), "- [ ] mean()")
        prompt = BUILD_PROMPT.format(**_read_span(stats.read_text(encoding="utf-8")))
        await self.turn(
            app, sid, prompt, (_read_call(), _edit_call(stats.read_text(encoding="utf-8")))
        )
        found = self._check_edit(original)
        if found:
            self.say("  It shows the model what it found, and gives it one more try:")
            now = stats.read_text(encoding="utf-8")
            fix = FIX_PROMPT.format(found="; ".join(found), **_read_span(now))
            await self.turn(app, sid, fix, (_read_call(), _edit_call(now)))
            found = self._check_edit(original)
            if not found:
                self.notes.append(
                    "the edit passed the demo's check on its second try, after the model was "
                    "shown what its first edit missed"
                )
        tick = TICK_PROMPT.format(step=step, done=step.replace("[ ]", "[x]", 1))
        await self.turn(app, sid, tick, TICK_TOOLS)
        after = stats.read_text(encoding="utf-8")
        if after == original:
            self.say("  no file changed")
        else:
            diff = difflib.unified_diff(
                original.splitlines(), after.splitlines(), "a/stats.py", "b/stats.py", lineterm=""
            )
            self.say(_indent("\n".join(diff)))
        failure = "; ".join(found) or None
        self.outcome("edit", failure)

        plan = app.plans.get(sid)
        ticked = [line.strip() for line in plan.content.splitlines() if "[x]" in line.lower()]
        tick_failure: str | None = None
        if not ticked:
            tick_failure = "no step ticked off in the plan"
        elif step[5:].strip() not in ticked[0]:
            tick_failure = f"another step was ticked off: {_clip(ticked[0], 80)}"
        else:
            self.say(f"  plan v{plan.version}: ticked off: {_clip(ticked[0], 100)}")
        self.outcome("tick", tick_failure)

    def _check_edit(self, original: str) -> list[str]:
        """Check the edit as a person reviewing it would (`edit_departures`: read mean(),
        run it on MEAN_CASES) and say what was found."""
        cases = ", ".join(
            "[" + ", ".join(f"{v:g}" for v in values) + "]" for values, _ in MEAN_CASES
        )
        after = (self.project / "stats.py").read_text(encoding="utf-8")
        found = edit_departures(original, after, self.project)
        verdict = "; ".join(found) if found else "it does what the step asks"
        self.say(f"  The demo checks the edit (reads mean(), runs it on {cases}): {verdict}")
        return found

    async def _warm_up(self, app: Any, state: Any) -> None:
        """Load the local model before the first turn, so its load time is shown apart."""
        try:
            provider = app.sessions.provider_for(state, app.sessions.settings())
        except BatonError as exc:
            self.say(f"  [provider: {exc.message}]")
            return
        start = getattr(provider, "start", None)
        if start is None:
            return
        self.say("  loading the local model…")
        began = time.monotonic()
        self.channel.status.show("loading", "loading the model")
        try:
            await start()
        except BatonError as exc:
            self.say(f"  [the local model did not load: {exc.message}]")
            return
        finally:
            self.channel.status.hide()
        self.say(f"  loaded in {time.monotonic() - began:.1f} s")

    def _show_record(self, record: dict[str, Any]) -> None:
        data = dict(record)
        summary = data.pop("summary", None)
        self.say(
            f"  tokens in the model's view: {data['tokensBefore']:,} → {data['tokensAfter']:,}"
            f" ({data['strategy']}, {data['trigger']})"
        )
        self.say("  the compaction record (as baton/session/compactions returns it):")
        self.say(_indent(json.dumps(data, indent=2, ensure_ascii=False)))
        if summary:
            lines = summary.strip().splitlines()
            shown = "\n".join(lines[:14]) + ("\n…" if len(lines) > 14 else "")
            self.say("  summary written by the model (first lines):")
            self.say(_indent(shown, "    | "))

    def _show_context(self, app: Any, sid: str) -> None:
        info = app.sessions.context_info(sid)
        self.say(
            f"  baton/session/context: {info.tokens} tokens of {info.context_window} "
            f"(compaction threshold {info.threshold})"
        )
        for item in info.items:
            self.say(f"    {item.kind:<14} {item.tokens:>6} tokens")
        plan = app.plans.get(sid)
        if plan is not None:
            # The block above stays as sent (requests only append); later changes reach
            # the model as plan_edit results. The file has them all.
            self.say(f"  the plan file now (v{plan.version}, {plan.status}):")
            self.say(_indent(plan.content, "    | "))

    def _finish(self) -> int:
        self.heading("Done")
        sid = getattr(self, "sid", None)
        if sid is not None:
            self.say(f"  session {sid}; the project and its plan file are in {self.project}")
        if self.notes:
            self.say("  also noticed:")
            for note in self.notes:
                self.say(f"    - {note}")
        failed = [phase for phase in PHASES if self.outcomes.get(phase, "not reached")]
        for phase in PHASES:
            why = self.outcomes.get(phase, "not reached")
            self.say(f"  {phase:<11} {'done' if why is None else 'FAILED: ' + why}")
        self.say(f"  wall time: {time.monotonic() - self.started:.0f} s")
        # One line for bench/demo_runs.py.
        self.say(
            "demo phases: "
            + " ".join(
                f"{phase.replace(' ', '-')}={'ok' if self.outcomes.get(phase, 'x') is None else 'failed'}"
                for phase in PHASES
            )
        )
        if failed:
            self.say(
                f"baton demo: {len(failed)} of {len(PHASES)} phases failed: {', '.join(failed)}"
            )
            return 1
        return 0


def _configure() -> tuple[dict[str, Any], str] | str:
    """Client settings and a label for the provider, or an error message naming the fix."""
    settings: dict[str, Any] = {
        "maxSteps": 4,
        "permissions": {"write": "allow", "bash": "deny"},
        # Only the manual compaction, so the demo shows one clear record.
        "compaction": {"auto": False},
    }
    if os.environ.get("OPENAI_API_KEY"):
        settings["provider"] = "openai"
        return settings, "OpenAI (OPENAI_API_KEY is set)"
    from baton.config import LocalSettings
    from baton.errors import ConfigError
    from baton.local.engine import require_xllamacpp, resolve_model_path
    from baton.local.model_files import DEFAULT_MODEL

    try:
        require_xllamacpp()
        model = resolve_model_path(LocalSettings())
    except ConfigError as exc:
        return exc.message
    settings["provider"] = "local"
    settings["local"] = {**LOCAL_SETTINGS, "modelPath": str(model)}
    return settings, f"local model {DEFAULT_MODEL.title}, embedded llama.cpp, no API key"


def main(*, clean: bool = False, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    configured = _configure()
    if isinstance(configured, str):
        print(f"baton demo: {configured}", file=sys.stderr)
        return 1
    settings, label = configured
    root = Path(tempfile.mkdtemp(prefix="baton-demo-"))
    # The demo's store goes with its project; the model path was resolved above.
    os.environ["XDG_DATA_HOME"] = str(root / "data")
    demo = Demo(out, root, settings, label)
    try:
        return asyncio.run(demo.run())
    except KeyboardInterrupt:
        print("baton demo: interrupted", file=sys.stderr)
        return 130
    finally:
        if clean:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(
                f"the demo's project and store are kept in {root} (remove it when done)", file=out
            )
