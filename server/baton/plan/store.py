"""PlanStore: one plan per session, a markdown file in the workspace plus its versions.

The file on disk is the truth for the plan's text (the person edits it in the
editor); the store keeps every version of that text (content, sha256, author,
time) and the plan's status. `sync` compares the file with the latest version
and records a difference as a `user` version, so nothing written by hand is
ever lost or attributed to the agent.

Files live under `plans.dir` (relative to the workspace) and every path goes
through the tool sandbox: a plans directory or a plan file that resolves
outside the workspace is refused.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import cast

from baton import protocol as p
from baton.errors import ConfigError, StorageError
from baton.ids import utc_now
from baton.plan import frontmatter
from baton.plan.gitignore import ensure_gitignore
from baton.plan.naming import file_name
from baton.store.db import Database
from baton.tools.base import ToolFailure
from baton.tools.fileio import atomic_write, read_bytes
from baton.tools.sandbox import SandboxError, display_path, resolve_in_workspace

# Enough candidates for any realistic number of same-day plans on one subject.
MAX_NAME_ATTEMPTS = 1000
# A plan file larger than this is not read (a repository's file could be any size).
MAX_PLAN_BYTES = 2_000_000


def sha256(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


@dataclass
class PlanRow:
    session_id: str
    path: str  # workspace-relative, forward slashes
    status: p.PlanStatus
    created_at: str
    updated_at: str


@dataclass
class PlanVersionRow:
    session_id: str
    version: int
    content: str
    sha256: str
    author: p.Author
    created_at: str
    tool_call_id: str | None = None

    def to_wire(self) -> p.PlanVersion:
        return p.PlanVersion(
            version=self.version, author=self.author, created_at=self.created_at, sha256=self.sha256
        )


def _plan(row: sqlite3.Row) -> PlanRow:
    return PlanRow(
        session_id=row["session_id"],
        path=row["path"],
        status=cast(p.PlanStatus, row["status"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _version(row: sqlite3.Row) -> PlanVersionRow:
    return PlanVersionRow(
        session_id=row["session_id"],
        version=int(row["version"]),
        content=row["content"],
        sha256=row["sha256"],
        author=cast(p.Author, row["author"]),
        created_at=row["created_at"],
        tool_call_id=row["tool_call_id"],
    )


class PlanStore:
    def __init__(self, workspace: Path, db: Database) -> None:
        self.workspace = workspace.resolve()
        self.db = db

    # ------------------------------------------------------------------ reads

    def get(self, session_id: str) -> PlanRow | None:
        row = self.db.conn.execute(
            "SELECT * FROM plans WHERE session_id = ?", (session_id,)
        ).fetchone()
        return _plan(row) if row else None

    def latest(self, session_id: str) -> PlanVersionRow | None:
        row = self.db.conn.execute(
            "SELECT * FROM plan_versions WHERE session_id = ? ORDER BY version DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return _version(row) if row else None

    def version(self, session_id: str, version: int) -> PlanVersionRow | None:
        row = self.db.conn.execute(
            "SELECT * FROM plan_versions WHERE session_id = ? AND version = ?",
            (session_id, version),
        ).fetchone()
        return _version(row) if row else None

    def versions(self, session_id: str) -> list[PlanVersionRow]:
        rows = self.db.conn.execute(
            "SELECT * FROM plan_versions WHERE session_id = ? ORDER BY version", (session_id,)
        ).fetchall()
        return [_version(r) for r in rows]

    def written_by(self, session_id: str) -> dict[str, int]:
        """Tool call id → the version that call wrote (the agent's writes and edits)."""
        rows = self.db.conn.execute(
            "SELECT tool_call_id, version FROM plan_versions"
            " WHERE session_id = ? AND tool_call_id IS NOT NULL",
            (session_id,),
        ).fetchall()
        return {r["tool_call_id"]: int(r["version"]) for r in rows}

    def file_path(self, plan: PlanRow) -> Path:
        """The plan file's absolute path, refused if it now resolves outside the workspace."""
        try:
            return resolve_in_workspace(self.workspace, plan.path)
        except SandboxError as exc:
            raise ConfigError(f"the plan file {plan.path} cannot be used: {exc}") from None

    def read_content(self, plan: PlanRow) -> str | None:
        """The content of the plan file as it is on disk now (None when it is missing)."""
        path = self.file_path(plan)
        try:
            data = read_bytes(self.workspace, path, MAX_PLAN_BYTES)
        except ToolFailure as exc:
            raise StorageError(f"cannot read the plan file {plan.path}: {exc}") from None
        if data is None:
            return None
        return frontmatter.split(data.decode("utf-8", errors="replace"))[1]

    # ------------------------------------------------------------------ writes

    def create(
        self,
        session_id: str,
        *,
        plans_dir: str,
        hint: str,
        content: str,
        author: p.Author,
        tool_call_id: str | None = None,
        day: date | None = None,
    ) -> tuple[PlanRow, PlanVersionRow]:
        """Make the session's plan: choose its file name, write version 1 and the file."""
        if self.get(session_id) is not None:
            raise StorageError(f"session {session_id} already has a plan")
        directory = self.plans_directory(plans_dir)
        new_directory = not directory.exists()
        path = self._free_path(directory, day or datetime.now(UTC).date(), hint)
        now = utc_now()
        plan = PlanRow(session_id, display_path(self.workspace, path), "draft", now, now)
        version = PlanVersionRow(session_id, 1, content, sha256(content), author, now, tool_call_id)
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO plans (session_id, path, status, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, plan.path, plan.status, now, now),
            )
            self._insert_version(conn, version)
            # Inside the transaction: if the file cannot be written, no row is kept.
            self._write_file(plan, content)
        if new_directory:
            ensure_gitignore(self.workspace, directory)
        return plan, version

    def fork(
        self,
        source_id: str,
        target_id: str,
        *,
        upto: str,
        status: p.PlanStatus,
        plans_dir: str,
        hint: str,
    ) -> PlanRow | None:
        """Copy the source's plan, as it was at `upto`, to a new file for a forked session.

        Versions recorded at or before `upto` are copied with their numbers, authors
        and tool-call ids (the fork's history refers to them); the file gets a new
        name and the latest copied text. None when the source had no plan by then.
        """
        versions = [v for v in self.versions(source_id) if v.created_at <= upto]
        if not versions:
            return None
        if self.get(target_id) is not None:
            raise StorageError(f"session {target_id} already has a plan")
        directory = self.plans_directory(plans_dir)
        path = self._free_path(directory, datetime.now(UTC).date(), hint)
        now = utc_now()
        plan = PlanRow(target_id, display_path(self.workspace, path), status, now, now)
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO plans (session_id, path, status, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (target_id, plan.path, plan.status, now, now),
            )
            for version in versions:
                version.session_id = target_id
                self._insert_version(conn, version)
            # Inside the transaction: if the file cannot be written, no row is kept.
            self._write_file(plan, versions[-1].content)
        return plan

    def adopt(
        self, session_id: str, path: str, content: str, status: p.PlanStatus
    ) -> tuple[PlanRow, PlanVersionRow]:
        """Make an existing plan file the session's plan (a plan that outlives a session).

        Its text as it is becomes the session's version 1, the person's; the file is
        not rewritten (a plan kept in git stays as committed until the plan changes)."""
        if self.get(session_id) is not None:
            raise StorageError(f"session {session_id} already has a plan")
        now = utc_now()
        plan = PlanRow(session_id, path, status, now, now)
        version = PlanVersionRow(session_id, 1, content, sha256(content), "user", now)
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO plans (session_id, path, status, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, path, status, now, now),
            )
            self._insert_version(conn, version)
        return plan, version

    def last_sessions(self) -> dict[str, tuple[str, str, str]]:
        """Plan path → (session id, session title, plan updated at) of the session that
        last changed a plan at that path."""
        rows = self.db.conn.execute(
            "SELECT p.path, p.session_id, p.updated_at, s.title FROM plans p"
            " JOIN sessions s ON s.id = p.session_id ORDER BY p.updated_at"
        ).fetchall()
        return {r["path"]: (r["session_id"], r["title"], r["updated_at"]) for r in rows}

    def write(
        self,
        session_id: str,
        content: str,
        *,
        author: p.Author,
        tool_call_id: str | None = None,
        status: p.PlanStatus | None = None,
    ) -> tuple[PlanRow, PlanVersionRow]:
        """Record a new version (and optionally a new status) and write it to the file."""
        plan = self._require(session_id)
        latest = self.latest(session_id)
        number = (latest.version if latest else 0) + 1
        now = utc_now()
        version = PlanVersionRow(
            session_id, number, content, sha256(content), author, now, tool_call_id
        )
        plan.status = status or plan.status
        plan.updated_at = now
        with self.db.transaction() as conn:
            self._insert_version(conn, version)
            self._update_plan(conn, plan)
            self._write_file(plan, content)
        return plan, version

    def set_status(self, session_id: str, status: p.PlanStatus) -> PlanRow:
        """Change the status and rewrite the front matter (content unchanged, no new version).

        Call `sync` first: the file is rewritten from the latest version.
        """
        plan = self._require(session_id)
        latest = self.latest(session_id)
        plan.status = status
        plan.updated_at = utc_now()
        with self.db.transaction() as conn:
            self._update_plan(conn, plan)
            if latest is not None:
                self._write_file(plan, latest.content)
        return plan

    def sync(self, session_id: str) -> PlanVersionRow | None:
        """Record the file's content as a `user` version when it differs from the latest.

        Returns the new version, or None when the file is unchanged or missing
        (a missing file keeps the latest version; the next write recreates it).
        """
        plan = self.get(session_id)
        if plan is None:
            return None
        content = self.read_content(plan)
        if content is None:
            return None
        latest = self.latest(session_id)
        if latest is not None and latest.sha256 == sha256(content):
            return None
        number = (latest.version if latest else 0) + 1
        now = utc_now()
        version = PlanVersionRow(session_id, number, content, sha256(content), "user", now)
        plan.updated_at = now
        with self.db.transaction() as conn:
            self._insert_version(conn, version)
            self._update_plan(conn, plan)
        return version

    # ------------------------------------------------------------------ helpers

    def plans_directory(self, plans_dir: str) -> Path:
        """`plans.dir` resolved inside the workspace; a directory escaping it is refused."""
        try:
            directory = resolve_in_workspace(self.workspace, plans_dir or ".")
        except SandboxError as exc:
            raise ConfigError(
                f"plans.dir {plans_dir!r} cannot be used: {exc}. "
                "Set plans.dir to a directory inside the workspace."
            ) from None
        if directory.exists() and not directory.is_dir():
            raise ConfigError(f"plans.dir {plans_dir!r} is not a directory")
        return directory

    def _free_path(self, directory: Path, day: date, hint: str) -> Path:
        taken = {r["path"] for r in self.db.conn.execute("SELECT path FROM plans").fetchall()}
        for attempt in range(1, MAX_NAME_ATTEMPTS + 1):
            candidate = directory / file_name(hint, day, attempt)
            shown = display_path(self.workspace, candidate)
            if shown not in taken and not candidate.exists() and not candidate.is_symlink():
                return candidate
        raise StorageError(f"no free plan file name in {display_path(self.workspace, directory)}")

    def _require(self, session_id: str) -> PlanRow:
        plan = self.get(session_id)
        if plan is None:
            raise StorageError(f"session {session_id} has no plan")
        return plan

    def _write_file(self, plan: PlanRow, content: str) -> None:
        path = self.file_path(plan)
        text = frontmatter.render(content, status=plan.status, session_id=plan.session_id)
        try:
            atomic_write(self.workspace, path, text.encode("utf-8"))
        except ToolFailure as exc:
            raise StorageError(f"cannot write the plan file {plan.path}: {exc}") from None

    @staticmethod
    def _insert_version(conn: sqlite3.Connection, v: PlanVersionRow) -> None:
        conn.execute(
            "INSERT INTO plan_versions"
            " (session_id, version, content, sha256, author, created_at, tool_call_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (v.session_id, v.version, v.content, v.sha256, v.author, v.created_at, v.tool_call_id),
        )

    @staticmethod
    def _update_plan(conn: sqlite3.Connection, plan: PlanRow) -> None:
        conn.execute(
            "UPDATE plans SET status = ?, updated_at = ? WHERE session_id = ?",
            (plan.status, plan.updated_at, plan.session_id),
        )
