"""What changed since the model was last told, appended to the history as notes.

Providers cache exact prefixes, so nothing per-turn goes into the instructions
or in front of the history: before a turn's prompt is stored, and before each
model step, the session compares what the model has been told in its current
view with how things are, and appends a message (kind `context`) for each
difference:

- the mode, with its rules, when it is not the mode last announced (the
  instructions say build mode holds until a note says otherwise; a switch; and
  after a compaction with a summary, until a note is in view again, whatever the
  mode);
- the plan, when the last version the model was shown is not the latest: the
  person's change as its changed lines (the whole block when that is smaller,
  or when the model has no copy yet: a session started on, or attached to, an
  existing plan file); the plan tools' own changes are already in their calls
  and results (`plan_write`'s text, `plan_edit`'s changed lines).

A note is stored like any message, so it is sent the same way from then on.
The turn adds one more kind itself: the look-first nudge (`session/nudge.py`).
"""

from __future__ import annotations

from typing import Any, Protocol

from baton.agent import prompts
from baton.agent.state import SessionState, Told
from baton.store.model import StoredMessage, StoredText
from baton.store.sessions import SessionStore

MODE_TEXT = {"plan": prompts.MODE_PLAN, "build": prompts.MODE_BUILD}


class PlanVersions(Protocol):
    """What the notes need of the plan feature (PlanService)."""

    def note(self, state: SessionState, told: int) -> tuple[int, str] | None:
        """(latest version, the note's text) when `told` (the version the model was last
        shown, 0 for none) is not the latest of a plan that is not done, else None."""
        ...

    def written_versions(self, session_id: str) -> dict[str, int]:
        """Tool call id → the version that call wrote."""
        ...


class ContextNotes:
    def __init__(self, store: SessionStore, plans: PlanVersions | None = None) -> None:
        self.store = store
        self.plans = plans

    def sync(self, state: SessionState, *, block_version: int | None = None) -> list[StoredMessage]:
        """Append the notes the model is owed; returns them (usually none).

        `block_version`: the plan version the block after the current compaction's
        checkpoint shows (the context builder's), which comes before every retained
        message. What counts is the version of the last copy in order: a retained
        message may hold a copy older than the block's."""
        written = self.plans.written_versions(state.id) if self.plans is not None else {}
        mode, version = self._told(state, written, block_version)
        if version is None:
            version = block_version or 0
        added: list[StoredMessage] = []
        if mode != state.row.mode:
            told = MODE_TEXT[state.row.mode]
            if state.row.parent_id is not None and state.row.mode == "plan":
                told = prompts.MODE_PLAN_CHILD  # a child writes no plan of the session's
            added.append(self.add(state, told, {"mode": state.row.mode}))
        plan = self.plans.note(state, version) if self.plans is not None else None
        if plan is not None:
            latest, text = plan
            added.append(self.add(state, text, {"planVersion": latest}))
        return added

    def add(self, state: SessionState, text: str, meta: dict[str, Any]) -> StoredMessage:
        """Append one note (stored as a `system` message of kind `context`)."""
        message = self.store.append_message(
            state.id, "system", "context", [StoredText(text)], meta=meta
        )
        state.add(message)
        return message

    def _told(
        self, state: SessionState, written: dict[str, int], block_version: int | None
    ) -> tuple[str | None, int | None]:
        view = state.view
        signature = (view.signature, len(state.reverted))
        told = state.told
        if told is None or told.signature != signature or told.scanned > len(state.messages):
            # After a compaction the summary (or the server's window) may speak of another
            # mode: say it again. A view with neither (a fresh start, pruning alone) holds
            # only Baton's blocks and messages that are scanned below, so the instructions'
            # default holds as in a new session.
            summarised = view.summary is not None or view.server_window is not None
            # The plan block (frozen with the view) is the first copy in view.
            told = state.told = Told(
                signature, mode=None if summarised else "build", plan_version=block_version
            )
        mode, version = told.mode, told.plan_version
        settled = True
        for index in range(told.scanned, len(state.messages)):
            message = state.messages[index]
            if _in_view(message, state):
                mode, version = _scan(message, written, mode, version)
            settled = settled and message.answered()
            if settled:
                told.mode, told.plan_version, told.scanned = mode, version, index + 1
        return mode, version


def _in_view(message: StoredMessage, state: SessionState) -> bool:
    first = state.view.first_kept_seq
    return (
        message.kind != "compaction"
        and (first is None or message.seq >= first)
        and message.id not in state.reverted
    )


def _scan(
    message: StoredMessage, written: dict[str, int], mode: str | None, version: int | None
) -> tuple[str | None, int | None]:
    if message.kind == "context":
        told_mode = message.meta.get("mode")
        if isinstance(told_mode, str):
            mode = told_mode
        told_version = message.meta.get("planVersion")
        if isinstance(told_version, int):
            version = told_version
        return mode, version
    for part in message.tool_calls():
        wrote = written.get(part.tool_call_id)
        # A plan_write shows the whole text; a plan_edit's result shows its change to the
        # version before it, which the model has only if it was told that one (else the
        # person changed the file meanwhile, and a note shows what it missed).
        if wrote is not None and (part.name != "plan_edit" or version == wrote - 1):
            version = wrote
    return mode, version
