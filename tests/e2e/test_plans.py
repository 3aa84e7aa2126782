"""Plans end to end through the real server and the scripted model.

A plan is written, edited by the agent, edited by the person on disk, shown,
submitted, sent back with changes, approved, built and marked done; plan mode
refuses changes with messages the model can act on; the model sees the plan
exactly once per request, re-read from disk, also after a reload and after a
compaction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, delay, text, tool_call
from tests.fake_llm.records import RecordedRequest, content_text, item_type
from tests.harness import BatonClient, stop_client

MARKER = "ZEBRA-7741"
PLAN = f"""# Login page

Goal: a login form with password checks ({MARKER}).

- [ ] Add the login form in src/login.py
- [ ] Validate the password
- [ ] Write tests
"""


def plan_files(workspace: Path) -> list[Path]:
    return sorted((workspace / ".baton" / "plans").glob("*.md"))


def plan_notifications(baton: BatonClient, method: str, sid: str) -> list[dict[str, Any]]:
    return [p for m, p in baton.notifications if m == method and p["sessionId"] == sid]


async def plan_of(baton: BatonClient, sid: str) -> dict[str, Any]:
    result = await baton.request("baton/plan/get", {"sessionId": sid})
    assert result is not None
    return result  # type: ignore[no-any-return]


def outputs_by_name(req: RecordedRequest, name: str) -> list[str]:
    outputs = req.tool_outputs()
    return [outputs[c["call_id"]] for c in req.function_calls() if c["name"] == name]


def plan_copies(req: RecordedRequest) -> list[str]:
    """Every text of the request holding the plan (a plan_write's content, a tool output,
    a message), in the order sent."""
    texts: list[str] = []
    for item in req.items:
        kind = item_type(item)
        if kind == "function_call" and item.get("name") == "plan_write":
            texts.append(json.loads(item["arguments"])["content"])
        elif kind == "function_call_output":
            texts.append(content_text(item.get("output")))
        elif kind == "message":
            texts.append(content_text(item.get("content")))
    return [t for t in texts if "# Login page" in t]


def latest_copy(req: RecordedRequest) -> str:
    """The last copy of the plan's text in the request: the one the model takes as current."""
    last = plan_copies(req)[-1]
    return last[last.index("# Login page") :].strip("\n")


async def turn_ended(baton: BatonClient, sid: str, count: int) -> None:
    """Wait until `count` turns of `sid` have ended (turns started by plan methods)."""

    def ended(method: str, params: dict[str, Any]) -> bool:
        return len(baton.updates(sid, "turn_ended")) >= count

    try:
        await baton.wait_for(ended, timeout=15)
    except TimeoutError:
        raise AssertionError(f"turn {count} of {sid} did not end") from None


