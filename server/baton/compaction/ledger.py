"""The deterministic ledger: facts a summary tends to lose, extracted by code.

Built from the whole stored history (compacted messages included), so it is
cumulative across compactions by construction and never depends on what a
model chose to write.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from baton import protocol as p
from baton.compaction.outputs import config_values, error_excerpt, value_excerpt
from baton.framing import entry, inline
from baton.plan.steps import MARKS
from baton.session.model import StoredMessage
from baton.tools.base import Fact

# Rendering caps, far above what a working session reaches (the record keeps every
# fact regardless): they only stop a runaway session from growing the block forever.
MAX_COMMANDS_SHOWN = 300
MAX_ERRORS_SHOWN = 50
MAX_RESOLVED_SHOWN = 50
MAX_FILES_SHOWN = 1000
# Exit codes shown per command: the first ones and the latest ones, the middle counted.
MAX_RUNS_SHOWN = 8
# An unresolved error is kept whole up to this many characters; longer ones keep their
# first lines, their last lines and every line in between that carries a count, a code
# or a `path:line` (what a model needs to act), up to this budget again.
ERROR_CHARS = 1_600
# A resolved error is one line: what failed, briefly (its first error line and verdict).
RESOLVED_CHARS = 400
# Failing runs kept per command: the first ones and the latest ones.
MAX_FAILURES_KEPT = 6
# Config files whose values are shown (the latest read ones), and values in all.
MAX_CONFIG_FILES = 20
MAX_CONFIG_VALUES_SHOWN = 120
# The meta key of a note carrying a child's facts (a plan step built in a child).
CHILD_FACTS = "childFacts"
RECALL_HINT = "Anything compaction hid (pruned outputs, older messages) is one `recall` away."
PLAN_LINE = "Plan: "
# Lines worth keeping when an error is cut: counts ("3 failed, 12 passed"), rule or
# error codes (E501, TS2345, error[E0308]), locations (path.py:12, line 12).
_IMPORTANT = re.compile(
    r"\b\d+\s+(?:passed|failed|errors?|warnings?|skipped|tests?|problems?|fixed)\b"
    r"|\b[A-Z]{1,4}\d{2,5}\b"
    r"|[\w./-]+\.\w+:\d+"
    r"|\bline \d+\b"
    r"|\b(?:Error|Exception|FAILED|FAIL|error|assert)\b",
)


def build_ledger(messages: Iterable[StoredMessage], plan: p.PlanState | None) -> p.Ledger:
    messages = list(messages)
    files_read: dict[str, None] = {}
    modified: dict[str, p.FileTouch] = {}
    commands: dict[str, list[int | None]] = {}
    failures: dict[str, list[p.RunFailure]] = {}
    outputs: dict[str, str] = {}
    configs: dict[str, list[str]] = {}
    # Unresolved errors, keyed by what would resolve them (the same command or target).
    errors: dict[str, p.UnresolvedError] = {}
    resolved: list[p.ResolvedError] = []

    for message in messages:
        for part in message.tool_calls():
            call_id = part.tool_call_id
            name = part.name
            args = part.input
            result = message.results.get(call_id)
            if result is None:
                continue
            for fact in result.facts:
                if fact.session is not None:
                    continue  # a child's, listed by child (children_work)
                if fact.kind == "read" and fact.path:
                    files_read.setdefault(fact.path, None)
                    values = config_values(fact.path, result.output)
                    if values:
                        configs.pop(fact.path, None)
                        configs[fact.path] = values  # the latest read, latest last
                elif fact.kind == "modified" and fact.path and fact.action:
                    previous = modified.pop(fact.path, None)
                    action = fact.action
                    if (
                        previous is not None
                        and previous.action == "created"
                        and action == "modified"
                    ):
                        action = "created"
                    modified[fact.path] = p.FileTouch(path=fact.path, tool=name, action=action)
                elif fact.kind == "command" and fact.command is not None:
                    runs = commands.pop(fact.command, [])
                    runs.append(fact.exit_code)
                    commands[fact.command] = runs  # re-inserted: the latest run orders it
                    if fact.exit_code == 0:
                        excerpt = value_excerpt(result.output)
                        if excerpt:
                            outputs[fact.command] = excerpt
                    else:
                        kept = failures.setdefault(fact.command, [])
                        kept.append(
                            p.RunFailure(
                                run=len(runs),
                                exit_code=fact.exit_code,
                                error=error_excerpt(result.output),
                            )
                        )
                        if len(kept) > MAX_FAILURES_KEPT:
                            del kept[MAX_FAILURES_KEPT // 2]  # keep the first and the latest
            key = _error_key(name, args)
            source = _source(name, args)
            if result.status == "failed":
                errors.pop(key, None)
                errors[key] = p.UnresolvedError(source=source, message=cut_error(result.output))
                continue
            by = _resolution(name, args, commands)
            old = errors.pop(key, None)
            if old is not None:
                resolved.append(_resolved(old, by))
            # A successful edit or write of a file resolves earlier failures on that file.
            path = args.get("path")
            if isinstance(path, str):
                for other in [k for k in errors if k.endswith(f"::{path}")]:
                    resolved.append(_resolved(errors.pop(other), by))

    return p.Ledger(
        files_read=list(files_read),
        files_modified=list(modified.values()),
        commands=[
            p.CommandRun(
                command=command,
                exit_code=runs[-1],
                exit_codes=runs,
                failures=failures.get(command, []),
                output=outputs.get(command),
            )
            for command, runs in commands.items()
        ],
        errors=list(errors.values()),
        plan=plan,
        resolved_errors=resolved,
        config_values=[
            p.ConfigValues(path=path, values=values)
            for path, values in list(configs.items())[-MAX_CONFIG_FILES:]
        ],
        children=children_work(messages),
    )


def _resolved(error: p.UnresolvedError, by: str) -> p.ResolvedError:
    return p.ResolvedError(source=error.source, message=_one_line(error.message), resolved_by=by)


def _resolution(name: str, args: dict[str, object], commands: dict[str, list[int | None]]) -> str:
    if name == "bash":
        command = str(args.get("command", ""))
        runs = commands.get(command)
        code = runs[-1] if runs else 0
        return f"`{command}` → {code}"
    path = args.get("path")
    return f"{name} {path}" if isinstance(path, str) else name


def _error_key(name: str, args: dict[str, object]) -> str:
    if name == "bash":
        return f"bash::{args.get('command', '')}"
    path = args.get("path")
    if isinstance(path, str):
        return f"{name}::{path}"
    return f"{name}::{sorted(args.items())!r}"


def _source(name: str, args: dict[str, object]) -> str:
    if name == "bash":
        return f"bash `{args.get('command', '')}`"
    path = args.get("path") or args.get("pattern")
    return f"{name} {path}" if path else name


def _one_line(text: str) -> str:
    """An error in one line: its first error line and its verdict, within RESOLVED_CHARS
    (issue 27: cutting the joined lines from the end lost the message itself)."""
    return error_excerpt(text, RESOLVED_CHARS)


def cut_error(text: str, limit: int = ERROR_CHARS) -> str:
    """An error message kept whole up to `limit`; beyond, the important lines survive.

    Keeps the first and last lines (what failed, and the final verdict such as
    "2 failed, 5 passed"), then every line in between carrying a count, a code or a
    location, until the budget is spent; says how many lines were left out.
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    if len(lines) == 1:
        # One long line: its head and its tail, where verdicts and locations sit.
        head = limit * 2 // 3
        return f"{text[:head]} … {text[-(limit - head - 3) :]}"
    keep: set[int] = set()
    budget = limit

    def take(index: int) -> None:
        nonlocal budget
        line = lines[index]
        if len(line) > budget // 2 + 1:
            line = lines[index] = line[: max(40, budget // 2)] + "…"
        if index not in keep and len(line) + 1 <= budget:
            keep.add(index)
            budget -= len(line) + 1

    for index in (*range(min(3, len(lines))), *range(max(0, len(lines) - 3), len(lines))):
        take(index)
    for index, line in enumerate(lines):
        if budget <= 0:
            break
        if _IMPORTANT.search(line):
            take(index)
    out: list[str] = []
    skipped = 0
    for index, line in enumerate(lines):
        if index in keep:
            if skipped:
                out.append(f"[… {skipped} lines …]")
                skipped = 0
            out.append(line)
        else:
            skipped += 1
    if skipped:
        out.append(f"[… {skipped} lines …]")
    return "\n".join(out)


def _runs(codes: list[int | None]) -> str:
    shown = [("killed" if c is None else str(c)) for c in codes]
    if len(shown) > MAX_RUNS_SHOWN:
        half = MAX_RUNS_SHOWN // 2
        shown = [*shown[:half], f"… {len(shown) - 2 * half} more …", *shown[-half:]]
    return ", ".join(shown)


def render_ledger(ledger: p.Ledger) -> str:
    """The compact block the model sees after a compaction; every fact verbatim."""
    lines = ["Facts recorded by Baton from the tools (exact; not a summary):"]
    if ledger.files_read:
        shown = ledger.files_read[-MAX_FILES_SHOWN:]
        more = len(ledger.files_read) - len(shown)
        lines.append(
            "Files read: "
            + ", ".join(map(inline, shown))
            + (f" (and {more} earlier)" if more > 0 else "")
        )
    if ledger.files_modified:
        lines.append("Files changed:")
        for touch in ledger.files_modified[-MAX_FILES_SHOWN:]:
            lines.append(f"- {inline(touch.path)} ({touch.action} by {inline(touch.tool)})")
    else:
        lines.append("Files changed: none")
    if ledger.commands:
        shown_cmds = ledger.commands[-MAX_COMMANDS_SHOWN:]
        more = len(ledger.commands) - len(shown_cmds)
        lines.append("Commands run (exit code of each run, oldest first; the last is the latest):")
        if more > 0:
            lines.append(f"- … {more} earlier commands")
        # The failure an unresolved or resolved error shows already is not shown twice.
        shown_errors = {_one_line(e.message) for e in ledger.errors} | {
            e.message for e in ledger.resolved_errors
        }
        for run in shown_cmds:
            codes = run.exit_codes or [run.exit_code]
            lines.append(f"- `{inline(run.command)}` → {_runs(codes)}")
            for failure in run.failures:
                if failure.error not in shown_errors:
                    code = "killed" if failure.exit_code is None else failure.exit_code
                    lines.append(f"  run {failure.run} ({code}): {entry(failure.error, '    ')}")
            if run.output and codes[-1] == 0:
                lines.append(f"  printed: {entry(run.output, '    ')}")
    if ledger.errors:
        lines.append("Unresolved errors (not yet followed by a success):")
        for error in ledger.errors[-MAX_ERRORS_SHOWN:]:
            lines.append(f"- {inline(error.source)}: {entry(error.message)}")
    if ledger.resolved_errors:
        lines.append("Resolved errors (failed, then fixed; do not repeat what failed):")
        shown_resolved = ledger.resolved_errors[-MAX_RESOLVED_SHOWN:]
        more = len(ledger.resolved_errors) - len(shown_resolved)
        if more > 0:
            lines.append(f"- … {more} earlier")
        for done in shown_resolved:
            by = f" (resolved by {inline(done.resolved_by)})" if done.resolved_by else ""
            lines.append(f"- {inline(done.source)}: {entry(done.message)}{by}")
    if ledger.config_values:
        lines.append("Values in config files read (as read; the file may have changed since):")
        budget = MAX_CONFIG_VALUES_SHOWN
        for config in reversed(ledger.config_values):  # the latest files first
            if budget <= 0:
                break
            values = config.values[:budget]
            budget -= len(values)
            lines.append(f"- {inline(config.path)}: " + "; ".join(map(inline, values)))
    lines += render_children(ledger.children)
    if ledger.plan is not None:
        plan = ledger.plan
        line = f"{PLAN_LINE}{inline(plan.path)} ({plan.status}, version {plan.version})"
        if plan.steps:
            line += "; " + _steps_line(plan.steps)
        lines.append(line)
    if len(lines) == 2 and not ledger.files_modified:
        lines.append("(no tool activity yet)")
    lines.append(RECALL_HINT)
    return "\n".join(lines)


def children_work(messages: Iterable[StoredMessage]) -> list[p.ChildWork]:
    """The files and commands of the session's `task` children, by child, from the facts
    their results carry (each marked with the child's session)."""
    work: dict[str, tuple[dict[str, None], dict[str, list[int | None]]]] = {}
    for message in messages:
        # A `task` result carries them; so does the note of a step built in a child.
        noted = [Fact.from_json(data) for data in message.meta.get(CHILD_FACTS, [])]
        for fact in [*noted, *(f for r in message.results.values() for f in r.facts)]:
            if fact.session is None:
                continue
            files, commands = work.setdefault(fact.session, ({}, {}))
            if fact.kind == "modified" and fact.path:
                files.setdefault(fact.path, None)
            elif fact.kind == "command" and fact.command is not None:
                commands.setdefault(fact.command, []).append(fact.exit_code)
    return [
        p.ChildWork(
            child_id=child,
            files_modified=list(files),
            commands=[
                p.CommandRun(command=c, exit_code=runs[-1], exit_codes=runs)
                for c, runs in commands.items()
            ],
        )
        for child, (files, commands) in work.items()
    ]


def render_children(children: list[p.ChildWork]) -> list[str]:
    if not children:
        return []
    lines = ["Done by task children (each one's own ledger has the rest):"]
    for child in children[-MAX_FILES_SHOWN:]:
        files = ", ".join(map(inline, child.files_modified)) or "no file changed"
        runs = "; ".join(
            f"`{inline(run.command)}` → {_runs(run.exit_codes)}" for run in child.commands
        )
        lines.append(f"- {inline(child.child_id)}: {files}" + (f"; ran {runs}" if runs else ""))
    return lines


def without_plan_line(text: str) -> str:
    """A rendered ledger without its plan line, for a request whose plan block follows it
    (the block names the plan's path, status and version and holds every step's state)."""
    return "\n".join(line for line in text.split("\n") if not line.startswith(PLAN_LINE))


def _steps_line(steps: list[p.PlanStep]) -> str:
    counts: dict[str, int] = {}
    for step in steps:
        counts[step.state] = counts.get(step.state, 0) + 1
    order = ("done", "in_progress", "blocked", "open")
    parts = [f"{counts[s]} {s.replace('_', ' ')}" for s in order if counts.get(s)]
    line = f"{len(steps)} steps: " + ", ".join(parts)
    for step in steps:
        if step.state in ("in_progress", "blocked"):
            line += f"; [{MARKS[step.state]}] {inline(step.text)}"
    return line
