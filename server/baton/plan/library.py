"""The workspace's plan files, beyond any one session: listed, and opened by path.

A plan outlives the session that wrote it: its file stays under `plans.dir`
(which a team may keep in git, e.g. `docs/plans`), and a later session can be
started on it or have it attached. What a file says of itself is its front
matter (status, the session that wrote it) and its checklist; what this
workspace's store knows (the session that last had it, its version) is added
where there is one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast, get_args

from baton import protocol as p
from baton.errors import InvalidParams
from baton.plan import frontmatter
from baton.plan.steps import parse_steps
from baton.plan.store import PlanStore
from baton.tools.base import ToolFailure
from baton.tools.fileio import read_bytes
from baton.tools.sandbox import SandboxError, display_path, resolve_in_workspace

MAX_PLAN_BYTES = 2_000_000
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_PLAN_PREFIX = re.compile(r"^plan:\s*", re.I)


@dataclass
class PlanFile:
    """A plan file as it is on disk."""

    path: str  # workspace-relative
    content: str  # without the front matter
    status: p.PlanStatus  # from the front matter, else draft
    modified: str  # ISO time of the file's last change


def title_of(content: str, path: str) -> str:
    """The plan's first heading (without a `Plan:` prefix), else its file name."""
    match = _HEADING.search(content)
    if match:
        return _PLAN_PREFIX.sub("", match.group(1)).strip() or match.group(1)
    return Path(path).stem


def open_plan(workspace: Path, path: str) -> PlanFile:
    """The plan file at `path` (workspace-relative); InvalidParams when it is outside the
    workspace, missing, not markdown or not text."""
    try:
        resolved = resolve_in_workspace(workspace, path)
    except SandboxError as exc:
        raise InvalidParams(f"params.path: {path!r} cannot be used: {exc}") from None
    return _read(workspace, resolved, path)


def _read(workspace: Path, resolved: Path, shown: str) -> PlanFile:
    if resolved.suffix.lower() != ".md":
        raise InvalidParams(f"{shown!r} is not a plan file (a markdown .md file)")
    if not resolved.is_file():
        raise InvalidParams(f"no plan file at {shown!r}; baton/plan/list names the plans")
    try:
        data = read_bytes(workspace, resolved)
    except ToolFailure as exc:
        raise InvalidParams(f"cannot read {shown!r}: {exc}") from None
    if data is None:
        raise InvalidParams(f"no plan file at {shown!r}")
    if len(data) > MAX_PLAN_BYTES or b"\0" in data:
        raise InvalidParams(f"{shown!r} is not a plan file (too large, or not text)")
    fields, content = frontmatter.split(data.decode("utf-8", errors="replace"))
    status = fields.get("status", "draft")
    if status not in get_args(p.PlanStatus):
        status = "draft"
    modified = datetime.fromtimestamp(resolved.stat().st_mtime, UTC)
    return PlanFile(
        path=display_path(workspace, resolved),
        content=content,
        status=cast(p.PlanStatus, status),
        modified=modified.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    )


def list_plans(store: PlanStore, plans_dir: str) -> list[p.PlanListEntry]:
    """Every plan file under `plans.dir`, most recently updated first."""
    workspace = store.workspace
    directory = store.plans_directory(plans_dir)
    if not directory.is_dir():
        return []
    last = store.last_sessions()
    entries: list[p.PlanListEntry] = []
    for candidate in sorted(directory.rglob("*.md")):
        if candidate.is_symlink() or not candidate.is_file():
            continue
        try:
            plan = _read(workspace, candidate, display_path(workspace, candidate))
        except InvalidParams:
            continue  # unreadable or not text: not a plan to offer
        session = last.get(plan.path)
        status, version, updated = plan.status, 1, plan.modified
        if session is not None:
            # The store is the truth for the status; its version counts the changes.
            row = store.get(session[0])
            latest = store.latest(session[0])
            if row is not None and latest is not None:
                status = row.status
                version = latest.version + (0 if latest.content == plan.content else 1)
                updated = max(updated, session[2])
        steps = parse_steps(plan.content)
        entries.append(
            p.PlanListEntry(
                path=plan.path,
                title=title_of(plan.content, plan.path),
                status=status,
                version=version,
                steps_done=sum(1 for s in steps if s.state == "done"),
                steps_total=len(steps),
                last_session_id=session[0] if session else None,
                last_session_title=session[1] if session else None,
                updated_at=updated,
            )
        )
    entries.sort(key=lambda e: e.updated_at, reverse=True)
    return entries
