"""The search tools: glob (find files by name) and grep (find lines by regex).

Both run ripgrep (`tools/ripgrep.py`): a linear-time regex engine in its own
process, so no pattern can stall the server, and a time limit or a cancelled
turn kills it. Both are read-only and confined to the workspace: rg never
follows a symbolic link, links to files inside the workspace are added by the
walk, every path shown is checked again, and grep shows a line only when a
read through the sandbox gives the same bytes rg matched. They respect
.gitignore, skip `.git`, `node_modules`, `.venv` and `__pycache__` below where
they start, and cap their results with a note saying so, so that one broad
search cannot flood the model's context.

A session's additional directories (`ToolContext.read_roots`, an ACP editor's
`additionalDirectories`) are searched the same way, each confined to itself as the
workspace is (the same sandbox, with the directory as its root): a search of the
whole workspace (a relative glob pattern, a grep without a path) covers them too,
and an absolute pattern or path inside one searches that one alone. What comes from
one is shown by its absolute path, so `read` takes it as it is.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from baton.tools.base import ToolContext, ToolFailure, ToolInput, ToolResult
from baton.tools.fileio import SNIFF_BYTES, looks_binary
from baton.tools.ripgrep import COMMON_ARGS, RG_TIME_LIMIT, RgRun, run_rg
from baton.tools.sandbox import (
    SandboxError,
    display_path,
    is_inside,
    open_file,
    read_root,
    resolve_in_workspace,
    without_workspace_name,
    workspace_name_hint,
    workspace_root,
)
from baton.tools.walk import (
    MAX_SCAN,
    WalkStats,
    expand_braces,
    has_magic,
    iter_files,
    match_segments,
)

GLOB_MAX_RESULTS = 200
GREP_MAX_MATCHES = 200
# Characters of a matching line that grep shows.
GREP_MAX_LINE_CHARS = 300
# Files larger than this are not searched by grep.
GREP_MAX_FILE_BYTES = 2 * 1024 * 1024

# Bytes of command line given to links searched by name (well under any ARG_MAX).
MAX_LINK_ARG_BYTES = 64 * 1024

_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class GlobInput(ToolInput):
    pattern: str  # the description's examples say what it takes


class GrepInput(ToolInput):
    pattern: str = Field(description="(?i) ignores case.")
    path: str | None = None
    include: str | None = Field(None, description='File names, e.g. "*.py".')


def _join(prefix: str, rel: str) -> str:
    return rel if prefix == "." else f"{prefix}/{rel}"


@dataclasses.dataclass
class _Target:
    """One directory a search runs in: the workspace (`label` None) or an additional
    directory, searched with a context whose workspace it is and shown under `label`,
    its absolute path."""

    ctx: ToolContext
    label: str | None = None

    def show(self, line: str) -> str:
        return line if self.label is None else f"{self.label.rstrip('/')}/{line}"

    def note(self, text: str) -> str:
        return text if self.label is None else f"{text} (in {self.label})"


def _targets(ctx: ToolContext, where: str | None) -> list[_Target]:
    """Where a search of `where` (a glob pattern or grep path; None: the whole
    workspace) runs: the additional directory an absolute `where` lies in, else the
    workspace, and every additional directory when the search covers the whole
    workspace (`where` relative for glob, None for grep)."""
    if where is not None and os.path.isabs(where.strip()):
        root = read_root(ctx.workspace, ctx.read_roots, where.strip())
        return [_Target(ctx)] if root == ctx.workspace else [_in_root(ctx, root)]
    return [_Target(ctx), *(_in_root(ctx, root) for root in ctx.read_roots)]


def _in_root(ctx: ToolContext, root: Path) -> _Target:
    # Confined to that directory as the workspace is; nothing of it is written.
    confined = dataclasses.replace(ctx, workspace=root, read_roots=(), write_roots=())
    return _Target(confined, label=str(root))


class GlobTool:
    name: ClassVar[str] = "glob"
    description: ClassVar[str] = (
        f"Find files by path pattern (`**/*.py`: any depth), newest first, up to "
        f"{GLOB_MAX_RESULTS}."
    )
    input_model: ClassVar[type[ToolInput]] = GlobInput
    read_only: ClassVar[bool] = True

    async def run(self, args: GlobInput, ctx: ToolContext) -> ToolResult:
        pattern = args.pattern
        targets = _targets(ctx, pattern)
        ordered: list[str] = []
        lines: list[str] = []
        notes: list[str] = []
        for target in targets:
            found, shown, listing = await self._search(target.ctx, pattern)
            ordered.extend(found)
            lines.extend(target.show(line) for line in shown)
            notes.extend(target.note(note) for note in listing.notes())
        if len(ordered) > GLOB_MAX_RESULTS:
            notes.insert(
                0,
                f"[{GLOB_MAX_RESULTS} of {len(ordered)} matches shown, newest first"
                f"{' in each directory' if len(targets) > 1 else ''}; narrow the pattern to "
                "see the rest]",
            )
        lines = lines[:GLOB_MAX_RESULTS]
        if not lines:
            hint = _no_match_hint(targets[0].ctx, pattern)
            return ToolResult(output="\n".join([f"no files match {pattern}{hint}", *notes]))
        return ToolResult(output="\n".join(lines + notes))

    async def _search(self, ctx: ToolContext, pattern: str) -> tuple[list[str], list[str], Listing]:
        """Every match in `ctx`'s workspace, newest first, the ones to show, and what the
        listing met."""
        root = workspace_root(ctx.workspace)
        # Each start directory is listed once, as deep as its deepest pattern needs.
        starts: dict[str, tuple[str, list[list[str]], int | None]] = {}
        for expanded in expand_braces(_normalise_pattern(ctx, pattern)):
            segments = expanded.split("/")
            literal = 0
            while literal < len(segments) - 1 and not has_magic(segments[literal]):
                literal += 1
            start = resolve_in_workspace(ctx.workspace, "/".join(segments[:literal]) or ".")
            if not start.is_dir():
                continue
            rest = segments[literal:]
            depth = None if "**" in rest else len(rest)
            prefix, patterns, known = starts.get(
                str(start), (display_path(ctx.workspace, start), [], depth)
            )
            if depth is not None and known is not None:
                depth = max(depth, known)
            starts[str(start)] = (prefix, [*patterns, rest], depth)
        listing = Listing()
        listed = []
        for start_path, (prefix, patterns, depth) in starts.items():
            files = await list_files(root, start_path, depth, listing, _name_globs(patterns))
            listed.append((prefix, patterns, files))
        ordered, lines = await asyncio.to_thread(_newest_matches, root, listed)
        return ordered, lines, listing


def _name_globs(patterns: list[list[str]]) -> list[str]:
    """File-name globs for rg that let through every file the patterns can match.

    Only a prefilter (rg's glob dialect differs at the edges, so anything unusual
    gives none); `match_segments` decides.
    """
    names = []
    for rest in patterns:
        last = rest[-1]
        if "**" in last or any(c in last for c in "{}\\!"):
            return []
        names.append(last)
    return names


def _newest_matches(
    root: str, listed: list[tuple[str, list[list[str]], list[tuple[str, str]]]]
) -> tuple[list[str], list[str]]:
    """Every matching path, newest first, and the ones to show (checked inside the workspace)."""
    found: dict[str, float] = {}
    for prefix, patterns, files in listed:
        for rel, real in files:
            parts = rel.split("/")
            shown = _join(prefix, rel)
            if shown in found or not any(match_segments(rest, parts) for rest in patterns):
                continue
            try:
                found[shown] = os.stat(os.path.join(root, real), follow_symlinks=False).st_mtime
            except OSError:
                continue
    ordered = sorted(found, key=lambda p: (-found[p], p))
    # Every path shown is checked once more: a folder swapped for a link to
    # outside the workspace since rg listed it drops out here.
    lines: list[str] = []
    for shown in ordered:
        if len(lines) == GLOB_MAX_RESULTS:
            break
        if is_inside(root, os.path.join(root, shown)):
            lines.append(shown)
    return ordered, lines


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
        f"Regex search of file contents (ripgrep). Returns `path:line: text`, up to "
        f"{GREP_MAX_MATCHES}."
    )
    input_model: ClassVar[type[ToolInput]] = GrepInput
    read_only: ClassVar[bool] = True

    async def run(self, args: GrepInput, ctx: ToolContext) -> ToolResult:
        if "\x00" in args.pattern:
            raise ToolFailure("the pattern contains a NUL character")
        if args.path is None or os.path.isabs(args.path):
            targets = _targets(ctx, args.path)
        else:
            targets = [_Target(ctx)]
        out: list[str] = []
        notes: list[str] = []
        shown_starts: list[str] = []
        # One budget over every directory searched (each search keeps to its own too).
        budget, used = ctx.settings.tools.max_output_chars - 500, 0
        for index, target in enumerate(targets):
            if len(out) >= GREP_MAX_MATCHES or used > budget:
                left = len(targets) - index
                notes.insert(
                    0,
                    f"[stopped after {len(out)} matches; {left} additional "
                    f"director{'y was' if left == 1 else 'ies were'} not searched; narrow "
                    "the pattern, or give a path]",
                )
                break
            found, more, shown_start = await self._search(args, target.ctx)
            shown_starts.append(
                target.show(shown_start) if shown_start != "." else target.label or "."
            )
            for line in found[: GREP_MAX_MATCHES - len(out)]:
                out.append(target.show(line))
                used += len(out[-1]) + 1
            notes.extend(target.note(note) for note in more)
        if not out:
            where = ", ".join(shown_starts) + (
                f" (files matching {args.include})" if args.include else ""
            )
            return ToolResult(
                output="\n".join([f"no matches for {args.pattern} in {where}", *notes])
            )
        return ToolResult(output="\n".join(out + notes))

    async def _search(self, args: GrepInput, ctx: ToolContext) -> tuple[list[str], list[str], str]:
        """The matching lines in `ctx`'s workspace (each `path:line: text`), the notes
        on what was left out, and where the search started as shown."""
        root = workspace_root(ctx.workspace)
        start = resolve_in_workspace(ctx.workspace, args.path or ".", must_exist=True)
        shown_start = display_path(ctx.workspace, start)
        if not (start.is_file() or start.is_dir()):
            raise ToolFailure(f"{shown_start} is not a file or directory")
        includes = expand_braces(args.include) if args.include else None
        # rg is told the includes too (fewer files read); `_included` has the last word.
        narrow = [] if includes is None or any("/" in i for i in includes) else includes
        filters = [*COMMON_ARGS, *(arg for i in narrow for arg in ("--glob", i))]
        listing = Listing()
        search = _Search(ctx, root, shown_start, None if start.is_file() else includes)
        search_args = [
            "--json",
            "--no-messages",
            "--sort",
            "path",
            "--max-filesize",
            str(GREP_MAX_FILE_BYTES),
            *filters,
            "--regexp",
            args.pattern,
            "--",
        ]
        if start.is_file():
            search.links[shown_start] = str(start)
            if os.stat(start).st_size > GREP_MAX_FILE_BYTES:
                run, large = RgRun(returncode=1, stderr=""), 1
            else:
                run, large = await run_rg([*search_args, shown_start], root, search.on_record), 0
        else:
            run, large = await self._search_tree(
                root, str(start), shown_start, includes, filters, search_args, search, listing
            )
        if run.returncode == 2 and not search.any_record and "regex" in run.stderr:
            detail = " ".join(run.stderr.strip().removeprefix("rg: ").split())
            raise ToolFailure(
                f"invalid regular expression {args.pattern!r}: {detail}; escape special "
                r"characters such as ( [ { . * + ? with a backslash; look-around and "
                "backreferences are not supported"
            )
        out = sorted(search.out)
        notes: list[str] = []
        if search.stopped:
            notes.append(f"[stopped after {len(out)} matches; narrow the pattern, path or include]")
        if run.timed_out:
            notes.append(
                f"[search stopped after {RG_TIME_LIMIT:.0f} s; narrow the pattern or path]"
            )
        if large:
            notes.append(f"[{large} files over 2 MB were not searched]")
        notes.extend(listing.notes())
        return [entry[2] for entry in out], notes, shown_start

    async def _search_tree(
        self,
        root: str,
        start: str,
        shown_start: str,
        includes: list[str] | None,
        filters: list[str],
        search_args: list[str],
        search: _Search,
        listing: Listing,
    ) -> tuple[RgRun, int]:
        """rg over the tree, then over the links to files the walk found; the large files.

        The walk and the count of large files run beside the search; when the
        search stops early (enough matches) the count is dropped, as those files
        would not have been reached anyway.
        """
        walk = asyncio.ensure_future(
            asyncio.to_thread(
                lambda: list(iter_files(root, start, stats=listing.stats, links_only=True))
            )
        )
        counting = asyncio.ensure_future(_count_large(root, shown_start, filters))
        try:
            run = await run_rg([*search_args, shown_start], root, search.on_record)
            large = 0
            if not (search.stopped or run.timed_out):
                for rel, real in await walk:
                    if includes is None or _included(rel, includes):
                        with contextlib.suppress(OSError):
                            if os.stat(real).st_size > GREP_MAX_FILE_BYTES:
                                large += 1
                                continue
                        search.links[_join(shown_start, rel)] = real
                if search.links:
                    linked = await run_rg(
                        [*search_args, *listing.link_args(search.links)], root, search.on_record
                    )
                    run.timed_out = run.timed_out or linked.timed_out
                large += await counting
            return run, large
        finally:
            counting.cancel()


async def _count_large(root: str, start: str, filters: list[str]) -> int:
    """Files under `start` that rg lists but skips for their size."""
    counts = [0, 0]

    def counter(index: int) -> Callable[[bytes], bool]:
        def count(record: bytes) -> bool:
            counts[index] += bool(record)
            return True

        return count

    listing = ["--files", "--null", "--no-messages", *filters]
    size = ["--max-filesize", str(GREP_MAX_FILE_BYTES)]
    await asyncio.gather(
        run_rg([*listing, "--", start], root, counter(0), separator=b"\0"),
        run_rg([*listing, *size, "--", start], root, counter(1), separator=b"\0"),
    )
    return max(0, counts[0] - counts[1])


class _Search:
    """Collects rg's matches, showing only text read again safely inside the workspace.

    rg opens files by path, so a folder swapped for a link while it runs could
    make it read outside the workspace. Each matching file is therefore opened
    again through the sandbox (no link followed at any step) and a line is shown
    only when that read gives the very bytes rg matched.
    """

    def __init__(
        self, ctx: ToolContext, root: str, shown_start: str, includes: list[str] | None
    ) -> None:
        self.ctx = ctx
        self.root = root
        self.cut = 0 if shown_start == "." else len(shown_start) + 1
        self.includes = includes
        # Links searched by name (shown path -> their resolved target).
        self.links: dict[str, str] = {}
        self.budget = ctx.settings.tools.max_output_chars - 500
        self.used = 0
        self.stopped = False
        self.any_record = False
        self.out: list[tuple[str, int, str]] = []
        self._file: tuple[str, list[bytes] | None] | None = None

    def on_record(self, record: bytes) -> bool:
        self.any_record = True
        try:
            event = json.loads(record)
        except ValueError:
            return True
        if event.get("type") != "match":
            return True
        data = event["data"]
        shown = _rg_text(data["path"]).removeprefix("./")
        lineno = data.get("line_number")
        if not isinstance(lineno, int) or lineno < 1:
            return True
        if self.includes is not None and not _included(shown[self.cut :], self.includes):
            return True
        lines = self._lines(shown)
        matched = _rg_bytes(data["lines"]).removesuffix(b"\n")
        if lines is None or lineno > len(lines) or lines[lineno - 1] != matched:
            return True
        if len(self.out) >= GREP_MAX_MATCHES or self.used > self.budget:
            self.stopped = True
            return False
        line = lines[lineno - 1].decode("utf-8", errors="replace")
        if len(line) > GREP_MAX_LINE_CHARS:
            line = line[:GREP_MAX_LINE_CHARS] + " [...]"
        entry = f"{shown}:{lineno}: {line.rstrip()}"
        self.out.append((shown, lineno, entry))
        self.used += len(entry) + 1
        return True

    def _lines(self, shown: str) -> list[bytes] | None:
        if self._file is None or self._file[0] != shown:
            real = self.links.get(shown) or os.path.join(self.root, shown)
            self._file = (shown, read_lines(self.ctx, real))
        return self._file[1]


def read_lines(ctx: ToolContext, real: str) -> list[bytes] | None:
    """A file's lines read through the sandbox, or None when it is not a small text file."""
    try:
        fd = open_file(ctx.workspace, real, os.O_RDONLY | _O_NONBLOCK)
    except (OSError, ToolFailure):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with open(fd, "rb", closefd=False) as fh:
            data = fh.read(GREP_MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > GREP_MAX_FILE_BYTES or looks_binary(data[:SNIFF_BYTES]):
        return None
    return data.split(b"\n")


def _rg_text(value: dict[str, str]) -> str:
    if "text" in value:
        return value["text"]
    return os.fsdecode(base64.b64decode(value.get("bytes", "")))


def _rg_bytes(value: dict[str, str]) -> bytes:
    if "text" in value:
        return value["text"].encode("utf-8")
    return base64.b64decode(value.get("bytes", ""))


def _included(rel: str, includes: list[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    for include in includes:
        if "/" in include:
            if match_segments(include.strip("/").split("/"), rel.split("/")):
                return True
        elif match_segments([include], [name]):
            return True
    return False


class Listing:
    """What listing the workspace met: entries looked at, limits hit, links left out."""

    def __init__(self) -> None:
        self.stats = WalkStats()
        self.timed_out = False
        self.links_left_out = 0

    def link_args(self, links: dict[str, str]) -> list[str]:
        """The links to give rg by name, as many as one command line holds."""
        chosen: list[str] = []
        room = MAX_LINK_ARG_BYTES
        for shown in links:
            room -= len(shown) + 1
            if room < 0:
                self.links_left_out += 1
            else:
                chosen.append(shown)
        return chosen

    def notes(self) -> list[str]:
        notes: list[str] = []
        if self.stats.truncated:
            notes.append(
                f"[stopped after looking at {self.stats.scanned - 1} entries; "
                "narrow the pattern or path]"
            )
        if self.timed_out:
            notes.append(f"[listing stopped after {RG_TIME_LIMIT:.0f} s; narrow the path]")
        if self.links_left_out:
            notes.append(f"[{self.links_left_out} linked files were not searched]")
        return notes


async def list_files(
    root: str, start: str, max_depth: int | None, listing: Listing, names: list[str]
) -> list[tuple[str, str]]:
    """Files under `start` as (path relative to it, path relative to the root to stat).

    rg lists the regular files (respecting .gitignore, skipping `SKIP_DIRS` below
    `start`, only those whose name matches one of `names` when given); the walk
    adds links to regular files inside the workspace, which rg never follows.
    """
    start_arg = os.path.relpath(start, root).replace(os.sep, "/")
    cut = 0 if start_arg == "." else len(start_arg) + 1
    files: list[tuple[str, str]] = []

    def take(record: bytes) -> bool:
        if not record:
            return True
        if len(files) >= MAX_SCAN:
            listing.stats.scanned = MAX_SCAN + 1
            listing.stats.truncated = True
            return False
        path = os.fsdecode(record).removeprefix("./")
        files.append((path[cut:], path))
        return True

    depth = ["--max-depth", str(max_depth)] if max_depth is not None else []
    globs = [arg for name in names for arg in ("--glob", name)]
    run, links = await asyncio.gather(
        run_rg(
            ["--files", "--null", "--no-messages", *depth, *COMMON_ARGS, *globs, "--", start_arg],
            root,
            take,
            separator=b"\0",
        ),
        asyncio.to_thread(
            lambda: list(iter_files(root, start, max_depth=max_depth, links_only=True))
        ),
    )
    listing.timed_out = listing.timed_out or run.timed_out
    files.extend(links)
    return files
