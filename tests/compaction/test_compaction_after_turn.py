"""A compaction asked for during a turn runs when the turn ends, and nothing runs beside it.

In process (build_app on the fake LLM): the window that matters is one event-loop
iteration, between the turn task's end and the start of the compaction it left
pending, which a real server process cannot be made to hit on purpose.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from baton import protocol as p
from baton.agent.events import NullChannel
from baton.app import App, build_app
from baton.errors import SessionBusy
from tests.fake_llm import FakeLLM, stall, text


@pytest_asyncio.fixture
async def app(llm: FakeLLM, workspace: Path, home: Path) -> AsyncIterator[App]:
    environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": llm.base_url}
    built = build_app(
        workspace,
        NullChannel(),
        environ=environ,
        client_settings={"compaction": {"strategy": "native"}},
    )
    yield built
    await built.close()


@pytest.mark.asyncio
async def test_a_prompt_right_after_a_turn_waits_for_the_compaction_it_left(
    app: App, llm: FakeLLM
) -> None:
    sid = app.sessions.new_session(p.SessionNewParams()).session_id
    llm.add(text("first answer"))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="hi"))
    state = app.sessions.state(sid)

    llm.add(text("still"), stall(30, after=1))
    llm.add(text("## Goals\n- answer"))  # the summary
    turn = app.sessions.start_turn(state, "go on")
    await llm.wait_for_requests_async(2)
    # Asked during the turn: it waits for the turn to end.
    compaction = asyncio.create_task(app.compaction.compact(sid))
    while not state.pending_compactions:
        await asyncio.sleep(0)

    # Right after the turn's own end (its done-callbacks run in order: the service's
    # first, which schedules the pending compaction), before that compaction starts.
    outcome: list[str] = []

    def prompt_now(_: asyncio.Task[p.PromptResult]) -> None:
        try:
            app.sessions.start_turn(state, "and now?")
        except SessionBusy:
            outcome.append("busy")
        else:
            outcome.append("started")

    turn.add_done_callback(prompt_now)
    llm.release()
    await turn
    record = await compaction

    assert outcome == ["busy"]
    assert record.trigger == "manual"
    assert not state.compacting and not state.busy
    assert not app.sessions.leases.held


class ReactingChannel(NullChannel):
    """A face in process that answers `turn_ended` by starting the next prompt as soon as
    the loop lets it (as a queue of prompts sent during the turn would)."""

    def __init__(self) -> None:
        self.react: Callable[[str], None] | None = None

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        if isinstance(update, p.TurnEnded) and self.react is not None:
            react, self.react = self.react, None
            asyncio.get_running_loop().call_soon(react, session_id)


@pytest.mark.asyncio
async def test_a_face_reacting_to_turn_ended_cannot_start_beside_a_pending_compaction(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    channel = ReactingChannel()
    environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": llm.base_url}
    app = build_app(
        workspace,
        channel,
        environ=environ,
        client_settings={"compaction": {"strategy": "native"}},
    )
    try:
        sid = app.sessions.new_session(p.SessionNewParams()).session_id
        llm.add(text("first answer"))
        await app.sessions.prompt(p.PromptParams(session_id=sid, text="hi"))
        state = app.sessions.state(sid)

        llm.add(text("still"), stall(30, after=1))
        llm.add(text("## Goals\n- answer"))  # the summary
        turn = app.sessions.start_turn(state, "go on")
        await llm.wait_for_requests_async(2)
        compaction = asyncio.create_task(app.compaction.compact(sid))
        while not state.pending_compactions:
            await asyncio.sleep(0)

        seen: list[tuple[str, bool, bool]] = []

        def prompt_now(session_id: str) -> None:
            # Scheduled while the turn sent turn_ended: runs after the turn task's end,
            # before or after its end callback, whichever the loop gets to first.
            try:
                app.sessions.start_turn(state, "and now?")
            except SessionBusy:
                seen.append(("busy", state.busy, state.compacting))
            else:
                seen.append(("started", state.busy, state.compacting))

        channel.react = prompt_now
        llm.release()
        await turn
        record = await compaction
        assert seen and seen[0][0] == "busy"
        assert record.trigger == "manual"
        assert not state.compacting and not state.busy
        assert not app.sessions.leases.held
    finally:
        await app.close()
