"""ACP's 2026 parts through the real `baton acp`: children as sessions of their own,
session/resume, session/close, session/delete, image prompts, links outside the
workspace; and the schema check every ACP test runs (tests/acp/schema_check.py) can
fail."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AudioContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

from baton import protocol as p
from baton.faces.acp.channel import compaction_update
from tests.acp import schema_check
from tests.acp.conftest import StartAcp, allow_once
from tests.acp.test_acp import error_of
from tests.e2e.test_cli_delegation import script_child
from tests.e2e.test_prompt_images import PNG_B64
from tests.fake_llm import FakeLLM, stall, text, tool_call

SUBAGENTS = {"subagents": {}}


def announcements(acp: Any, sid: str, child: str | None = None) -> list[dict[str, Any]]:
    return [
        u for u in acp.client.of(sid, "subagent_update") if child is None or u["sessionId"] == child
    ]


async def announced_child(acp: Any, sid: str) -> str:
    await acp.client.wait(lambda: announcements(acp, sid), what="the child")
    child: str = announcements(acp, sid)[0]["sessionId"]
    return child


@pytest.mark.asyncio
async def test_a_child_is_a_session_of_its_own_for_a_client_that_opted_in(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("# TODO: one\n")
    acp = await start_acp(capabilities=SUBAGENTS)
    init = await acp.client.raw(
        "initialize", {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": SUBAGENTS}
    )
    # The stable shape has no agent capability: the first `subagent_update` says it.
    assert "subagents" not in init["agentCapabilities"]["sessionCapabilities"]
    sid = await acp.new()
    acp.client.policy = allow_once
    script_child(llm)
    assert (await acp.say(sid, "look for TODOs with a child")).stop_reason == "end_turn"

    first, last = announcements(acp, sid)
    child = first["sessionId"]
    assert child != sid and last["sessionId"] == child
    assert first["title"] == "explore: find the TODOs"
    assert first["capabilities"] == {"cancel": {}}
    assert first["state"] == {"state": "running"}
    assert last["state"] == {"state": "idle", "stopReason": "end_turn"}
    # Ended, nothing of it is left to cancel.
    assert last["capabilities"] is None
    assert last["_meta"]["baton"]["status"] == "done"
    # The child's own tool calls arrive under its id, not the parent's.
    assert [c["title"] for c in acp.client.of(child, "tool_call")] == [
        "Search 'TODO'",
        "Run `wc -l app.py`",
    ]
    assert "CHILD-WORDS" in acp.client.text(child)
    [task] = acp.client.of(sid, "tool_call")
    assert task["title"] == "Delegate to explore: find the TODOs"
    # The parent's call links to the child's session, besides its text.
    links = [
        block
        for u in acp.client.of(sid, "tool_call_update")
        if u["toolCallId"] == task["toolCallId"]
        for block in u.get("content") or []
        if block["type"] == "session"
    ]
    assert links and all(link == {"type": "session", "sessionId": child} for link in links)
    # Its permission request is asked on its own session, saying which child asks.
    [request] = acp.client.permission_requests
    assert request["sessionId"] == child
    assert request["toolCall"]["_meta"]["baton"]["childSessionId"] == child
    # Announced before its first update, ended after its last.
    order = [(u["sessionId"], u["update"]) for u in acp.client.updates]
    first_child = next(i for i, (s, _) in enumerate(order) if s == child)
    last_child = max(i for i, (s, _) in enumerate(order) if s == child)
    at = [i for i, (s, u) in enumerate(order) if s == sid and (u is first or u is last)]
    assert at[0] < first_child and at[-1] > last_child
    # Checked against the schema (the fixture fails the test on any refusal).
    assert acp.client.checked["session/update subagent_update"] == 2
    assert acp.client.checked["session/request_permission"] == 1


@pytest.mark.asyncio
async def test_cancelling_a_child_stops_only_that_child(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp(capabilities=SUBAGENTS)
    sid = await acp.new()
    llm.add(
        tool_call(
            "task", {"agent": "explore", "description": "a long look", "prompt": "Look long."}
        )
    )
    llm.add(text("looking", " and", " looking"), stall(30, after=3))
    llm.add(text("The parent carries on."))
    turn = asyncio.ensure_future(acp.say(sid, "delegate a long look"))
    await llm.wait_for_requests_async(2)
    child = await announced_child(acp, sid)
    await acp.conn.cancel(session_id=child)
    result = await asyncio.wait_for(turn, 15)
    # The parent's turn went on to its end; the child alone was cancelled.
    assert result.stop_reason == "end_turn"
    assert "The parent carries on." in acp.client.text(sid)
    assert announcements(acp, sid)[-1]["state"] == {"state": "idle", "stopReason": "cancelled"}
    assert len(llm.model_requests) == 3


@pytest.mark.asyncio
async def test_closing_a_child_stops_and_closes_only_that_child(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp(capabilities=SUBAGENTS)
    sid = await acp.new()
    llm.add(
        tool_call(
            "task", {"agent": "explore", "description": "a long look", "prompt": "Look long."}
        )
    )
    llm.add(text("looking"), stall(30, after=1))
    llm.add(text("The parent carries on."))
    turn = asyncio.ensure_future(acp.say(sid, "delegate a long look"))
    await llm.wait_for_requests_async(2)
    child = await announced_child(acp, sid)
    assert await acp.client.raw("session/close", {"sessionId": child}) == {}
    # The answer came after the child's last update: it is idle, cancelled.
    assert announcements(acp, sid)[-1]["state"] == {"state": "idle", "stopReason": "cancelled"}
    # The parent's turn goes on and ends on its own, with the child's cancelled result.
    result = await asyncio.wait_for(turn, 15)
    assert result.stop_reason == "end_turn"
    assert "The parent carries on." in acp.client.text(sid)
    [ended] = [
        u
        for u in acp.client.of(sid, "tool_call_update")
        if u.get("status") in ("completed", "failed")
    ]
    assert "cancelled" in ended["rawOutput"]
    # The parent stays open: it answers the next prompt.
    llm.add(text("still here"))
    assert (await acp.say(sid, "are you there?")).stop_reason == "end_turn"
    assert acp.client.text(sid).endswith("still here")
    assert acp.client.checked["answer to session/close"] == 1


@pytest.mark.asyncio
async def test_a_closed_idle_child_resumed_by_a_later_task_is_announced_again(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("# TODO: one\n")
    acp = await start_acp(capabilities=SUBAGENTS)
    sid = await acp.new()
    acp.client.policy = allow_once
    script_child(llm)
    await acp.say(sid, "look for TODOs with a child")
    child = announcements(acp, sid)[0]["sessionId"]
    # Closing a child that has ended stops nothing and answers at once.
    assert await acp.client.raw("session/close", {"sessionId": child}) == {}
    before = len(acp.client.of(child))

    llm.add(
        tool_call(
            "task",
            {
                "agent": "explore",
                "description": "look again",
                "prompt": "Look once more.",
                "resume": child,
            },
        )
    )
    llm.add(text("SECOND-LOOK: still one."))
    llm.add(text("Looked again."))
    assert (await acp.say(sid, "ask the same child again")).stop_reason == "end_turn"
    states = [u["state"]["state"] for u in announcements(acp, sid, child)]
    assert states == ["running", "idle", "running", "idle"]
    again = announcements(acp, sid, child)[2]
    assert again["title"] == "explore: look again" and again["capabilities"] == {"cancel": {}}
    # Its second run arrives under its id again, after the new announcement.
    assert "SECOND-LOOK" in acp.client.text(child)
    assert len(acp.client.of(child)) > before


@pytest.mark.asyncio
async def test_cancelling_the_parent_ends_its_announced_children_first(
    start_acp: StartAcp, llm: FakeLLM
) -> None:
    acp = await start_acp(capabilities=SUBAGENTS)
    sid = await acp.new()
    llm.add(
        tool_call(
            "task", {"agent": "explore", "description": "a long look", "prompt": "Look long."}
        )
    )
    llm.add(text("looking"), stall(30, after=1))
    turn = asyncio.ensure_future(acp.say(sid, "delegate a long look"))
    await llm.wait_for_requests_async(2)
    await announced_child(acp, sid)
    await acp.conn.cancel(session_id=sid)
    assert (await asyncio.wait_for(turn, 15)).stop_reason == "cancelled"
    # The child's last update came before the parent's answer (the fixture flushed
    # every update before the prompt returned).
    assert announcements(acp, sid)[-1]["state"] == {"state": "idle", "stopReason": "cancelled"}


@pytest.mark.asyncio
async def test_without_the_opt_in_children_stay_in_the_parents_task_call(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("# TODO: one\n")
    acp = await start_acp()
    sid = await acp.new()
    acp.client.policy = allow_once
    script_child(llm)
    await acp.say(sid, "look for TODOs with a child")
    assert {u["sessionId"] for u in acp.client.updates} == {sid}
    assert acp.client.of(sid, "subagent_update") == []
    assert not any(
        block["type"] == "session"
        for u in acp.client.of(sid, "tool_call_update")
        for block in u.get("content") or []
    )


@pytest.mark.asyncio
async def test_resume_close_and_delete(start_acp: StartAcp, llm: FakeLLM, workspace: Path) -> None:
    acp = await start_acp()
    sid = await acp.new()
    llm.add(text("first answer"))
    await acp.say(sid, "first question")

    # Close while a turn runs: the turn is cancelled, the session stays listed.
    llm.add(text("slow"), stall(30, after=1))
    turn = asyncio.ensure_future(acp.say(sid, "a slow one"))
    await llm.wait_for_requests_async(2)
    await acp.client.raw("session/close", {"sessionId": sid})
    assert (await asyncio.wait_for(turn, 10)).stop_reason == "cancelled"
    listed = await acp.conn.list_sessions(cwd=str(workspace))
    assert [s.session_id for s in listed.sessions] == [sid]

    # A new editor process resumes it: no history replayed, and it answers prompts.
    again = await start_acp()
    resumed = await again.client.raw(
        "session/resume", {"sessionId": sid, "cwd": str(workspace), "mcpServers": []}
    )
    assert resumed["modes"]["currentModeId"] == "build"
    await again.client.wait(lambda: again.client.of(sid, "available_commands_update"))
    assert again.client.of(sid, "user_message_chunk") == []
    llm.add(text("resumed answer"))
    await again.say(sid, "go on")
    assert "first question" in llm.model_requests[-1].input_text()
    assert again.client.text(sid) == "resumed answer"
    missing = await error_of(
        again.client.raw(
            "session/resume", {"sessionId": "nope", "cwd": str(workspace), "mcpServers": []}
        )
    )
    assert missing.code == -32002

    # Delete: gone from the list and from load.
    await again.client.raw("session/delete", {"sessionId": sid})
    assert (await again.conn.list_sessions(cwd=str(workspace))).sessions == []
    gone = await error_of(
        again.conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    )
    assert gone.code == -32002
    assert again.client.checked["answer to session/delete"] == 1
    assert acp.client.checked["answer to session/close"] == 1


@pytest.mark.asyncio
async def test_an_image_prompt_reaches_the_model(start_acp: StartAcp, llm: FakeLLM) -> None:
    acp = await start_acp()
    sid = await acp.new()
    llm.add(text("One pixel."))
    answer = await acp.conn.prompt(
        session_id=sid,
        prompt=[
            TextContentBlock(type="text", text="What is this?"),
            ImageContentBlock(type="image", mime_type="image/png", data=PNG_B64),
        ],
    )
    assert answer.stop_reason == "end_turn"
    assert PNG_B64 in str(llm.model_requests[-1].body)
    requests = len(llm.model_requests)
    for bad in (
        ImageContentBlock(type="image", mime_type="image/tiff", data=PNG_B64),
        AudioContentBlock(type="audio", mime_type="audio/wav", data="AAAA"),
    ):
        refused = await error_of(
            acp.conn.prompt(
                session_id=sid, prompt=[TextContentBlock(type="text", text="and this?"), bad]
            )
        )
        assert refused.code == -32602
    assert len(llm.model_requests) == requests


@pytest.mark.asyncio
async def test_a_link_outside_the_workspace_is_told_not_read(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "secret.txt"
    outside.parent.mkdir()
    outside.write_text("OUTSIDE-CONTENT\n")
    acp = await start_acp()
    sid = await acp.new()
    llm.add(text("I cannot open it."))
    answer = await acp.conn.prompt(
        session_id=sid,
        prompt=[
            TextContentBlock(type="text", text="Look at this"),
            ResourceContentBlock(type="resource_link", uri=outside.as_uri(), name="secret.txt"),
        ],
    )
    assert answer.stop_reason == "end_turn"
    sent = llm.model_requests[-1].input_text()
    assert "OUTSIDE-CONTENT" not in sent
    assert f"linked {outside.as_uri()} (secret.txt); it is outside the workspace" in sent
    # A missing file inside the workspace is still refused.
    missing = await error_of(
        acp.conn.prompt(
            session_id=sid,
            prompt=[
                TextContentBlock(type="text", text="and this"),
                ResourceContentBlock(
                    type="resource_link", uri=(workspace / "nope.py").as_uri(), name="nope.py"
                ),
            ],
        )
    )
    assert missing.code == -32602


# ---------------------------------------------------------------- the schema check itself


def test_the_schema_check_refuses_what_the_schema_refuses() -> None:
    update = {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "compaction_update",
            "compactionId": "c1",
            "status": "completed",
        },
    }
    assert schema_check.update_errors(update) == []
    # The earlier draft's summary, a plain string, is not the schema's content blocks.
    update["update"]["summary"] = "the summary"
    assert schema_check.update_errors(update)
    assert schema_check.update_errors({"sessionId": "s1", "update": {"sessionUpdate": "nope"}})
    # A root `usage` in a prompt result is the unstable schema's only.
    assert schema_check.response_errors("session/prompt", {"stopReason": "end_turn"}) == []
    assert schema_check.response_errors(
        "session/prompt",
        {"stopReason": "end_turn", "usage": {"totalTokens": 1}, "unknown": 1},
    ) or schema_check.response_errors("session/prompt", {"stopReason": "finished"})
    assert schema_check.response_errors("session/prompt", {"stopReason": "finished"})
    child = {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": "idle"}}
    assert schema_check.update_errors({"sessionId": "s1", "update": child}) == []
    # The dropped drafts' shapes are in no schema any more.
    spawned = {"sessionUpdate": "subagent_spawned", "subagentSessionId": "c", "name": "x"}
    assert schema_check.update_errors({"sessionId": "s1", "update": spawned})
    assert schema_check.update_errors(
        {"sessionId": "s1", "update": {**child, "state": {"state": "completed"}}}
    )
    assert schema_check.update_errors({"sessionId": "s1", "update": {**child, "sessionId": ""}})
    # The Markdown plan's `path` is an absolute path (the unstable file allows anything).
    plan = {"type": "markdown", "planId": "p", "content": "# P", "path": "/w/p.md"}
    markdown = {"sessionId": "s1", "update": {"sessionUpdate": "plan_update", "plan": plan}}
    assert schema_check.update_errors(markdown) == []
    markdown["update"]["plan"] = {**plan, "path": "p.md"}
    assert schema_check.update_errors(markdown)
    # A call's `session` content is checked on its own; a link without its id is refused.
    call = {"sessionUpdate": "tool_call_update", "toolCallId": "t1"}
    linked = {**call, "content": [{"type": "session", "sessionId": "c"}]}
    assert schema_check.update_errors({"sessionId": "s1", "update": linked}) == []
    broken = {**call, "content": [{"type": "session"}]}
    assert schema_check.update_errors({"sessionId": "s1", "update": broken})


def test_the_compaction_update_carries_the_record_score_when_it_has_one() -> None:
    fields: dict[str, Any] = {
        "compactionId": "r1",
        "sessionId": "s1",
        "trigger": "manual",
        "strategy": "native",
        "tokensBefore": 100,
        "tokensAfter": 10,
        "firstKeptMessageId": None,
        "summary": "S",
        "ledger": {},
        "createdAt": "2026-12-07T00:00:00Z",
    }
    score = {"facts": 5, "inView": 4, "oneRecall": 1, "viewTokens": 10, "window": 1000}
    scored = p.CompactionRecord.model_validate({**fields, "score": score})
    plain = p.CompactionRecord.model_validate(fields)
    update = compaction_update("c1", scored)
    assert update["_meta"]["baton"]["score"] == score
    assert "score" not in compaction_update("c1", plain)["_meta"]["baton"]
    assert schema_check.update_errors({"sessionId": "s1", "update": update}) == []


_ = RequestError  # errors are RequestError (error_of)


@pytest.mark.asyncio
async def test_additional_directories_are_read_only_roots(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "api.md").write_text("SHARED-API-NOTES\n")
    (tmp_path / "private.txt").write_text("PRIVATE\n")
    acp = await start_acp(env={"BATON_PERMISSIONS__WRITE": "allow"})
    init = await acp.client.raw("initialize", {"protocolVersion": PROTOCOL_VERSION})
    assert init["agentCapabilities"]["sessionCapabilities"]["additionalDirectories"] == {}
    # A bad directory is refused and no session is made.
    bad = await error_of(
        acp.client.raw(
            "session/new",
            {"cwd": str(workspace), "mcpServers": [], "additionalDirectories": ["relative/dir"]},
        )
    )
    assert bad.code == -32602 and "additionalDirectories.0" in str(bad.data)
    assert (await acp.conn.list_sessions(cwd=str(workspace))).sessions == []

    new = await acp.client.raw(
        "session/new",
        {"cwd": str(workspace), "mcpServers": [], "additionalDirectories": [str(shared)]},
    )
    sid = new["sessionId"]
    listed = await acp.conn.list_sessions(cwd=str(workspace))
    assert listed.sessions[0].additional_directories == [str(shared.resolve())]

    llm.add(tool_call("read", {"path": str(shared / "api.md")}))
    llm.add(tool_call("write", {"path": str(shared / "api.md"), "content": "changed\n"}))
    llm.add(tool_call("read", {"path": str(tmp_path / "private.txt")}))
    llm.add(text("Done."))
    await acp.say(sid, "read the shared notes")
    outputs = [u.get("rawOutput") or "" for u in acp.client.of(sid, "tool_call_update")]
    assert any("SHARED-API-NOTES" in o for o in outputs)
    assert any("is in an additional directory" in o and "read-only" in o for o in outputs)
    assert any("escapes the workspace" in o for o in outputs)
    assert not any("PRIVATE" in o for o in outputs)
    assert (shared / "api.md").read_text() == "SHARED-API-NOTES\n"

    # A link into it is not attached, but the model is told it may read it.
    llm.add(text("Noted."))
    await acp.conn.prompt(
        session_id=sid,
        prompt=[
            TextContentBlock(type="text", text="see"),
            ResourceContentBlock(
                type="resource_link", uri=(shared / "api.md").as_uri(), name="api.md"
            ),
        ],
    )
    sent = llm.model_requests[-1].input_text()
    assert f"read it with read and the path {shared.resolve() / 'api.md'}" in sent
    # The person was told once how to allow changes there.
    assert f"`baton trust {shared.resolve()}`" in acp.client.text(sid)
    # Resumed without them: none are active any more.
    await acp.client.raw(
        "session/resume", {"sessionId": sid, "cwd": str(workspace), "mcpServers": []}
    )
    assert (await acp.conn.list_sessions(cwd=str(workspace))).sessions[
        0
    ].additional_directories is None


@pytest.mark.asyncio
async def test_a_trusted_additional_directory_takes_changes_each_asked(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path, tmp_path: Path, home: Path
) -> None:
    import sys

    from tests.harness import server_env

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "api.md").write_text("old\n")
    trust = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "baton",
        "trust",
        str(shared),
        env=server_env(home, None, None),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert await trust.wait() == 0
    # Writes are allowed without asking in the workspace; outside it they still ask.
    acp = await start_acp(env={"BATON_PERMISSIONS__WRITE": "allow"})
    new = await acp.client.raw(
        "session/new",
        {"cwd": str(workspace), "mcpServers": [], "additionalDirectories": [str(shared)]},
    )
    sid = new["sessionId"]
    acp.client.policy = allow_once
    target = str(shared / "api.md")
    llm.add(tool_call("edit", {"path": target, "old_string": "old", "new_string": "new"}))
    llm.add(tool_call("write", {"path": str(workspace / "in.txt"), "content": "x\n"}))
    llm.add(text("Done."))
    await acp.say(sid, "update the shared notes")
    assert (shared / "api.md").read_text() == "new\n"
    assert (workspace / "in.txt").read_text() == "x\n"
    [asked] = acp.client.permission_requests
    assert asked["toolCall"]["rawInput"]["path"] == target
    # No "always" for a change outside the workspace.
    assert [o["kind"] for o in asked["options"]] == ["allow_once", "reject_once"]
    outputs = [u.get("rawOutput") or "" for u in acp.client.of(sid, "tool_call_update")]
    assert any("/undo does not restore it" in o for o in outputs)
    assert "read-only for Baton" not in acp.client.text(sid)
    # Refused when asked: unchanged.
    acp.client.permission_requests.clear()
    from tests.acp.conftest import reject

    acp.client.policy = reject
    llm.add(tool_call("write", {"path": target, "content": "gone\n"}))
    llm.add(text("Left it."))
    await acp.say(sid, "overwrite it")
    assert (shared / "api.md").read_text() == "new\n"
