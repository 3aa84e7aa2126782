"""Shared fixtures: a scripted model server, a temp workspace and home, the real Baton server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.fake_llm import FakeLLM
from tests.harness import TEST_KEY, BatonClient, server_env, start_client, stop_client


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway home: nothing a test does touches the real one."""
    h = tmp_path / "home"
    h.mkdir()
    for var, sub in (
        ("XDG_DATA_HOME", "data"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
    ):
        monkeypatch.setenv(var, str(h / sub))
    monkeypatch.setenv("HOME", str(h))
    return h


StartBaton = Callable[..., Awaitable[BatonClient]]


@pytest_asyncio.fixture
async def start_baton(llm: FakeLLM, workspace: Path, home: Path) -> AsyncIterator[StartBaton]:
    """Start (and later stop) real server processes; call again to restart on the same store.

    The client declares the workspace trusted unless `trusted=False` (Restricted Mode) or
    `trusted=None` (no declaration: the trust record decides)."""
    clients: list[BatonClient] = []

    async def start(
        *,
        settings: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        api_key: str | None = TEST_KEY,
        progress: bool = True,
        trusted: Any = True,
        offers: dict[str, bool] | None = None,
    ) -> BatonClient:
        llm_env = {"OPENAI_BASE_URL": llm.base_url}
        if api_key:
            llm_env["OPENAI_API_KEY"] = api_key
        client = await start_client(
            workspace,
            server_env(home, llm_env, env),
            settings=settings,
            progress=progress,
            trusted=trusted,
            offers=offers,
        )
        clients.append(client)
        return client

    yield start
    for client in clients:
        await stop_client(client)


@pytest_asyncio.fixture
async def baton(start_baton: StartBaton) -> BatonClient:
    """A running server, OpenAI provider pointed at the fake, permissions asked of the test."""
    return await start_baton()
