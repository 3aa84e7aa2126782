"""The deterministic ledger: facts a summary tends to lose, extracted by code.

Built from the whole stored history (compacted messages included), so it is
cumulative across compactions by construction and never depends on what a
model chose to write.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from baton import protocol as p
from baton.agent.framing import entry, inline
from baton.agent.ledger_text import PLAN_LINE
from baton.agent.tokens import estimate
from baton.compaction import room
from baton.compaction.ledger_fold import Entry, Section, entry_id, fold, group_id
from baton.compaction.outputs import config_values, error_excerpt, value_excerpt
from baton.plan.steps import MARKS
from baton.store.model import StoredMessage, ToolResultRecord
from baton.tools.base import Fact

if TYPE_CHECKING:
    from baton.agent.state import SessionState
    from baton.compaction.job import CompactionJob

# The ledger's budget when none is given (estimated tokens; `compaction.ledgerMaxTokens`).
DEFAULT_MAX_TOKENS = 8_000
# What the block's tags and its item cost besides the text (tokens).
BLOCK_OVERHEAD = 24
# The least budget a ledger gets, whatever the window (the plan line and a few errors).
MIN_BUDGET_TOKENS = 300
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
# Entries the summary request is told leave the ledger, at most (the newest).
MAX_LEAVING = 30
# A command run this many times or more is one the session runs again and again (the
# test command): it stays in the ledger longest.
REPEATED_RUNS = 3
# What a command printed, up to this many characters, is a value (a version, a port):
# it stays with the facts worth most; a longer output folds first.
VALUE_CHARS = 160
# A child's line names this many of its files and commands; its id the rest.
CHILD_FILES = 6
CHILD_COMMANDS = 4
# What makes a short output a value: a version (`2.31.0`, `Version:`) or an assignment.
_VALUE = re.compile(r"\d+\.\d+\.\d+|\bversion\b|\w=\S", re.IGNORECASE)
# Config files whose values are kept (the latest read ones).
MAX_CONFIG_FILES = 20
# The meta key of a note carrying a child's facts (a plan step built in a child).
CHILD_FACTS = "childFacts"
RECALL_HINT = "Anything compaction hid (pruned outputs, older messages) is one `recall` away."
FOLDED_HINT = (
    "Older entries are folded to one line or a count to keep this block small; "
    '`recall {"call_id": "ledger:…"}` with the id in brackets returns the full record '
    "(with the call ids whose exact outputs `recall` returns)."
)
HEADER = "Facts recorded by Baton from the tools (exact; not a summary):"
# Lines worth keeping when an error is cut: counts ("3 failed, 12 passed"), rule or
# error codes (E501, TS2345, error[E0308]), locations (path.py:12, line 12).
_IMPORTANT = re.compile(
    r"\b\d+\s+(?:passed|failed|errors?|warnings?|skipped|tests?|problems?|fixed)\b"
    r"|\b[A-Z]{1,4}\d{2,5}\b"
    r"|[\w./-]+\.\w+:\d+"
    r"|\bline \d+\b"
    r"|\b(?:Error|Exception|FAILED|FAIL|error|assert)\b",
)


def _finished_calls(
    messages: Iterable[StoredMessage],
) -> Iterator[tuple[str, dict[str, Any], ToolResultRecord]]:
    """(tool name, input, result) of every call that has a result, oldest first."""
    for message in messages:
        for part in message.tool_calls():
            result = message.results.get(part.tool_call_id)
            if result is not None:
                yield part.name, part.input or {}, result


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

    for name, args, result in _finished_calls(messages):
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
                if previous is not None and previous.action == "created" and action == "modified":
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


def _first_line(text: str) -> str:
    """An error's first line, within a line's worth of characters."""
    return _clip(text.strip().split("\n")[0])


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@functools.lru_cache(maxsize=4096)
def _one_line(text: str) -> str:
    """An error in one line: its first error line and its verdict, within RESOLVED_CHARS
    (cutting the joined lines from the end lost the message itself)."""
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


def render_ledger(ledger: p.Ledger, budget: int | None = DEFAULT_MAX_TOKENS) -> str:
    """The block the model sees after a compaction, within `budget` estimated tokens.

    Everything fits in full while it can; past the budget entries fold by value
    (`fold`): what is worth least first, detail lines before heads, heads before a
    count. Unresolved errors only ever shorten to one line, and the plan's line never
    folds."""
    return _folded(ledger, budget)[1]


def ledger_score(ledger: p.Ledger, budget: int | None) -> tuple[int, int, int]:
    """(facts tracked, shown with their details, folded one `recall` away) of the ledger
    rendered within `budget`: each entry is a fact (a file, a command and its runs, an
    error, a config file's values, a child's work)."""
    sections = _folded(ledger, budget)[0]
    entries = [e for s in sections for e in s.entries]
    shown = sum(1 for e in entries if e.state in ("full", "trimmed"))
    return len(entries), shown, len(entries) - shown


def leaving(
    ledger: p.Ledger, budget: int, shown_before: str, limit: int = MAX_LEAVING
) -> list[str]:
    """The entries the ledger folds within `budget` that `shown_before` (the ledger the
    view showed until now; "" at a first compaction) showed whole: their head lines,
    the newest `limit` of them, what the summary request is told leaves the ledger."""
    sections = _folded(ledger, budget)[0]
    heads: dict[bool, list[str]] = {True: [], False: []}
    for section in sections:
        for e in section.entries:
            head = e.full[0].strip()
            if e.state not in ("short", "counted") or (shown_before and head not in shown_before):
                continue
            read = section.name == "read"
            heads[read].append(f"- file read: {head.rstrip(',')}" if read else head)
    # Files only read matter least: named after the rest, and only while there is room.
    named = heads[False][-limit:]
    return named + heads[True][-(limit - len(named)) :] if len(named) < limit else named


# The last fold made, by ledger and budget: a compaction renders its ledger and then
# scores that same rendering (reading the entries' states does not change them).
_last_fold: list[tuple[p.Ledger, int | None, list[Section], str]] = []


def _folded(ledger: p.Ledger, budget: int | None) -> tuple[list[Section], str]:
    for known, known_budget, sections, text in _last_fold:
        if known is ledger and known_budget == budget:
            return sections, text
    sections, text = _fold_anew(ledger, budget)
    _last_fold[:] = [(ledger, budget, sections, text)]
    return sections, text


def _fold_anew(ledger: p.Ledger, budget: int | None) -> tuple[list[Section], str]:
    sections = ledger_sections(ledger)
    text = _render(sections, ledger)
    if budget is None:
        return sections, text
    # The fold counts each line's bytes; the block's own lines (the header, the plan
    # line, the hints) are what is left, measured once it is rendered.
    fixed = estimate(_render([], ledger)) * 4
    for _ in range(3):
        if estimate(text) <= budget:
            break
        fits = fold(sections, budget, fixed)
        text = _render(sections, ledger)
        fixed += max(0, estimate(text) - budget) * 4 + 40
        if not fits:
            break
    return sections, text


def ledger_budget(job: CompactionJob, tokens: int | None = None) -> int:
    """The ledger's budget for a compaction, in estimated tokens: `tokens` of the
    provider's (by default the floor, `compaction.ledgerShare` of the window within its
    cap; the engine then gives it the room the rest of the view leaves, `room.py`), at
    the session's measured rate of provider tokens per estimated one."""
    if tokens is None:
        tokens = ledger_limits(job)[0]
    return budget_at_rate(job.state, tokens)


