"""The workspace's plan files, beyond any one session: listed, and opened by path.

A plan outlives the session that wrote it: its file stays under `plans.dir`
(which a team may keep in git, e.g. `docs/plans`), and a later session can be
started on it or have it attached. What a file says of itself is its front
matter (status, the session that wrote it) and its checklist; what this
workspace's store knows (the session that last had it, its version) is added
where there is one.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from baton import protocol as p
from baton.errors import InvalidParams
from baton.plan import frontmatter
from baton.plan.steps import parse_steps
from baton.plan.store import MAX_PLAN_BYTES, PlanStore, sha256
from baton.tools.base import ToolFailure
from baton.tools.fileio import read_bytes
from baton.tools.sandbox import SandboxError, display_path, resolve_in_workspace

__all__ = ["MAX_PLAN_BYTES", "PlanFile", "PlanLibrary", "open_plan", "title_of"]

# A title from a plan's heading is bounded as one the person sets is (session/new, rename).
MAX_TITLE_CHARS = 500
_PLAN_PREFIX = re.compile(r"^plan:\s*", re.I)


@dataclass
class PlanFile:
    """A plan file as it is on disk. What its front matter says of its status is not
    kept: only the store says whether the person approved a plan (`status_here`)."""

    path: str  # workspace-relative
    content: str  # without the front matter
    modified: str  # ISO time of the file's last change


@dataclass(frozen=True)
class _Summary:
    """What the listing needs of one plan file, kept while the file is unchanged."""

    path: str
    sha256: str
    title: str
    steps_done: int
    steps_total: int
    modified: str


# (mtime, ctime, size, inode): a file with the same four has not been written since.
_FileKey = tuple[int, int, int, int]


def _heading(line: str) -> str | None:
    """The text of a markdown heading line (`# Title ##`), else None; linear in the line."""
    hashes = len(line) - len(line.lstrip("#"))
    rest = line[hashes:]
    if not 1 <= hashes <= 6 or not rest[:1].isspace():
        return None
    text = rest.strip()
    return text.rstrip("#").rstrip() or text or None


def bounded_title(title: str) -> str:
    """`title` cut to MAX_TITLE_CHARS, the cut marked."""
    if len(title) <= MAX_TITLE_CHARS:
        return title
    return title[: MAX_TITLE_CHARS - 1].rstrip() + "…"


def title_of(content: str, path: str) -> str:
    """The plan's first heading (without a `Plan:` prefix), else its file name; at most
    MAX_TITLE_CHARS."""
    for line in content.split("\n"):
        heading = _heading(line)
        if heading:
            return bounded_title(_PLAN_PREFIX.sub("", heading).strip() or heading)
    return bounded_title(Path(path).stem)


def status_here(store: PlanStore, path: str) -> p.PlanStatus:
    """The status a plan file starts with in a session: the one a session of this store
    last gave that plan, else a draft. A file's front matter may say anything (a
    repository's plan can claim `status: approved`); approval is the person's, in Baton."""
    session = store.last_sessions().get(path)
    row = store.get(session[0]) if session is not None else None
    return row.status if row is not None else "draft"


def open_plan(workspace: Path, path: str) -> PlanFile:
    """The plan file at `path` (workspace-relative); InvalidParams when it is outside the
    workspace, missing, not markdown, too large or not text."""
    try:
        resolved = resolve_in_workspace(workspace, path)
    except SandboxError as exc:
        raise InvalidParams(f"params.path: {path!r} cannot be used: {exc}") from None
    return _read(workspace, resolved, path)


def _too_large(shown: str, size: int) -> str:
    return f"{shown!r} is too large for a plan file ({size:,} bytes; at most {MAX_PLAN_BYTES:,})"


def _read(
    workspace: Path, resolved: Path, shown: str, info: os.stat_result | None = None
) -> PlanFile:
    """The plan file, its size checked before a byte of it is read."""
    if resolved.suffix.lower() != ".md":
        raise InvalidParams(f"{shown!r} is not a plan file (a markdown .md file)")
    try:
        info = info or resolved.stat()
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):
        raise InvalidParams(f"no plan file at {shown!r}; baton/plan/list names the plans")
    if info.st_size > MAX_PLAN_BYTES:
        raise InvalidParams(_too_large(shown, info.st_size))
    try:
        # Bounded again: the file may grow between the stat and the read.
        data = read_bytes(workspace, resolved, MAX_PLAN_BYTES)
    except ToolFailure as exc:
        raise InvalidParams(f"cannot read {shown!r}: {exc}") from None
    if data is None:
        raise InvalidParams(f"no plan file at {shown!r}")
    if b"\0" in data:
        raise InvalidParams(f"{shown!r} is not a plan file (not text)")
    content = frontmatter.split(data.decode("utf-8", errors="replace"))[1]
    modified = datetime.fromtimestamp(info.st_mtime, UTC)
    return PlanFile(
        path=display_path(workspace, resolved),
        content=content,
        modified=modified.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    )


def _summary(plan: PlanFile) -> _Summary:
    steps = parse_steps(plan.content)
    return _Summary(
        path=plan.path,
        sha256=sha256(plan.content),
        title=title_of(plan.content, plan.path),
        steps_done=sum(1 for s in steps if s.state == "done"),
        steps_total=len(steps),
        modified=plan.modified,
    )


class PlanLibrary:
    """The workspace's plan files, listed off the event loop.

    A listing stats every `.md` under `plans.dir` and reads only the files written
    since the last one (a plan ticked in a folder of thousands re-reads one file).
    """

    def __init__(self, store: PlanStore) -> None:
        self.store = store
        # Absolute path → (its key, what it gave: a summary, or why it is skipped).
        self._seen: dict[str, tuple[_FileKey, _Summary | p.PlanListSkipped]] = {}

    async def list_plans(self, plans_dir: str) -> p.PlanListResult:
        """Every plan file under `plans.dir`, most recently updated first."""
        directory = self.store.plans_directory(plans_dir)
        found = await asyncio.to_thread(self._scan, directory)
        last = self.store.last_sessions()
        entries: list[p.PlanListEntry] = []
        skipped: list[p.PlanListSkipped] = []
        for item in found:
            if isinstance(item, p.PlanListSkipped):
                skipped.append(item)
                continue
            session = last.get(item.path)
            status: p.PlanStatus = "draft"  # never the front matter's word (`status_here`)
            version, updated = 1, item.modified
            if session is not None:
                # The store is the truth for the status; its version counts the changes.
                row = self.store.get(session[0])
                latest = self.store.latest(session[0])
                if row is not None and latest is not None:
                    status = row.status
                    version = latest.version + (0 if latest.sha256 == item.sha256 else 1)
                    updated = max(updated, session[2])
            entries.append(
                p.PlanListEntry(
                    path=item.path,
                    title=item.title,
                    status=status,
                    version=version,
                    steps_done=item.steps_done,
                    steps_total=item.steps_total,
                    last_session_id=session[0] if session else None,
                    last_session_title=session[1] if session else None,
                    updated_at=updated,
                )
            )
        entries.sort(key=lambda e: e.updated_at, reverse=True)
        return p.PlanListResult(plans=entries, skipped=skipped)

    def _scan(self, directory: Path) -> list[_Summary | p.PlanListSkipped]:
        """In a worker thread: the plan files under `directory`, unchanged ones from the
        last scan. Touches no database (its connection belongs to the event loop's thread)."""
        workspace = self.store.workspace
        if not directory.is_dir():
            return []
        seen = self._seen
        fresh: dict[str, tuple[_FileKey, _Summary | p.PlanListSkipped]] = {}
        for candidate in sorted(directory.rglob("*.md")):
            try:
                info = candidate.lstat()
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue  # a link or a folder: not a plan to offer
            key = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
            name = str(candidate)
            known = seen.get(name)
            if known is not None and known[0] == key:
                fresh[name] = known
                continue
            shown = display_path(workspace, candidate)
            try:
                item: _Summary | p.PlanListSkipped = _summary(
                    _read(workspace, candidate, shown, info)
                )
            except InvalidParams as exc:
                item = p.PlanListSkipped(path=shown, reason=exc.message)
            fresh[name] = (key, item)
        self._seen = fresh
        return [item for _, item in fresh.values()]
