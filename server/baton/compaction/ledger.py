"""The deterministic ledger: facts a summary tends to lose, extracted by code.

Built from the whole stored history (compacted messages included), so it is
cumulative across compactions by construction and never depends on what a
model chose to write.
"""

from __future__ import annotations

from collections.abc import Iterable

from baton import protocol as p
from baton.session.model import StoredMessage

# Rendering caps, far above what a working session reaches (the record keeps every
# fact regardless): they only stop a runaway session from growing the block forever.
MAX_COMMANDS_SHOWN = 300
MAX_ERRORS_SHOWN = 50
ERROR_CHARS = 400
MAX_FILES_SHOWN = 1000


def build_ledger(messages: Iterable[StoredMessage], plan: p.PlanState | None) -> p.Ledger:
    files_read: dict[str, None] = {}
    modified: dict[str, p.FileTouch] = {}
    commands: dict[str, p.CommandRun] = {}
    # Unresolved errors, keyed by what would resolve them (the same command or target).
    errors: dict[str, p.UnresolvedError] = {}

    for message in messages:
        for part in message.tool_calls():
            call_id = part.data["toolCallId"]
            name = part.data["name"]
            args = part.data.get("input") or {}
            result = message.results.get(call_id)
            if result is None:
                continue
            for fact in result.facts:
                if fact.kind == "read" and fact.path:
                    files_read.setdefault(fact.path, None)
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
                    commands.pop(fact.command, None)
                    commands[fact.command] = p.CommandRun(
                        command=fact.command, exit_code=fact.exit_code
                    )
            key = _error_key(name, args)
            if result.status == "failed":
                errors.pop(key, None)
                errors[key] = p.UnresolvedError(
                    source=_source(name, args), message=_first_lines(result.output)
                )
            else:
                errors.pop(key, None)
                # A successful edit or write of a file resolves earlier failures on that file.
                path = args.get("path")
                if isinstance(path, str):
                    for other in [k for k in errors if k.endswith(f"::{path}")]:
                        errors.pop(other, None)

    return p.Ledger(
        files_read=list(files_read),
        files_modified=list(modified.values()),
        commands=list(commands.values()),
        errors=list(errors.values()),
        plan=plan,
    )


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


def _first_lines(text: str) -> str:
    text = text.strip()
    if len(text) <= ERROR_CHARS:
        return text
    return text[: ERROR_CHARS - 20].rstrip() + " …" + text[-20:]


def render_ledger(ledger: p.Ledger) -> str:
    """The compact block the model sees after a compaction; every fact verbatim."""
    lines = ["Facts recorded by Baton from the tools (exact; not a summary):"]
    if ledger.files_read:
        shown = ledger.files_read[-MAX_FILES_SHOWN:]
        more = len(ledger.files_read) - len(shown)
        lines.append(
            "Files read: " + ", ".join(shown) + (f" (and {more} earlier)" if more > 0 else "")
        )
    if ledger.files_modified:
        lines.append("Files changed:")
        for touch in ledger.files_modified[-MAX_FILES_SHOWN:]:
            lines.append(f"- {touch.path} ({touch.action} by {touch.tool})")
    if ledger.commands:
        shown_cmds = ledger.commands[-MAX_COMMANDS_SHOWN:]
        more = len(ledger.commands) - len(shown_cmds)
        lines.append("Commands run (latest run of each; exit code):")
        if more > 0:
            lines.append(f"- … {more} earlier commands")
        for run in shown_cmds:
            code = "killed or timed out" if run.exit_code is None else str(run.exit_code)
            lines.append(f"- `{run.command}` → {code}")
    if ledger.errors:
        lines.append("Unresolved errors (not yet followed by a success):")
        for error in ledger.errors[-MAX_ERRORS_SHOWN:]:
            message = error.message.replace("\n", "\n  ")
            lines.append(f"- {error.source}: {message}")
    if ledger.plan is not None:
        plan = ledger.plan
        lines.append(f"Plan: {plan.path} ({plan.status}, version {plan.version})")
    if len(lines) == 1:
        lines.append("(no tool activity yet)")
    return "\n".join(lines)
