"""OpenAI server-side compaction end to end, through the real server and the fake Responses API.

Covers: manual compaction with a `compaction_trigger` call (no summary request), the
byte-for-byte replay of the item (also after a restart), `context_management` on every
normal call and the item picked out of the stream, the local safety net above the
server's threshold, fallback to native, the artifact kept from clients, and every
provider / model / route transition (setModel and configuration changes).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from baton.store.db import workspace_db_path
from tests.conftest import StartBaton
from tests.e2e.test_compaction import FULL_SUMMARY, history_with_tools, is_summary_request
from tests.fake_llm import FakeLLM, RecordedRequest, compaction, error, overflow, text, usage
from tests.harness import TEST_KEY, BatonClient, server_env, start_client, stop_client

ALLOW_BASH = {"permissions": {"bash": "allow"}}
DEFAULT_WINDOW = 400_000  # the default model, gpt-5.1, has a 400k window
PART_TYPES = {"text", "reasoning", "tool_call", "compaction", "pre_compact"}


def without_id(item: dict[str, Any]) -> dict[str, Any]:
    """Baton replays output items without their `id` while `store` is false."""
    return {k: v for k, v in item.items() if k != "id"}


def never_sent_artifacts(requests: list[RecordedRequest]) -> None:
    for req in requests:
        assert b"enc_cmp" not in req.raw, f"{req!r} carries a compaction artifact"
        assert not req.compaction_items()


async def records(baton: BatonClient, sid: str) -> list[dict[str, Any]]:
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    return listed["compactions"]  # type: ignore[no-any-return]


async def context(baton: BatonClient, sid: str) -> dict[str, Any]:
    return await baton.request("baton/session/context", {"sessionId": sid})  # type: ignore[no-any-return]


def stored_views(workspace: Path, sid: str) -> list[dict[str, Any]]:
    conn = sqlite3.connect(workspace_db_path(workspace))
    try:
        rows = conn.execute(
            "SELECT view FROM compactions WHERE session_id = ? ORDER BY created_at, id", (sid,)
        ).fetchall()
    finally:
        conn.close()
    return [json.loads(row[0]) for row in rows]


# --------------------------------------------------------------------------- manual


@pytest.mark.asyncio
async def test_manual_server_compaction_makes_no_summary_request_and_is_replayed_exactly(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW_BASH)
    sid = await history_with_tools(baton, llm, workspace)
    previous = llm.model_requests[-1]
    model_calls = len(llm.model_requests)

    record = await baton.request("baton/session/compact", {"sessionId": sid})

    # One compaction_trigger call, shaped like a normal step; no summary request at all.
    assert len(llm.model_requests) == model_calls
    [call] = llm.compact_requests
    assert call.route == "responses" and call.compaction_trigger and call.stream
    assert call.instructions == previous.instructions  # unchanged: the prompt cache holds
    assert call.tool_names == previous.tool_names
    assert call.get("context_management") is None
    assert "read notes.txt, then list missing-dir" in call.input_text()
    [artifact] = llm.compactions
    assert artifact.trigger == "trigger"

    assert record["trigger"] == "manual" and record["strategy"] == "server"
    assert record.get("summary") is None
    assert record["ledger"]["filesRead"] == ["notes.txt"]
    assert record["tokensAfter"] < record["tokensBefore"]
    assert baton.updates(sid, "compaction_started") == [
        {"kind": "compaction_started", "trigger": "manual", "strategy": "server"}
    ]

    llm.add(text("Third answer."))
    await baton.prompt(sid, "third question")
    req = llm.model_requests[-1]
    llm.assert_replayed(artifact, req)
    # The compacted window first, exactly as returned; then Baton's ledger; then new input.
    assert req.items[0] == without_id(artifact.item)
    assert "<baton:ledger>" in req.texts("user")[0]
    assert req.last_user_text() == "third question"
    assert "alpha line" not in req.input_text()
    assert "second question" not in req.input_text()
    assert req.compact_threshold == math.floor(0.8 * DEFAULT_WINDOW)

    info = await context(baton, sid)
    assert info["serverArtifact"] is True
    assert info["items"][0]["kind"] in ("system", "instructions")
    assert "checkpoint" in [i["kind"] for i in info["items"]]

    # The artifact is never sent to a client: not in load, records or any notification.
    loaded = await baton.load(sid)
    assert {p["type"] for m in loaded["messages"] for p in m["parts"]} <= PART_TYPES
    assert "enc_cmp" not in json.dumps(loaded)
    assert "enc_cmp" not in json.dumps(await records(baton, sid))
    assert "enc_cmp" not in json.dumps(baton.notifications)

    # Stored with its identity and the message it covers.
    [view] = stored_views(workspace, sid)
    [entry] = view["serverWindow"]
    assert entry["item"] == artifact.item
    assert entry["identity"] == {
        "provider": "openai",
        "model": "gpt-5.1",
        "baseUrl": llm.base_url,
        "authKind": "api_key",
    }
    second_answer = next(
        m for m in loaded["messages"] if any(p.get("text") == "Second answer." for p in m["parts"])
    )
    assert entry["coversThrough"] == second_answer["id"]


@pytest.mark.asyncio
async def test_the_chain_survives_a_restart_and_is_replayed_byte_for_byte(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW_BASH)
    sid = await history_with_tools(baton, llm, workspace)
    await baton.request("baton/session/compact", {"sessionId": sid})
    [artifact] = llm.compactions
    await stop_client(baton)

    again = await start_baton(settings=ALLOW_BASH)
    llm.add(text("after restart"))
    assert (await again.prompt(sid, "still there?"))["stopReason"] == "end_turn"
    llm.assert_replayed(artifact, llm.model_requests[-1])
    assert (await context(again, sid))["serverArtifact"] is True


@pytest.mark.asyncio
async def test_manual_instructions_go_into_the_compaction_calls_instructions(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session()
    llm.add(text("hello"))
    await baton.prompt(sid, "hi")
    record = await baton.request(
        "baton/session/compact", {"sessionId": sid, "instructions": "Keep the port number"}
    )
    [call] = llm.compact_requests
    assert "Keep the port number" in (call.instructions or "")
    assert any("instructions" in note for note in record["notes"])


@pytest.mark.asyncio
async def test_overflow_compacts_on_the_server_and_retries(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session()
    llm.add(text("first answer"))
    await baton.prompt(sid, "first")
    llm.add(overflow())
    llm.add(text("answered after compaction"))
    result = await baton.prompt(sid, "second")
    assert result["stopReason"] == "end_turn"
    assert baton.updates(sid, "compaction_started") == [
        {"kind": "compaction_started", "trigger": "overflow", "strategy": "server"}
    ]
    [call] = llm.compact_requests
    assert "first" in call.texts("user") and "second" not in call.texts("user")
    retry = llm.model_requests[-1]
    llm.assert_replayed(request=retry)
    # The person's message, then the mode said again (the compacted chain may speak of
    # another mode): appended after it, never in place of it.
    *_, question, mode_note = retry.texts("user")
    assert question == "second" and mode_note.startswith("[mode: build]")
    assert not [r for r in llm.model_requests if is_summary_request(r)]


# --------------------------------------------------------------------------- automatic


@pytest.mark.asyncio
async def test_context_management_is_sent_and_the_streamed_item_is_recorded(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(settings={"contextWindow": 50_000})
    sid = await baton.new_session()
    llm.add(text("first answer"))
    await baton.prompt(sid, "first question")
    assert llm.model_requests[-1]["context_management"] == [
        {"type": "compaction", "compact_threshold": 40_000}
    ]

    llm.add(compaction(), text("second answer"))
    assert (await baton.prompt(sid, "second question"))["stopReason"] == "end_turn"
    [artifact] = llm.compactions
    assert baton.updates(sid, "compaction_started") == [
        {"kind": "compaction_started", "trigger": "auto", "strategy": "server"}
    ]
    [finished] = baton.updates(sid, "compaction_finished")
    record = finished["compaction"]
    assert record["trigger"] == "auto" and record["strategy"] == "server"
    assert record.get("summary") is None
    assert any("in-stream" in note for note in record["notes"])
    assert record["tokensBefore"] > 0 and record["ledger"] is not None
    loaded = await baton.load(sid)
    step = next(
        m for m in loaded["messages"] if any(p.get("text") == "second answer" for p in m["parts"])
    )
    assert record["firstKeptMessageId"] == step["id"]
    assert "enc_cmp" not in json.dumps(loaded)

    llm.add(text("third answer"))
    await baton.prompt(sid, "third question")
    req = llm.model_requests[-1]
    llm.assert_replayed(artifact, req)
    assert req.items[0] == without_id(artifact.item)
    assert len(req.compaction_items()) == 1  # the copy inside the step is not sent twice
    # Everything before the compaction item left the request (docs/compaction.md).
    assert "first question" not in req.input_text()
    assert "second question" not in req.input_text()
    assert "second answer" in req.input_text()
    assert req.last_user_text() == "third question"
    assert (await context(baton, sid))["serverArtifact"] is True


@pytest.mark.asyncio
async def test_the_fake_server_compacts_past_the_threshold_and_baton_follows(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(settings={"contextWindow": 20_000})
    sid = await baton.new_session()
    # A low usage report makes Baton count low, so its own safety net stays quiet and the
    # server's threshold (16,000 by the fake's estimate) is what a big prompt crosses.
    llm.add(text("small"), usage(input=1))
    await baton.prompt(sid, "warm up")
    big = "lorem ipsum dolor sit amet " * 3_000  # about 20,000 tokens for the fake
    llm.add(text("read it"))
    await baton.prompt(sid, big)
    crossed = llm.model_requests[-1]
    assert crossed.tokens > 16_000 and crossed.compact_threshold == 16_000
    [artifact] = llm.compactions
    assert artifact.trigger == "auto"
    assert not baton.updates(sid, "compaction_failed")
    [finished] = baton.updates(sid, "compaction_finished")
    assert finished["compaction"]["strategy"] == "server"

    llm.add(text("done"))
    await baton.prompt(sid, "next")
    req = llm.model_requests[-1]
    llm.assert_replayed(artifact, req)
    assert "lorem ipsum" not in req.input_text()
    assert req.tokens < 2_000


@pytest.mark.asyncio
async def test_the_local_trigger_is_a_safety_net_above_the_server_threshold(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    for settings, sends, threshold in (
        ({}, True, 108_800),  # 0.85 × 128,000: above the server's 102,400
        ({"compaction": {"strategy": "native"}}, False, 95_200),  # 0.85 × (128,000 − 16,000)
        ({"compaction": {"auto": False}}, False, 95_200),
    ):
        baton = await start_baton(settings={"contextWindow": 128_000, **settings})
        sid = await baton.new_session()
        llm.add(text("ok"))
        await baton.prompt(sid, "hello")
        req = llm.model_requests[-1]
        info = await context(baton, sid)
        assert info["threshold"] == threshold, settings
        if sends:
            assert req.compact_threshold == 102_400
            assert info["threshold"] > req.compact_threshold
        else:
            assert req.get("context_management") is None, settings
        await stop_client(baton)


# --------------------------------------------------------------------------- fallback


@pytest.mark.asyncio
async def test_a_failed_compaction_call_falls_back_to_native(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = lambda _: {"outcome": {"optionId": "allow_once"}}
    sid = await history_with_tools(baton, llm, workspace)
    llm.add_compact(error(400, "compaction is not available for this model"))
    llm.add(text(FULL_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert len(llm.compact_requests) == 1
    assert is_summary_request(llm.model_requests[-1])
    assert record["strategy"] == "native" and record["summary"] == FULL_SUMMARY
    assert any(
        "compaction call failed" in n and "fell back to native" in n for n in record["notes"]
    )
    assert baton.updates(sid, "compaction_started")[0]["strategy"] == "server"
    assert not baton.updates(sid, "compaction_failed")

    llm.add(text("after fallback"))
    await baton.prompt(sid, "go on")
    req = llm.model_requests[-1]
    never_sent_artifacts([req])
    assert FULL_SUMMARY in req.input_text()
    assert (await context(baton, sid))["serverArtifact"] is False


@pytest.mark.asyncio
async def test_an_answer_without_a_compaction_item_falls_back_to_native(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session()
    llm.add(text("hello"))
    await baton.prompt(sid, "hi")
    llm.add_compact(text("I would rather not"))
    llm.add(text(FULL_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["strategy"] == "native"
    assert any("no compaction item" in note for note in record["notes"])


@pytest.mark.asyncio
async def test_native_after_a_server_chain_summarises_the_local_history_behind_it(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = lambda _: {"outcome": {"optionId": "allow_once"}}
    sid = await history_with_tools(baton, llm, workspace)
    await baton.request("baton/session/compact", {"sessionId": sid})
    llm.add(text("later answer"))
    await baton.prompt(sid, "later question")
    llm.add_compact(error(400, "compaction failed"))
    llm.add(text(FULL_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["strategy"] == "native"
    summary_request = llm.model_requests[-1]
    assert is_summary_request(summary_request)
    # What the artifact covered is summarised from the local history, never lost.
    assert "read notes.txt, then list missing-dir" in summary_request.input_text()
    never_sent_artifacts([summary_request])
    # The newest messages stay verbatim (the kept part is a share of the history).
    llm.add(text("next"))
    await baton.prompt(sid, "next question")
    assert "later question" in llm.model_requests[-1].input_text()


# --------------------------------------------------------------------------- other providers


@pytest.mark.asyncio
async def test_openai_compatible_never_calls_the_compact_endpoint(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    for strategy in ("server", "auto"):
        baton = await start_baton(
            settings={
                "provider": "openai-compatible",
                "model": "gpt-fake",
                "baseUrl": llm.base_url,
                "permissions": {"bash": "allow"},
                "compaction": {"strategy": strategy},
            }
        )
        sid = await history_with_tools(baton, llm, workspace)
        llm.add(text(FULL_SUMMARY))
        record = await baton.request("baton/session/compact", {"sessionId": sid})
        assert record["strategy"] == "native"
        assert record["summary"] == FULL_SUMMARY
        if strategy == "server":
            assert any("only available with the openai provider" in n for n in record["notes"])
        await stop_client(baton)
    assert llm.compact_requests == []
    assert {r.route for r in llm.model_requests} == {"chat.completions"}
    assert not any(r.get("context_management") for r in llm.model_requests)


# --------------------------------------------------------------------------- transitions


async def chain(baton: BatonClient, llm: FakeLLM, workspace: Path) -> tuple[str, Any]:
    """A session whose view is a server chain made by gpt-5.1 at the fake."""
    baton.permission_policy = lambda _: {"outcome": {"optionId": "allow_once"}}
    sid = await history_with_tools(baton, llm, workspace)
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["strategy"] == "server"
    [artifact] = llm.compactions
    return sid, artifact


@pytest.mark.asyncio
async def test_same_provider_model_and_route_reuse_the_chain(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid, artifact = await chain(baton, llm, workspace)
    # Pinning the very model the chain was made with changes nothing.
    await baton.request("baton/session/setModel", {"sessionId": sid, "model": "gpt-5.1"})
    llm.add(text("same model"))
    await baton.prompt(sid, "again")
    llm.assert_replayed(artifact, llm.model_requests[-1])
    assert len(await records(baton, sid)) == 1


@pytest.mark.asyncio
async def test_another_openai_model_drops_the_chain_and_compacts_natively_once(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid, artifact = await chain(baton, llm, workspace)
    seen = len(llm.requests)
    result = await baton.request(
        "baton/session/setModel", {"sessionId": sid, "model": "gpt-fake-mini"}
    )
    assert result == {"provider": "openai", "model": "gpt-fake-mini"}
    # Lazily: nothing happens until a request is made for the new model.
    assert len(llm.requests) == seen
    assert len(await records(baton, sid)) == 1
    assert (await context(baton, sid))["serverArtifact"] is False

    llm.add(text("hello from mini"))
    assert (await baton.prompt(sid, "after switch"))["stopReason"] == "end_turn"
    # The local history fits the new model once old outputs are pruned, so the native
    # compaction needed no summary: the model sees the history the artifact stood for.
    [turn_request] = llm.requests[seen:]
    never_sent_artifacts([turn_request])
    assert turn_request.model == "gpt-fake-mini"
    assert "read notes.txt, then list missing-dir" in turn_request.input_text()
    assert turn_request.compact_threshold is not None  # a fresh chain can start here
    listed = await records(baton, sid)
    assert [(r["trigger"], r["strategy"]) for r in listed] == [
        ("manual", "server"),
        ("model_switch", "native"),
    ]
    assert any("never sent to openai gpt-fake-mini" in n for n in listed[1]["notes"])
    assert baton.updates(sid, "compaction_started")[-1] == {
        "kind": "compaction_started",
        "trigger": "model_switch",
        "strategy": "native",
    }

    # Once: the next prompt compacts nothing; nor does going back to the first model,
    # whose chain was dropped (the native view is portable).
    llm.add(text("again"))
    await baton.prompt(sid, "again")
    await baton.request("baton/session/setModel", {"sessionId": sid, "model": "gpt-5.1"})
    llm.add(text("back"))
    await baton.prompt(sid, "back to the first model")
    never_sent_artifacts(llm.requests[seen:])
    assert artifact not in llm.replayed(llm.model_requests[-1])
    assert len(await records(baton, sid)) == 2
    assert len(llm.compact_requests) == 1


@pytest.mark.asyncio
async def test_a_smaller_model_gets_a_native_summary_of_the_history_behind_the_chain(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session()
    llm.add(text("noted"))
    await baton.prompt(sid, "remember the port 8431. " + "filler text here. " * 25_000)
    llm.add(text("ok"))
    await baton.prompt(sid, "short follow-up")
    await baton.request("baton/session/compact", {"sessionId": sid})
    # gpt-4o has a 128k window: the ~110k-token history behind the chain does not fit.
    await baton.request("baton/session/setModel", {"sessionId": sid, "model": "gpt-4o"})
    seen = len(llm.requests)
    llm.add(text(FULL_SUMMARY))
    llm.add(text("hello from 4o"))
    assert (await baton.prompt(sid, "after switch"))["stopReason"] == "end_turn"
    summary_request, turn_request = llm.requests[seen:]
    never_sent_artifacts([summary_request, turn_request])
    assert is_summary_request(summary_request) and summary_request.model == "gpt-4o"
    assert "remember the port 8431" in summary_request.input_text()
    assert FULL_SUMMARY in turn_request.input_text()
    # The person's huge message is shown cut to its head (their words, the port), the
    # rest one recall away (the person's messages are never summarised away).
    assert "remember the port 8431" in turn_request.input_text()
    assert turn_request.input_text().count("filler text") < 100
    last = (await records(baton, sid))[-1]
    assert (last["trigger"], last["strategy"], last["summary"]) == (
        "model_switch",
        "native",
        FULL_SUMMARY,
    )
    assert last["tokensBefore"] > 100_000 > last["tokensAfter"]


@pytest.mark.asyncio
async def test_openai_to_another_provider_never_shows_it_the_artifact(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid, _ = await chain(baton, llm, workspace)
    seen = len(llm.requests)
    result = await baton.request(
        "baton/session/setModel",
        {"sessionId": sid, "provider": "openai-compatible", "model": "gpt-fake"},
    )
    assert result["provider"] == "openai-compatible"
    llm.add(text(FULL_SUMMARY))
    llm.add(text("hello from chat"))
    assert (await baton.prompt(sid, "after switch"))["stopReason"] == "end_turn"
    after = llm.requests[seen:]
    assert {r.route for r in after} == {"chat.completions"}
    never_sent_artifacts(after)
    assert "read notes.txt, then list missing-dir" in after[0].input_text()
    assert [(r["trigger"], r["strategy"]) for r in await records(baton, sid)][-1] == (
        "model_switch",
        "native",
    )
    assert len(llm.compact_requests) == 1


@pytest.mark.asyncio
async def test_another_provider_to_openai_starts_a_fresh_chain_from_local_state(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session()
    await baton.request(
        "baton/session/setModel",
        {"sessionId": sid, "provider": "openai-compatible", "model": "gpt-fake"},
    )
    llm.add(text("chat answer"))
    # Long enough that a summary makes the view smaller (a tiny one has nothing to compact).
    await baton.prompt(sid, "a question for the chat model " + "with context " * 200)
    llm.add(text(FULL_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["strategy"] == "native"

    await baton.request(
        "baton/session/setModel", {"sessionId": sid, "provider": "openai", "model": "gpt-fake"}
    )
    llm.add(text("responses answer"))
    await baton.prompt(sid, "now on openai")
    req = llm.model_requests[-1]
    assert req.route == "responses"
    assert FULL_SUMMARY in req.input_text() and req.compact_threshold is not None
    never_sent_artifacts([req])
    assert len(await records(baton, sid)) == 1  # no model_switch compaction was needed

    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["strategy"] == "server"
    [call] = llm.compact_requests
    assert FULL_SUMMARY in call.input_text()  # the chain starts from the local state
    llm.add(text("chained"))
    await baton.prompt(sid, "chained?")
    llm.assert_replayed(request=llm.model_requests[-1])


StartPlain = Callable[..., Awaitable[BatonClient]]


@pytest_asyncio.fixture
async def start_plain(workspace: Path, home: Path) -> AsyncIterator[StartPlain]:
    """A server whose base URL comes only from the person's config file, so a test can
    change the route while it runs (the environment would outrank the file; a workspace
    file's baseUrl would not get the person's key)."""
    clients: list[BatonClient] = []

    async def start(settings: dict[str, Any] | None = None) -> BatonClient:
        env = server_env(home, {"OPENAI_API_KEY": TEST_KEY}, None)
        client = await start_client(workspace, env, settings=settings)
        clients.append(client)
        return client

    yield start
    for client in clients:
        await stop_client(client)


@pytest.mark.asyncio
async def test_a_route_change_in_the_config_drops_the_chain(
    start_plain: StartPlain, llm: FakeLLM, workspace: Path, home: Path
) -> None:
    config = home / "config" / "baton" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'baseUrl = "{llm.base_url}"\n')
    baton = await start_plain(ALLOW_BASH)
    sid, artifact = await chain(baton, llm, workspace)
    assert (await context(baton, sid))["serverArtifact"] is True

    # The same fake under another name: another route, so another identity.
    other = llm.base_url.replace("127.0.0.1", "localhost")
    config.write_text(f'baseUrl = "{other}"  # moved\n')
    assert (await context(baton, sid))["serverArtifact"] is False
    seen = len(llm.requests)
    llm.add(text(FULL_SUMMARY))
    llm.add(text("via another route"))
    assert (await baton.prompt(sid, "still working?"))["stopReason"] == "end_turn"
    never_sent_artifacts(llm.requests[seen:])
    assert [r["trigger"] for r in await records(baton, sid)] == ["manual", "model_switch"]

    # And back to the first route: its chain was dropped, nothing is replayed or redone.
    config.write_text(f'baseUrl = "{llm.base_url}"\n# back\n')
    llm.add(text("first route again"))
    await baton.prompt(sid, "back")
    never_sent_artifacts(llm.requests[seen:])
    assert len(await records(baton, sid)) == 2
    assert artifact not in llm.replayed(llm.model_requests[-1])


@pytest.mark.asyncio
async def test_a_manual_compaction_after_a_switch_works_from_the_local_history(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid, _ = await chain(baton, llm, workspace)
    await baton.request("baton/session/setModel", {"sessionId": sid, "model": "gpt-fake-mini"})
    llm.add(text(FULL_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    # The foreign chain cannot be compacted further on this model: native, from local state.
    assert (record["trigger"], record["strategy"]) == ("manual", "native")
    summary_request = llm.model_requests[-1]
    assert is_summary_request(summary_request) and summary_request.model == "gpt-fake-mini"
    assert "read notes.txt, then list missing-dir" in summary_request.input_text()
    never_sent_artifacts([summary_request])
    assert len(llm.compact_requests) == 1
    llm.add(text("after"))
    await baton.prompt(sid, "after")
    assert [r["trigger"] for r in await records(baton, sid)] == ["manual", "manual"]