@pytest.mark.asyncio
async def test_plan_lifecycle_from_draft_to_done(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"write": "allow"}})
    sid = await baton.new_session(mode="plan", title="Add a login page")

    # 1. The agent writes the plan.
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Drafted the plan."))
    assert (await baton.prompt(sid, "Plan a login page"))["stopReason"] == "end_turn"
    [path] = plan_files(workspace)
    assert path.name.endswith("-add-a-login-page.md")
    on_disk = path.read_text()
    assert on_disk.startswith(f"---\nstatus: draft\nsession: {sid}\n---\n")
    plan = await plan_of(baton, sid)
    assert plan == {
        "path": f".baton/plans/{path.name}",
        "status": "draft",
        "version": 1,
        "content": PLAN,
    }
    assert plan_notifications(baton, "baton/plan/didChange", sid)[-1] == {
        "sessionId": sid,
        "path": plan["path"],
        "version": 1,
        "status": "draft",
        "author": "agent",
    }

    # 2. The agent edits it; the next request carries the new text once.
    llm.add(tool_call("plan_edit", {"old_string": "Write tests", "new_string": "Write form tests"}))
    llm.add(text("Refined."))
    await baton.prompt(sid, "Be precise about the tests")
    after_edit = llm.model_requests[-1]
    # The edit's result shows the changed lines, the version and the next step, not the
    # plan: the request holds one full copy (the plan_write's) plus the change.
    [edit_output] = outputs_by_name(after_edit, "plan_edit")
    assert edit_output.startswith("Plan v2 (draft). Changed lines:\n")
    assert "-7| - [ ] Write tests\n+7| - [ ] Write form tests" in edit_output
    assert edit_output.endswith("Next open step: Add the login form in src/login.py")
    assert len(plan_copies(after_edit)) == 1
    assert (await plan_of(baton, sid))["version"] == 2

    # 3. The person edits the file in the editor; the next turn picks it up.
    path.write_text(path.read_text() + "- [ ] Update the docs\n")
    llm.add(tool_call("plan_show", {}))
    llm.add(text("Shown."))
    await baton.prompt(sid, "Show me the plan")
    show_request = llm.model_requests[-1]
    assert show_request.input_text().count("Update the docs") == 1
    # The person's edit reached the model as its diff, not as a second copy of the plan.
    [note] = [t for t in show_request.texts("user") if t.startswith("[plan: ")]
    assert note.startswith(f"[plan: the person changed {plan['path']}: v2 → v3")
    assert "+8| - [ ] Update the docs" in note and "Validate the password" not in note
    assert len(plan_copies(show_request)) == 1
    [show_output] = outputs_by_name(show_request, "plan_show")
    assert "\n" not in show_output and MARKER not in show_output and "login form" not in show_output
    user_change = plan_notifications(baton, "baton/plan/didChange", sid)[-1]
    assert (user_change["version"], user_change["author"]) == (3, "user")
    assert plan_notifications(baton, "baton/plan/show", sid)[-1] == {
        "sessionId": sid,
        "path": plan["path"],
        "version": 3,
    }
    history = await baton.request("baton/plan/history", {"sessionId": sid})
    assert [(v["version"], v["author"]) for v in history["versions"]] == [
        (1, "agent"),
        (2, "agent"),
        (3, "user"),
    ]
    v3 = await baton.request("baton/plan/getVersion", {"sessionId": sid, "version": 3})
    assert v3["content"].endswith("- [ ] Update the docs\n")
    assert v3["sha256"] == history["versions"][2]["sha256"]

    # 4. The agent submits it: one model request, the turn ends, the client is asked.
    requests_before = len(llm.model_requests)
    llm.add(text("Ready for review."), tool_call("plan_exit", {}))
    assert (await baton.prompt(sid, "Submit it"))["stopReason"] == "end_turn"
    assert len(llm.model_requests) == requests_before + 1
    submitted = plan_notifications(baton, "baton/plan/didChange", sid)[-1]
    assert submitted["status"] == "awaiting_approval"
    assert plan_notifications(baton, "baton/plan/show", sid)[-1]["version"] == 3
    assert "status: awaiting_approval" in path.read_text()

    # 5. The person requests changes: the feedback reaches the agent, whose turn starts.
    llm.add(
        delay(0.5),
        tool_call(
            "plan_edit",
            {
                "old_string": "- [ ] Validate the password\n",
                "new_string": ("- [ ] Validate the password\n- [ ] Lock out after 5 failures\n"),
            },
        ),
        tool_call("plan_exit", {}),
    )
    result = await baton.request(
        "baton/plan/requestChanges", {"sessionId": sid, "feedback": "Add a lockout step."}
    )
    assert result == {"status": "draft"}
    busy = await baton.error("baton/plan/requestChanges", {"sessionId": sid, "feedback": "again"})
    assert busy.code == -32002
    await turn_ended(baton, sid, 5)
    feedback_request = llm.model_requests[-1]
    assert "Add a lockout step." in (feedback_request.last_user_text() or "")
    plan = await plan_of(baton, sid)
    assert (plan["status"], plan["version"]) == ("awaiting_approval", 4)
    assert "Lock out after 5 failures" in plan["content"]

    # 6. Approved with start: build mode, and the build turn starts at once.
    llm.add(
        tool_call("write", {"path": "src/login.py", "content": "def login(): ...\n"}),
        tool_call(
            "plan_edit",
            {"old_string": "- [ ] Add the login form", "new_string": "- [x] Add the login form"},
        ),
    )
    llm.add(
        tool_call("plan_edit", {"old_string": "- [ ] Validate", "new_string": "- [x] Validate"}),
        tool_call("plan_edit", {"old_string": "- [ ] Lock out", "new_string": "- [x] Lock out"}),
        tool_call(
            "plan_edit", {"old_string": "- [ ] Write form", "new_string": "- [x] Write form"}
        ),
        tool_call("plan_edit", {"old_string": "- [ ] Update", "new_string": "- [x] Update"}),
    )
    llm.add(tool_call("plan_done", {}))
    llm.add(text("Built."))
    approved = await baton.request("baton/plan/approve", {"sessionId": sid, "start": True})
    assert approved == {"status": "approved", "mode": "build"}
    assert baton.updates(sid, "mode")[-1] == {"kind": "mode", "mode": "build"}
    await turn_ended(baton, sid, 6)
    approval_update = baton.updates(sid, "user_message")[-1]
    assert plan["path"] in approval_update["text"]
    # Baton's own messages are marked, live and in the stored history; the person's are not.
    assert approval_update["origin"] == "approval"
    loaded = await baton.request("baton/session/load", {"sessionId": sid})
    users = [m for m in loaded["messages"] if m["role"] == "user"]
    origins = [m.get("origin") for m in users]
    assert origins.count("approval") == 1 and origins.count("feedback") == 1
    assert users[0].get("origin") is None
    build_requests = llm.model_requests[-4:]
    assert plan["path"] in (build_requests[0].last_user_text() or "")
    assert "Start with the first unchecked step: Add the login form" in (
        build_requests[0].last_user_text() or ""
    )
    tick = outputs_by_name(build_requests[1], "plan_edit")[-1]
    assert tick.endswith("Next open step: Validate the password")
    assert "+5| - [x] Add the login form" in tick
    assert (workspace / "src" / "login.py").read_text() == "def login(): ...\n"

    # 7. Done.
    plan = await plan_of(baton, sid)
    assert plan["status"] == "done"
    assert "- [ ]" not in plan["content"]
    assert "status: done" in path.read_text()
    again = await baton.error("baton/plan/approve", {"sessionId": sid})
    assert again.code == -32006
    assert "done" in again.message


