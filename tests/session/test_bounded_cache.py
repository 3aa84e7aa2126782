"""Memory that stays flat: idle sessions beyond the cache's bound leave memory and are
read again from the store, whole; a `task` child leaves memory when its call ends.

In process (build_app on the fake model): what is in memory is seen through weak
references, which a server process does not expose (bench/working_day.py measures
the process's RSS over a long day)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from baton import protocol as p
from baton.agent.events import NullChannel
from baton.app import App, build_app
from baton.store.model import LOAD_ONLY_META
from tests.e2e.test_delegation import task
from tests.fake_llm import FakeLLM, text, usage


@pytest_asyncio.fixture
async def app(llm: FakeLLM, workspace: Path, home: Path) -> AsyncIterator[App]:
    environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": llm.base_url}
    built = build_app(workspace, NullChannel(), environ=environ)
    yield built
    await built.close()


async def ask(app: App, llm: FakeLLM, sid: str, words: str) -> None:
    llm.add(text(f"answer to {words}"))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text=words))


@pytest.mark.asyncio
async def test_idle_sessions_beyond_the_bound_leave_memory_and_come_back_whole(
    app: App, llm: FakeLLM
) -> None:
    bound = getattr(app.sessions.cache, "held", 16)
    first = app.sessions.new_session(p.SessionNewParams()).session_id
    await ask(app, llm, first, "first question")
    app.sessions.state(first).grants.in_mode("build").commands.add("make test")
    gone = weakref.ref(app.sessions.state(first))

    others = []
    for index in range(bound + 4):
        sid = app.sessions.new_session(p.SessionNewParams()).session_id
        await ask(app, llm, sid, f"question {index}")
        others.append(sid)
    gc.collect()
    assert gone() is None, "an idle session beyond the bound stayed in memory"
    assert len(app.sessions.cache._sessions) <= bound

    # Read again from the store, whole, with what the store does not keep (its grants).
    loaded = app.sessions.load(first)
    texts = [part.text for m in loaded.messages for part in m.parts if part.type == "text"]
    assert texts == ["first question", "answer to first question"]
    assert "make test" in app.sessions.state(first).grants.in_mode("build").commands
    # It can go on.
    await ask(app, llm, first, "second question")
    assert len(app.sessions.state(first).messages) == 4


@pytest.mark.asyncio
async def test_a_held_reference_is_never_doubled(app: App, llm: FakeLLM) -> None:
    sid = app.sessions.new_session(p.SessionNewParams()).session_id
    kept = app.sessions.state(sid)
    for _ in range(getattr(app.sessions.cache, "held", 16) + 2):
        app.sessions.new_session(p.SessionNewParams())
    assert app.sessions.state(sid) is kept


@pytest.mark.asyncio
async def test_a_child_leaves_memory_when_its_call_ends(app: App, llm: FakeLLM) -> None:
    parent = app.sessions.new_session(p.SessionNewParams()).session_id
    llm.add(task("explore", "Look.", "look"))
    llm.add(text("Looked."))
    llm.add(text("Done."))
    await app.sessions.prompt(p.PromptParams(session_id=parent, text="delegate"))
    (child,) = [row.id for row in app.sessions.store.children_of(parent)]
    held = app.sessions.cache._sessions
    assert child not in held and parent in held
    gc.collect()
    assert child not in getattr(app.sessions.cache, "_alive", held)
    # Nothing of it is lost: its transcript loads from the store.
    loaded = app.sessions.load(child)
    assert [m.role for m in loaded.messages] == ["user", "assistant"]


@pytest.mark.asyncio
async def test_a_message_in_memory_lets_go_of_what_only_a_load_reads(
    app: App, llm: FakeLLM
) -> None:
    """Each model request's identity and token estimates are stored with its message, for
    a loaded session's token model to learn from: in memory, committed or loaded, the
    message holds neither, and the context estimate read again from the store is the
    one the session had."""
    sid = app.sessions.new_session(p.SessionNewParams()).session_id
    for n in range(3):
        llm.add(text(f"answer {n}"), usage(input=900 + 300 * n, output=12))
        await app.sessions.prompt(p.PromptParams(session_id=sid, text=f"question {n}"))
    held = [m.meta for m in app.sessions.state(sid).messages if m.role == "assistant"]
    assert held and all(not set(LOAD_ONLY_META) & set(meta) for meta in held), held
    estimate = app.sessions.context_info(sid).tokens

    gone = weakref.ref(app.sessions.state(sid))
    for index in range(getattr(app.sessions.cache, "held", 16) + 2):
        other = app.sessions.new_session(p.SessionNewParams()).session_id
        await ask(app, llm, other, f"question {index}")
    gc.collect()
    assert gone() is None
    stored = [m.meta for m in app.sessions.cache.store.load_messages(sid) if m.role == "assistant"]
    assert all({"identity", "estimatedInput", "estimatedParts"} <= set(meta) for meta in stored)
    assert app.sessions.context_info(sid).tokens == estimate
    loaded = [m.meta for m in app.sessions.state(sid).messages if m.role == "assistant"]
    assert all(not set(LOAD_ONLY_META) & set(meta) for meta in loaded), loaded
    assert [meta["usage"]["input"] for meta in loaded] == [900, 1200, 1500]