def budget_at_rate(state: SessionState, tokens: int) -> int:
    """`tokens` of the provider's as a ledger budget in estimated tokens, at the
    session's measured rate."""
    return max(MIN_BUDGET_TOKENS, int((tokens - BLOCK_OVERHEAD) / ledger_rate(state)))


def ledger_rate(state: SessionState) -> float:
    """The provider's tokens per estimated token of the ledger's text (never under 1)."""
    content = state.token_model.content_rate()
    return max(1.0, state.calibration, content or 0.0)


def ledger_limits(job: CompactionJob) -> tuple[int, int]:
    """(floor, cap) of the ledger for a compaction, in the provider's tokens."""
    settings = job.settings.compaction
    window = job.before.context_window
    cap = room.ledger_cap(window, settings.ledger_max_tokens)
    return room.ledger_floor(window, settings.ledger_share, cap), cap


def ledger_sections(ledger: p.Ledger) -> list[Section]:
    """Every fact of the ledger as entries of sections, oldest first, all in full."""
    unresolved = {e.source for e in ledger.errors}
    shown_errors = {_one_line(e.message) for e in ledger.errors}
    # A failing run's error stands once: under its command, which keeps its distinct
    # errors longest (`trimmed`, `minimal`); the resolved section has the others.
    under_command = {
        (f"bash `{run.command}`", _one_line(failure.error))
        for run in ledger.commands
        for failure in run.failures
    } | {
        (f"bash `{run.command}`", failure.error)
        for run in ledger.commands
        for failure in run.failures
    }
    sections: list[Section] = []
    read = Section("read", "Files read:", noun="files read")
    for path in ledger.files_read:
        read.entries.append(Entry(f"read:{path}", [" " + inline(path) + ","]))
    sections.append(read)
    changed = Section("changed", "Files changed:", noun="files changed")
    for touch in ledger.files_modified:
        changed.entries.append(
            Entry(
                f"changed:{touch.path}",
                [f"- {inline(touch.path)} ({touch.action} by {inline(touch.tool)})"],
                tag="created" if touch.action == "created" else "",
            )
        )
    sections.append(changed)
    commands = Section(
        "commands",
        "Commands run (exit code of each run, oldest first; the last is the latest):",
        noun="commands whose latest run passed",
    )
    for run in ledger.commands:
        codes = run.exit_codes or [run.exit_code]
        head = f"- `{inline(run.command)}` → {_runs(codes)}"
        lines = [head]
        latest_unresolved = f"bash `{run.command}`" in unresolved and codes[-1] != 0
        for failure in run.failures:
            if failure.error in shown_errors:
                continue  # the error below shows it
            if latest_unresolved and failure.run == len(codes):
                continue  # the unresolved error below shows this run's output
            code = "killed" if failure.exit_code is None else failure.exit_code
            lines.append("  " + entry(f"run {failure.run} ({code}): {failure.error}", "    "))
        printed = run.output if run.output and codes[-1] == 0 else None
        if printed:
            lines.append("  " + entry(f"printed: {printed}", "    "))
        key = f"command:{run.command}"
        # Its distinct errors on one line each (the latest unresolved one is shown below).
        distinct: dict[str, str] = {}
        for failure in run.failures:
            if latest_unresolved and failure.run == len(codes):
                continue
            first = _first_line(failure.error)
            code = "killed" if failure.exit_code is None else failure.exit_code
            distinct.setdefault(first, f"  run {failure.run} ({code}): {inline(first)}")
        printed_line = [f"  printed: {inline(_clip(printed))}"] if printed else []
        details = [*distinct.values(), *printed_line]
        ends = list(distinct.values())
        ends = ends if len(ends) <= 2 else [ends[0], ends[-1]]
        tag = (
            "fixed"
            if run.failures and codes[-1] == 0
            else "repeated"
            if len(codes) >= REPEATED_RUNS
            else "value"
            if printed and len(printed) <= VALUE_CHARS and _VALUE.search(printed)
            else "output"
            if printed
            else "plain"
        )
        commands.entries.append(
            Entry(
                key,
                lines,
                short=(
                    f"{head}; printed {inline(_clip(printed, 80))} [{entry_id(key)}]"
                    if tag == "value" and printed
                    else f"{head} [{entry_id(key)}]"
                )
                if len(lines) > 1
                else None,
                countable=codes[-1] == 0,
                tag=tag,
                trimmed=[head, *details] if details and len(lines) > 1 else None,
                minimal=[head, *ends, *printed_line]
                if len(details) > len(ends) + len(printed_line)
                else None,
            )
        )
    sections.append(commands)
    errors = Section("errors", "Unresolved errors (not yet followed by a success):")
    for error in ledger.errors:
        key = f"error:{error.source}"
        first = _one_line(error.message).split("\n")[0]
        errors.entries.append(
            Entry(
                key,
                ["- " + entry(f"{inline(error.source)}: {error.message}")],
                short=f"- {inline(error.source)}: {inline(first)} [{entry_id(key)}]",
                countable=False,
            )
        )
    sections.append(errors)
    resolved = Section(
        "resolved",
        "Resolved errors (failed, then fixed; do not repeat what failed):",
        noun="resolved errors",
    )
    seen: dict[str, int] = {}
    for done in ledger.resolved_errors:
        seen[done.source] = seen.get(done.source, 0) + 1
        if (done.source, done.message) in under_command:
            continue
        key = f"resolved:{done.source}#{seen[done.source]}"
        by = f" (resolved by {inline(done.resolved_by)})" if done.resolved_by else ""
        resolved.entries.append(
            Entry(
                key,
                ["- " + entry(f"{inline(done.source)}: {done.message}{by}")],
                short=f"- {inline(done.source)}{by} [{entry_id(key)}]",
            )
        )
    sections.append(resolved)
    config = Section(
        "config",
        "Values in config files read (as read; the file may have changed since):",
        noun="config files",
    )
    for values in ledger.config_values:
        key = f"config:{values.path}"
        config.entries.append(
            Entry(
                key,
                [f"- {inline(values.path)}: " + "; ".join(inline(v) for v in values.values)],
                short=f"- {inline(values.path)}: {len(values.values)} values [{entry_id(key)}]",
            )
        )
    sections.append(config)
    children = Section(
        "children",
        "Done by task children (each one's own ledger has the rest):",
        noun="children",
    )
    for child in ledger.children:
        key = f"child:{child.child_id}"
        line = _child_line(child, key)
        latest = ", ".join(
            "killed" if r.exit_code is None else str(r.exit_code) for r in child.commands
        )
        brief = f"- {inline(child.child_id)}: {len(child.files_modified)} files changed" + (
            f"; ran {len(child.commands)} commands (latest exit codes {latest})"
            if child.commands
            else ""
        )
        children.entries.append(
            Entry(
                key,
                [line],
                short=f"{_clip(brief, 240)} [{entry_id(key)}]",
                record=[_child_record(child)],
            )
        )
    sections.append(children)
    return sections


