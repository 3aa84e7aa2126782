"""How a `task` child reads in its ACP tool call: pure rendering (acp/children.py)."""

from __future__ import annotations

from baton import protocol as p
from baton.faces.acp import children


def child(**fields: object) -> p.ChildUpdate:
    base: dict[str, object] = {
        "callId": "call-1",
        "childId": "s-child",
        "agent": "build",
        "description": "Wire the cache in",
        "status": "running",
        "tokens": 12345,
    }
    return p.ChildUpdate.model_validate(base | fields)


def test_a_plan_step_is_titled_step_k_of_n_and_says_it_in_the_text() -> None:
    update = child(step={"index": 2, "total": 6})
    view = children.ChildView("s-parent", update)
    assert children.title(update) == "Step 2 of 6: Wire the cache in"
    assert children.text(view).splitlines() == [
        "build child: Wire the cache in",
        "step 2 of 6 · running · 12,345 tokens",
    ]
    assert children.title(child()) == "build: Wire the cache in"


def test_the_latest_tool_calls_show_older_ones_counted_and_a_failure_marked() -> None:
    view = children.ChildView("s-parent", child(status="max_steps"))
    for i in range(children.SHOWN_STEPS + 3):
        view.tool_started(
            p.ToolCallStarted(tool_call_id=f"t{i}", name="read", input={"path": f"f{i}.py"})
        )
    view.tool_ended(
        p.ToolCallUpdate(tool_call_id="t10", status="failed", output="no such file\nmore")
    )
    view.tool_ended(p.ToolCallUpdate(tool_call_id="t9", status="completed", output="ok"))
    lines = children.text(view).splitlines()
    assert lines[1] == "stopped at its step limit · 12,345 tokens"
    assert lines[2] == "… 3 earlier tool calls"
    assert lines[3] == "→ Read f3.py"
    assert lines[-2] == "→ Read f9.py"
    assert lines[-1] == "✗ Read f10.py (no such file)"
    assert len(lines) == 3 + children.SHOWN_STEPS


def test_a_long_command_is_cut_and_says_so() -> None:
    view = children.ChildView("s-parent", child())
    view.tool_started(
        p.ToolCallStarted(tool_call_id="t", name="grep", input={"pattern": "x" * 400})
    )
    last = children.text(view).splitlines()[-1]
    assert last.startswith("→ Search 'xxx")
    assert last.endswith("more characters]")
    assert len(last) < children.LINE_CHARS + 40
