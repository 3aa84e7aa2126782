"""The plan in the model's view, through the real ContextBuilder.

Re-injection after a compaction needs no plan-specific code in the compaction
engine: a compacted view (summary, ledger, later messages only) still gets the
plan block from the builder, re-read from disk, with the direction to continue.
Between compactions the plan's text is appended where it changes, never
rewritten.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest

from baton import protocol as p
from baton.agent.context import ContextBuilder
from baton.agent.state import SessionState, View
from baton.config import Settings
from baton.plan.source import PlanContext
from baton.plan.store import PlanStore
from baton.plan.view import first_unchecked
from baton.providers.base import ContextBlock, UserText
from baton.store.db import Database
from baton.store.model import StoredMessage, StoredText, ToolResultRecord, part_from_json
from baton.store.sessions import SessionStore

PLAN = "# Plan\n\n- [x] Read the code\n- [ ] Change parse()\n- [ ] Run the tests\n"


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        pass

    def notify(self, method: str, params: p.WireModel) -> None:
        self.sent.append((method, params.wire()))


@pytest.fixture
def channel() -> Recorder:
    return Recorder()


@pytest.fixture
def plans(workspace: Path, db: Database, channel: Recorder) -> PlanContext:
    return PlanContext(PlanStore(workspace, db), channel)  # type: ignore[arg-type]


def state_of(sessions: SessionStore, sid: str) -> SessionState:
    row = sessions.get_session(sid)
    assert row is not None
    return SessionState(row=row, messages=sessions.load_messages(sid))


def call(
    sessions: SessionStore,
    sid: str,
    name: str,
    args: dict[str, Any],
    output: str,
    call_id: str,
    status: Literal["completed", "failed"] = "completed",
) -> StoredMessage:
    import json

    part = part_from_json(
        "tool_call",
        {"toolCallId": call_id, "name": name, "input": args, "arguments": json.dumps(args)},
    )
    return sessions.append_message(
        sid,
        "assistant",
        "step",
        [part],
        results=[ToolResultRecord(call_id, status, output)],
    )


def build(plans: PlanContext, workspace: Path, state: SessionState) -> list[Any]:
    builder = ContextBuilder(workspace, plans)
    return builder.build(state, Settings(), tools=[], identity=None).request.items


def write_plan(plans: PlanContext, sessions: SessionStore, sid: str) -> str:
    """The agent's plan_write, stored as the loop stores it; returns the plan's path."""
    plan, _ = plans.store.create(
        sid,
        plans_dir=".baton/plans",
        hint="parser",
        content=PLAN,
        author="agent",
        tool_call_id="call_w",
    )
    call(sessions, sid, "plan_write", {"content": PLAN}, "Plan v1 written", "call_w")
    return plan.path


def test_first_unchecked_step() -> None:
    assert first_unchecked(PLAN) == "Change parse()"
    assert first_unchecked("1. [ ] numbered\n") == "numbered"
    assert first_unchecked("* [x] done\n  - [ ]  nested step  \n") == "nested step"
    assert first_unchecked("- [x] all done\n") is None


def test_compacted_view_gets_the_plan_back_from_disk(
    plans: PlanContext, sessions: SessionStore, session_id: str, workspace: Path, channel: Recorder
) -> None:
    path = write_plan(plans, sessions, session_id)
    sessions.update_session(session_id, mode="build")
    plans.store.set_status(session_id, "approved")
    call(sessions, session_id, "read", {"path": path}, "1\t# Plan ...", "call_r")
    kept = sessions.append_message(session_id, "user", "prompt", [StoredText("go on")])
    # Edited in the editor after the last request.
    file = workspace / path
    file.write_text(file.read_text().replace("Run the tests", "Run all the tests"))

    state = state_of(sessions, session_id)
    state.view = View(
        compaction_id="cmp_1",
        first_kept_seq=kept.seq,
        summary="## Summary\nworked on the parser",
        ledger_text="Files read: parser.py",
    )
    items = build(plans, workspace, state)
    kinds = [getattr(i, "name", type(i).__name__) for i in items]
    assert kinds == ["summary", "ledger", "plan", "UserText"]
    block = items[2]
    assert isinstance(block, ContextBlock)
    assert block.text.startswith(
        "<baton:plan>\nPlan file: " + path + " (status: approved, version 2)"
    )
    assert "Continue from: Change parse()" in block.text
    assert "Run all the tests" in block.text
    assert isinstance(items[3], UserText) and items[3].text == "go on"
    # The disk edit was recorded as the person's and announced.
    assert channel.sent[-1] == (
        "baton/plan/didChange",
        {
            "sessionId": session_id,
            "path": path,
            "version": 2,
            "status": "approved",
            "author": "user",
        },
    )


def test_a_person_edit_is_noted_as_its_changed_lines_and_a_first_sight_in_full(
    plans: PlanContext, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    path = write_plan(plans, sessions, session_id)
    state = state_of(sessions, session_id)
    assert plans.note(state, 1) is None  # the model has v1, the latest
    file = workspace / path
    file.write_text(file.read_text().replace("Run the tests", "Run all the tests"))
    noted = plans.note(state, 1)
    assert noted is not None
    version, text = noted
    assert version == 2
    assert text.startswith(f"[plan: the person changed {path}: v1 → v2 (status: draft).")
    assert "-5| - [ ] Run the tests\n+5| - [ ] Run all the tests" in text
    assert "Read the code" not in text  # not the whole plan: one line of context
    assert text.endswith("Next open step: Change parse()")
    # A model that has no copy yet (a session started on the plan) gets the whole block.
    version, first = plans.note(state, 0) or (0, "")
    assert first.startswith("[plan: v2 is the current plan") and "Read the code" in first
    # A change that touches most lines is shown whole: the block is smaller than the diff.
    file.write_text("\n".join(f"- [ ] step {n}" for n in range(30)) + "\n")
    _, rewritten = plans.note(state, 2) or (0, "")
    assert rewritten.startswith("[plan: v3 is the current plan") and "step 29" in rewritten


def test_after_done_the_block_names_only_path_and_status(
    plans: PlanContext, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    path = write_plan(plans, sessions, session_id)
    plans.store.set_status(session_id, "done")
    block = plans.block(state_of(sessions, session_id))
    assert block is not None
    assert block.text.startswith(f"Plan file: {path} (status: done, version 1).")
    assert "Change parse()" not in block.text
    assert plans.note(state_of(sessions, session_id), 0) is None  # nothing to announce once done


def test_plan_mode_draft_asks_for_plan_exit_and_awaiting_for_patience(
    plans: PlanContext, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    write_plan(plans, sessions, session_id)
    state = state_of(sessions, session_id)
    block = plans.block(state)
    assert block is not None and "plan_exit" in block.text and "Continue from" not in block.text
    plans.store.set_status(session_id, "awaiting_approval")
    block = plans.block(state)
    assert block is not None and "waiting for the person's approval" in block.text


def test_a_missing_file_shows_the_stored_version(
    plans: PlanContext, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    path = write_plan(plans, sessions, session_id)
    (workspace / path).unlink()
    block = plans.block(state_of(sessions, session_id))
    assert block is not None and "missing on disk" in block.text and "Change parse()" in block.text


def test_no_plan_no_block(
    plans: PlanContext, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    state = state_of(sessions, session_id)
    assert plans.block(state) is None
    assert plans.note(state, 0) is None
    assert plans.current(session_id) is None
