"""The demo's scenario: its prompts and budgets, the sample project, the plan it
expects, and the calls each of the model's steps is held to."""

from __future__ import annotations

from importlib import resources
from typing import Any

from baton.providers.base import NoTool, RequiredCall, StepChoice

# Seconds. The whole demo, model download excluded, should fit in a few minutes on
# two CPU cores; each turn gets at most its share and what is left of the total.
TOTAL_BUDGET = 1200.0
TURN_BUDGET = 420.0
COMPACT_BUDGET = 300.0

# The phases, in order, as the closing line names them (bench/demo_runs.py reads it).
PHASES = ("explore", "plan", "approval", "compaction", "plan back", "edit", "tick")

# What the planner asks its explore child: the child reads the file and greps it, and
# its final message (all the planner is given of its work) is the lines grep found.
# Asked for each TODO with its function's name, the 1.5B child wrote one sentence about
# mean(); asked to copy the lines, it wrote their `stats.py:<n>` prefixes alone
# (2026-12-03).
EXPLORE_TASK = (
    "Read stats.py, then grep it for `TODO`. Answer with the lines grep found, each one "
    "whole as grep printed it: `stats.py:<line number>:` and then the text of that line, "
    "its TODO comment."
)
EXPLORE_PROMPT = (
    "stats.py has three TODO comments. Read stats.py, then send an explore child to find "
    "them: call task with agent `explore`, description `Find the TODOs in stats.py`, and "
    f"this prompt: {EXPLORE_TASK!r}."
)
# The plan is asked for in a prompt of its own, right after the child's result: asked at
# the end of the explore prompt, the 1.5B planner once planned the search itself ("- [ ]
# grep stats.py for `TODO`", 1 of 5 runs on 2026-12-03).
PLAN_PROMPT = (
    "Now write the plan with plan_write from the explore child's final message: a title "
    "line starting with `# `, then for each TODO line of that message, in the same order, "
    "a step `- [ ] TODO <the rest of that line after `TODO:`>`. Only those three steps."
)
# The child's read and grep put the file and its three TODO lines right before its
# answer; the planner sees only that answer. Without the grep a 1.5B model given the
# whole file made a step of every function; asked for "what its TODO says" it wrote the
# docstrings (3 of 3 runs on 2026-12-02); asked to start each step with `TODO` and the
# rest of the line, it wrote the TODOs.
# The child's answer is held to no tool: left free, the 1.5B model called a third tool
# and the child ended at its step limit with no answer (2026-12-03). Held to no tool right
# after its grep it ended at once (one token, it meant to call one more); told then that
# its answer was empty (the turn's own note), it answers: two such steps.
EXPLORE_STEPS: tuple[StepChoice, ...] = (
    RequiredCall("read", {"path": {"enum": ["stats.py"]}}),
    RequiredCall("grep", {"pattern": {"enum": ["TODO"]}, "path": {"enum": ["stats.py"]}}),
    NoTool(),
    NoTool(),
)
# The planner reads the file too: with the reading done in the child alone, its context
# was too short for the manual compaction to shrink (a summary and the plan block came
# to more than the history they replaced: 1 of 2 bench runs on 2026-12-03). The child's
# answer comes right before the plan's prompt, as the grep did.
EXPLORE_TOOLS = (
    RequiredCall("read", {"path": {"enum": ["stats.py"]}}),
    RequiredCall("task", {"agent": {"enum": ["explore"]}}, child=EXPLORE_STEPS),
)
PLAN_TOOLS = (RequiredCall("plan_write"),)
# The person's edit before approving: a line the model did not write, which it is
# then told as a diff and which comes back in the plan block after the compaction.
PERSON_NOTE = "Keep every docstring as it is."
BUILD_PROMPT = (
    "Build the plan's first step now: the TODO in mean(). Read mean() in stats.py (read "
    "with offset {offset} and limit {limit}), then call edit to replace its TODO comment "
    "with the code the TODO asks for: an `if` that returns 0.0 when the list is empty, "
    "indented as in the file. The return line after it stays: mean() must still return "
    "the mean of a non-empty list."
)
# A few lines to read (mean() alone) rather than the file: less for the model to read
# before the edit. The edit's old_string is mean()'s TODO comment and its new_string has
# the shape of a guard (`if …:` then `return …` on the next line, indented as in the file),
# both held by the call's schema (for llama.cpp, a grammar), so the model writes the test
# and the value, and the return line stays. Left to choose the line and write any code,
# the 1.5B model replaced the TODO with an unconditional `return 0.0` (1 of 3 runs on
# 2026-12-04) and pasted the TODO's words as code (1 of 3).
# The tick is a turn of its own: with the plan line in the same prompt, the 1.5B model
# copied it into the edit's old_string.
TICK_PROMPT = 'Now tick the step off with plan_edit: old_string "{step}", new_string "{done}".'
TICK_TOOLS = (RequiredCall("plan_edit"),)
# After the edit the demo checks it, as a person reviewing it would (the checks of
# edit_departures), and when it falls short the person undoes it (`baton/session/revert`)
# and shows the model what was found: one more try at the same edit. Left in view, a bad
# edit was copied: the 1.5B model's retry added a guard and kept the `return 0.0` its first
# try wrote (2026-12-04).
FIX_PROMPT = (
    "{checked}: {found}. Try again: read mean() (read with offset {offset} and limit "
    "{limit}), then call edit to replace its TODO comment with an `if` that returns 0.0 "
    "for an empty list, indented as in the file. The return line after it stays, for a "
    "non-empty list."
)
UNDONE = "I checked your edit of stats.py and took it back"
KEPT = "I checked stats.py after your edit (it could not be taken back)"
# The path the build's calls are held to, where the schema is enforced: after the
# compaction the 1.5B model read and edited the plan file, the path it had last seen.
STATS_PATH: dict[str, Any] = {"enum": ["stats.py"]}
# The edit's new_string: a guard, one line for the test and one for its return, indented
# as in mean(). llama.cpp matches a pattern against the string as the call's JSON writes
# it (its newline is `\\n`); no `:` in the test and no `;` in the value, or the model
# wrote the whole guard, then more code, on the first line (2026-12-04).
GUARD_PATTERN = r'^    if [^"\\:]+:\\n        return [^"\\;]+$'
GUARD: dict[str, Any] = {"pattern": GUARD_PATTERN, "description": "`if …:` then `return …`"}
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


