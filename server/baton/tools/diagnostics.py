"""`diagnostics`, and the new problems a write or edit leaves: the editor's own.

The editor's language servers know of a type error the moment a file changes; a
client that announced `capabilities.diagnostics` answers `baton/editor/diagnostics`
with them. After a write or edit the file's problems are asked again once the
language server has had a moment (a short settle, then until they change, never
past `tools.diagnosticsWaitMs`), and only those that were not there before the
change are added to the tool's result, errors first, bounded. Asking before and after
the change together stays within `tools.diagnosticsWaitMs` (from the permission's answer on).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from baton.tools.base import ToolContext, ToolFailure, ToolInput, ToolResult
from baton.tools.sandbox import display_path, resolve_in_workspace

# Problems shown per call (the rest are counted); one line each, cut at this length.
MAX_SHOWN = 20
MAX_MESSAGE_CHARS = 300
# How long the language server is given before the first look after a change, and
# between looks.
SETTLE_S = 0.3
POLL_S = 0.25
_SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}


class DiagnosticsInput(ToolInput):
    path: str | None = None


class DiagnosticsTool:
    name: ClassVar[str] = "diagnostics"
    description: ClassVar[str] = "The editor's errors and warnings for a file, or all files."
    input_model: ClassVar[type[ToolInput]] = DiagnosticsInput
    read_only: ClassVar[bool] = True

    async def run(self, args: DiagnosticsInput, ctx: ToolContext) -> ToolResult:
        if ctx.diagnostics is None:
            raise ToolFailure("diagnostics is not available: the editor does not offer them")
        uris = None
        if args.path is not None:
            real = resolve_in_workspace(ctx.workspace, args.path, must_exist=True)
            uris = [real.as_uri()]
        items = await ctx.diagnostics.diagnostics(uris)
        if items is None:
            raise ToolFailure("the editor did not answer; try again later")
        problems = [
            (file_label(ctx.workspace, item.uri), d)
            for item in items
            for d in item.diagnostics
            if _in_workspace(ctx.workspace, item.uri)
        ]
        if not problems:
            where = args.path or "the workspace"
            return ToolResult(output=f"No problems reported by the editor for {where}.")
        return ToolResult(output=format_problems(problems))


def file_label(workspace: Path, uri: str) -> str:
    path = _path_of(uri)
    if path is None:
        return uri
    return display_path(workspace, path)


def _path_of(uri: str) -> Path | None:
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return None
    return Path(unquote(parts.path))


def _in_workspace(workspace: Path, uri: str) -> bool:
    path = _path_of(uri)
    if path is None:
        return False
    try:
        path.resolve().relative_to(workspace)
    except ValueError:
        return False
    return True


def _severity(d: dict[str, Any]) -> int:
    value = d.get("severity")
    return value if isinstance(value, int) and value in _SEVERITY else 1


def _line(d: dict[str, Any]) -> int:
    try:
        return int(d["range"]["start"]["line"]) + 1
    except (KeyError, TypeError, ValueError):
        return 0


def _key(d: dict[str, Any]) -> tuple[Any, ...]:
    """A problem's identity across an edit: its lines move, its words do not."""
    return (_severity(d), str(d.get("message", "")), str(d.get("code", "")), d.get("source"))


def format_problems(problems: list[tuple[str, dict[str, Any]]]) -> str:
    """One line a problem, errors before warnings, at most `MAX_SHOWN`."""
    ranked = sorted(problems, key=lambda item: (_severity(item[1]), item[0], _line(item[1])))
    lines = []
    for label, d in ranked[:MAX_SHOWN]:
        message = " ".join(str(d.get("message", "")).split())[:MAX_MESSAGE_CHARS]
        source = d.get("source")
        code = d.get("code")
        origin = f" ({source}{' ' + str(code) if code not in (None, '') else ''})" if source else ""
        lines.append(f"{label}:{_line(d)}: {_SEVERITY[_severity(d)]}: {message}{origin}")
    if len(ranked) > MAX_SHOWN:
        lines.append(f"[... {len(ranked) - MAX_SHOWN} more problems not shown]")
    return "\n".join(lines)


def problems_deadline(ctx: ToolContext) -> float:
    """When a write or edit stops waiting for the editor: everything it asks (before and
    after the change) fits in `tools.diagnosticsWaitMs`."""
    return time.monotonic() + ctx.settings.tools.diagnostics_wait_ms / 1000


async def problems_of(ctx: ToolContext, path: Path, deadline: float) -> list[dict[str, Any]] | None:
    """The editor's problems for one file now; None when it cannot say before `deadline`."""
    if ctx.diagnostics is None or not ctx.settings.tools.diagnostics_after_edit:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        return None
    uri = path.as_uri()
    try:
        items = await asyncio.wait_for(ctx.diagnostics.diagnostics([uri]), left)
    except TimeoutError:
        return None
    if items is None:
        return None
    return [d for item in items if item.uri == uri for d in item.diagnostics]


async def new_problems(
    ctx: ToolContext, path: Path, before: list[dict[str, Any]], deadline: float
) -> str:
    """The file's problems that were not there before the change, as a note for the tool's
    result ('' when there are none or the editor does not say before `deadline`)."""
    if ctx.diagnostics is None or not ctx.settings.tools.diagnostics_after_edit:
        return ""
    await asyncio.sleep(min(SETTLE_S, max(0.0, deadline - time.monotonic())))
    after: list[dict[str, Any]] | None = None
    previous = Counter(_key(d) for d in before)
    while True:
        now = await problems_of(ctx, path, deadline)
        if now is not None:
            after = now
            if Counter(_key(d) for d in now) != previous:
                break
        if time.monotonic() + POLL_S > deadline:
            break
        await asyncio.sleep(POLL_S)
    if not after:
        return ""
    remaining = Counter(previous)
    fresh = []
    for d in after:
        key = _key(d)
        if remaining[key] > 0:
            remaining[key] -= 1
        elif _severity(d) <= 2:
            fresh.append((display_path(ctx.workspace, path), d))
    if not fresh:
        return ""
    return "\n\nNew problems the editor reports in this file:\n" + format_problems(fresh)
