"""Plan step states (`- [ ]`, `- [~]`, `- [!]`, `- [x]`) through the real server: the
file the agent writes, the block the model is sent, the person's update, the ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient

PLAN = """# Median

- [x] Read stats.py
- [~] Add median() to stats.py
- [ ] Run the tests
"""


@pytest.mark.asyncio
async def test_plan_states_round_trip_through_file_block_update_and_ledger(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session()  # build mode
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Working."))
    await baton.prompt(sid, "plan and build")
    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    # Written in build mode the plan is active, not a draft.
    assert plan["status"] == "approved"
    [path] = sorted((workspace / ".baton" / "plans").glob("*.md"))
    assert "- [~] Add median() to stats.py" in path.read_text()

    # The person marks a step blocked, with its reason, from the editor.
    blocked = PLAN.replace("- [ ] Run the tests", "- [!] Run the tests: pytest is not installed")
    await baton.request(
        "baton/plan/update",
        {"sessionId": sid, "content": blocked, "baseVersion": plan["version"]},
    )
    llm.add(text("Noted."))
    await baton.prompt(sid, "go on")
    sent = llm.model_requests[-1].input_text()
    # The person's change arrives as its diff, naming the step in progress as where work
    # goes on, and keeps the boxes.
    assert "+5| - [!] Run the tests: pytest is not installed" in sent
    assert "Next open step: Add median() to stats.py" in sent

    llm.add(text("## Summary\nnone"))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    steps = record["ledger"]["plan"]["steps"]
    assert steps == [
        {"text": "Read stats.py", "state": "done"},
        {"text": "Add median() to stats.py", "state": "in_progress"},
        {
            "text": "Run the tests: pytest is not installed",
            "state": "blocked",
            "reason": "pytest is not installed",
        },
    ]
    llm.add(text("Carrying on."))
    await baton.prompt(sid, "continue")
    sent = llm.model_requests[-1].input_text()
    # The plan block after the compaction holds every step's state; the ledger leaves out
    # its own plan line, which would only repeat the block.
    assert "- [!] Run the tests: pytest is not installed" in sent
    assert "- [~] Add median() to stats.py" in sent
    assert "3 steps: 1 done, 1 in progress, 1 blocked" not in sent
