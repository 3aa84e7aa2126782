"""Claude's server-side compaction in process: the hooks and the record around it, as
with OpenAI's (tests/compaction/test_server_strategy.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from baton import protocol as p
from baton.agent.events import NullChannel
from baton.app import App, build_app
from tests.compaction.test_server_strategy import StubHooks
from tests.fake_llm import FakeLLM, compaction, text


@pytest_asyncio.fixture
async def app(llm: FakeLLM, workspace: Path, home: Path) -> AsyncIterator[App]:
    environ = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": llm.url}
    built = build_app(workspace, NullChannel(), environ=environ)
    yield built
    await built.close()


@pytest.mark.asyncio
async def test_pre_compact_and_compacting_hooks_run_around_claudes_compaction(
    app: App, llm: FakeLLM
) -> None:
    hooks = StubHooks()
    app.compaction.engine.hooks = hooks
    sid = app.sessions.new_session(p.SessionNewParams()).session_id
    llm.add(text("hello"))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="hi"))
    record = await app.compaction.compact(sid)

    assert hooks.calls == ["pre_compact:manual", "compacting:manual"]
    assert record.strategy == "server" and record.summary is None
    assert record.pre_compact == [p.PreCompactOutcome(hook="archive", ran=True)]
    [call] = llm.compact_requests
    assert call.route == "messages" and call["compaction"] == {"type": "summarize"}
    # The compacting hook's context goes with the request's system prompt.
    assert "the API listens on port 8431" in (call.instructions or "")
    assert hooks.compacted_records == [record]


@pytest.mark.asyncio
async def test_an_in_stream_compaction_is_recorded_and_the_compacted_hook_runs(
    app: App, llm: FakeLLM
) -> None:
    hooks = StubHooks()
    app.compaction.engine.hooks = hooks
    sid = app.sessions.new_session(p.SessionNewParams()).session_id
    llm.add(compaction("earlier: a greeting"), text("hello"))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="hi"))
    await asyncio.wait_for(hooks.compacted_seen.wait(), 5)
    [record] = app.compaction.compactions(sid).compactions
    assert (record.trigger, record.strategy) == ("auto", "server")
    assert hooks.calls == []
