"""The plan in the model's view, through the real ContextBuilder.

Re-injection after a compaction needs no plan-specific code in the compaction
engine: a compacted view (summary, ledger, later messages only) still gets the
plan block from the builder, re-read from disk, with the direction to continue.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest

from baton import protocol as p
from baton.config import ConfigLoader, Settings
from baton.context import ContextBuilder
from baton.plan.service import PlanService
from baton.plan.view import first_unchecked
from baton.providers.base import ContextBlock, ToolCall, ToolOutput, UserText
from baton.session.model import StoredMessage, StoredPart, ToolResultRecord
from baton.session.state import SessionState, View
from baton.store.db import Database
from baton.store.sessions import SessionStore

PLAN = "# Plan\n\n- [x] Read the code\n- [ ] Change parse()\n- [ ] Run the tests\n"


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def send_update(self, session_id: str, update: p.WireModel) -> None:
        pass

    def notify(self, method: str, params: p.WireModel) -> None:
        self.sent.append((method, params.wire()))


@pytest.fixture
def channel() -> Recorder:
    return Recorder()


@pytest.fixture
def plans(workspace: Path, db: Database, channel: Recorder) -> PlanService:
    return PlanService(workspace, db, ConfigLoader(workspace, environ={}), channel)  # type: ignore[arg-type]


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

    part = StoredPart(
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


def build(plans: PlanService, workspace: Path, state: SessionState) -> list[Any]:
    builder = ContextBuilder(workspace, plans)
    return builder.build(state, Settings(), tools=[], identity=None).request.items


def write_plan(plans: PlanService, sessions: SessionStore, sid: str) -> str:
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
    plans: PlanService, sessions: SessionStore, session_id: str, workspace: Path, channel: Recorder
) -> None:
    path = write_plan(plans, sessions, session_id)
    sessions.update_session(session_id, mode="build")
    plans.store.set_status(session_id, "approved")
    call(sessions, session_id, "read", {"path": path}, "     1\t# Plan ...", "call_r")
    kept = sessions.append_message(
        session_id, "user", "prompt", [StoredPart("text", {"text": "go on"})]
    )
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
    assert (
        "Continue from the step in progress, else the first open one: Change parse()" in block.text
    )
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


def test_superseded_calls_show_a_reference_once(
    plans: PlanService, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    path = write_plan(plans, sessions, session_id)
    call(sessions, session_id, "read", {"path": "./" + path}, "     1\t# Plan", "call_r1")
    call(sessions, session_id, "read", {"path": str(workspace / path)}, "     1\t# Plan", "call_r2")
    call(sessions, session_id, "read", {"path": "other.md"}, "other text", "call_o")
    items = build(plans, workspace, state_of(sessions, session_id))
    text = "\n".join(
        getattr(i, "text", "") or getattr(i, "arguments", "") or getattr(i, "output", "")
        for i in items
    )
    assert text.count("Change parse()") == 1
    outputs = {i.call_id: i.output for i in items if isinstance(i, ToolOutput)}
    assert (
        outputs["call_w"] == "[plan v1, superseded: the current plan is in the <baton:plan> block]"
    )
    assert outputs["call_r1"].startswith("[plan file read, superseded")
    assert outputs["call_r2"].startswith("[plan file read, superseded")
    assert outputs["call_o"] == "other text"
    [write] = [i for i in items if isinstance(i, ToolCall) and i.name == "plan_write"]
    assert "Change parse()" not in write.arguments


def test_after_done_only_path_and_status_remain(
    plans: PlanService, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    path = write_plan(plans, sessions, session_id)
    call(sessions, session_id, "read", {"path": path}, "     1\t# Plan", "call_r1")
    plans.store.set_status(session_id, "done")
    call(sessions, session_id, "plan_done", {}, "Plan v1 marked done.", "call_d")
    call(sessions, session_id, "read", {"path": path}, "     3\t- [ ] Change parse()", "call_r2")
    items = build(plans, workspace, state_of(sessions, session_id))
    [block] = [i for i in items if isinstance(i, ContextBlock)]
    assert block.text.startswith(f"<baton:plan>\nPlan file: {path} (status: done, version 1).")
    assert "Change parse()" not in block.text
    outputs = {i.call_id: i.output for i in items if isinstance(i, ToolOutput)}
    assert "the plan is done" in outputs["call_w"] and "the plan is done" in outputs["call_r1"]
    # A read made after plan_done is the model's own fresh copy: left alone.
    assert outputs["call_r2"] == "     3\t- [ ] Change parse()"


def test_plan_mode_draft_asks_for_plan_exit_and_awaiting_for_patience(
    plans: PlanService, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    write_plan(plans, sessions, session_id)
    state = state_of(sessions, session_id)
    block = plans.block(state)
    assert block is not None and "plan_exit" in block and "Continue from" not in block
    plans.store.set_status(session_id, "awaiting_approval")
    assert "waiting for the person's approval" in (plans.block(state) or "")


def test_a_missing_file_shows_the_stored_version(
    plans: PlanService, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    path = write_plan(plans, sessions, session_id)
    (workspace / path).unlink()
    block = plans.block(state_of(sessions, session_id)) or ""
    assert "missing on disk" in block and "Change parse()" in block


def test_no_plan_no_block(
    plans: PlanService, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    state = state_of(sessions, session_id)
    assert plans.block(state) is None
    assert plans.superseded(state) == {}
    assert plans.current(session_id) is None


def test_every_plan_write_is_superseded_and_a_failed_one_keeps_its_error(
    plans: PlanService, sessions: SessionStore, session_id: str, workspace: Path
) -> None:
    write_plan(plans, sessions, session_id)
    # The same text again makes no version, but the call still carried the plan.
    call(sessions, session_id, "plan_write", {"content": PLAN}, "Plan v1 written", "call_same")
    call(
        sessions,
        session_id,
        "plan_write",
        {"content": PLAN + "- [ ] More\n"},
        "cannot write the plan file: No space left on device",
        "call_failed",
        status="failed",
    )
    items = build(plans, workspace, state_of(sessions, session_id))
    outputs = {i.call_id: i.output for i in items if isinstance(i, ToolOutput)}
    assert outputs["call_same"].startswith("[plan text, superseded")
    assert outputs["call_failed"] == (
        "[plan_write failed, its content is left out: "
        "cannot write the plan file: No space left on device]"
    )
    arguments = " ".join(i.arguments for i in items if isinstance(i, ToolCall))
    assert "Change parse()" not in arguments
