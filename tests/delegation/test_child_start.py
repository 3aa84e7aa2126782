"""A child whose start is refused leaves no session, and the parent's `task` result says
why. In process (build_app on the fake model): nothing a client can send makes a new
child's start refuse, so the refusal is made here, where the turn is started."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from baton import protocol as p
from baton.agent.events import NullChannel
from baton.app import App, build_app
from baton.errors import BatonError
from tests.e2e.test_delegation import task
from tests.fake_llm import FakeLLM, text


@pytest_asyncio.fixture
async def app(llm: FakeLLM, workspace: Path, home: Path) -> AsyncIterator[App]:
    environ = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": llm.base_url}
    built = build_app(workspace, NullChannel(), environ=environ)
    yield built
    await built.close()


@pytest.mark.asyncio
async def test_a_refused_child_start_leaves_no_session_and_says_why(
    app: App, llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    start_turn = app.sessions.start_turn

    def refusing(state: Any, *args: Any, **kwargs: Any) -> Any:
        if state.row.parent_id is not None:
            raise BatonError("no room for a child right now")
        return start_turn(state, *args, **kwargs)

    monkeypatch.setattr(app.sessions, "start_turn", refusing)
    parent = app.sessions.new_session(p.SessionNewParams()).session_id
    llm.add(task("explore", "Look.", "look"))
    llm.add(text("Could not delegate."))
    await app.sessions.prompt(p.PromptParams(session_id=parent, text="delegate"))

    output = next(iter(llm.model_requests[-1].tool_outputs().values()))
    assert output == "[task not started: no room for a child right now]"
    assert app.sessions.store.children_of(parent) == []
    listed = app.sessions.list_sessions().sessions
    assert [row.session_id for row in listed] == [parent]