def _child_line(child: p.ChildWork, key: str) -> str:
    """A child's files and commands, the first `CHILD_FILES` and `CHILD_COMMANDS` of them;
    the rest is named by the entry's id (`recall` returns the whole record)."""
    shown = child.files_modified[:CHILD_FILES]
    files = ", ".join(map(inline, shown)) or "no file changed"
    if len(child.files_modified) > len(shown):
        files += f" and {len(child.files_modified) - len(shown)} more"
    runs = "; ".join(
        f"`{inline(run.command)}` → {_runs(run.exit_codes)}"
        for run in child.commands[:CHILD_COMMANDS]
    )
    if len(child.commands) > CHILD_COMMANDS:
        runs += f"; and {len(child.commands) - CHILD_COMMANDS} more"
    line = f"- {inline(child.child_id)}: {files}" + (f"; ran {runs}" if runs else "")
    cut = len(child.files_modified) > CHILD_FILES or len(child.commands) > CHILD_COMMANDS
    return line + (f" [{entry_id(key)}]" if cut else "")


def _child_record(child: p.ChildWork) -> str:
    """A child's whole line: every file and every command."""
    files = ", ".join(map(inline, child.files_modified)) or "no file changed"
    runs = "; ".join(f"`{inline(run.command)}` → {_runs(run.exit_codes)}" for run in child.commands)
    return f"- {inline(child.child_id)}: {files}" + (f"; ran {runs}" if runs else "")


