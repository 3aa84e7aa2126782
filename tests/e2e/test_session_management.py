"""Session management through the real server process: rename, delete, fork, export,
models and the model switch, token usage."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, RecordedRequest, pace, reasoning, text, tool_call, usage
from tests.harness import TEST_KEY, BatonClient

SUMMARY = "\n\n".join(f"## {name}\nsummary of {name.lower()}" for name in SECTIONS)
NATIVE = {"BATON_COMPACTION__STRATEGY": "native"}


def sent(req: RecordedRequest) -> dict[str, Any]:
    """What a model request carried, without what names the session (the cache key)."""
    return {
        "instructions": req.body.get("instructions"),
        "input": req.body.get("input"),
        "tools": req.body.get("tools"),
        "model": req.body.get("model"),
    }


def messages_of(loaded: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(m["role"], m["parts"]) for m in loaded["messages"]]


async def two_turns(baton: BatonClient, llm: FakeLLM, workspace: Path) -> str:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    sid = await baton.new_session(title="Notes")
    # Long enough to be worth a summary: a tiny session has nothing to compact. The bulk
    # is the agent's (the person's words stay in the view verbatim in any case).
    reading = "Reading. " + "In detail. " * 200
    llm.add(text(reading), tool_call("read", {"path": "notes.txt"}, call_id="call_r1"))
    llm.add(text("It has alpha and beta."), usage(input=120, output=8, cached=100))
    assert (await baton.prompt(sid, "what is in notes.txt?"))["stopReason"] == "end_turn"
    llm.add(text("Second answer."), usage(input=200, output=5, cached=150))
    assert (await baton.prompt(sid, "and then?"))["stopReason"] == "end_turn"
    return sid


# --------------------------------------------------------------------------- rename / delete


@pytest.mark.asyncio
async def test_rename(baton: BatonClient) -> None:
    sid = await baton.new_session(title="Old")
    info = await baton.request("baton/session/rename", {"sessionId": sid, "title": "  New   name "})
    assert info["sessionId"] == sid and info["title"] == "New name"
    listed = (await baton.request("baton/session/list"))["sessions"]
    assert [s["title"] for s in listed] == ["New name"]
    assert (await baton.load(sid))["title"] == "New name"

    blank = await baton.error("baton/session/rename", {"sessionId": sid, "title": "   "})
    assert blank.code == -32602 and "title" in blank.message
    missing = await baton.error("baton/session/rename", {"sessionId": "ses_nope", "title": "x"})
    assert missing.code == -32001


@pytest.mark.asyncio
async def test_list_is_newest_first(baton: BatonClient, llm: FakeLLM) -> None:
    # Created in the same millisecond or not: ids grow in the server, so they break a tie.
    first = await baton.new_session(title="first")
    second = await baton.new_session(title="second")
    assert [s["sessionId"] for s in (await baton.request("baton/session/list"))["sessions"]] == [
        second,
        first,
    ]
    llm.add(text("ok"))
    await baton.prompt(first, "hi")
    assert [s["sessionId"] for s in (await baton.request("baton/session/list"))["sessions"]] == [
        first,
        second,
    ]


@pytest.mark.asyncio
async def test_delete_removes_the_session_and_keeps_its_plan_file(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton()
    keep = await two_turns(baton, llm, workspace)
    sid = await baton.new_session(mode="plan", title="Doomed")
    llm.add(tool_call("plan_write", {"content": "# Plan\n\n- [ ] one\n"}, call_id="call_p"))
    llm.add(text("Planned."))
    await baton.prompt(sid, "plan it")
    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    plan_file = workspace / plan["path"]
    assert plan_file.exists()

    assert await baton.request("baton/session/delete", {"sessionId": sid}) == {}
    listed = (await baton.request("baton/session/list"))["sessions"]
    assert [s["sessionId"] for s in listed] == [keep]
    for method in ("baton/session/load", "baton/plan/get", "baton/session/compactions"):
        assert (await baton.error(method, {"sessionId": sid})).code == -32001, method
    assert (await baton.error("baton/session/delete", {"sessionId": sid})).code == -32001
    assert plan_file.exists(), "plan files stay on disk"
    # The other session is untouched, and the deletion survives a restart.
    assert len((await baton.load(keep))["messages"]) == 5
    baton2 = await start_baton()
    assert [s["sessionId"] for s in (await baton2.request("baton/session/list"))["sessions"]] == [
        keep
    ]
    assert (await baton2.error("baton/session/load", {"sessionId": sid})).code == -32001


@pytest.mark.asyncio
async def test_delete_refuses_a_running_session(baton: BatonClient, llm: FakeLLM) -> None:
    sid = await baton.new_session()
    llm.add(text(*[f"word{i} " for i in range(100)]), pace(0.2))
    prompt = asyncio.create_task(baton.prompt(sid, "go"))
    await baton.wait_update("agent_message_chunk", sid, include_past=True)
    busy = await baton.error("baton/session/delete", {"sessionId": sid})
    assert busy.code == -32002
    baton.notify("baton/session/cancel", {"sessionId": sid})
    assert (await prompt)["stopReason"] == "cancelled"
    assert await baton.request("baton/session/delete", {"sessionId": sid}) == {}


# --------------------------------------------------------------------------- fork


@pytest.mark.asyncio
async def test_fork_at_a_message_sends_exactly_the_history_up_to_there(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await two_turns(baton, llm, workspace)
    source = await baton.load(sid)
    # Messages: prompt, step (text + read), step (answer), prompt 2, step (answer 2).
    fork_at = source["messages"][2]
    assert fork_at["role"] == "assistant"
    source_request = llm.model_requests[2]  # the request that carried "and then?"

    forked = await baton.request(
        "baton/session/fork", {"sessionId": sid, "messageId": fork_at["id"]}
    )
    fid = forked["sessionId"]
    assert fid != sid and forked["title"] == "Notes (fork)" and forked["messages"] == 3
    assert "planPath" not in forked
    loaded = await baton.load(fid)
    assert messages_of(loaded) == messages_of(source)[:3]
    assert {m["id"] for m in loaded["messages"]}.isdisjoint({m["id"] for m in source["messages"]})
    listed = [s["sessionId"] for s in (await baton.request("baton/session/list"))["sessions"]]
    assert listed[0] == fid

    llm.add(text("Another second answer."))
    assert (await baton.prompt(fid, "and then?"))["stopReason"] == "end_turn"
    assert sent(llm.model_requests[-1]) == sent(source_request)
    # The source is unchanged, and deleting it leaves the fork whole.
    assert messages_of(await baton.load(sid)) == messages_of(source)
    await baton.request("baton/session/delete", {"sessionId": sid})
    llm.add(text("Third."))
    assert (await baton.prompt(fid, "third?"))["stopReason"] == "end_turn"
    assert len((await baton.load(fid))["messages"]) == 7

    unknown = await baton.error("baton/session/fork", {"sessionId": fid, "messageId": "msg_x"})
    assert unknown.code == -32008
    assert (
        await baton.error("baton/session/fork", {"sessionId": "ses_x", "messageId": "msg_x"})
    ).code == -32001


@pytest.mark.asyncio
async def test_fork_after_a_compaction_carries_the_compacted_view(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(env=NATIVE)
    sid = await two_turns(baton, llm, workspace)
    llm.add(text(SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    llm.add(text("Third answer."))
    await baton.prompt(sid, "third?")
    llm.add(text("Fourth answer."))
    await baton.prompt(sid, "fourth?")
    source = await baton.load(sid)
    fourth_request = llm.model_requests[-1]
    assert "summary of exact facts" in str(fourth_request.body["input"])

    third_answer = next(
        m for m in source["messages"] if m["parts"] == [{"type": "text", "text": "Third answer."}]
    )
    forked = await baton.request(
        "baton/session/fork",
        {"sessionId": sid, "messageId": third_answer["id"], "title": "Try again"},
    )
    fid = forked["sessionId"]
    assert forked["title"] == "Try again"
    compactions = (await baton.request("baton/session/compactions", {"sessionId": fid}))[
        "compactions"
    ]
    assert len(compactions) == 1
    copy = compactions[0]
    assert copy["compactionId"] != record["compactionId"] and copy["sessionId"] == fid
    assert copy["summary"] == record["summary"]
    loaded = await baton.load(fid)
    assert [m["compacted"] for m in loaded["messages"]] == [
        m["compacted"] for m in source["messages"][: len(loaded["messages"])]
    ]
    marker = next(m for m in loaded["messages"] if m["role"] == "system")
    assert marker["parts"] == [
        {
            "type": "compaction",
            "compactionId": copy["compactionId"],
            "trigger": copy["trigger"],
            "tokensBefore": copy["tokensBefore"],
            "tokensAfter": copy["tokensAfter"],
            "score": copy["score"],
        }
    ]

    llm.add(text("Fourth, again."))
    await baton.prompt(fid, "fourth?")
    assert sent(llm.model_requests[-1]) == sent(fourth_request)
    # A fork from before the compaction starts uncompacted.
    early = await baton.request(
        "baton/session/fork", {"sessionId": sid, "messageId": source["messages"][2]["id"]}
    )
    assert (await baton.request("baton/session/compactions", {"sessionId": early["sessionId"]}))[
        "compactions"
    ] == []
    assert not any(m["compacted"] for m in (await baton.load(early["sessionId"]))["messages"])


@pytest.mark.asyncio
async def test_fork_after_a_server_side_compaction_replays_the_same_window(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    # The openai provider compacts on the server by default: the fork carries the
    # opaque window and replays it byte for byte, as the source would have.
    sid = await two_turns(baton, llm, workspace)
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["strategy"] == "server"
    marker = (await baton.load(sid))["messages"][-1]
    assert marker["role"] == "system"
    llm.add(text("Third answer."))
    await baton.prompt(sid, "third?")
    source_request = llm.model_requests[-1]
    llm.assert_replayed(request=source_request)

    forked = await baton.request(
        "baton/session/fork", {"sessionId": sid, "messageId": marker["id"]}
    )
    llm.add(text("Third, again."))
    await baton.prompt(forked["sessionId"], "third?")
    fork_request = llm.model_requests[-1]
    llm.assert_replayed(request=fork_request)
    assert sent(fork_request) == sent(source_request)


@pytest.mark.asyncio
async def test_fork_leaves_out_reverted_turns(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await two_turns(baton, llm, workspace)
    second_prompt = (await baton.load(sid))["messages"][3]
    assert second_prompt["role"] == "user"
    await baton.request(
        "baton/session/revert", {"sessionId": sid, "messageId": second_prompt["id"]}
    )
    llm.add(text("Third answer."))
    await baton.prompt(sid, "third?")
    llm.add(text("Fourth answer."))
    await baton.prompt(sid, "fourth?")
    source_request = llm.model_requests[-1]
    assert "and then?" not in source_request.input_text()
    third_answer = (await baton.load(sid))["messages"][-3]
    assert third_answer["parts"] == [{"type": "text", "text": "Third answer."}]

    forked = await baton.request(
        "baton/session/fork", {"sessionId": sid, "messageId": third_answer["id"]}
    )
    loaded = await baton.load(forked["sessionId"])
    assert forked["messages"] == len(loaded["messages"]) == 5
    assert not any(m.get("reverted") for m in loaded["messages"])
    llm.add(text("Fourth, again."))
    await baton.prompt(forked["sessionId"], "fourth?")
    assert sent(llm.model_requests[-1]) == sent(source_request)


@pytest.mark.asyncio
async def test_fork_copies_the_plan_as_it_was_to_a_new_file(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session(mode="plan", title="Cache plan")
    llm.add(tool_call("plan_write", {"content": "# Cache\n\n- [ ] one\n"}, call_id="call_w"))
    llm.add(text("Drafted."))
    await baton.prompt(sid, "plan a cache")
    first_turn_end = (await baton.load(sid))["messages"][-1]
    first_request_after = None
    llm.add(
        tool_call("plan_edit", {"old_string": "one", "new_string": "one\n- [ ] two"}, call_id="e")
    )
    llm.add(text("Added a step."))
    await baton.prompt(sid, "add a step")
    first_request_after = llm.model_requests[-2]  # the request that carried "add a step"
    source_plan = await baton.request("baton/plan/get", {"sessionId": sid})
    assert source_plan["version"] == 2 and "two" in source_plan["content"]

    forked = await baton.request(
        "baton/session/fork", {"sessionId": sid, "messageId": first_turn_end["id"]}
    )
    fid = forked["sessionId"]
    plan = await baton.request("baton/plan/get", {"sessionId": fid})
    assert plan["path"] == forked["planPath"] and plan["path"] != source_plan["path"]
    assert plan["version"] == 1 and plan["content"] == "# Cache\n\n- [ ] one\n"
    assert plan["status"] == "draft"
    assert (workspace / plan["path"]).read_text().endswith("# Cache\n\n- [ ] one\n")
    assert "two" in (workspace / source_plan["path"]).read_text(), "the source's file is kept"
    history = await baton.request("baton/plan/history", {"sessionId": fid})
    assert [v["version"] for v in history["versions"]] == [1]

    # The fork's request is the source's, byte for byte (what was sent is never rewritten,
    # so the fork shares the source's cached prefix); the fork's plan has its own file.
    llm.add(text("Added a step, again."))
    await baton.prompt(fid, "add a step")
    assert sent(llm.model_requests[-1]) == sent(first_request_after)


# --------------------------------------------------------------------------- export


@pytest.mark.asyncio
async def test_export_is_markdown_without_artifacts_or_keys(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(env=NATIVE, settings={"permissions": {"bash": "allow"}})
    sid = await baton.new_session(title="Export me")
    (workspace / "a.txt").write_text("x\n")
    llm.add(
        reasoning("secret scratch thoughts"),
        text("Looking. " + "context " * 150),
        tool_call("read", {"path": "a.txt"}),
    )
    llm.add(tool_call("bash", {"command": "exit 3"}))
    llm.add(text("The file has **x**."), usage(input=50, output=7, cached=10))
    await baton.prompt(sid, f"look at a.txt; my key is {TEST_KEY}")
    llm.add(text(SUMMARY))
    await baton.request("baton/session/compact", {"sessionId": sid})
    llm.add(text("After compaction."))
    await baton.prompt(sid, "go on")

    result = await baton.request("baton/session/export", {"sessionId": sid})
    md = result["markdown"]
    assert result["title"] == "Export me" and md.startswith("# Export me\n")
    assert "## You" in md and "## Agent" in md
    assert "look at a.txt; my key is [REDACTED]" in md
    assert TEST_KEY not in md
    assert "- `read` `a.txt`" in md
    assert "- `bash` `exit 3`: exit 3" in md
    assert "The file has **x**." in md and "After compaction." in md
    assert "**Context compacted**: manual, native" in md
    assert "<details><summary>Summary</summary>" in md
    assert "secret scratch thoughts" not in md, "reasoning is not exported"
    assert "encrypted" not in md
    assert md.index("The file has") < md.index("Context compacted") < md.index("After compaction")


# --------------------------------------------------------------------------- models


@pytest.mark.asyncio
async def test_models_list_and_the_switch_reaches_the_next_request(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(settings={"contextWindow": 64000})
    sid = await baton.new_session()
    listed = await baton.request("baton/models/list", {"sessionId": sid})
    assert listed["provider"] == "openai" and listed["source"] == "provider"
    ids = [m["id"] for m in listed["models"]]
    assert "gpt-fake" in ids and "gpt-fake-mini" in ids
    assert listed["current"] == "gpt-5.1" and ids[0] == "gpt-5.1"
    assert {m["contextWindow"] for m in listed["models"]} == {64000}

    result = await baton.request(
        "baton/session/setModel", {"sessionId": sid, "model": "gpt-fake-mini"}
    )
    assert result == {"provider": "openai", "model": "gpt-fake-mini"}
    llm.add(text("hi from mini"))
    await baton.prompt(sid, "hello")
    assert llm.model_requests[-1].model == "gpt-fake-mini"
    loaded = await baton.load(sid)
    assert loaded["provider"] == "openai" and loaded["model"] == "gpt-fake-mini"
    again = await baton.request("baton/models/list", {"sessionId": sid})
    assert again["current"] == "gpt-fake-mini"
    assert [m["id"] for m in again["models"]] == ["gpt-fake", "gpt-fake-mini"]
    # Another session still follows the configuration.
    other = await baton.new_session()
    llm.add(text("hi"))
    await baton.prompt(other, "hello")
    assert llm.model_requests[-1].model == "gpt-5.1"


@pytest.mark.asyncio
async def test_models_list_windows_and_unreachable_provider(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(
        settings={"provider": "openai-compatible", "baseUrl": llm.base_url, "model": "gpt-4o"}
    )
    listed = await baton.request("baton/models/list", {})
    assert listed["provider"] == "openai-compatible" and listed["current"] == "gpt-4o"
    windows = {m["id"]: m["contextWindow"] for m in listed["models"]}
    assert windows["gpt-4o"] == 128000  # from the maintained table
    assert windows["gpt-fake"] == 128000  # the default

    down = await start_baton(
        settings={
            "provider": "openai-compatible",
            "baseUrl": "http://127.0.0.1:9/v1",
            "model": "qwen2.5-coder:7b",
        }
    )
    listed = await down.request("baton/models/list", {})
    assert listed["source"] == "configured" and listed["error"]
    assert [m["id"] for m in listed["models"]] == ["qwen2.5-coder:7b"]
    assert listed["models"][0]["contextWindow"] == 32768


@pytest.mark.asyncio
async def test_load_reports_token_usage_totals(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await two_turns(baton, llm, workspace)
    loaded = await baton.load(sid)
    usage_total = loaded["usage"]
    assert usage_total["requests"] == 3
    assert usage_total["cachedTokens"] == 250
    assert usage_total["outputTokens"] >= 13
    assert usage_total["inputTokens"] >= 320
    updates = baton.updates(sid, "usage")
    assert updates[-1]["inputTokens"] == 200 and updates[-1]["cachedTokens"] == 150
