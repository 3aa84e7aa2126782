"""The demo's checks, as a person reviewing the work would make them: the plan (its
steps), the edit (mean() read from its code with `ast`, then run in a child Python),
and the summary's claims of changed files (against the ledger, and the ones the
compaction corrected, read from the record's own `corrections`)."""

from __future__ import annotations

import ast
import json
import math
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from baton import protocol as p
from baton.faces.demo.scenario import (
    CHANGE_CLAIMS,
    MEAN_WORDS,
    NOT_A_CLAIM,
    OTHER_WORDS,
    TODO_WORDS,
    open_steps,
    step_matching,
)
from baton.store.model import StoredMessage


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
        return [f"importing stats.py failed: {clip(last, 120)}"]
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


def task_result(messages: Iterable[StoredMessage]) -> str | None:
    """The output of the last `task` call among `messages`, None when there is none."""
    found: str | None = None
    for message in messages:
        for call in message.tool_calls():
            result = message.results.get(call.tool_call_id)
            if call.name == "task" and result is not None:
                found = result.output
    return found


def explore_departures(result: str) -> str | None:
    """How the explore child's `task` result falls short of what the planner needs: the
    child done, and its final message giving each of the three TODOs (their words; read
    from the result block: what the planner was given, not what the child saw)."""
    lines = result.splitlines()
    status = next((line[8:] for line in lines if line.startswith("status: ")), None)
    if status != "done":
        return f"the child ended {status or 'without a status'}"
    head = next((i for i, line in enumerate(lines) if line.startswith("final message")), None)
    final = "" if head is None else "\n".join(lines[head + 1 :]).lower()
    if head is None or lines[head] == "final message: none" or not final.strip():
        return "the child's final message is empty"
    missing = [
        f"{name}()" for name, words in TODO_WORDS.items() if not any(w in final for w in words)
    ]
    if missing:
        return "the child's answer does not give the TODO of " + ", ".join(missing)
    return None


def plan_departures(plan: str) -> list[str]:
    """How the model's plan falls short of what the demo needs: several steps, one of
    them told apart as the step for mean()."""
    out: list[str] = []
    steps = open_steps(plan)
    if len(steps) < 3:
        out.append(f"the plan has {len(steps)} open steps (asked: one per TODO, 3)")
    if step_matching(plan, MEAN_WORDS, OTHER_WORDS) is None:
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
                    f"the summary says {name} was changed ({clip(sentence, 80)!r}), "
                    "but the ledger records no change to it"
                )
    return out


def corrected_departures(corrections: list[p.ClaimCorrection]) -> list[str]:
    """File-change claims the compaction removed from the summary because the ledger
    contradicted them (the record's `corrections`, every file each named): still a
    departure of the model's."""
    return [
        f"the summary says {name} was changed, but the ledger records no change to it "
        "(Baton removed the statement from the summary)"
        for correction in corrections
        for name in correction.files
    ]


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