def _render(sections: Sequence[Section], ledger: p.Ledger) -> str:
    lines = [HEADER]
    folded = False
    for section in sections:
        shown = [line for e in section.entries for line in e.lines()]
        count = section.count_line()
        folded = folded or count is not None or any(e.state == "short" for e in section.entries)
        if section.name == "read":
            if shown or count:
                line = "Files read:" + "".join(shown).rstrip(",")
                if section.counted:
                    line += f" (and {section.counted:,} earlier, folded [{group_id(section.name)}])"
                lines.append(line)
            continue
        if section.name == "changed" and not section.entries:
            lines.append("Files changed: none")
            continue
        if not shown and not count:
            continue
        lines.append(section.title)
        if count:
            lines.append(count)
        lines.extend(shown)
    if ledger.plan is not None:
        plan = ledger.plan
        line = f"{PLAN_LINE}{inline(plan.path)} ({plan.status}, version {plan.version})"
        if plan.steps:
            line += "; " + _steps_line(plan.steps)
        lines.append(line)
    if len(lines) == 2 and not ledger.files_modified:
        lines.append("(no tool activity yet)")
    if folded:
        lines.append(FOLDED_HINT)
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


def folded_record(messages: Sequence[StoredMessage], wanted: str) -> str | None:
    """The full record behind a ledger id (`ledger:<8 hex>` or `ledger:<section>`), with
    the ids of the calls it comes from; None when no entry has that id."""
    ledger = build_ledger(messages, None)
    sections = ledger_sections(ledger)
    for section in sections:
        if group_id(section.name) == wanted:
            body = [line for e in section.entries for line in e.record or e.full]
            title = "Files read:" if section.name == "read" else section.title
            if section.name == "read":
                body = [line.strip().rstrip(",") for line in body]
                return f"{title} {len(body)}\n" + "\n".join(f"- {line}" for line in body)
            return "\n".join([title, *body])
        for item in section.entries:
            if item.id == wanted:
                calls = _calls_of(messages, item.key)
                text = "\n".join(item.record or item.full).strip()
                if section.name == "read":
                    text = "- file read: " + text.rstrip(",")
                if calls:
                    text += "\nFrom the calls (`recall` with a call id returns its exact output): "
                    text += ", ".join(calls)
                return text
    return None


def _calls_of(messages: Sequence[StoredMessage], key: str) -> list[str]:
    """The tool calls an entry's facts came from, oldest first, with their outcome."""
    kind, _, subject = key.partition(":")
    subject = subject.rsplit("#", 1)[0] if kind == "resolved" else subject
    found: list[str] = []
    for name, args, result in _finished_calls(messages):
        call_id = result.tool_call_id
        facts = result.facts
        if kind == "command":
            hit = any(f.kind == "command" and f.command == subject for f in facts)
        elif kind in ("read", "config"):
            hit = any(f.kind == "read" and f.path == subject for f in facts)
        elif kind == "changed":
            hit = any(f.kind == "modified" and f.path == subject for f in facts)
        elif kind == "child":
            hit = any(f.session == subject for f in facts)
        else:
            hit = _source(name, args) == subject
        if hit:
            codes = [f.exit_code for f in facts if f.kind == "command"]
            outcome = f"exit {codes[0]}" if codes else result.status
            found.append(f"{call_id} ({outcome})")
    return found


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
