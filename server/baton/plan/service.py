"""PlanService: the operations behind the plan tools and the `baton/plan/*` methods.

It keeps the file, the store and the client in step: every operation first
picks up edits made on disk (recorded as `user` versions), every write and
status change is announced with `baton/plan/didChange`, and approval and
change requests reach the agent as user messages that start a turn. What the
model is shown of the plan comes from `PlanContext` (`baton.plan.source`),
which depends on the store alone; the sessions this service starts turns in
are given to it when it is built (`baton.features.setup_plans`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from baton import protocol as p
from baton.agent import framing, prompts
from baton.agent.events import ClientChannel
from baton.agent.state import SessionState
from baton.config import ConfigLoader
from baton.errors import (
    InvalidParams,
    NoPlan,
    NotFound,
    PlanChanged,
    PlanStateError,
    SessionBusy,
)
from baton.plan import annotate, library
from baton.plan.source import PlanContext
from baton.plan.store import PlanRow, PlanVersionRow, sha256
from baton.plan.view import edit_text, first_unchecked
from baton.store.leases import Leases
from baton.store.model import DEFAULT_TITLE, MessageKind

log = logging.getLogger(__name__)

# Statuses from which the person may approve a plan or ask for changes.
REVIEWABLE: tuple[p.PlanStatus, ...] = ("draft", "awaiting_approval")


class Sessions(Protocol):
    """What the plan methods need of the sessions (SessionService)."""

    leases: Leases

    def state(self, session_id: str) -> SessionState: ...

    def refresh(self, state: SessionState) -> SessionState: ...

    def change_mode(self, state: SessionState, mode: p.Mode) -> None: ...

    def new_session(self, params: p.SessionNewParams) -> p.SessionNewResult: ...

    def start_turn(
        self, state: SessionState, text: str, kind: MessageKind = "prompt"
    ) -> asyncio.Task[p.PromptResult]: ...


class FreshStart(Protocol):
    """The compaction a fresh-context build starts with (CompactionService.compact)."""

    async def compact(
        self,
        session_id: str,
        *,
        fresh: bool,
        prepare: Callable[[], None] | None = None,
        then: Callable[[p.CompactionRecord], None] | None = None,
    ) -> p.CompactionRecord: ...


class PlanService:
    def __init__(
        self,
        context: PlanContext,
        config: ConfigLoader,
        channel: ClientChannel,
        sessions: Sessions,
        fresh_start: FreshStart,
    ) -> None:
        self.context = context
        self.store = context.store
        self.workspace = context.store.workspace
        self.config = config
        self.channel = channel
        self.sessions = sessions
        self.fresh_start = fresh_start
        self.library = library.PlanLibrary(context.store)

    # ------------------------------------------------------------------ disk and client

    def sync(self, session_id: str) -> PlanVersionRow | None:
        """Record an edit made to the file on disk as a `user` version, and announce it."""
        return self.context.sync(session_id)

    def restore_before(self, session_id: str, tool_call_ids: set[str]) -> int | None:
        """A revert took back the turns that made these tool calls: put the plan back.

        Plan files are not checkpointed with the other files (they have versions), so the
        versions those calls wrote are undone by writing the version before the first of
        them again, as a new `user` version (the history keeps every version). Returns
        the new version, or None when the reverted turns did not change the plan.
        """
        if self.store.get(session_id) is None:
            return None
        self.sync(session_id)
        versions = self.store.versions(session_id)
        reverted = [v for v in versions if v.tool_call_id in tool_call_ids]
        if not reverted:
            return None
        earlier = [v for v in versions if v.version < reverted[0].version]
        if not earlier or earlier[-1].sha256 == versions[-1].sha256:
            return None  # created by the reverted turns (its file stays), or already back
        plan, version = self.store.write(session_id, earlier[-1].content, author="user")
        self._did_change(plan, version.version, "user")
        return version.version

    def _did_change(self, plan: PlanRow, version: int, author: p.Author) -> None:
        self.context.did_change(plan, version, author)

    def _show(self, plan: PlanRow, version: int) -> None:
        self.channel.notify(
            "baton/plan/show",
            p.PlanShowNotification(session_id=plan.session_id, path=plan.path, version=version),
        )

    def _current(self, session_id: str) -> tuple[PlanRow, PlanVersionRow]:
        """The plan and its latest version after picking up disk edits; NoPlan without one."""
        self.sync(session_id)
        plan = self.store.get(session_id)
        latest = self.store.latest(session_id)
        if plan is None or latest is None:
            raise NoPlan(
                f"session {session_id} has no plan yet; the agent creates it with plan_write"
            )
        return plan, latest

    # ------------------------------------------------------------------ agent (tools)

    def write(
        self,
        session_id: str,
        content: str,
        tool_call_id: str | None = None,
        *,
        mode: p.Mode = "plan",
    ) -> tuple[PlanRow, PlanVersionRow]:
        """Create the plan or replace its text (`plan_write`).

        Written in build mode the plan is the work under way, so it is active
        (`approved`) at once: nobody is asked to approve it and its block says to
        follow it, where a draft would say to wait.
        """
        if not content.strip():
            raise InvalidParams("content is empty; write the plan as markdown")
        content = content if content.endswith("\n") else content + "\n"
        self.sync(session_id)
        if self.store.get(session_id) is None:
            plan, version = self.store.create(
                session_id,
                plans_dir=self.config.settings().plans.dir,
                hint=self._name_hint(session_id),
                content=content,
                author="agent",
                tool_call_id=tool_call_id,
            )
            if mode == "build":
                plan = self.store.set_status(session_id, "approved")
            self._did_change(plan, version.version, "agent")
            return plan, version
        plan, latest = self._current(session_id)
        # A new text is a new draft, except while an approved plan is being built or
        # when written in build mode (see above).
        status: p.PlanStatus = (
            "approved" if plan.status == "approved" or mode == "build" else "draft"
        )
        return self._agent_version(plan, latest, content, status, tool_call_id)

    def edit(
        self, session_id: str, old: str, new: str, tool_call_id: str | None = None
    ) -> tuple[PlanRow, PlanVersionRow]:
        """Replace exactly one occurrence of `old` in the current text (`plan_edit`)."""
        plan, latest = self._current(session_id)
        if not old:
            raise InvalidParams("old_string is empty; copy the exact text to replace from the plan")
        if old == new:
            raise InvalidParams("old_string and new_string are the same; nothing would change")
        count = latest.content.count(old)
        if count == 0:
            raise InvalidParams(
                f"old_string was not found in the plan (v{latest.version}); copy it exactly, "
                "whitespace included, from the plan's current text"
            )
        if count > 1:
            raise InvalidParams(
                f"old_string occurs {count} times in the plan; include more of the "
                "surrounding text so that it matches exactly once"
            )
        content = latest.content.replace(old, new, 1)
        status: p.PlanStatus = "draft" if plan.status == "awaiting_approval" else plan.status
        return self._agent_version(plan, latest, content, status, tool_call_id)

    def edit_result(self, session_id: str, version: int) -> str:
        """`plan_edit`'s answer for `version`: its change to the version before, never the
        whole plan (the model has the text it wrote, and every change since)."""
        plan = self.store.get(session_id)
        after = self.store.version(session_id, version)
        if plan is None or after is None:
            raise NoPlan(f"session {session_id} has no plan version {version}")
        before = self.store.version(session_id, version - 1)
        return edit_text(version, plan.status, before.content if before else "", after.content)

    def _agent_version(
        self,
        plan: PlanRow,
        latest: PlanVersionRow,
        content: str,
        status: p.PlanStatus,
        tool_call_id: str | None,
    ) -> tuple[PlanRow, PlanVersionRow]:
        if sha256(content) == latest.sha256 and status == plan.status:
            return plan, latest
        plan, version = self.store.write(
            plan.session_id, content, author="agent", tool_call_id=tool_call_id, status=status
        )
        self._did_change(plan, version.version, "agent")
        return plan, version

    def show(self, session_id: str) -> tuple[PlanRow, int]:
        """Ask the client to show the plan (`plan_show`); nothing enters the model's context."""
        plan, latest = self._current(session_id)
        self._show(plan, latest.version)
        return plan, latest.version

    def submit(self, session_id: str) -> tuple[PlanRow, int]:
        """Submit the plan for approval (`plan_exit`): announce it and ask the client to show it."""
        plan, latest = self._current(session_id)
        if plan.status not in REVIEWABLE:
            raise PlanStateError(
                f"the plan is already {plan.status}; plan_exit submits a draft for approval"
            )
        plan = self.store.set_status(session_id, "awaiting_approval")
        self._did_change(plan, latest.version, "agent")
        self._show(plan, latest.version)
        return plan, latest.version

    def finish(self, session_id: str) -> tuple[PlanRow, int]:
        """Mark the plan done (`plan_done`); from then on the model sees only its path."""
        plan, latest = self._current(session_id)
        if plan.status != "done":
            plan = self.store.set_status(session_id, "done")
            self._did_change(plan, latest.version, "agent")
        return plan, latest.version

    def _name_hint(self, session_id: str) -> str:
        """The session's title, or its first request when it has no title of its own."""
        state = self.sessions.state(session_id)
        if state.row.title and state.row.title != DEFAULT_TITLE:
            return state.row.title
        for message in state.messages:
            if message.role == "user" and message.kind == "prompt" and message.text().strip():
                return message.text()
        return "plan"

    # ------------------------------------------------------------------ client (RPC)

    def get(self, session_id: str) -> p.PlanInfo | None:
        self.sessions.state(session_id)
        if self.store.get(session_id) is None:
            return None
        plan, latest = self._current(session_id)
        return p.PlanInfo(
            path=plan.path, status=plan.status, version=latest.version, content=latest.content
        )

    def update(self, params: p.PlanUpdateParams) -> p.PlanUpdateResult:
        """The person's edit from the client: checked against `baseVersion`, a `user` version."""
        sid = params.session_id
        self.sessions.state(sid)
        self.sync(sid)
        if self.store.get(sid) is None:
            if params.base_version != 0:
                raise NoPlan(f"session {sid} has no plan; send baseVersion 0 to create one")
            plan, version = self.store.create(
                sid,
                plans_dir=self.config.settings().plans.dir,
                hint=self._name_hint(sid),
                content=params.content,
                author="user",
            )
            self._did_change(plan, version.version, "user")
            return p.PlanUpdateResult(version=version.version)
        plan, latest = self._current(sid)
        if params.base_version != latest.version:
            raise PlanChanged(latest.version, params.base_version)
        if sha256(params.content) == latest.sha256:
            return p.PlanUpdateResult(version=latest.version)
        plan, version = self.store.write(sid, params.content, author="user")
        self._did_change(plan, version.version, "user")
        return p.PlanUpdateResult(version=version.version)

    async def approve(self, params: p.PlanApproveParams) -> p.PlanApproveResult:
        """Approve and switch to build mode; with `fresh`, the view then starts afresh (no
        summary: the person's requests, the ledger and the approved plan); with `start`,
        the build turn begins (the call returns once it has started)."""
        state = self.sessions.state(params.session_id)
        if not params.start and not params.fresh:
            self._approve(state)
            return p.PlanApproveResult(status="approved", mode="build")
        _ensure_idle(state)
        if params.fresh:
            await self._approve_fresh(state, start=params.start)
            return p.PlanApproveResult(status="approved", mode="build")
        # The lease first (busy if another process works on the session), so nothing is
        # written unless the turn can run; the turn takes it over (leases are counted).
        with self.sessions.leases.hold(state.id, "plan approval"):
            state = self.sessions.refresh(state)
            self._approve(state)
            self._start_build(state, fresh=False)
            return p.PlanApproveResult(status="approved", mode="build")

    async def _approve_fresh(self, state: SessionState, *, start: bool) -> None:
        """Approve, then the fresh-context compaction, admitted as one work on the session
        (the approval under its lease, the build turn started as it ends, nothing between);
        when the compaction fails the approval is taken back (the status and mode as they
        were), so a refused fresh start changes nothing."""
        before: list[tuple[p.PlanStatus, p.Mode]] = []
        refused: list[BaseException] = []

        def prepare() -> None:
            mode = state.row.mode
            before.append((self._approve(state), mode))

        def then(_: p.CompactionRecord) -> None:
            if not start:
                return
            try:
                self._start_build(state, fresh=True)
            except BaseException as exc:
                refused.append(exc)

        try:
            await self.fresh_start.compact(state.id, fresh=True, prepare=prepare, then=then)
        except BaseException:
            if before:
                status, mode = before[0]
                self._set_status(state.id, status)
                self.sessions.change_mode(state, mode)
            raise
        if refused:
            raise refused[0]

    def _approve(self, state: SessionState) -> p.PlanStatus:
        """Approve the plan and switch to build mode; returns the status it had."""
        plan, latest = self._current(state.id)
        if plan.status not in REVIEWABLE:
            raise PlanStateError(
                f"the plan is {plan.status}; only a draft or a plan awaiting approval "
                "can be approved"
            )
        self._did_change(self.store.set_status(state.id, "approved"), latest.version, "user")
        self.sessions.change_mode(state, "build")
        return plan.status

    def _set_status(self, session_id: str, status: p.PlanStatus) -> None:
        _, latest = self._current(session_id)
        self._did_change(self.store.set_status(session_id, status), latest.version, "user")

    def _start_build(self, state: SessionState, *, fresh: bool) -> None:
        if fresh:
            # The view is the plan block, which has the direction and the step to start
            # from; the message does not repeat them.
            self.sessions.start_turn(state, prompts.PLAN_APPROVED_FRESH, "approval")
            return
        plan, latest = self._current(state.id)
        text = prompts.PLAN_APPROVED_MESSAGE.format(path=framing.inline(plan.path))
        step = first_unchecked(latest.content)
        if step:
            text += "\n" + prompts.PLAN_APPROVED_START.format(step=framing.inline(step))
        self.sessions.start_turn(state, text, "approval")

    def request_changes(self, params: p.PlanRequestChangesParams) -> p.PlanStatusResult:
        """Send the person's feedback to the agent and start its turn; the plan is a draft again."""
        state = self.sessions.state(params.session_id)
        _ensure_idle(state)
        with self.sessions.leases.hold(state.id, "plan feedback"):
            self.sessions.refresh(state)
            plan, latest = self._current(state.id)
            if plan.status not in REVIEWABLE:
                raise PlanStateError(
                    f"the plan is {plan.status}; changes can be requested only for a draft or"
                    " a plan awaiting approval (send a prompt instead)"
                )
            if params.annotations:
                # Checked before anything changes: a stale note is refused, not sent.
                annotate.check(latest.content, params.annotations)
                text = annotate.message(
                    latest.content, latest.version, params.annotations, params.feedback
                )
            else:
                text = prompts.PLAN_FEEDBACK_MESSAGE.format(feedback=params.feedback.strip())
            if plan.status != "draft":
                plan = self.store.set_status(state.id, "draft")
                self._did_change(plan, latest.version, "user")
            self.sessions.start_turn(state, text, "feedback")
        return p.PlanStatusResult(status=plan.status)

    # ------------------------------------------------------------------ plans beyond a session

    async def list_plans(self) -> p.PlanListResult:
        """The plan files under `plans.dir`, with the session that last had each (read off
        the event loop: a folder of thousands of files keeps no other request waiting)."""
        return await self.library.list_plans(self.config.settings().plans.dir)

    def new_session(self, params: p.SessionNewParams) -> p.SessionNewResult:
        """A session on an existing plan file (`baton/session/new {planPath}`): it takes
        the plan as it is and carries on from its first open step (the model is shown
        the plan's block, with that step, before its first request)."""
        assert params.plan_path is not None
        plan = library.open_plan(self.workspace, params.plan_path)  # checked before creating
        title = params.title or library.title_of(plan.content, plan.path)
        created = self.sessions.new_session(
            params.model_copy(update={"plan_path": None, "title": title})
        )
        self._adopt(created.session_id, plan)
        return created

    def attach(self, params: p.PlanAttachParams) -> p.PlanAttachResult:
        """Attach an existing plan file to a running session that has no plan (or has
        this one already)."""
        state = self.sessions.state(params.session_id)
        plan = library.open_plan(self.workspace, params.path)
        current = self.store.get(state.id)
        if current is not None:
            if current.path != plan.path:
                raise PlanStateError(
                    f"the session already has the plan {current.path}; start a new session "
                    f"on {plan.path} (baton/session/new with planPath)"
                )
            _, latest = self._current(state.id)
            return p.PlanAttachResult(
                path=current.path, status=current.status, version=latest.version
            )
        _ensure_idle(state)
        with self.sessions.leases.hold(state.id, "plan attach"):
            row, version = self._adopt(state.id, plan)
        return p.PlanAttachResult(path=row.path, status=row.status, version=version.version)

    def _adopt(self, session_id: str, plan: library.PlanFile) -> tuple[PlanRow, PlanVersionRow]:
        # Whatever the file's front matter says: approval is the person's, here.
        status = library.status_here(self.store, plan.path)
        row, version = self.store.adopt(session_id, plan.path, plan.content, status)
        self._did_change(row, version.version, "user")
        return row, version

    def history(self, session_id: str) -> p.PlanHistoryResult:
        self.sessions.state(session_id)
        self.sync(session_id)
        return p.PlanHistoryResult(versions=[v.to_wire() for v in self.store.versions(session_id)])

    def get_version(self, params: p.PlanGetVersionParams) -> p.PlanVersionContent:
        self.sessions.state(params.session_id)
        if self.store.get(params.session_id) is None:
            raise NoPlan(f"session {params.session_id} has no plan")
        row = self.store.version(params.session_id, params.version)
        if row is None:
            raise NotFound(f"plan version {params.version} does not exist")
        return p.PlanVersionContent(
            version=row.version,
            content=row.content,
            author=row.author,
            created_at=row.created_at,
            sha256=row.sha256,
        )


def _ensure_idle(state: SessionState) -> None:
    """Refuse before changing anything when a turn (or a compaction) is running."""
    if state.busy or state.compacting:
        raise SessionBusy(state.id)
