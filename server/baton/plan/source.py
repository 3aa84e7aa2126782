"""What the model is shown of a session's plan: it depends on the plan store alone.

`PlanContext` is the context builder's `PlanSource` (the copies of the plan's
text that tool results carry, the block that follows a compaction's
checkpoint), the session notes' `PlanVersions` (a plan changed outside the
tools) and the compaction ledger's plan line. Every read picks up an edit made
to the file on disk first, recorded as a `user` version and announced with
`baton/plan/didChange`.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from baton import protocol as p
from baton.context import PlanBlock
from baton.errors import BatonError
from baton.plan.steps import parse_steps
from baton.plan.store import PlanRow, PlanStore, PlanVersionRow
from baton.plan.view import CopyIndex, PlanSnapshot, block_text, copy_text
from baton.session.events import ClientChannel
from baton.session.state import SessionState

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

    def block(self, state: SessionState) -> PlanBlock | None:
        snapshot = self.snapshot(state.id)
        if snapshot is None:
            return None
        return PlanBlock(block_text(snapshot, state.row.mode), snapshot.version)

    def note(self, state: SessionState) -> tuple[int, str] | None:
        """(version, block text) of a plan that is not done (the session's context notes)."""
        snapshot = self.snapshot(state.id)
        if snapshot is None or snapshot.status == "done":
            return None
        return snapshot.version, block_text(snapshot, state.row.mode)

    def copies(self, state: SessionState) -> dict[str, str]:
        """Tool call id → the plan text its result carries (see `plan.view.copy_calls`).

        Each text is that version's stored content, which never changes, so a
        copy is sent the same way every time."""
        written_by = self.store.written_by(state.id)
        if not written_by:
            return {}
        index = state.extras.get("plan_copies")
        if not isinstance(index, CopyIndex):
            index = state.extras["plan_copies"] = CopyIndex()
        calls = index.compute(state.messages, written_by)
        if not calls:
            return {}
        plan = self.store.get(state.id)
        if plan is None:
            return {}
        texts: dict[int, str] = state.extras.setdefault("plan_copy_texts", {})
        out: dict[str, str] = {}
        for call_id, version in calls.items():
            if version not in texts:
                row = self.store.version(state.id, version)
                texts[version] = copy_text(plan.path, version, row.content if row else "")
            out[call_id] = texts[version]
        return out

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
