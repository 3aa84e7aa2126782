"""Baton's core vocabulary in ACP's: tool kinds and titles, locations, diffs, plan entries.

Pure functions: they read the workspace (a file's text before a write, for the
diff an editor shows) but change nothing and never talk to the client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    PlanEntry,
    TextContentBlock,
    ToolCallLocation,
)

from baton.labels import label, was_cut
from baton.plan.steps import ACP_STATUS, parse_steps
from baton.terminal_escape import escape_terminal
from baton.tools.base import ToolFailure
from baton.tools.fileio import read_bytes
from baton.tools.replace import replace_exact
from baton.tools.sandbox import resolve_in_workspace

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
PlanStatus = Literal["pending", "in_progress", "completed"]

# A file larger than this gets no old/new diff in the tool call (the editor would have to
# hold both copies); the permission request still names the file.
DIFF_MAX_BYTES = 1_000_000

_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "glob": "search",
    "grep": "search",
    "recall": "search",
    "bash": "execute",
}


def tool_kind(name: str) -> ToolKind:
    """The ACP kind of a Baton tool, so editors pick the right icon and grouping."""
    if name in _KINDS:
        return _KINDS[name]
    if name.startswith("plan_"):
        # Writing, editing and showing the plan is the agent's thinking made visible.
        return "think"
    if "__" in name:
        # An MCP tool: a name that says it fetches is a fetch, anything else is opaque.
        tool = name.split("__", 1)[1].lower()
        if "fetch" in tool or tool.startswith(("get_url", "http")):
            return "fetch"
    return "other"


# A command's characters in a tool call's title, at most; past it the title says the
# whole command is in the call's content (`command_content`).
COMMAND_TITLE_MAX = 120


def tool_title(name: str, args: dict[str, Any]) -> str:
    """A one-line title such as `Read src/app.py` or `Run \\`pytest -q\\``: a label (one
    line, escaped, at most 500 characters: baton.labels). A command too long for it is cut
    and the title says so."""
    return label(_title(name, args))


def _title(name: str, args: dict[str, Any]) -> str:
    path = str(args.get("path") or "")
    if name == "read":
        return f"Read {path}"
    if name == "write":
        return f"Write {path}"
    if name == "edit":
        return f"Edit {path}"
    if name == "glob":
        return f"Find {args.get('pattern', '')}"
    if name == "grep":
        where = f" in {path}" if path else ""
        return f"Search '{args.get('pattern', '')}'{where}"
    if name == "bash":
        command = str(args.get("command", ""))
        if not was_cut(command, COMMAND_TITLE_MAX):
            return f"Run `{label(command)}`"
        shown = label(command, COMMAND_TITLE_MAX)
        return f"Run `{shown}` (cut: {len(command):,} characters, the whole command below)"
    if name.startswith("plan_"):
        return name.replace("_", " ").capitalize()
    if name == "task":
        return f"Delegate to {args.get('agent', 'an agent')}: {args.get('description', '')}".strip()
    return name


def command_content(name: str, args: dict[str, Any]) -> ContentToolCallContent | None:
    """The whole command of a `bash` call, as the content of its permission request: what
    the person approves is shown whatever the editor does with `rawInput`. Control and
    bidi characters are shown as escapes; newlines are kept."""
    command = args.get("command")
    if name != "bash" or not isinstance(command, str):
        return None
    shown = escape_terminal(command)
    fence = "`" * max(3, _longest_run(shown, "`") + 1)
    return ContentToolCallContent(
        type="content",
        content=TextContentBlock(type="text", text=f"{fence}sh\n{shown}\n{fence}"),
    )


def _longest_run(text: str, char: str) -> int:
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == char else 0
        longest = max(longest, run)
    return longest


def locations(workspace: Path, name: str, args: dict[str, Any]) -> list[ToolCallLocation]:
    """Where a tool works (absolute paths inside the workspace), for follow-along editors."""
    raw = args.get("path")
    if not isinstance(raw, str) or not raw or name == "bash":
        return []
    try:
        real = resolve_in_workspace(workspace, raw)
    except ToolFailure:
        return []
    line = args.get("offset") if name == "read" else None
    return [ToolCallLocation(path=str(real), line=line if isinstance(line, int) else None)]


def change_target(workspace: Path, name: str, args: dict[str, Any]) -> Path | None:
    """The file a write or edit would change, if it is one Baton may change."""
    if name not in ("write", "edit") or not isinstance(args.get("path"), str):
        return None
    try:
        return resolve_in_workspace(workspace, args["path"], for_write=True)
    except ToolFailure:
        return None


def file_diff(
    workspace: Path, name: str, args: dict[str, Any], *, editor_text: str | None = None
) -> FileEditToolCallContent | None:
    """The old and new text of a write or edit, computed before it runs (None: not a change
    Baton can show, e.g. outside the workspace, binary, too large, or an edit that will fail).
    `editor_text` is the editor's buffer of the file, which the tool will change instead."""
    real = change_target(workspace, name, args)
    if real is None:
        return None
    try:
        old_bytes = read_bytes(workspace, real)
    except (ToolFailure, OSError):
        return None
    if old_bytes is not None and (len(old_bytes) > DIFF_MAX_BYTES or b"\x00" in old_bytes[:8192]):
        return None
    old = None if old_bytes is None else old_bytes.decode("utf-8", errors="replace")
    if old is not None and editor_text is not None:
        old = editor_text
    if name == "write":
        new = args.get("content")
        if not isinstance(new, str):
            return None
    else:
        old_string, new_string = args.get("old_string"), args.get("new_string")
        if old is None or not isinstance(old_string, str) or not isinstance(new_string, str):
            return None
        try:
            new, _count, _line = replace_exact(
                old, old_string, new_string, bool(args.get("replace_all")), args["path"]
            )
        except ToolFailure:
            return None
    return FileEditToolCallContent(type="diff", path=str(real), old_text=old, new_text=new)


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


_STATUS: dict[str, PlanStatus] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "completed",
}


def plan_entries(content: str) -> list[PlanEntry]:
    """The plan file's checklist as ACP plan entries, in file order (`baton.plan.steps`).

    Done is completed, `[~]` in progress; open and blocked steps are pending (ACP has no
    blocked state: the reason stays in the entry's text and its `_meta`). Baton plans
    carry no priorities, so every step is `medium`.
    """
    return [
        PlanEntry(
            content=step.text,
            status=_STATUS[ACP_STATUS[step.state]],
            priority="medium",
            field_meta={"baton": {"state": step.state}} if step.state == "blocked" else None,
        )
        for step in parse_steps(content)
    ]