def sample_project() -> dict[str, str]:
    root = resources.files("baton").joinpath("demo_project")
    return {
        entry.name: entry.read_text(encoding="utf-8")
        for entry in root.iterdir()
        if entry.is_file() and entry.name.endswith((".py", ".md"))
    }


def open_steps(plan: str) -> list[str]:
    return [line.strip() for line in plan.splitlines() if line.strip().startswith("- [ ]")]


def step_matching(plan: str, words: tuple[str, ...], others: tuple[str, ...]) -> str | None:
    """The one open step the model wrote about `words` and not about `others`, else None.

    None when no line, or more than one, can be told apart: naming the wrong line
    would have the model tick off a step it did not do."""
    found = [
        line
        for line in open_steps(plan)
        if any(w in line.lower() for w in words) and not any(o in line.lower() for o in others)
    ]
    return found[0] if len(found) == 1 else None


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


def read_span(source: str) -> dict[str, int]:
    """The read that shows mean() alone: its offset and limit."""
    first, lines = function_lines(source, "mean")
    return {"offset": max(first, 1), "limit": max(len(lines), 1)}


def body_start(lines: list[str]) -> int:
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


def edit_call(source: str) -> RequiredCall:
    """The edit the build step must make: in stats.py, its old_string mean()'s TODO
    comment and its new_string a guard (GUARD), whose test and value are the model's.

    With no TODO comment left (an edit that could not be undone), the old_string is one of
    the lines of mean()'s code as they are (not its `def` line nor its docstring: in 2 of 2
    bench runs the 1.5B model replaced the `def` line, putting the new code above the
    docstring) and the new_string free. A line found elsewhere too (`return 0.0` after an
    edit) comes with the lines above it that make it unique: the edit tool refuses an
    old_string found more than once."""
    _, lines = function_lines(source, "mean")
    first = body_start(lines)
    todo = [line for line in lines[first:] if line.strip().startswith("# TODO")]
    if todo and source.count(todo[0]) == 1:
        return RequiredCall(
            "edit", {"path": STATS_PATH, "old_string": {"enum": todo[:1]}, "new_string": GUARD}
        )
    choices: list[str] = []
    for end in range(first, len(lines)):
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


def read_call() -> RequiredCall:
    """The read of mean(): the file the prompt names (the offset and limit are the model's)."""
    return RequiredCall("read", {"path": STATS_PATH})


def describe_call(call: StepChoice) -> str:
    """How the demo says what a step is held to: `grep (pattern 'TODO')`, `its answer`
    (no tool), a `task` call with its child's steps."""
    if isinstance(call, NoTool):
        return "its answer (no tool)"
    if call.child:
        said = [describe_call(c) for c in call.child]
        # Two steps held to no tool read as one answer (the second one is its retry).
        steps = ", ".join(s for i, s in enumerate(said) if i == 0 or s != said[i - 1])
        return f"{_narrowed(call)} [its child: {steps}]"
    return _narrowed(call)


def _narrowed(call: RequiredCall) -> str:
    narrowed = ", ".join(
        f"{key} {schema['enum'][0]!r}"
        if len(schema.get("enum", ())) == 1
        else f"{key} one of {len(schema['enum'])} lines"
        if "enum" in schema
        else f"{key} {schema['description']}"
        if "description" in schema
        else key
        for key, schema in call.narrowed.items()
    )
    return f"{call.name} ({narrowed})" if narrowed else call.name
