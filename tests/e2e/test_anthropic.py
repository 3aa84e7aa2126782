"""Claude end to end: the real server with `provider = "anthropic"` against the fake
Messages API (which refuses what the API refuses: altered signatures or compaction
blocks, unpaired tool results, more than four breakpoints).

Covers a plan→approve→build session with its prompt cache, a child, thinking over a
tool loop, a manual server compaction (on-demand), an in-stream one, a local one, and a
model switch after a server compaction.
"""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from baton.store.db import workspace_db_path
from tests.e2e.test_cache_prefix import plan_and_build
from tests.e2e.test_compaction import history_with_tools
from tests.e2e.test_delegation import task
from tests.e2e.test_plans import turn_ended
from tests.fake_llm import FakeLLM, compaction, overflow, reasoning, text, tool_call
from tests.fake_llm.messages_api import flatten
from tests.fake_llm.records import RecordedRequest
from tests.harness import BatonClient, server_env, start_client, stop_client

CLAUDE_KEY = "sk-ant-e2e-0123456789abcdef"
ALLOW = {"permissions": {"write": "allow", "bash": "allow"}}
StartClaude = Callable[..., Awaitable[BatonClient]]


@pytest.fixture
def llm() -> Any:
    with FakeLLM(models=("claude-sonnet-4-6", "claude-haiku-4-5"), api_key=CLAUDE_KEY) as fake:
        yield fake


@pytest_asyncio.fixture
async def start_claude(llm: FakeLLM, workspace: Path, home: Path) -> AsyncIterator[StartClaude]:
    clients: list[BatonClient] = []

    async def start(settings: dict[str, Any] | None = None, *, key: bool = True) -> BatonClient:
        env = {"ANTHROPIC_BASE_URL": llm.url}
        if key:
            env["ANTHROPIC_API_KEY"] = CLAUDE_KEY
        # Nothing but the Anthropic key: Baton picks Claude by itself.
        client = await start_client(workspace, server_env(home, env, None), settings=settings)
        clients.append(client)
        return client

    yield start
    for client in clients:
        await stop_client(client)


def cached_share(request: RecordedRequest) -> float:
    usage = request_usage(request)
    total = (
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )
    return usage["cache_read_input_tokens"] / total


def request_usage(request: RecordedRequest) -> dict[str, int]:
    """What the fake reported for `request` (its prompt-cache simulation)."""
    assert request.status == 200, request.rejected
    return request.anthropic_usage


def all_accepted(llm: FakeLLM) -> None:
    assert [r.rejected for r in llm.requests if r.status != 200] == []


async def records(baton: BatonClient, sid: str) -> list[dict[str, Any]]:
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    return listed["compactions"]  # type: ignore[no-any-return]


@pytest.mark.asyncio
async def test_plan_approve_build_reads_the_earlier_requests_from_the_cache(
    start_claude: StartClaude, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "README.md").write_text("A login page is wanted.\n")
    baton = await start_claude(ALLOW)
    marks = await plan_and_build(baton, llm, workspace)
    all_accepted(llm)
    requests = llm.model_requests
    assert all(r.route == "messages" and r.model == "claude-sonnet-4-6" for r in requests)
    assert requests[0].header("authorization") == f"Bearer {CLAUDE_KEY}"
    usages = [request_usage(r) for r in requests]
    assert usages[0]["cache_read_input_tokens"] == 0
    # Each request reads from the cache everything the one before it sent: in plan,
    # across approval (the first build request) and in build.
    for before, after in itertools.pairwise(usages):
        sent_before = before["cache_read_input_tokens"] + before["cache_creation_input_tokens"]
        assert abs(after["cache_read_input_tokens"] - sent_before) <= 1  # rounding
        assert after["input_tokens"] == 0  # the rest was written for the next one
    read = sum(u["cache_read_input_tokens"] for u in usages[1:])
    total = sum(u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] for u in usages[1:])
    assert read / total >= 0.9
    for request in requests:
        marked = [
            b
            for b in (*request.tools, *request["system"], *request.blocks())
            if b.get("cache_control")
        ]
        assert 2 <= len(marked) <= 4
    # Baton recorded what the cache served.
    context = await baton.request("baton/session/context", {"sessionId": marks["sid"]})
    served = sum(request_usage(r)["cache_read_input_tokens"] for r in requests)
    assert context["cachedTokens"] == served


