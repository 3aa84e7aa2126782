"""Compaction end to end through the real server: manual, auto, overflow, loop guard, undo."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, overflow, prompt_progress, stall, text, tool_call
from tests.harness import BatonClient

FULL_SUMMARY = "\n\n".join(f"## {name}\nsummary of {name.lower()}" for name in SECTIONS)
# A summary that leaves out every fact: the ledger must still carry them.
FACTLESS_SUMMARY = "\n\n".join(f"## {name}\nnone" for name in SECTIONS)


@pytest_asyncio.fixture
async def start_baton(start_baton: StartBaton) -> StartBaton:
    """These tests are about native compaction, so they pin it: with the `openai` provider
    the default strategy `auto` is server-side (tests/e2e/test_server_compaction.py)."""

    async def start(**kwargs: Any) -> BatonClient:
        env = {"BATON_COMPACTION__STRATEGY": "native", **(kwargs.pop("env", None) or {})}
        return await start_baton(env=env, **kwargs)

    return start


def is_summary_request(req: Any) -> bool:
    return bool(req.is_summary)


async def history_with_tools(baton: BatonClient, llm: FakeLLM, workspace: Path) -> str:
    (workspace / "notes.txt").write_text("alpha line\n" * 200)
    sid = await baton.new_session()
    llm.add(tool_call("read", {"path": "notes.txt"}))
    llm.add(tool_call("bash", {"command": "ls missing-dir"}))
    llm.add(text("The listing failed."))
    result = await baton.prompt(sid, "read notes.txt, then list missing-dir")
    assert result["stopReason"] == "end_turn"
    llm.add(text("Second answer."))
    await baton.prompt(sid, "second question")
    return sid


@pytest.mark.asyncio
async def test_manual_compaction_keeps_ledger_facts_the_summary_dropped(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow"}})
    sid = await history_with_tools(baton, llm, workspace)
    before_load = await baton.load(sid)

    llm.add(text(FACTLESS_SUMMARY))
    record = await baton.request(
        "baton/session/compact", {"sessionId": sid, "instructions": "Focus on notes.txt"}
    )

    summary_request = llm.model_requests[-1]
    assert is_summary_request(summary_request)
    assert "Focus on notes.txt" in summary_request.input_text()
    assert record["trigger"] == "manual"
    assert record["strategy"] == "native"
    assert record["summary"] == FACTLESS_SUMMARY
    assert record["ledger"]["filesRead"] == ["notes.txt"]
    [listing] = [c for c in record["ledger"]["commands"] if c["command"] == "ls missing-dir"]
    assert (listing["exitCode"], listing["exitCodes"]) == (2, [2])
    assert "No such file or directory" in listing["failures"][0]["error"]
    assert record["ledger"]["errors"][0]["source"] == "bash `ls missing-dir`"
    assert record["tokensAfter"] < record["tokensBefore"]

    started = baton.updates(sid, "compaction_started")
    finished = baton.updates(sid, "compaction_finished")
    assert started == [{"kind": "compaction_started", "trigger": "manual", "strategy": "native"}]
    assert finished[0]["compaction"]["compactionId"] == record["compactionId"]

    llm.add(text("Third answer."))
    await baton.prompt(sid, "third question")
    sent = llm.model_requests[-1].input_text()
    # Every ledger fact reaches the model verbatim although the summary omitted them.
    assert "notes.txt" in sent
    assert "`ls missing-dir` → 2" in sent
    assert FACTLESS_SUMMARY in sent
    # The compacted read output left the model's view.
    assert "alpha line" not in sent

    loaded = await baton.load(sid)
    ids_before = [m["id"] for m in before_load["messages"]]
    ids_after = [m["id"] for m in loaded["messages"]]
    assert ids_after[: len(ids_before)] == ids_before, "no message is ever deleted"
    assert any(m["compacted"] for m in loaded["messages"])
    markers = [p for m in loaded["messages"] for p in m["parts"] if p["type"] == "compaction"]
    assert markers == [
        {
            "type": "compaction",
            "compactionId": record["compactionId"],
            "trigger": "manual",
            "tokensBefore": record["tokensBefore"],
            "tokensAfter": record["tokensAfter"],
            "score": record["score"],
        }
    ]

    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert [c["compactionId"] for c in listed["compactions"]] == [record["compactionId"]]


@pytest.mark.asyncio
async def test_manual_compaction_of_a_tiny_history_says_nothing_to_compact(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session()
    llm.add(text("hello"))
    await baton.prompt(sid, "hi")
    seen = len(llm.model_requests)
    record = await baton.request(
        "baton/session/compact", {"sessionId": sid, "instructions": "Keep the greeting"}
    )
    # Nothing can be gained: no model request, nothing stored, the figures and the fate
    # of the instructions said.
    assert len(llm.model_requests) == seen
    assert record["committed"] is False
    assert record["tokensAfter"] == record["tokensBefore"]
    assert record["notes"][0].startswith("nothing to compact")
    assert str(record["tokensBefore"]) in record["notes"][0]
    assert "instructions were not applied" in record["notes"][0]
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert listed["compactions"] == []
    assert baton.updates(sid, "compaction_finished")[-1]["compaction"]["committed"] is False
    empty = await baton.new_session()
    record = await baton.request("baton/session/compact", {"sessionId": empty})
    assert record["trigger"] == "manual"
    assert record["committed"] is False
    assert record["firstKeptMessageId"] is None


@pytest.mark.asyncio
async def test_progress_is_reported_to_clients_that_support_it(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session()
    llm.add(text("hello"))
    await baton.prompt(sid, "hi")
    llm.add(text(FULL_SUMMARY))
    await baton.request("baton/session/compact", {"sessionId": sid})
    reports = [r for token in baton.lsp.progress_reports.values() for r in token]
    kinds = [getattr(r, "kind", None) for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end"


def big_output_handler(llm: FakeLLM, steps: int, summary: str = FULL_SUMMARY) -> dict[str, int]:
    counter = {"steps": 0, "summaries": 0}

    def handler(req: Any) -> Any:
        if is_summary_request(req):
            counter["summaries"] += 1
            return text(summary)
        if counter["steps"] < steps:
            counter["steps"] += 1
            return tool_call(
                "bash", {"command": f"python3 -c \"print('x' * 6000)\" # {counter['steps']}"}
            )
        return text("All steps done.")

    llm.on_request(handler)
    return counter


@pytest.mark.asyncio
async def test_auto_compaction_during_a_long_turn_lets_the_turn_finish(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(
        settings={"contextWindow": 8000, "permissions": {"bash": "allow"}, "maxSteps": 20}
    )
    counter = big_output_handler(llm, steps=6)
    sid = await baton.new_session()
    result = await baton.prompt(sid, "run the six commands")
    assert result["stopReason"] == "end_turn"
    assert counter["steps"] == 6
    started = baton.updates(sid, "compaction_started")
    assert started and all(u["trigger"] == "auto" for u in started)
    assert not baton.updates(sid, "compaction_failed")
    # Work was interrupted: a continue message followed the compaction.
    loaded = await baton.load(sid)
    texts = [p.get("text", "") for m in loaded["messages"] for p in m["parts"]]
    assert any("Continue the task" in t for t in texts)
    # Every request the model got stayed within the window.
    for req in llm.model_requests:
        assert req.tokens < 8000


@pytest.mark.asyncio
async def test_overflow_error_compacts_and_retries_the_step(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow"}})
    sid = await history_with_tools(baton, llm, workspace)
    llm.add(overflow())
    llm.add(text(FULL_SUMMARY))
    llm.add(text("answered after compaction"))
    result = await baton.prompt(sid, "second")
    assert result["stopReason"] == "end_turn"
    assert baton.updates(sid, "compaction_started")[0]["trigger"] == "overflow"
    assert "answered after compaction" in baton.streamed_text(sid)
    records = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert records["compactions"][0]["trigger"] == "overflow"


@pytest.mark.asyncio
async def test_loop_guard_stops_a_session_that_cannot_fit(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    # Instructions alone are larger than the window: no compaction can help.
    (workspace / "AGENTS.md").write_text("Follow the house rules.\n" * 1500)
    baton = await start_baton(settings={"contextWindow": 8000})
    llm.on_request(lambda req: text(FULL_SUMMARY) if is_summary_request(req) else text("x"))
    sid = await baton.new_session()
    result = await asyncio.wait_for(baton.prompt(sid, "hello"), 60)
    assert result["stopReason"] == "error"
    assert "cannot fit" in result["error"] or "still" in result["error"]
    failed = baton.updates(sid, "compaction_failed")
    assert len(failed) == 1
    assert len(llm.model_requests) <= 4, "the loop guard must not keep compacting"
    # The session stays usable once the cause is gone.
    (workspace / "AGENTS.md").write_text("Be brief.")
    llm.on_request(None)
    llm.add(text("fine now"))
    assert (await baton.prompt(sid, "again"))["stopReason"] == "end_turn"


@pytest.mark.asyncio
async def test_uncompact_restores_the_previous_view(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow"}})
    sid = await history_with_tools(baton, llm, workspace)
    llm.add(text(FULL_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    undone = await baton.request(
        "baton/session/uncompact", {"sessionId": sid, "compactionId": record["compactionId"]}
    )
    assert undone["undone"] is True
    loaded = await baton.load(sid)
    assert not any(m["compacted"] for m in loaded["messages"])
    llm.add(text("ok"))
    await baton.prompt(sid, "after undo")
    sent = llm.model_requests[-1].input_text()
    assert sent.count("alpha line") == 200
    assert FULL_SUMMARY not in sent
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert listed["compactions"][0]["undone"] is True
    error = await baton.error(
        "baton/session/uncompact", {"sessionId": sid, "compactionId": "cmp_nope"}
    )
    assert "not found" in error.message


@pytest.mark.asyncio
async def test_manual_compaction_during_a_turn_runs_at_the_next_step(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow"}})
    sid = await baton.new_session()
    llm.add(tool_call("bash", {"command": "sleep 1; echo slept"}))
    llm.add(text(FULL_SUMMARY))
    llm.add(text("finished"))
    prompt = asyncio.ensure_future(baton.prompt(sid, "sleep then answer"))
    await baton.wait_update("tool_call_update", sid)
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    result = await prompt
    assert result["stopReason"] == "end_turn"
    assert record["trigger"] == "manual"
    kinds = [u["kind"] for u in baton.updates(sid)]
    # The compaction happened after the tool finished and before the final answer.
    assert kinds.index("compaction_finished") > kinds.index("tool_call_update")
    assert kinds.index("compaction_finished") < kinds.index("agent_message_chunk")


@pytest.mark.asyncio
async def test_kill_during_compaction_leaves_the_old_view_whole(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow"}})
    sid = await history_with_tools(baton, llm, workspace)
    before = await baton.load(sid)
    llm.add(text("## Goals"), stall(30, after=2))
    seen = len(llm.model_requests)
    compact = asyncio.ensure_future(baton.request("baton/session/compact", {"sessionId": sid}))
    # Kill while the summary is streaming: the model call is in flight.
    await llm.wait_for_requests_async(seen + 1)
    baton.kill()
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(compact, 10)
    llm.release()

    again = await start_baton(settings={"permissions": {"bash": "allow"}})
    after = await again.load(sid)
    assert after["messages"] == before["messages"]
    listed = await again.request("baton/session/compactions", {"sessionId": sid})
    assert listed["compactions"] == []
    llm.add(text("still here"))
    assert (await again.prompt(sid, "hello again"))["stopReason"] == "end_turn"


@pytest.mark.asyncio
async def test_summary_missing_sections_are_filled_without_a_second_call(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow"}})
    sid = await history_with_tools(baton, llm, workspace)
    llm.add(text("just prose"))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    summary_requests = [r for r in llm.model_requests if is_summary_request(r)]
    # One summary call is the norm: Baton fills the missing sections itself.
    assert len(summary_requests) == 1
    assert any("without sections" in note for note in record["notes"])
    assert record["summary"].startswith("just prose")
    for name in SECTIONS:
        assert f"## {name}" in record["summary"]


@pytest.mark.asyncio
async def test_the_summary_calls_prompt_reading_is_reported_like_a_turns(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    # llama.cpp's progress chunks come over Chat Completions (the local provider's wire).
    env = {"BATON_PROVIDER": "openai-compatible", "BATON_MODEL": "gpt-fake"}
    baton = await start_baton(settings={"permissions": {"bash": "allow"}}, env=env)
    sid = await history_with_tools(baton, llm, workspace)
    during_turns = len(baton.updates(sid, "model_progress"))
    llm.add(prompt_progress(900, batch=300, cached=100), text(FULL_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["tokensAfter"] < record["tokensBefore"]
    progress = baton.updates(sid, "model_progress")[during_turns:]
    # As llama.cpp reports it: from the cached tokens on, batch by batch, to the whole.
    assert [(u["done"], u["total"], u["cached"]) for u in progress] == [
        (100, 900, 100),
        (400, 900, 100),
        (700, 900, 100),
        (900, 900, 100),
    ], progress
