"""Per-turn checkpoints, reverts, and the before/after of every change, for review.

The file tools (`write`, `edit`) call `ToolContext.before_change` after permission
is granted and before they write, and `after_change` once written. `ChangeRecorder`
keeps the file's previous content in the store at the first call and the hash of
what the tool left at the second: so a turn's checkpoint is the `before` of the
first change it made to each file, and "changed outside Baton since" means the
file's hash differs from the `after` of Baton's last change to it.

`bash` is not checkpointed: a shell command can touch any file, and snapshotting
the workspace around every command would cost more than it is worth. A revert
lists the commands the reverted turns ran (`shellCommands`) so the person knows
their effects stay; a file that a command changed after Baton did shows up as
changed outside Baton (a conflict, overridable with `force`). Plan files are not
checkpointed either: they have their own versions (`baton/plan/history`); after a
revert, `after_revert` lets the plan write back the version from before the reverted
turns' plan edits, so a step ticked in an undone turn is unticked again.

A revert is synchronous from start to finish (no await), so no turn can start
half-way through one.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from baton import protocol as p
from baton.agent.state import SessionState
from baton.errors import BatonError, InvalidParams, NotFound, RevertConflict, SessionBusy
from baton.ids import new_id
from baton.review.store import ChangeRow, CheckpointStore, Restore, sha256
from baton.store.db import Database
from baton.store.model import StoredMessage
from baton.tools.base import ToolFailure
from baton.tools.fileio import atomic_write, looks_binary, read_bytes
from baton.tools.sandbox import display_path, open_dir, resolve_in_workspace

if TYPE_CHECKING:
    from baton.session.service import SessionService

# Larger files are not sent to the client as text by `baton/session/changes`.
MAX_REVIEW_BYTES = 4_000_000

REASON_WORDS: dict[str, str] = {
    "modified": "changed since Baton's last change",
    "deleted": "deleted since Baton's last change",
    "created": "created since Baton removed it",
    "changed_between": "changed outside Baton between the turns that changed it",
    "unconfirmed": "Baton's last change to it was interrupted; its outcome is unknown",
}


class ChangeRecorder:
    """The checkpoint hooks of one tool call (`ToolContext.before_change` / `after_change`)."""

    def __init__(self, review: ReviewService, state: SessionState, tool_call_id: str) -> None:
        self.review = review
        self.state = state
        self.tool_call_id = tool_call_id
        self._open: dict[Path, int] = {}

    async def before_change(self, paths: list[Path]) -> None:
        ws = self.review.workspace
        message_id = self._step_message_id()
        for real in paths:
            if real in self._open:
                continue
            # Off the event loop: a large file must not stall other sessions' streams.
            before = await asyncio.to_thread(read_bytes, ws, real)
            created = _missing_dirs(ws, real) if before is None else []
            self._open[real] = self.review.store.begin_change(
                self.state.id,
                message_id,
                self.tool_call_id,
                display_path(ws, real),
                before,
                created,
            )

    async def after_change(self, paths: list[Path]) -> None:
        for real in paths:
            seq = self._open.pop(real, None)
            if seq is not None:
                after = await asyncio.to_thread(read_bytes, self.review.workspace, real)
                self.review.store.finish_change(seq, after)

    def _step_message_id(self) -> str | None:
        """The stored model step that made this tool call (committed before tools run)."""
        for message in reversed(self.state.messages):
            for part in message.tool_calls():
                if part.tool_call_id == self.tool_call_id:
                    return message.id
        return None


@dataclass
class _FilePlan:
    path: str
    target_sha256: str | None
    created_dirs: list[str]
    action: p.RevertAction = "restored"
    current: bytes | None = None
    conflict: p.ConflictReason | None = None


@dataclass
class RevertPlan:
    files: list[_FilePlan] = field(default_factory=list)

    @property
    def conflicts(self) -> list[p.RevertConflictInfo]:
        return [
            p.RevertConflictInfo(path=f.path, reason=f.conflict)
            for f in self.files
            if f.conflict is not None
        ]


def plan_revert(
    rows: list[ChangeRow],
    reverted_messages: set[str],
    current: Callable[[str], bytes | None],
) -> RevertPlan:
    """What reverting the changes made by `reverted_messages` does to each file.

    For each file, the target is the content before the earliest of those changes;
    every later change to it (by tool or revert) must continue the chain exactly
    (`after` of one = `before` of the next) and the file must still hold the `after`
    of the last, or the file was changed outside Baton.
    """
    by_path: dict[str, list[ChangeRow]] = {}
    for row in rows:
        by_path.setdefault(row.path, []).append(row)
    plan = RevertPlan()
    for path, chain in by_path.items():
        first = next(
            (i for i, row in enumerate(chain) if row.message_id in reverted_messages), None
        )
        if first is None:
            continue
        chain = chain[first:]
        start = chain[0]
        item = _FilePlan(
            path=path,
            target_sha256=start.before_sha256,
            created_dirs=start.created_dirs if start.before_sha256 is None else [],
        )
        item.current = current(path)
        now = sha256(item.current) if item.current is not None else None
        if now == item.target_sha256:
            item.action = "unchanged"
            plan.files.append(item)
            continue
        item.action = "removed" if item.target_sha256 is None else "restored"
        last = chain[-1]
        if not last.confirmed:
            item.conflict = "unconfirmed"
        elif now != last.after_sha256:
            if now is None:
                item.conflict = "deleted"
            elif last.after_sha256 is None:
                item.conflict = "created"
            else:
                item.conflict = "modified"
        else:
            for a, b in itertools.pairwise(chain):
                if not a.confirmed or a.after_sha256 != b.before_sha256:
                    item.conflict = "changed_between"
                    break
        plan.files.append(item)
    plan.files.sort(key=lambda f: f.path)
    return plan


class ReviewService:
    """Per-turn checkpoints and revert. Its session seams (baton.features connects them):
    `attach` when a session is loaded, `recorder` around each tool call."""

    def __init__(
        self,
        sessions: SessionService,
        db: Database,
        *,
        after_revert: list[Callable[[str, set[str]], object]] | None = None,
    ) -> None:
        self.sessions = sessions
        self.workspace = sessions.workspace
        self.store = CheckpointStore(db)
        # Called after a revert with the session and the reverted turns' tool-call ids
        # (the plan puts back the versions those calls wrote).
        self.after_revert = after_revert or []

    def attach(self, state: SessionState) -> None:
        state.reverted.update(self.store.reverted_ids(state.id))

    def recorder(self, state: SessionState, tool_call_id: str) -> ChangeRecorder:
        return ChangeRecorder(self, state, tool_call_id)

    # ------------------------------------------------------------------ revert

    def revert(self, params: p.RevertParams) -> p.RevertResult:
        state = self.sessions.state(params.session_id)
        if state.busy or state.compacting:
            raise SessionBusy(state.id)
        # Another process may be working on the session: never revert under its turn.
        with self.sessions.leases.hold(state.id, "revert"):
            return self._revert(self.sessions.refresh(state), params)

    def _revert(self, state: SessionState, params: p.RevertParams) -> p.RevertResult:
        start = state.find(params.message_id)
        if start is None:
            raise NotFound(f"message not found in session {state.id!r}: {params.message_id!r}")
        targets = [
            m
            for m in state.messages
            if m.seq >= start.seq and m.id not in state.reverted and m.kind != "compaction"
        ]
        if not targets:
            raise InvalidParams(
                "params.messageId: nothing to revert: that message and every later one "
                "are already reverted"
            )
        target_ids = {m.id for m in targets}
        # The files the children of the reverted turns changed are theirs too: a `task`
        # child started by a reverted call, a step of a step-by-step build noted after
        # `start` (each step's note names its child).
        rows = self.store.changes(state.id)
        reverted_rows = set(target_ids)
        for child_id in self._children_of(state.id, targets):
            child_rows = self.store.changes(child_id)
            rows.extend(child_rows)
            reverted_rows.update(row.message_id for row in child_rows if row.message_id)
        rows.sort(key=lambda row: row.seq)
        plan = plan_revert(rows, reverted_rows, self._current)
        commands = [
            str(part.input.get("command", ""))
            for m in targets
            for part in m.tool_calls()
            if part.name == "bash"
        ]
        notes = self._notes(state, targets, commands)
        files = [p.RevertFile(path=f.path, action=f.action) for f in plan.files]
        conflicts = plan.conflicts
        result = p.RevertResult(
            revert_id=None,
            message_ids=[m.id for m in targets],
            files=files,
            conflicts=conflicts,
            shell_commands=commands,
            notes=notes,
            dry_run=params.dry_run,
        )
        if params.dry_run:
            return result
        if conflicts and not params.force:
            listed = "; ".join(f"{c.path} ({REASON_WORDS[c.reason]})" for c in conflicts)
            raise RevertConflict(
                f"revert refused: {len(conflicts)} file(s) changed outside Baton: {listed}. "
                "Nothing was changed; send force: true to restore them anyway.",
                [c.model_dump(mode="json") for c in conflicts],
            )
        restores = self._apply(plan)
        revert_id = new_id("rev")
        self.store.record_revert(
            revert_id=revert_id,
            session_id=state.id,
            message_id=start.id,
            forced=bool(conflicts),
            files=[f.model_dump(mode="json") for f in files],
            restores=restores,
            message_ids=result.message_ids,
        )
        state.reverted.update(target_ids)
        result.revert_id = revert_id
        call_ids = {part.tool_call_id for m in targets for part in m.tool_calls()}
        for callback in self.after_revert:
            callback(state.id, call_ids)
        return result

    def _children_of(self, session_id: str, targets: list[StoredMessage]) -> list[str]:
        """The child sessions (and theirs) the reverted messages started or noted."""
        call_ids = {part.tool_call_id for m in targets for part in m.tool_calls()}
        noted = {m.meta.get("childId") for m in targets}
        found: list[str] = []
        for row in self.sessions.store.children_of(session_id):
            task = row.task or {}
            if row.id in noted or task.get("callId") in call_ids:
                found.append(row.id)
                found.extend(self._all_children(row.id))
        return found

    def _all_children(self, session_id: str) -> list[str]:
        out: list[str] = []
        for row in self.sessions.store.children_of(session_id):
            out.append(row.id)
            out.extend(self._all_children(row.id))
        return out

    def _current(self, path: str) -> bytes | None:
        try:
            real = resolve_in_workspace(self.workspace, path)
            return read_bytes(self.workspace, real)
        except ToolFailure:
            return None

    def _notes(
        self, state: SessionState, targets: list[StoredMessage], commands: list[str]
    ) -> list[str]:
        notes: list[str] = []
        first_kept = state.view.first_kept_seq
        if first_kept is not None and any(m.seq < first_kept for m in targets):
            notes.append(
                "some reverted messages were already compacted: the summary written before "
                "the revert may still mention them"
            )
        if commands:
            notes.append(
                "shell commands are not checkpointed: what they changed on disk was not undone"
            )
        return notes

    def _apply(self, plan: RevertPlan) -> list[Restore]:
        """Restore every file; all paths are checked before the first one is touched."""
        ws = self.workspace
        work = [f for f in plan.files if f.action != "unchanged"]
        resolved: list[tuple[_FilePlan, Path]] = []
        for item in work:
            try:
                resolved.append((item, resolve_in_workspace(ws, item.path, for_write=True)))
            except ToolFailure as exc:
                raise BatonError(f"revert refused: cannot restore {item.path}: {exc}") from exc
        restores: list[Restore] = []
        for item, real in resolved:
            try:
                if item.target_sha256 is None:
                    _remove(ws, real)
                    _remove_empty_dirs(ws, item.created_dirs)
                else:
                    data = self.store.blob(item.target_sha256)
                    if data is None:
                        raise BatonError(f"the checkpoint of {item.path} is missing from the store")
                    atomic_write(ws, real, data)
            except (ToolFailure, OSError) as exc:
                done = ", ".join(r.path for r in restores) or "none"
                raise BatonError(
                    f"revert stopped: cannot restore {item.path}: {exc}. Already restored: "
                    f"{done}; the messages are not marked reverted, so the revert can be "
                    "repeated."
                ) from exc
            restores.append(Restore(item.path, item.current, item.target_sha256))
        return restores

    # ------------------------------------------------------------------ review

    def changes(self, params: p.ChangesParams) -> p.ChangesResult:
        state = self.sessions.state(params.session_id)
        rows = self.store.changes(state.id, params.tool_call_id)
        out: list[p.FileChange] = []
        for row in rows:
            before = self.store.blob(row.before_sha256)
            after = self.store.blob(row.after_sha256) if row.confirmed else None
            change = p.FileChange(
                path=row.path,
                existed_before=row.before_sha256 is not None,
                exists_after=row.confirmed and row.after_sha256 is not None,
                reverted=row.message_id in state.reverted,
            )
            sides = [b for b in (before, after) if b is not None]
            if any(looks_binary(b) for b in sides):
                change.omitted = "binary"
            elif any(len(b) > MAX_REVIEW_BYTES for b in sides):
                change.omitted = "too_large"
            else:
                change.before = _text(before)
                change.after = _text(after)
            out.append(change)
        return p.ChangesResult(changes=out)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")


def _missing_dirs(workspace: Path, real: Path) -> list[str]:
    """Directories a write to `real` will create, deepest first (removed again by a revert)."""
    root = Path(os.path.realpath(workspace))
    missing: list[str] = []
    parent = real.parent
    while parent != root and root in parent.parents and not parent.exists():
        missing.append(display_path(workspace, parent))
        parent = parent.parent
    return missing


def _remove(workspace: Path, real: Path) -> None:
    fd = open_dir(workspace, real.parent)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(real.name, dir_fd=fd)
    finally:
        os.close(fd)


def _remove_empty_dirs(workspace: Path, dirs: list[str]) -> None:
    """Remove the directories a turn created, deepest first, while they are empty."""
    for shown in dirs:
        try:
            real = resolve_in_workspace(workspace, shown)
            fd = open_dir(workspace, real.parent)
        except (ToolFailure, OSError):
            return
        try:
            os.rmdir(real.name, dir_fd=fd)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                return  # not empty (the person put something there): keep it
        finally:
            os.close(fd)
