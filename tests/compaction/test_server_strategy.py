"""The server strategy's seams in process: hooks around it, thresholds, stored windows.

The end-to-end behaviour is in tests/e2e/test_server_compaction.py; this checks what a
real server process cannot show without the hooks feature: that pre-compact and
compacting hooks still run around a server compaction, where their context goes, and
what the record says when one does not apply.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from baton import protocol as p
from baton.agent.compact_request import CompactRequest
from baton.agent.events import NullChannel
from baton.agent.state import SessionState, View
from baton.app import App, build_app
from baton.compaction.engine import view_from_json, view_to_json
from baton.compaction.summary import SECTIONS
from baton.config import Settings
from baton.providers.artifacts import (
    ServerArtifact,
    foreign_artifacts,
    server_thresholds,
    window_from_json,
)
from baton.providers.base import Native, OpaqueItem, ProviderIdentity, Route
from tests.fake_llm import FakeLLM, compaction, error, text

ME = ProviderIdentity("openai", "gpt-5.1", Route("https://api.openai.com/v1", "api_key"))
ITEM = {"type": "compaction", "id": "cmp_1", "encrypted_content": "ENC==", "created_by": None}


class StubHooks:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.compacted_records: list[p.CompactionRecord] = []
        self.compacted_seen = asyncio.Event()

    async def pre_compact(
        self, state: SessionState, request: CompactRequest
    ) -> list[p.PreCompactOutcome]:
        self.calls.append(f"pre_compact:{request.trigger}")
        return [p.PreCompactOutcome(hook="archive", ran=True)]

    async def compacting(
        self, state: SessionState, request: CompactRequest
    ) -> tuple[list[str], str | None]:
        self.calls.append(f"compacting:{request.trigger}")
        return ["the API listens on port 8431"], "Write a haiku instead."

    async def compacted(self, state: SessionState, record: p.CompactionRecord) -> None:
        self.compacted_records.append(record)
        self.compacted_seen.set()


@pytest_asyncio.fixture
async def app(llm: FakeLLM, workspace: Path, home: Path) -> AsyncIterator[App]:
    environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": llm.base_url}
    built = build_app(workspace, NullChannel(), environ=environ)
    yield built
    await built.close()


@pytest.mark.asyncio
async def test_hooks_run_around_a_server_compaction_and_their_context_is_sent(
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
    assert "the API listens on port 8431" in (call.instructions or "")
    assert "haiku" not in call.input_text()
    assert any("replacement prompt is not applicable" in n for n in record.notes)
    assert hooks.compacted_records == [record]


@pytest.mark.asyncio
async def test_an_in_stream_compaction_skips_the_hooks_it_cannot_wait_for(
    app: App, llm: FakeLLM
) -> None:
    hooks = StubHooks()
    app.compaction.engine.hooks = hooks
    sid = app.sessions.new_session(p.SessionNewParams()).session_id
    llm.add(compaction(), text("hello"))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="hi"))
    # The compacted hook runs as a task of its own.
    await asyncio.wait_for(hooks.compacted_seen.wait(), 5)
    [record] = app.compaction.compactions(sid).compactions
    assert (record.trigger, record.strategy) == ("auto", "server")
    assert hooks.calls == []  # the server had already compacted: nothing to run before it
    assert any("not applicable" in n for n in record.notes)
    assert hooks.compacted_records == [record]


def test_thresholds_keep_the_local_safety_net_above_the_server_threshold() -> None:
    settings = Settings()
    for window in (16_000, 64_000, 128_000, 200_000, 400_000, 1_047_576):
        reserve = min(16_000, int(0.2 * window))
        usable = window - reserve
        local = int(0.85 * usable)
        server, safety = server_thresholds(settings, ME, window, usable, local)
        assert server == int(0.8 * window)
        assert safety >= local and safety <= usable
        assert safety >= server, window
        if reserve < 0.15 * window:
            assert safety > server, window
    other = ProviderIdentity("openai-compatible", "gpt-5.1", ME.route)
    assert server_thresholds(settings, other, 128_000, 112_000, 95_200) == (None, 95_200)
    native = Settings.model_validate({"compaction": {"strategy": "native"}})
    assert server_thresholds(native, ME, 128_000, 112_000, 95_200) == (None, 95_200)


def test_a_view_round_trips_its_server_window_with_identity() -> None:
    view = View(
        compaction_id="cmp_x",
        first_kept_seq=7,
        server_window=[ServerArtifact(Native(ME, dict(ITEM)), covers_through="msg_6")],
        ledger_text="ledger",
    )
    again = view_from_json(view_to_json(view))
    assert again.server_window == view.server_window
    [item] = again.server_window or []
    assert isinstance(item, ServerArtifact) and item.native.identity == ME
    assert item.native.item == ITEM and item.covers_through == "msg_6"
    assert view_from_json(view_to_json(View())).server_window is None
    assert window_from_json(None) is None


def test_a_chain_is_foreign_to_any_other_model_or_route() -> None:
    window = [OpaqueItem(Native(ME, ITEM))]
    assert not foreign_artifacts(window, ME)
    for other in (
        ProviderIdentity("openai", "gpt-5-mini", ME.route),
        ProviderIdentity("openai", "gpt-5.1", Route("https://proxy.example/v1", "api_key")),
        ProviderIdentity("openai-compatible", "gpt-5.1", ME.route),
        None,
    ):
        assert foreign_artifacts(window, other)
    assert not foreign_artifacts(None, None) and not foreign_artifacts([], ME)


@pytest.mark.asyncio
async def test_a_failed_call_behind_a_chain_falls_back_to_native_from_the_local_history(
    app: App, llm: FakeLLM
) -> None:
    sid = app.sessions.new_session(p.SessionNewParams()).session_id
    for turn in range(4):
        llm.add(text(f"answer {turn}: " + "the API listens on port 8431. " * 60))
        await app.sessions.prompt(p.PromptParams(session_id=sid, text=f"which port? {turn}"))
    llm.add(compaction(), text("noted"))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="remember it"))
    assert app.sessions.state(sid).view.server_window is not None
    llm.add_compact(error(400, "compaction is not available for this model"))
    summary = "\n\n".join(f"## {name}\nthe port is 8431" for name in SECTIONS)
    llm.add(text(summary))

    record = await app.compaction.compact(sid)

    assert record.committed and record.strategy == "native", record.notes
    request = llm.model_requests[-1]
    assert request.is_summary
    # The chain covered the first exchange; the native summary reads it from the store.
    assert "which port? 0" in request.input_text()
    # Measured against that history, not the chain's guessed size (a few tokens).
    assert record.tokens_before > 1_000 > record.tokens_after
    notes = "\n".join(record.notes)
    assert "compaction call failed" in notes and "fell back to native compaction" in notes
    assert "model call(s), max_output_tokens" in notes  # the native summary's own note
    assert app.sessions.state(sid).view.server_window is None
