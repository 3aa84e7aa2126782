"""The incremental plan-copy index must give exactly what the full scan gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.plan.view import CopyIndex, copy_calls
from baton.session.model import StoredMessage, StoredPart, ToolResultRecord

call_kinds = st.sampled_from(
    [
        ("plan_write", {"content": "- [ ] a"}),
        ("plan_edit", {"old_string": "a", "new_string": "b"}),
        ("plan_done", {}),
        ("read", {"path": "plan.md"}),
        ("bash", {"command": "ls"}),
    ]
)
# (calls of one message, each with an outcome: None = no result yet)
messages_strategy = st.lists(
    st.lists(st.tuples(call_kinds, st.sampled_from(["completed", "failed", None])), max_size=3),
    min_size=1,
    max_size=12,
)


def _message(index: int, calls: list, written_by: dict[str, int]) -> StoredMessage:  # type: ignore[type-arg]
    parts, results = [], {}
    for j, ((name, args), outcome) in enumerate(calls):
        call_id = f"call_{index}_{j}"
        parts.append(StoredPart("tool_call", {"toolCallId": call_id, "name": name, "input": args}))
        if outcome is not None:
            results[call_id] = ToolResultRecord(call_id, outcome, f"output {call_id}")
        if name.startswith("plan_") and name != "plan_done" and outcome != "failed":
            written_by[call_id] = len(written_by) + 1
    return StoredMessage(index, f"m{index}", "s", "assistant", "step", "", parts, results=results)


@settings(max_examples=150, deadline=None)
@given(messages_strategy)
def test_incremental_index_matches_the_full_scan(history: list) -> None:  # type: ignore[type-arg]
    written_by: dict[str, int] = {}
    index = CopyIndex()
    messages: list[StoredMessage] = []
    for i, calls in enumerate(history):
        messages.append(_message(i, calls, written_by))
        assert index.compute(messages, written_by) == copy_calls(messages, written_by)
    # Results that arrive later (a running call finishing) are picked up too.
    for message in messages:
        for part in message.tool_calls():
            call_id = part.data["toolCallId"]
            message.results.setdefault(call_id, ToolResultRecord(call_id, "completed", "late"))
    assert index.compute(messages, written_by) == copy_calls(messages, written_by)


def test_only_the_last_edit_of_a_step_carries_the_text() -> None:
    written_by = {"w": 1, "e1": 2, "e2": 3, "w2": 4}
    step = StoredMessage(
        1,
        "m1",
        "s",
        "assistant",
        "step",
        "",
        [
            StoredPart("tool_call", {"toolCallId": cid, "name": name, "input": {}})
            for cid, name in (("w", "plan_write"), ("e1", "plan_edit"), ("e2", "plan_edit"))
        ],
    )
    rewrite = StoredMessage(
        2,
        "m2",
        "s",
        "assistant",
        "step",
        "",
        [StoredPart("tool_call", {"toolCallId": "w2", "name": "plan_write", "input": {}})],
    )
    # The step's last change is e2; a plan_write carries its own text in its arguments.
    assert copy_calls([step, rewrite], written_by) == {"e2": 3}