@pytest.mark.asyncio
async def test_a_childs_first_request_and_the_parent_after_it_read_from_the_cache(
    start_claude: StartClaude, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("# TODO: one\n")
    baton = await start_claude(ALLOW)
    sid = await baton.new_session()
    llm.add(text("Hello."))
    await baton.prompt(sid, "hi")
    for n in range(2):
        llm.add(task("explore", f"Find every TODO ({n}).", "find the TODOs"))
        llm.add(tool_call("grep", {"pattern": "TODO"}))
        llm.add(text("One TODO: app.py:1."))
        llm.add(text("The child found one TODO."))
        await baton.prompt(sid, f"look for TODOs with a child ({n})")
    all_accepted(llm)
    requests = llm.model_requests
    first_child, second_child = requests[2], requests[6]
    assert "Find every TODO (0)." in first_child.input_text()
    # The second child's first request reads the tools and instructions the first wrote.
    assert cached_share(second_child) > 0.5
    # The parent, back from its child, reads its own prefix.
    assert cached_share(requests[4]) >= 0.9


@pytest.mark.asyncio
async def test_thinking_over_a_tool_loop_replays_every_signature(
    start_claude: StartClaude, llm: FakeLLM, workspace: Path
) -> None:
    for n in range(5):
        (workspace / f"a{n}.txt").write_text(f"alpha {n}\n")
    baton = await start_claude({**ALLOW, "anthropic": {"thinkingBudget": 2048}})
    sid = await baton.new_session()
    for step in range(5):
        llm.add(reasoning(f"thought {step}"), tool_call("read", {"path": f"a{step}.txt"}))
    llm.add(reasoning("done thinking"), text("Read it five times."))
    result = await baton.prompt(sid, "read the five files")
    assert result["stopReason"] == "end_turn", [
        n for n in baton.notifications if "rror" in json.dumps(n)
    ]
    all_accepted(llm)
    last = llm.model_requests[-1]
    assert last["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    thinking = last.blocks("thinking")
    assert [b["thinking"] for b in thinking] == [f"thought {n}" for n in range(5)]
    # The stream's signatures, sent back unchanged (the fake checks each against its text).
    assert len({b["signature"] for b in thinking}) == 5
    # Thoughts reach the client as thoughts, never the signature.
    assert "sig_" not in json.dumps(baton.notifications)
    assert "sig_" not in json.dumps(await baton.load(sid))


@pytest.mark.asyncio
async def test_manual_compaction_on_the_server_then_a_model_switch_sends_no_block(
    start_claude: StartClaude, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_claude(ALLOW)
    sid = await history_with_tools(baton, llm, workspace)
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert (record["trigger"], record["strategy"]) == ("manual", "server")
    assert record.get("summary") is None
    [call] = llm.compact_requests
    assert call["compaction"] == {"type": "summarize"}
    assert "compact-2026-09-04" in (call.header("anthropic-beta") or "")
    [block] = call.anthropic_compactions

    llm.add(text("Third answer."))
    await baton.prompt(sid, "third question")
    after = llm.model_requests[-1]
    all_accepted(llm)
    first = {k: v for k, v in after.blocks()[0].items() if k != "cache_control"}
    assert first == block  # replayed first, unchanged
    assert after.items[0]["role"] == "assistant"
    user_text = after.input_text()
    assert "<baton:ledger>" in user_text  # the ledger still reaches the model
    assert "alpha line" not in user_text and "second question" not in user_text
    assert "signature" not in json.dumps(await baton.load(sid))
    [view] = stored_views(workspace, sid)
    [entry] = view["serverWindow"]
    assert entry["item"] == block
    assert entry["identity"] == {
        "provider": "anthropic",
        "model": "claude-sonnet-4-6",
        "baseUrl": llm.url,
        "authKind": "api_key",
    }

    # Another Claude model: no compaction block; the local history instead, once.
    await baton.request("baton/session/setModel", {"sessionId": sid, "model": "claude-haiku-4-5"})
    llm.add(text("from haiku"))
    await baton.prompt(sid, "after the switch")
    switched = llm.model_requests[-1]
    assert switched.model == "claude-haiku-4-5"
    assert switched.blocks("compaction") == []
    assert "read notes.txt, then list missing-dir" in switched.input_text()
    listed = await records(baton, sid)
    assert [(r["trigger"], r["strategy"]) for r in listed] == [
        ("manual", "server"),
        ("model_switch", "native"),
    ]
    all_accepted(llm)


@pytest.mark.asyncio
async def test_an_in_stream_compaction_is_recorded_and_the_plan_still_reaches_the_model(
    start_claude: StartClaude, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_claude(ALLOW)
    sid = await baton.new_session(mode="plan")
    llm.add(tool_call("plan_write", {"content": "# Plan\n\n- [ ] step one\n"}))
    llm.add(text("Drafted."))
    await baton.prompt(sid, "plan it")
    first = llm.model_requests[0]
    edits = first["context_management"]["edits"]
    assert edits == [
        {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 160_000}}
    ]
    assert "compact-2026-01-12" in (first.header("anthropic-beta") or "")

    llm.add(compaction("They planned step one."), text("Still here."))
    await baton.prompt(sid, "anything else?")
    listed = await records(baton, sid)
    assert [(r["trigger"], r["strategy"]) for r in listed] == [("auto", "server")]
    llm.add(text("Next."))
    await baton.prompt(sid, "go on")
    after = llm.model_requests[-1]
    all_accepted(llm)
    assert after.blocks()[0]["type"] == "compaction"
    assert "<baton:plan>" in after.input_text()
    assert "step one" in after.input_text()


@pytest.mark.asyncio
async def test_the_first_request_after_a_local_compaction_reads_tools_and_instructions(
    start_claude: StartClaude, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_claude({**ALLOW, "compaction": {"strategy": "native"}})
    sid = await history_with_tools(baton, llm, workspace)
    llm.on_request(lambda req: text("## Summary\nread notes") if req.is_summary else None)
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    llm.on_request(lambda req: None)
    assert record["strategy"] == "native"
    llm.add(text("After."))
    await baton.prompt(sid, "after the compaction")
    all_accepted(llm)
    summary = next(r for r in llm.model_requests if r.is_summary)
    after = llm.model_requests[-1]
    usage = request_usage(after)
    # Tools and instructions came from the cache; the summary onwards was written.
    assert usage["cache_read_input_tokens"] > 0 and usage["cache_creation_input_tokens"] > 0
    assert summary.get("tool_choice") == {"type": "none"}
    assert llm.compact_requests == []


def stored_views(workspace: Path, sid: str) -> list[dict[str, Any]]:
    conn = sqlite3.connect(workspace_db_path(workspace))
    try:
        rows = conn.execute(
            "SELECT view FROM compactions WHERE session_id = ? ORDER BY created_at, id", (sid,)
        ).fetchall()
    finally:
        conn.close()
    return [json.loads(row[0]) for row in rows]


def prefix_tokens(request: RecordedRequest) -> int:
    """Tokens of the request's tools and system prompt, in the fake's estimate."""
    flat = flatten(request.body)
    return math.ceil(flat.chars[flat.first_message - 1] / 4)


@pytest.mark.asyncio
async def test_a_fresh_context_approval_reads_the_tools_and_instructions_from_the_cache(
    start_claude: StartClaude, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_claude(ALLOW)
    sid = await baton.new_session(mode="plan")
    llm.add(tool_call("plan_write", {"content": "# Plan\n\n- [ ] write a.txt\n"}))
    llm.add(tool_call("plan_exit", {}))
    await baton.prompt(sid, "plan it")
    llm.add(tool_call("write", {"path": "a.txt", "content": "a\n"}))
    llm.add(text("Written."))
    approved = await baton.request(
        "baton/plan/approve", {"sessionId": sid, "start": True, "fresh": True}
    )
    assert approved
    await turn_ended(baton, sid, 2)
    all_accepted(llm)
    last_plan, first_build = llm.model_requests[1], llm.model_requests[2]
    assert first_build.blocks("tool_use") == []  # a fresh context: no planning steps
    usage = request_usage(first_build)
    assert usage["cache_read_input_tokens"] >= prefix_tokens(first_build) - 1
    assert first_build.tools == last_plan.tools


@pytest.mark.asyncio
async def test_the_model_list_is_claudes_with_their_windows(
    start_claude: StartClaude, llm: FakeLLM
) -> None:
    baton = await start_claude()
    listed = await baton.request("baton/models/list", {})
    assert listed["provider"] == "anthropic" and listed["source"] == "provider"
    assert listed["models"] == [
        {"id": "claude-haiku-4-5", "contextWindow": 200_000},
        {"id": "claude-sonnet-4-6", "contextWindow": 200_000},
    ]
    assert listed["current"] == "claude-sonnet-4-6"
    [asked] = [r for r in llm.requests if r.route == "models"]
    assert asked.header("anthropic-version") and asked.api_key == CLAUDE_KEY


@pytest.mark.asyncio
async def test_a_prompt_too_long_compacts_on_claudes_server_and_retries(
    start_claude: StartClaude, llm: FakeLLM
) -> None:
    baton = await start_claude()
    sid = await baton.new_session()
    llm.add(text("first answer"))
    await baton.prompt(sid, "first")
    llm.add(overflow(window=200_000))
    llm.add(text("answered after compaction"))
    result = await baton.prompt(sid, "second")
    assert result["stopReason"] == "end_turn"
    assert baton.updates(sid, "compaction_started") == [
        {"kind": "compaction_started", "trigger": "overflow", "strategy": "server"}
    ]
    [call] = llm.compact_requests
    assert call["compaction"] == {"type": "summarize"}
    [block] = call.anthropic_compactions
    retry = llm.model_requests[-1]
    assert retry.status == 200, retry.rejected
    assert {k: v for k, v in retry.blocks()[0].items() if k != "cache_control"} == block
    assert "second" in retry.input_text()


@pytest.mark.asyncio
async def test_a_key_the_editor_sets_is_used_for_claude_and_never_stored(
    start_claude: StartClaude, llm: FakeLLM, home: Path, workspace: Path
) -> None:
    baton = await start_claude({"provider": "anthropic"}, key=False)
    sid = await baton.new_session()
    result = await baton.prompt(sid, "hello")
    assert result["stopReason"] == "error" and "no Anthropic API key" in result["error"]
    assert llm.requests == []
    await baton.request("baton/auth/set", {"provider": "anthropic", "apiKey": CLAUDE_KEY})
    llm.add(text("Hi."))
    assert (await baton.prompt(sid, "hello again"))["stopReason"] == "end_turn"
    assert llm.model_requests[-1].api_key == CLAUDE_KEY
    stored = [f for f in [*home.rglob("*"), *workspace.rglob("*")] if f.is_file()]
    assert not any(CLAUDE_KEY.encode() in f.read_bytes() for f in stored)
