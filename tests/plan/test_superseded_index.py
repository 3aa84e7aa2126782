"""The incremental superseded index must give exactly what the full scan gives."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.plan.view import PlanSnapshot, SupersededIndex, superseded_calls
from baton.session.model import StoredMessage, StoredPart, ToolResultRecord

PLAN_PATH = ".baton/plans/2026-11-30-x.md"

call_kinds = st.sampled_from(
    [
        ("plan_write", {"content": "- [ ] a"}),
        ("read", {"path": PLAN_PATH}),
        ("read", {"path": "./" + PLAN_PATH}),
        ("read", {"path": "other.md"}),
        ("plan_done", {}),
        ("plan_edit", {"old_string": "a", "new_string": "b"}),
        ("bash", {"command": "ls"}),
    ]
)
# (calls of one message, each with an outcome: None = no result yet)
messages_strategy = st.lists(
    st.lists(st.tuples(call_kinds, st.sampled_from(["completed", "failed", None])), max_size=3),
    min_size=1,
    max_size=12,
)


def _message(index: int, calls: list) -> StoredMessage:  # type: ignore[type-arg]
    parts, results = [], {}
    for j, ((name, args), outcome) in enumerate(calls):
        call_id = f"call_{index}_{j}"
        parts.append(StoredPart("tool_call", {"toolCallId": call_id, "name": name, "input": args}))
        if outcome is not None:
            results[call_id] = ToolResultRecord(call_id, outcome, f"output {call_id}")
    return StoredMessage(index, f"m{index}", "s", "assistant", "step", "", parts, results=results)


@settings(max_examples=150, deadline=None)
@given(messages_strategy, st.sampled_from(["draft", "approved", "done"]))
def test_incremental_index_matches_the_full_scan(history: list, status: str) -> None:  # type: ignore[type-arg]
    workspace = Path("/tmp/baton-superseded-ws")
    plan = PlanSnapshot(PLAN_PATH, status, 1, "")  # type: ignore[arg-type]
    written_by = {"call_0_0": 1}
    index = SupersededIndex()
    messages: list[StoredMessage] = []
    for i, calls in enumerate(history):
        messages.append(_message(i, calls))
        got = index.compute(messages, workspace=workspace, plan=plan, written_by=written_by)
        want = superseded_calls(messages, workspace=workspace, plan=plan, written_by=written_by)
        assert got == want
    # Results that arrive later (a running call finishing) are picked up too.
    for message in messages:
        for part in message.tool_calls():
            call_id = part.data["toolCallId"]
            message.results.setdefault(call_id, ToolResultRecord(call_id, "completed", "late"))
    got = index.compute(messages, workspace=workspace, plan=plan, written_by=written_by)
    assert got == superseded_calls(messages, workspace=workspace, plan=plan, written_by=written_by)
