"""Walking the workspace, and glob pattern matching, for glob and grep.

ripgrep lists and searches regular files; it never follows a symbolic link.
This walk finds what rg leaves out on purpose: links whose target is a regular
file inside the workspace (searched under the link's own name). It never
descends into links to directories (no cycles, no escapes), skips `SKIP_DIRS`,
and stops after `MAX_SCAN` directory entries so that a huge tree cannot stall a
turn.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase

from baton.tools.sandbox import SKIP_DIRS, is_inside

# Directory entries looked at before a walk gives up (and says so).
MAX_SCAN = 200_000
# Brace alternatives a pattern may expand to.
MAX_BRACE_EXPANSIONS = 64

_MAGIC = frozenset("*?[")


@dataclass
class WalkStats:
    scanned: int = 0
    truncated: bool = False


def iter_files(
    root: str,
    start: str,
    *,
    max_depth: int | None = None,
    stats: WalkStats | None = None,
    max_entries: int = MAX_SCAN,
    links_only: bool = False,
) -> Iterator[tuple[str, str]]:
    """Regular files under `start` as (path relative to `start` with `/`, real path).

    `root` is the resolved workspace and `start` a resolved directory inside it.
    Entries are visited in name order; `max_depth` bounds how many path segments
    the yielded relative paths have; `links_only` yields only the links.
    """
    stats = stats if stats is not None else WalkStats()
    stack: list[tuple[str, str]] = [(start, "")]
    while stack:
        directory, rel_dir = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            stats.scanned += 1
            if stats.scanned > max_entries:
                stats.truncated = True
                return
            rel = rel_dir + entry.name
            try:
                if entry.is_symlink():
                    real = os.path.realpath(entry.path)
                    shallow_enough = max_depth is None or rel.count("/") < max_depth
                    if (
                        shallow_enough
                        and is_inside(root, real)
                        and stat.S_ISREG(os.stat(real).st_mode)
                    ):
                        yield rel, real
                elif entry.is_dir(follow_symlinks=False):
                    depth = rel.count("/") + 1
                    if entry.name not in SKIP_DIRS and (max_depth is None or depth < max_depth):
                        subdirs.append((entry.path, rel + "/"))
                elif not links_only and entry.is_file(follow_symlinks=False):
                    yield rel, entry.path
            except OSError:
                continue
        stack.extend(reversed(subdirs))


def expand_braces(pattern: str) -> list[str]:
    """`a.{ts,tsx}` → [`a.ts`, `a.tsx`]; nested braces work; braces without a comma stay."""
    out = _expand(pattern, 0)
    return out[:MAX_BRACE_EXPANSIONS]


def _expand(pattern: str, from_index: int) -> list[str]:
    depth = 0
    open_at = -1
    for i in range(from_index, len(pattern)):
        c = pattern[i]
        if c == "{":
            if depth == 0:
                open_at = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                alternatives = _split_top_level(pattern[open_at + 1 : i])
                if len(alternatives) < 2:
                    return _expand(pattern, i + 1)
                results: list[str] = []
                for alt in alternatives:
                    candidate = pattern[:open_at] + alt + pattern[i + 1 :]
                    results.extend(_expand(candidate, open_at))
                    if len(results) >= MAX_BRACE_EXPANSIONS:
                        break
                return results
    return [pattern]


def _split_top_level(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for c in body:
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        current.append(c)
    parts.append("".join(current))
    return parts


def has_magic(segment: str) -> bool:
    return any(c in _MAGIC for c in segment)


def match_segments(patterns: list[str], parts: list[str]) -> bool:
    """Whether path `parts` match glob segment `patterns`; `**` spans any number of parts.

    Each other segment matches one part with `fnmatch` rules (`*`, `?`, `[...]`;
    `*` also matches names starting with a dot).
    """
    return _match(patterns, 0, parts, 0)


def _match(patterns: list[str], i: int, parts: list[str], j: int) -> bool:
    while i < len(patterns):
        pattern = patterns[i]
        if pattern == "**":
            while i + 1 < len(patterns) and patterns[i + 1] == "**":
                i += 1
            if i + 1 == len(patterns):
                return True
            return any(_match(patterns, i + 1, parts, k) for k in range(j, len(parts)))
        if j >= len(parts) or not fnmatchcase(parts[j], pattern):
            return False
        i += 1
        j += 1
    return j == len(parts)
