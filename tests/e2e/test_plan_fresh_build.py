"""Approve and build in a fresh context, through the real server.

`baton/plan/approve {fresh: true}` starts the build from the instructions, the
person's requests, the ledger and the approved plan, with no model call for a
summary; the planning conversation stays in the history, one `recall` away. A
fresh start that cannot be made leaves the plan and the mode as they were.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import StartBaton
from tests.e2e.test_compaction import start_baton as start_baton  # pins native compaction
from tests.e2e.test_plans import turn_ended
from tests.fake_llm import FakeLLM, text, tool_call
from tests.fake_llm.records import RecordedRequest
from tests.harness import BatonClient

CONSTRAINT = "Keep the CLI flags backwards compatible."
PLAN = """# CSV export

- [ ] Add the exporter in src/export.py
- [ ] Wire the --csv flag
- [ ] Write tests
"""


def is_summary_request(req: RecordedRequest) -> bool:
    return not req.tool_names


async def planned_session(baton: BatonClient, llm: FakeLLM, workspace: Path) -> str:
    """A plan-mode session that read a large file, wrote a plan and submitted it."""
    sid = await baton.new_session(mode="plan", title="Export")
    (workspace / "report.py").write_text("def report():\n    return 'planning detail'\n" * 60)
    llm.add(tool_call("read", {"path": "report.py"}))
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Planned. We weighed three designs at length."), tool_call("plan_exit", {}))
    await baton.prompt(sid, f"Plan a CSV export. {CONSTRAINT}")
    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    assert plan is not None and plan["status"] == "awaiting_approval"
    return sid


@pytest.mark.asyncio
async def test_approve_fresh_builds_from_plan_ledger_and_requests_without_a_summary(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton()
    sid = await planned_session(baton, llm, workspace)
    seen = len(llm.model_requests)

    llm.add(
        tool_call(
            "plan_edit",
            {
                "old_string": "- [ ] Add the exporter",
                "new_string": "- [x] Add the exporter",
            },
        )
    )
    llm.add(text("First step done."))
    approved = await baton.request(
        "baton/plan/approve", {"sessionId": sid, "start": True, "fresh": True}
    )
    assert approved == {"status": "approved", "mode": "build"}
    await turn_ended(baton, sid, 2)

    build = llm.model_requests[seen:]
    assert not any(is_summary_request(r) for r in build), "a fresh start asks for no summary"
    first = build[0].input_text()
    assert "<baton:summary>" not in first
    assert CONSTRAINT in first and "<baton:requests>" in first  # the person's words
    assert "Files read: report.py" in first  # the ledger
    # The ledger leaves the plan's path, status and steps to the plan block after it.
    ledger = first.split("<baton:ledger>", 1)[1].split("</baton:ledger>", 1)[0]
    assert "\nPlan: " not in ledger and "version" not in ledger
    assert "<baton:plan>" in first and "Add the exporter in src/export.py" in first
    # Nothing said twice: the plan block names the step to start from, so the turn's
    # message does not; build mode needs no note (the instructions' default, and no
    # summary that could speak of another mode).
    assert build[0].last_user_text() == "The plan above is approved: build it."
    assert first.count("Continue from: ") == 1
    assert first.count("Add the exporter in src/export.py") == 2  # the direction, the plan
    assert not any(t.startswith("[mode: ") for t in build[0].texts("user"))
    # The planning conversation left the view.
    assert "planning detail" not in first and "weighed three designs" not in first

    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert [c["strategy"] for c in listed["compactions"]] == ["fresh"]
    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    assert plan["status"] == "approved" and "- [x] Add the exporter" in plan["content"]

    # One recall away.
    llm.add(tool_call("recall", {"query": "weighed three designs"}))
    llm.add(text("found"))
    await baton.prompt(sid, "what did we discuss while planning?")
    outputs = llm.model_requests[-1].tool_outputs().values()
    assert any("weighed three designs" in o for o in outputs)


@pytest.mark.asyncio
async def test_a_fresh_build_shows_the_persons_feedback_without_batons_wrapper(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton()
    sid = await planned_session(baton, llm, workspace)
    llm.add(
        tool_call("plan_edit", {"old_string": "- [ ] Write tests", "new_string": "- [ ] Test it"}),
        tool_call("plan_exit", {}),
    )
    await baton.request(
        "baton/plan/requestChanges", {"sessionId": sid, "feedback": "Name the test file."}
    )
    await turn_ended(baton, sid, 2)
    planning = llm.model_requests[-1].input_text()
    assert "Revise it with `plan_edit`" in planning  # the model was told how to revise

    llm.add(text("Building."))
    await baton.request("baton/plan/approve", {"sessionId": sid, "start": True, "fresh": True})
    await turn_ended(baton, sid, 3)
    first = llm.model_requests[-1].input_text()
    requests = first[first.index("<baton:requests>") : first.index("</baton:requests>")]
    assert f"[person] Plan a CSV export. {CONSTRAINT}" in requests
    # The person's words, not the direction Baton wrapped them in for the planning turn.
    assert "[plan feedback] Name the test file." in requests
    assert "Revise it" not in requests and "Changes requested" not in requests


@pytest.mark.asyncio
async def test_a_fresh_start_in_plan_mode_says_the_mode(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    # With no summary the instructions' default (build) holds, so a view started afresh
    # in plan mode must say so.
    baton = await start_baton()
    sid = await planned_session(baton, llm, workspace)
    record = await baton.request("baton/session/compact", {"sessionId": sid, "fresh": True})
    assert record["committed"] is True
    llm.add(text("Still planning."))
    await baton.prompt(sid, "one more thought")
    sent = llm.model_requests[-1]
    assert sent.texts("user")[-2].startswith("[mode: plan]")


@pytest.mark.asyncio
async def test_plain_approve_keeps_the_planning_conversation(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton()
    sid = await planned_session(baton, llm, workspace)
    llm.add(text("Building."))
    await baton.request("baton/plan/approve", {"sessionId": sid, "start": True})
    await turn_ended(baton, sid, 2)
    assert "weighed three designs" in llm.model_requests[-1].input_text()
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert listed["compactions"] == []


@pytest.mark.asyncio
async def test_approve_fresh_without_start_only_sets_the_view(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton()
    sid = await planned_session(baton, llm, workspace)
    seen = len(llm.model_requests)
    approved = await baton.request("baton/plan/approve", {"sessionId": sid, "fresh": True})
    assert approved == {"status": "approved", "mode": "build"}
    assert len(llm.model_requests) == seen  # no summary, no turn
    llm.add(text("On it."))
    await baton.prompt(sid, "go")
    sent = llm.model_requests[-1].input_text()
    assert "<baton:plan>" in sent and "weighed three designs" not in sent


@pytest.mark.asyncio
async def test_a_fresh_start_that_cannot_be_made_changes_nothing(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    # A plan far larger than the usable window: its block alone would not fit.
    baton = await start_baton(settings={"contextWindow": 4_096})
    sid = await baton.new_session(mode="plan")
    big = "# Big\n\n" + "".join(f"- [ ] step {i}: " + "word " * 30 + "\n" for i in range(120))
    await baton.request("baton/plan/update", {"sessionId": sid, "content": big, "baseVersion": 0})
    before = await baton.request("baton/plan/get", {"sessionId": sid})
    error = await baton.error(
        "baton/plan/approve", {"sessionId": sid, "start": True, "fresh": True}
    )
    assert error.message
    after = await baton.request("baton/plan/get", {"sessionId": sid})
    assert after["status"] == before["status"] == "draft"
    assert after["version"] == before["version"]
    loaded = await baton.request("baton/session/load", {"sessionId": sid})
    assert loaded["mode"] == "plan"
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert not [c for c in listed["compactions"] if c.get("committed")]
    assert baton.updates(sid, "turn_started") == []
