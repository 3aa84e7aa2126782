"""A parent's ledger lists its children's files and commands by child, from task results
and from the notes of steps built in children, and not as the parent's own."""

from __future__ import annotations

from baton.compaction.ledger import CHILD_FACTS, build_ledger, render_ledger
from baton.store.model import StoredMessage, StoredToolCall, ToolResultRecord
from baton.tools.base import Fact


def message(seq: int, **kwargs: object) -> StoredMessage:
    return StoredMessage(
        seq=seq,
        id=f"msg_{seq}",
        session_id="ses_parent",
        role="assistant",
        kind="step",
        created_at="",
        parts=kwargs.pop("parts", []),  # type: ignore[arg-type]
        **kwargs,  # type: ignore[arg-type]
    )


def test_children_work_comes_from_task_results_and_step_notes() -> None:
    call = StoredToolCall("call_t", "task")
    task_result = ToolResultRecord(
        "call_t",
        "completed",
        "<baton:task-result …>",
        facts=[
            Fact("modified", path="a.py", action="created", session="ses_a"),
            Fact("command", command="pytest", exit_code=1, session="ses_a"),
            Fact("command", command="pytest", exit_code=0, session="ses_a"),
        ],
    )
    by_task = message(1, parts=[call], results={"call_t": task_result})
    note = message(
        2,
        meta={
            CHILD_FACTS: [
                Fact("modified", path="b.py", action="modified", session="ses_b").to_json()
            ]
        },
    )
    ledger = build_ledger([by_task, note], None)
    assert ledger.files_modified == [] and ledger.commands == []
    assert [(c.child_id, c.files_modified) for c in ledger.children] == [
        ("ses_a", ["a.py"]),
        ("ses_b", ["b.py"]),
    ]
    assert ledger.children[0].commands[0].exit_codes == [1, 0]
    text = render_ledger(ledger)
    assert "Done by task children" in text
    assert "- ses_a: a.py; ran `pytest` → 1, 0" in text
    assert "- ses_b: b.py" in text
