"""The search tools: glob (find files by name) and grep (find lines by regex).

Both are read-only, confined to the workspace (symbolic links whose targets
lie outside are never followed or read), skip `.git`, `node_modules`, `.venv`
and `__pycache__` while walking, and cap their results with a note saying so,
so that one broad search cannot flood the model's context.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from typing import ClassVar

from pydantic import Field

from baton.tools.base import ToolContext, ToolFailure, ToolInput, ToolResult
from baton.tools.fileio import SNIFF_BYTES, looks_binary
from baton.tools.sandbox import (
    SandboxError,
    display_path,
    resolve_in_workspace,
    without_workspace_name,
    workspace_name_hint,
    workspace_root,
)
from baton.tools.walk import WalkStats, expand_braces, has_magic, iter_files, match_segments

GLOB_MAX_RESULTS = 200
GREP_MAX_MATCHES = 200
# Characters of a matching line that grep shows.
GREP_MAX_LINE_CHARS = 300
# Files larger than this are not searched by grep.
GREP_MAX_FILE_BYTES = 2 * 1024 * 1024

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class GlobInput(ToolInput):
    pattern: str = Field(
        description=(
            'Glob relative to the workspace, e.g. "**/*.py", "src/*.ts", "**/test_*.{ts,tsx}". '
            "`**` matches any number of directories; `*` stays within one."
        )
    )


class GrepInput(ToolInput):
    pattern: str = Field(
        description="Python regular expression, searched line by line; use (?i) to ignore case."
    )
    path: str | None = Field(
        None,
        description="File or directory to search, relative to the workspace (default: all of it).",
    )
    include: str | None = Field(
        None,
        description='Only search files whose name matches this glob, e.g. "*.py" or "*.{ts,tsx}".',
    )


def _join(prefix: str, rel: str) -> str:
    return rel if prefix == "." else f"{prefix}/{rel}"


class GlobTool:
    name: ClassVar[str] = "glob"
    description: ClassVar[str] = (
        "Find files in the workspace by path pattern. Returns workspace-relative paths, "
        f"newest first, at most {GLOB_MAX_RESULTS}. Skips .git, node_modules, .venv and "
        "__pycache__ unless the pattern names them. `*.py` matches only the top level; "
        "use `**/*.py` for all directories."
    )
    input_model: ClassVar[type[ToolInput]] = GlobInput
    read_only: ClassVar[bool] = True

    async def run(self, args: GlobInput, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._glob, args.pattern, ctx)

    def _glob(self, pattern: str, ctx: ToolContext) -> ToolResult:
        root = workspace_root(ctx.workspace)
        stats = WalkStats()
        found: dict[str, float] = {}
        for expanded in expand_braces(_normalise_pattern(ctx, pattern)):
            segments = expanded.split("/")
            literal = 0
            while literal < len(segments) - 1 and not has_magic(segments[literal]):
                literal += 1
            start = resolve_in_workspace(ctx.workspace, "/".join(segments[:literal]) or ".")
            if not start.is_dir():
                continue
            prefix = display_path(ctx.workspace, start)
            rest = segments[literal:]
            max_depth = None if "**" in rest else len(rest)
            for rel, real in iter_files(root, str(start), max_depth=max_depth, stats=stats):
                if match_segments(rest, rel.split("/")):
                    try:
                        found[_join(prefix, rel)] = os.stat(real).st_mtime
                    except OSError:
                        continue
        ordered = sorted(found, key=lambda p: (-found[p], p))
        lines = ordered[:GLOB_MAX_RESULTS]
        notes: list[str] = []
        if len(ordered) > GLOB_MAX_RESULTS:
            notes.append(
                f"[{GLOB_MAX_RESULTS} of {len(ordered)} matches shown, newest first; "
                "narrow the pattern to see the rest]"
            )
        if stats.truncated:
            notes.append(
                f"[stopped after looking at {stats.scanned - 1} entries; "
                "start the pattern with a directory to narrow it]"
            )
        if not lines:
            hint = _no_match_hint(ctx, pattern)
            return ToolResult(output="\n".join([f"no files match {pattern}{hint}", *notes]))
        return ToolResult(output="\n".join(lines + notes))


def _no_match_hint(ctx: ToolContext, pattern: str) -> str:
    normalised = _normalise_pattern(ctx, pattern)
    root = workspace_root(ctx.workspace)
    rest = without_workspace_name(root, normalised)
    if rest is not None:
        return f'; {workspace_name_hint(root)}: try "{rest}"'
    if not has_magic(normalised):
        try:
            if resolve_in_workspace(ctx.workspace, normalised).is_dir():
                return f'; {normalised} is a directory, list it with "{normalised}/*"'
        except SandboxError:
            return ""
    if "/" not in normalised:
        return f'; to search all directories use "**/{normalised}"'
    return ""


def _normalise_pattern(ctx: ToolContext, pattern: str) -> str:
    """The pattern relative to the workspace, or SandboxError when it points outside it."""
    pattern = pattern.strip()
    if not pattern:
        raise ToolFailure('pattern is empty; give a glob such as "**/*.py"')
    if os.path.isabs(pattern):
        root = workspace_root(ctx.workspace)
        spellings = {root, os.path.normpath(os.path.abspath(ctx.workspace))}
        for spelled in spellings:
            if pattern == spelled or pattern.startswith(spelled.rstrip("/") + "/"):
                pattern = pattern[len(spelled) :].lstrip("/") or "*"
                break
        else:
            raise SandboxError(
                f"pattern escapes the workspace: {pattern}; give a pattern relative to the "
                "workspace"
            )
    segments = [s for s in pattern.split("/") if s not in ("", ".")]
    if ".." in segments:
        raise SandboxError(f"pattern escapes the workspace: {pattern}; `..` is not allowed")
    return "/".join(segments) or "*"


class GrepTool:
    name: ClassVar[str] = "grep"
    description: ClassVar[str] = (
        "Search file contents with a Python regular expression, line by line. Returns "
        f"`path:line: text`, at most {GREP_MAX_MATCHES} matches, lines cut to "
        f"{GREP_MAX_LINE_CHARS} characters. Skips binary files, files over 2 MB, and .git, "
        "node_modules, .venv, __pycache__ directories."
    )
    input_model: ClassVar[type[ToolInput]] = GrepInput
    read_only: ClassVar[bool] = True

    async def run(self, args: GrepInput, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._grep, args, ctx)

    def _grep(self, args: GrepInput, ctx: ToolContext) -> ToolResult:
        try:
            regex = re.compile(args.pattern)
        except re.error as exc:
            raise ToolFailure(
                f"invalid regular expression {args.pattern!r}: {exc}; the pattern is a Python "
                r"regex, so escape special characters such as ( [ { . * + ? with a backslash"
            ) from exc
        prefilter = _prefilter(args.pattern)
        root = workspace_root(ctx.workspace)
        start = resolve_in_workspace(ctx.workspace, args.path or ".", must_exist=True)
        shown_start = display_path(ctx.workspace, start)
        stats = WalkStats()
        if start.is_file():
            files: list[tuple[str, str]] = [(shown_start, str(start))]
        elif start.is_dir():
            includes = expand_braces(args.include) if args.include else None
            files = [
                (_join(shown_start, rel), real)
                for rel, real in iter_files(root, str(start), stats=stats)
                if includes is None or _included(rel, includes)
            ]
        else:
            raise ToolFailure(f"{shown_start} is not a file or directory")

        budget = ctx.settings.tools.max_output_chars - 500
        out: list[str] = []
        used = 0
        large = 0
        stopped = False
        for shown, real in files:
            text = _read_text(real)
            if text is None:
                large += 1
                continue
            if not text or (prefilter is not None and not prefilter.search(text)):
                continue
            for lineno, line in enumerate(text.splitlines(), 1):
                if not regex.search(line):
                    continue
                if len(out) >= GREP_MAX_MATCHES or used > budget:
                    stopped = True
                    break
                if len(line) > GREP_MAX_LINE_CHARS:
                    line = line[:GREP_MAX_LINE_CHARS] + " [...]"
                entry = f"{shown}:{lineno}: {line.rstrip()}"
                out.append(entry)
                used += len(entry) + 1
            if stopped:
                break

        notes: list[str] = []
        if stopped:
            notes.append(f"[stopped after {len(out)} matches; narrow the pattern, path or include]")
        if large:
            notes.append(f"[{large} files over 2 MB were not searched]")
        if stats.truncated:
            notes.append(f"[stopped after looking at {stats.scanned - 1} entries; narrow the path]")
        if not out:
            where = shown_start + (f" (files matching {args.include})" if args.include else "")
            return ToolResult(
                output="\n".join([f"no matches for {args.pattern} in {where}", *notes])
            )
        return ToolResult(output="\n".join(out + notes))


def _included(rel: str, includes: list[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    for include in includes:
        if "/" in include:
            if match_segments(include.strip("/").split("/"), rel.split("/")):
                return True
        elif match_segments([include], [name]):
            return True
    return False


def _prefilter(pattern: str) -> re.Pattern[str] | None:
    """A whole-file regex that finds every file where some line matches, or None.

    Searching the whole text once is much faster than line by line on files
    without a match. With MULTILINE, `^`/`$` behave as on single lines; patterns
    whose meaning would change across lines (anchors \\A \\Z, explicit newlines,
    lookbehinds) go without it.
    """
    if re.search(r"\\[AZn]|\(\?<", pattern):
        return None
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error:
        return None


def _read_text(real: str) -> str | None:
    """A file's text for grep: "" when it cannot or should not be searched, None when too large.

    `real` is already resolved inside the workspace; O_NOFOLLOW refuses a link
    swapped in since the walk.
    """
    try:
        fd = os.open(real, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC)
    except OSError:
        return ""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ""
        if st.st_size > GREP_MAX_FILE_BYTES:
            return None
        with open(fd, "rb", closefd=False) as fh:
            data = fh.read(GREP_MAX_FILE_BYTES + 1)
    except OSError:
        return ""
    finally:
        os.close(fd)
    if len(data) > GREP_MAX_FILE_BYTES:
        return None
    if looks_binary(data[:SNIFF_BYTES]):
        return ""
    return data.decode("utf-8", errors="replace")