@pytest.mark.asyncio
async def test_plan_mode_refuses_changes_with_directions(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session(mode="plan")
    llm.add(
        tool_call("write", {"path": "a.txt", "content": "x"}),
        tool_call("edit", {"path": "a.txt", "old_string": "x", "new_string": "y"}),
        tool_call("bash", {"command": "touch b.txt"}),
    )
    llm.add(text("I will plan instead."))
    await baton.prompt(sid, "Just do it")
    first, second = llm.model_requests[-2:]
    # One tool list in every mode (it is cached prefix); the mode's rules come as a message.
    assert {"plan_write", "plan_edit", "plan_show", "plan_exit", "plan_done"} <= set(
        first.tool_names
    )
    assert {"write", "edit", "bash"} <= set(first.tool_names)
    assert any(t.startswith("[mode: plan]") for t in first.texts("user"))
    outputs = second.tool_outputs()
    calls = {c["name"]: outputs[c["call_id"]] for c in second.function_calls()}
    for name in ("write", "edit", "bash"):
        assert f"{name} is not available in plan mode" in calls[name]
        assert "plan_edit" in calls[name]
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
    assert baton.permission_requests == []

    # Build mode offers everything but plan_exit, which is refused there.
    await baton.request("baton/session/setMode", {"sessionId": sid, "mode": "build"})
    llm.add(tool_call("plan_exit", {}))
    llm.add(text("ok"))
    await baton.prompt(sid, "submit")
    build_first, build_second = llm.model_requests[-2:]
    assert build_first.tools == first.tools
    assert build_first.texts("user")[-2].startswith("[mode: build]")
    [exit_output] = outputs_by_name(build_second, "plan_exit")
    assert "not available in build mode" in exit_output


@pytest.mark.asyncio
async def test_plan_text_appears_once_in_the_next_request(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session(mode="plan", title="once")
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Written."))
    await baton.prompt(sid, "plan it")
    path = (await plan_of(baton, sid))["path"]
    llm.add(tool_call("read", {"path": path}))
    llm.add(tool_call("plan_edit", {"old_string": "Write tests", "new_string": "Write unit tests"}))
    llm.add(tool_call("plan_write", {"content": PLAN.replace("Goal:", "Aim:")}))
    llm.add(text("Done."))
    await baton.prompt(sid, "re-read and refine it")

    # Nothing sent is rewritten: the read and the first plan_write keep the text they had;
    # an edit appends its changed lines, a plan_write the whole new text.
    after_read = llm.model_requests[-3]
    [read_output] = outputs_by_name(after_read, "read")
    assert MARKER in read_output
    after_edit = llm.model_requests[-2]
    [edit_output] = outputs_by_name(after_edit, "plan_edit")
    assert "+7| - [ ] Write unit tests" in edit_output and MARKER not in edit_output
    last = llm.model_requests[-1]
    assert last.items[: len(after_edit.items)] == after_edit.items
    writes = [c for c in last.function_calls() if c["name"] == "plan_write"]
    assert len(writes) == 2 and "Aim:" in writes[-1]["arguments"]
    assert latest_copy(last).startswith("# Login page\n\nAim:")


@pytest.mark.asyncio
async def test_update_checks_the_base_version_and_records_the_person(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session(title="Refactor the parser")
    assert await baton.request("baton/plan/get", {"sessionId": sid}) is None
    missing = await baton.error("baton/plan/history", {"sessionId": "ses_nope"})
    assert missing.code == -32001

    created = await baton.request(
        "baton/plan/update", {"sessionId": sid, "content": "- [ ] one\n", "baseVersion": 0}
    )
    assert created == {"version": 1}
    stale = await baton.error(
        "baton/plan/update", {"sessionId": sid, "content": "- [ ] two\n", "baseVersion": 0}
    )
    assert stale.code == -32004 and "plan changed" in stale.message
    updated = await baton.request(
        "baton/plan/update", {"sessionId": sid, "content": "- [ ] two\n", "baseVersion": 1}
    )
    assert updated == {"version": 2}
    change = plan_notifications(baton, "baton/plan/didChange", sid)[-1]
    assert (change["version"], change["author"], change["status"]) == (2, "user", "draft")
    [path] = plan_files(workspace)
    assert path.name.endswith("-refactor-the-parser.md")

    # An edit on disk since the client's base makes its base stale too.
    path.write_text(path.read_text().replace("two", "three"))
    stale = await baton.error(
        "baton/plan/update", {"sessionId": sid, "content": "- [ ] four\n", "baseVersion": 2}
    )
    assert stale.code == -32004
    assert (await plan_of(baton, sid))["content"] == "- [ ] three\n"

    versions = (await baton.request("baton/plan/history", {"sessionId": sid}))["versions"]
    assert [(v["version"], v["author"]) for v in versions] == [
        (1, "user"),
        (2, "user"),
        (3, "user"),
    ]
    v1 = await baton.request("baton/plan/getVersion", {"sessionId": sid, "version": 1})
    assert v1["content"] == "- [ ] one\n" and v1["author"] == "user"
    nope = await baton.error("baton/plan/getVersion", {"sessionId": sid, "version": 9})
    assert nope.code == -32008
    bad = await baton.error("baton/plan/getVersion", {"sessionId": sid, "version": 0})
    assert bad.code == -32602 and "version" in bad.message


@pytest.mark.asyncio
async def test_approve_and_request_changes_need_a_reviewable_plan(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session(mode="plan")
    no_plan = await baton.error("baton/plan/approve", {"sessionId": sid})
    assert no_plan.code == -32005
    no_plan = await baton.error("baton/plan/requestChanges", {"sessionId": sid, "feedback": "more"})
    assert no_plan.code == -32005
    await baton.request(
        "baton/plan/update", {"sessionId": sid, "content": "- [ ] a\n", "baseVersion": 0}
    )
    # Approving without start only switches the mode; no turn runs.
    assert await baton.request("baton/plan/approve", {"sessionId": sid}) == {
        "status": "approved",
        "mode": "build",
    }
    assert llm.model_requests == []
    twice = await baton.error("baton/plan/approve", {"sessionId": sid})
    assert twice.code == -32006 and "approved" in twice.message
    late = await baton.error("baton/plan/requestChanges", {"sessionId": sid, "feedback": "x"})
    assert late.code == -32006
    empty = await baton.error("baton/plan/requestChanges", {"sessionId": sid, "feedback": ""})
    assert empty.code == -32602 and "feedback" in empty.message


@pytest.mark.asyncio
async def test_plan_edit_errors_tell_the_model_what_to_fix(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session(mode="plan")
    llm.add(tool_call("plan_edit", {"old_string": "a", "new_string": "b"}))
    llm.add(tool_call("plan_write", {"content": "- [ ] step\n- [ ] step\n"}))
    llm.add(tool_call("plan_edit", {"old_string": "missing", "new_string": "b"}))
    llm.add(tool_call("plan_edit", {"old_string": "- [ ] step", "new_string": "- [x] step"}))
    llm.add(text("ok"))
    await baton.prompt(sid, "plan")
    outputs = [
        llm.model_requests[i].tool_outputs()[llm.model_requests[i].function_calls()[-1]["call_id"]]
        for i in (1, 3, 4)
    ]
    assert "no plan yet" in outputs[0] and "plan_write" in outputs[0]
    assert "was not found" in outputs[1] and "current text" in outputs[1]
    assert "occurs 2 times" in outputs[2] and "exactly once" in outputs[2]
    assert (await plan_of(baton, sid))["version"] == 1


@pytest.mark.asyncio
async def test_plan_is_put_back_after_a_reload(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    first = await start_baton()
    sid = await first.new_session(mode="plan", title="Reload")
    await first.request(
        "baton/plan/update",
        {"sessionId": sid, "content": "- [x] first step\n- [ ] second step\n", "baseVersion": 0},
    )
    await first.request("baton/plan/approve", {"sessionId": sid})
    await stop_client(first)

    second = await start_baton()
    llm.add(text("Continuing."))
    await second.prompt(sid, "go on")
    request = llm.model_requests[-1]
    # The plan the person wrote reached the model as a note, with where to go on.
    [note] = [t for t in request.texts("user") if t.startswith("[plan: v1 is the current")]
    assert "Continue from: second step" in note
    assert note.count("second step") == 2  # the direction and the plan


@pytest.mark.asyncio
async def test_plan_is_put_back_after_a_compaction(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session(title="Compact me")
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Planned."))
    await baton.prompt(sid, "plan and build")
    # Written in build mode, the plan is active at once: nothing to approve.
    assert (await baton.request("baton/plan/get", {"sessionId": sid}))["status"] == "approved"
    [path] = plan_files(workspace)
    # Edited on disk after the plan was written: the re-injected copy is the file's.
    path.write_text(path.read_text().replace("Write tests", "Write careful tests"))
    llm.add(text("## Summary\nnothing"))
    await baton.request("baton/session/compact", {"sessionId": sid})
    llm.add(text("Carrying on."))
    await baton.prompt(sid, "continue")
    request = llm.model_requests[-1]
    block = next(t for t in request.texts("user") if t.startswith("<baton:plan>"))
    assert "Write careful tests" in block
    assert "Continue from: Add the login form" in block
    assert "- [ ] Write careful tests" in latest_copy(request)


@pytest.mark.asyncio
async def test_plans_dir_must_stay_inside_the_workspace(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"plans": {"dir": "../outside"}})
    sid = await baton.new_session(mode="plan")
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Could not write it."))
    await baton.prompt(sid, "plan")
    [output] = outputs_by_name(llm.model_requests[-1], "plan_write")
    assert "plans.dir" in output and "inside the workspace" in output
    assert not (workspace.parent / "outside").exists()
    assert await baton.request("baton/plan/get", {"sessionId": sid}) is None


@pytest.mark.asyncio
async def test_three_plan_edits_leave_one_full_copy_and_a_person_edit_arrives_as_its_diff(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session(mode="plan", title="One copy")
    llm.add(tool_call("plan_write", {"content": PLAN}))
    for old, new in (
        ("Write tests", "Write form tests"),
        ("- [ ] Validate the password\n", "- [ ] Validate the password\n- [ ] Rate-limit\n"),
        ("the login form in", "the login form (HTML) in"),
    ):
        llm.add(tool_call("plan_edit", {"old_string": old, "new_string": new}))
    llm.add(text("Revised three times."))
    await baton.prompt(sid, "Plan a login page and refine it")
    path = workspace / (await plan_of(baton, sid))["path"]
    # The person adds a step in the editor; the model's next request has it as a diff.
    path.write_text(path.read_text() + "- [ ] Deploy behind a flag\n")
    llm.add(text("Noted."))
    await baton.prompt(sid, "I added a step")
    after_edits, noted = llm.model_requests[-2], llm.model_requests[-1]

    for request in (after_edits, noted):
        # One full copy (the plan_write's arguments); every edit adds only its lines.
        assert (
            request.input_text().count(f"Goal: a login form with password checks ({MARKER})") == 1
        )
        assert len(plan_copies(request)) == 1
    edits = outputs_by_name(after_edits, "plan_edit")
    assert [e.split(" Changed")[0] for e in edits] == [
        "Plan v2 (draft).",
        "Plan v3 (draft).",
        "Plan v4 (draft).",
    ]
    assert "+7| - [ ] Rate-limit" in edits[1] and "Write form tests" in edits[1]
    assert all(MARKER not in e for e in edits)
    assert noted.items[: len(after_edits.items)] == after_edits.items  # appended only
    [note] = [t for t in noted.texts("user") if t.startswith("[plan: ")]
    assert note.startswith(f"[plan: the person changed {path.relative_to(workspace)}: v4 → v5")
    assert " 8| - [ ] Write form tests\n+9| - [ ] Deploy behind a flag" in note
    assert MARKER not in note


@pytest.mark.asyncio
async def test_annotations_reach_the_model_as_one_structured_message(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session(mode="plan", title="Review")
    llm.add(tool_call("plan_write", {"content": PLAN}), tool_call("plan_exit", {}))
    await baton.prompt(sid, "Plan a login page")
    requests = len(llm.model_requests)

    # Bad notes change nothing: lines beyond the plan, a quote the lines do not hold.
    for bad, says in (
        ({"kind": "comment", "startLine": 9, "endLine": 12, "quote": "", "text": "?"}, "beyond"),
        (
            {"kind": "delete", "startLine": 5, "endLine": 5, "quote": "Write tests"},
            "do not hold the quoted text",
        ),
        ({"kind": "replace", "startLine": 6, "endLine": 5, "quote": ""}, "before startLine"),
    ):
        error = await baton.error(
            "baton/plan/requestChanges", {"sessionId": sid, "feedback": "", "annotations": [bad]}
        )
        assert error.code == -32602 and says in error.message
    empty = await baton.error("baton/plan/requestChanges", {"sessionId": sid, "feedback": " "})
    assert empty.code == -32602
    assert (await plan_of(baton, sid))["status"] == "awaiting_approval"
    assert len(llm.model_requests) == requests

    llm.add(text("Revising."))
    annotations = [
        {
            "kind": "comment",
            "startLine": 5,
            "endLine": 5,
            "quote": "login form",
            "text": "Which URL?",
        },
        {
            "kind": "replace",
            "startLine": 6,
            "endLine": 7,
            "quote": "- [ ] Validate the password\n- [ ] Write tests",
            "text": "- [ ] Validate and test the password",
        },
        {"kind": "delete", "startLine": 3, "endLine": 3, "quote": "Goal: a login form"},
    ]
    result = await baton.request(
        "baton/plan/requestChanges",
        {"sessionId": sid, "feedback": "Otherwise fine.", "annotations": annotations},
    )
    assert result == {"status": "draft"}
    await turn_ended(baton, sid, 2)
    [request] = llm.model_requests[requests:]
    sent = request.last_user_text() or ""
    assert sent == (
        "Changes requested to the plan (v1), 3 note(s) on its lines:\n\n"
        "1. line 5 (comment):\n> 5| - [ ] Add the login form in src/login.py\n"
        "Selected: 'login form'\nComment: Which URL?\n\n"
        "2. lines 6-7 (replace):\n> 6| - [ ] Validate the password\n> 7| - [ ] Write tests\n"
        "Replace with:\n- [ ] Validate and test the password\n\n"
        f"3. line 3 (delete):\n> 3| Goal: a login form with password checks ({MARKER}).\n"
        "Selected: 'Goal: a login form'\nDelete it.\n\n"
        "Overall: Otherwise fine.\n\n"
        "Revise it with `plan_edit` and call `plan_exit` in the same response to submit it again."
    )
    feedback = [u for u in baton.updates(sid, "user_message") if u.get("origin") == "feedback"]
    assert len(feedback) == 1 and feedback[0]["text"] == sent


@pytest.mark.asyncio
async def test_a_compaction_that_keeps_the_plan_write_leaves_one_copy(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    from tests.e2e.test_compaction import FULL_SUMMARY

    baton = await start_baton(
        settings={"compaction": {"strategy": "native", "keepRecentTokens": 1500}}
    )
    (workspace / "notes.txt").write_text("alpha line of the notes file\n" * 400)
    sid = await baton.new_session(mode="plan", title="Kept")
    for n in range(3):
        llm.add(tool_call("read", {"path": "notes.txt"}))
        llm.add(text(f"Read it, pass {n}."))
        await baton.prompt(sid, f"read the notes, pass {n}")
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Planned."))
    await baton.prompt(sid, "plan a login page")
    llm.on_request(lambda req: text(FULL_SUMMARY) if req.is_summary else None)
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    llm.on_request(lambda req: None)
    assert record["committed"] is True
    llm.add(text("Carrying on."))
    await baton.prompt(sid, "go on")
    request = llm.model_requests[-1]
    block = next(t for t in request.texts("user") if t.startswith("<baton:plan>"))
    kept = [c for c in request.function_calls() if c["name"] == "plan_write"]
    # The retained turn holds the plan_write: the block gives the status and where to go
    # on, and leaves the text to that call.
    assert len(kept) == 1
    assert "Its text (version 1) is your `plan_write` below." in block
    assert "Continue from: " not in block and "plan_exit" in block and MARKER not in block
    assert request.input_text().count(MARKER) == 1
    assert len(plan_copies(request)) == 1
