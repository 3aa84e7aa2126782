"""What the model is shown of a session's plan: it depends on the plan store alone.

`PlanContext` is the context builder's `PlanSource` (the block that follows a
compaction's checkpoint), the session notes' `PlanVersions` (a plan the model
has not seen, or that changed outside the tools: its changed lines) and the
compaction ledger's plan line. Every read picks up an edit made
to the file on disk first, recorded as a `user` version and announced with
`baton/plan/didChange`.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from baton import protocol as p
from baton.agent import framing, prompts
from baton.agent.events import ClientChannel
from baton.agent.state import PlanBlock, SessionState, View
from baton.agent.tokens import estimate
from baton.errors import BatonError
from baton.plan.diff import changed_lines
from baton.plan.steps import parse_steps
from baton.plan.store import PlanRow, PlanStore, PlanVersionRow
from baton.plan.view import PlanSnapshot, block_text, first_unchecked

log = logging.getLogger(__name__)


class PlanRef(NamedTuple):
    """Where a session's plan is and how far it got (for the compaction ledger)."""

    path: str
    status: p.PlanStatus
    version: int


class PlanContext:
    def __init__(self, store: PlanStore, channel: ClientChannel) -> None:
        self.store = store
        self.channel = channel

    def sync(self, session_id: str) -> PlanVersionRow | None:
        """Record an edit made to the file on disk as a `user` version, and announce it."""
        version = self.store.sync(session_id)
        if version is not None:
            plan = self.store.get(session_id)
            assert plan is not None
            self.did_change(plan, version.version, "user")
        return version

    def did_change(self, plan: PlanRow, version: int, author: p.Author) -> None:
        self.channel.notify(
            "baton/plan/didChange",
            p.PlanDidChangeNotification(
                session_id=plan.session_id,
                path=plan.path,
                version=version,
                status=plan.status,
                author=author,
            ),
        )

    def snapshot(self, session_id: str) -> PlanSnapshot | None:
        """The plan as the model should see it now, re-read from disk; None without a plan."""
        plan = self.store.get(session_id)
        if plan is None:
            return None
        missing = False
        try:
            self.sync(session_id)
            missing = self.store.read_content(plan) is None
        except BatonError as exc:
            # The model still gets the last version; the person sees the problem in the log.
            log.warning("plan file of session %s unreadable: %s", session_id, exc.message)
            missing = True
        plan = self.store.get(session_id) or plan
        latest = self.store.latest(session_id)
        if latest is None:
            return None
        return PlanSnapshot(plan.path, plan.status, latest.version, latest.content, missing)

    def block(self, state: SessionState, view: View | None = None) -> PlanBlock | None:
        snapshot = self.snapshot(state.id)
        if snapshot is None:
            return None
        # One full copy: when a retained plan_write carries this very version, the block
        # gives the status and where to go on, and leaves the text to that call.
        below = self._written_after(state, view or state.view, snapshot.version)
        text = block_text(snapshot, state.row.mode, text_below=below)
        return PlanBlock(text, snapshot.version)

    def _written_after(self, state: SessionState, view: View, version: int) -> bool:
        """Whether a plan_write the view keeps (after its compaction) wrote `version`."""
        first = view.first_kept_seq
        if first is None:
            return False
        written = self.store.written_by(state.id)
        return any(
            part.name == "plan_write" and written.get(part.tool_call_id) == version
            for message in state.messages
            if message.seq >= first
            and message.kind != "compaction"
            and message.id not in state.reverted
            for part in message.tool_calls()
        )

    def note(self, state: SessionState, told: int) -> tuple[int, str] | None:
        """(latest version, the note to append) when the model's last copy is not the
        latest version (`told`: the version it was last shown, 0 for none); None when it
        is, or for a plan that is done.

        The note is the person's change as changed lines when the model has an
        earlier version and the diff is smaller than the plan's block; else the block.
        """
        snapshot = self.snapshot(state.id)
        if snapshot is None or snapshot.status == "done" or snapshot.version == told:
            return None
        block = block_text(snapshot, state.row.mode)
        full = prompts.PLAN_CHANGED.format(version=snapshot.version, block=block)
        seen = self.store.version(state.id, told) if told else None
        if seen is None:
            return snapshot.version, full
        step = first_unchecked(snapshot.content)
        diff = prompts.PLAN_PERSON_EDITED.format(
            path=framing.inline(snapshot.path),
            old=told,
            version=snapshot.version,
            status=snapshot.status,
            changes=framing.neutralise(changed_lines(seen.content, snapshot.content))
            or "(no line changed)",
            next=prompts.PLAN_NEXT.format(step=framing.inline(step))
            if step
            else prompts.PLAN_NO_NEXT,
        )
        return snapshot.version, diff if estimate(diff) < estimate(full) else full

    def written_versions(self, session_id: str) -> dict[str, int]:
        """Tool call id → the plan version it wrote (the session's context notes)."""
        return self.store.written_by(session_id)

    def current(self, session_id: str) -> PlanRef | None:
        """(path, status, version) of the session's plan, for the compaction ledger."""
        snapshot = self.snapshot(session_id)
        if snapshot is None:
            return None
        return PlanRef(snapshot.path, snapshot.status, snapshot.version)

    def ledger_state(self, state: SessionState) -> p.PlanState | None:
        """The plan line of the compaction ledger (the engine's `plan_state` seam)."""
        snapshot = self.snapshot(state.id)
        if snapshot is None:
            return None
        return p.PlanState(
            path=snapshot.path,
            status=snapshot.status,
            version=snapshot.version,
            steps=[
                p.PlanStep(text=step.text, state=step.state, reason=step.reason)
                for step in parse_steps(snapshot.content)
            ],
        )
