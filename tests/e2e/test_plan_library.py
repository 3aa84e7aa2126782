"""Plans that outlive a session, through the real server: the workspace's plans listed,
a second session started on the first one's plan, a plan attached to a running session,
all under a plans folder a team keeps in git."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import StartBaton
from tests.e2e.test_plans import PLAN, outputs_by_name, plan_of
from tests.fake_llm import FakeLLM, text, tool_call

TEAM_PLAN = """---
status: approved
session: ses_from_a_teammates_machine
---

# Plan: rate limiting

- [x] Count requests per client
- [ ] Reject above the limit
"""


@pytest.mark.asyncio
async def test_a_second_session_continues_the_plan_of_the_first(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"plans": {"dir": "docs/plans"}})
    first = await baton.new_session(mode="plan", title="Login page")
    llm.add(tool_call("plan_write", {"content": PLAN}), tool_call("plan_exit", {}))
    await baton.prompt(first, "Plan a login page")
    await baton.request("baton/plan/approve", {"sessionId": first})
    llm.add(tool_call("plan_edit", {"old_string": "- [ ] Add", "new_string": "- [x] Add"}))
    llm.add(text("First step done; stopping for today."))
    await baton.prompt(first, "Do the first step only")
    path = (await plan_of(baton, first))["path"]
    assert path.startswith("docs/plans/") and (workspace / path).is_file()
    # A plan a teammate committed: no session of this store had it.
    (workspace / "docs" / "plans" / "rate-limits.md").write_text(TEAM_PLAN)
    (workspace / "docs" / "plans" / "notes.txt").write_text("not a plan")

    listed = (await baton.request("baton/plan/list", {}))["plans"]
    by_path = {entry["path"]: entry for entry in listed}
    assert set(by_path) == {path, "docs/plans/rate-limits.md"}
    mine = by_path[path]
    assert {k: mine[k] for k in ("title", "status", "version", "stepsDone", "stepsTotal")} == {
        "title": "Login page",
        "status": "approved",
        "version": 2,
        "stepsDone": 1,
        "stepsTotal": 3,
    }
    assert (mine["lastSessionId"], mine["lastSessionTitle"]) == (first, "Login page")
    team = by_path["docs/plans/rate-limits.md"]
    # Its front matter says approved; nobody approved it here, so it is a draft.
    assert (team["title"], team["status"], team["stepsDone"], team["stepsTotal"]) == (
        "rate limiting",
        "draft",
        1,
        2,
    )
    assert team["lastSessionId"] is None and team["lastSessionTitle"] is None

    # Bad paths change nothing: no session is made.
    sessions = len((await baton.request("baton/session/list", {}))["sessions"])
    for bad, says in (
        ("../outside.md", "cannot be used"),
        ("docs/plans/missing.md", "no plan file"),
        ("docs/plans/notes.txt", "not a plan file"),
    ):
        error = await baton.error("baton/session/new", {"planPath": bad})
        assert error.code == -32602 and says in error.message
    assert len((await baton.request("baton/session/list", {}))["sessions"]) == sessions

    # The second session, on the first one's plan, carries on from its first open step.
    second = await baton.new_session(planPath=path)
    plan = await plan_of(baton, second)
    assert (plan["path"], plan["status"], plan["version"]) == (path, "approved", 1)
    llm.add(
        tool_call("plan_edit", {"old_string": "- [ ] Validate", "new_string": "- [x] Validate"})
    )
    llm.add(text("Validated."))
    await baton.prompt(second, "Carry on")
    request = llm.model_requests[-2]
    [note] = [t for t in request.texts("user") if t.startswith("[plan: ")]
    assert note.startswith("[plan: v1 is the current plan")
    assert f"Plan file: {path} (status: approved, version 1)" in note
    assert "Continue from: Validate" in note
    assert "- [x] Add the login form in src/login.py" in note
    [tick] = outputs_by_name(llm.model_requests[-1], "plan_edit")
    assert tick.startswith("Plan v2 (approved).") and "Next open step: Write tests" in tick
    assert "- [x] Validate the password" in (workspace / path).read_text()
    listed = (await baton.request("baton/plan/list", {}))["plans"]
    mine = next(e for e in listed if e["path"] == path)
    assert (mine["lastSessionId"], mine["stepsDone"]) == (second, 2)
    assert listed[0]["path"] == path  # the most recently updated first

    # Attached to a running session: the model is told once, with the plan's text.
    third = await baton.new_session(title="Limits")
    llm.add(text("Hello."))
    await baton.prompt(third, "hello")
    attached = await baton.request(
        "baton/plan/attach", {"sessionId": third, "path": "docs/plans/rate-limits.md"}
    )
    assert attached == {"path": "docs/plans/rate-limits.md", "status": "draft", "version": 1}
    llm.add(text("Rejecting above the limit next."))
    await baton.prompt(third, "what next?")
    notes = [t for t in llm.model_requests[-1].texts("user") if t.startswith("[plan: ")]
    assert len(notes) == 1 and "- [ ] Reject above the limit" in notes[0]
    assert "Continue from: Reject above the limit" in notes[0]
    # Attaching the same plan again is a no-op; another plan is refused.
    again = await baton.request(
        "baton/plan/attach", {"sessionId": third, "path": "docs/plans/rate-limits.md"}
    )
    assert again == attached
    other = await baton.error("baton/plan/attach", {"sessionId": third, "path": path})
    assert other.code == -32006 and "already has the plan" in other.message
    # The committed file is not rewritten by attaching it.
    assert (workspace / "docs" / "plans" / "rate-limits.md").read_text() == TEAM_PLAN
