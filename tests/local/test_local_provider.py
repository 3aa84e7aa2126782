"""`LocalProvider`: Chat Completions to the embedded engine, with a fake engine and HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from baton.auth import Credentials
from baton.config import Settings
from baton.errors import ConfigError
from baton.local import engine as eng
from baton.providers import local as local_module
from baton.providers.base import (
    AssistantText,
    Finished,
    ItemDone,
    ModelRequest,
    Progress,
    ProviderIdentity,
    Route,
    ToolCall,
    ToolOutput,
    ToolSpec,
    UserText,
)
from baton.providers.factory import ProviderRegistry
from baton.providers.local import LocalProvider, without_echoed_calls
from tests.local.test_engine import FakeLoader
from tests.providers._support import chat_sse, sse_response

IDENTITY = ProviderIdentity("local", "qwen2.5-coder-1.5b-instruct", Route("local", "none"))
READ = ToolSpec(
    "read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
)
FENCED_READ = '```json\n{"name": "read", "arguments": {"path": "notes.txt"}}\n```'


def _settings(tmp_path: Path, **local: Any) -> Settings:
    model = tmp_path / "m.gguf"
    tmp_path.mkdir(exist_ok=True)
    model.write_bytes(b"GGUF" + b"\0" * 60)
    local.setdefault("promptCache", False)  # the tests of the saved prompt turn it on
    return Settings.model_validate(
        {"provider": "local", "local": {"modelPath": str(model), **local}}
    )


class Server:
    """Answers chat completions with scripted SSE and records the requests."""

    def __init__(self, *answers: bytes) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return sse_response(self.answers.pop(0))

    def body(self, index: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[index].content)  # type: ignore[no-any-return]


def _chunk(content: str, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


def _usage() -> dict[str, Any]:
    return {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}}


def _provider(
    tmp_path: Path, server: Server, loader: FakeLoader | None = None, **local: Any
) -> tuple[LocalProvider, eng.EngineManager, FakeLoader]:
    loader = loader or FakeLoader()
    manager = eng.EngineManager(loader)
    provider = LocalProvider(
        settings=_settings(tmp_path, **local),
        identity=IDENTITY,
        manager=manager,
        transport=httpx.MockTransport(server),
    )
    return provider, manager, loader


async def _collect(provider: LocalProvider, request: ModelRequest) -> list[Any]:
    return [event async for event in provider.stream(request)]


@pytest.mark.asyncio
async def test_streams_from_the_engine_with_the_local_sampling(tmp_path: Path) -> None:
    server = Server(chat_sse([_chunk("Hi"), _chunk(" there", "stop"), _usage()]))
    provider, _, loader = _provider(
        tmp_path, server, temperature=0.0, topP=0.5, seed=7, maxTokens=64, contextSize=4096
    )
    assert loader.loaded == []  # lazy
    events = await _collect(provider, ModelRequest("be brief", [UserText("hello")]))
    assert [e.item.text for e in events if isinstance(e, ItemDone)] == ["Hi there"]
    assert isinstance(events[-1], Finished) and events[-1].reason == "stop"
    assert str(server.requests[0].url) == "http://127.0.0.1:40001/v1/chat/completions"
    body = server.body()
    assert body["temperature"] == 0.0 and body["top_p"] == 0.5 and body["seed"] == 7
    assert body["max_tokens"] == 64 and body["stream"] is True
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert loader.loaded[0].context_size == 4096
    assert provider.identity.route == Route("local", "none")  # no port in the identity
    await provider.aclose()


@pytest.mark.asyncio
async def test_loading_and_prompt_reading_are_reported_before_the_answer(tmp_path: Path) -> None:
    progress = {"total": 600, "cache": 100, "processed": 356, "time_ms": 3000}
    reading = {"choices": [{"index": 0, "delta": {"content": None}}], "prompt_progress": progress}
    server = Server(
        chat_sse([reading, _chunk("Hi", "stop")]), chat_sse([reading, _chunk("Hi", "stop")])
    )
    provider, _, _ = _provider(tmp_path, server)
    first = await _collect(provider, ModelRequest("", [UserText("x")]))
    assert first[:2] == [Progress("loading"), Progress("reading", done=356, total=600, cached=100)]
    assert server.body()["return_progress"] is True
    again = await _collect(provider, ModelRequest("", [UserText("x")]))
    assert again[0] == Progress("reading", done=356, total=600, cached=100), "loaded once"
    await provider.aclose()


@pytest.mark.asyncio
async def test_max_tokens_caps_every_request(tmp_path: Path) -> None:
    server = Server(chat_sse([_chunk("a", "stop")]), chat_sse([_chunk("b", "stop")]))
    provider, _, _ = _provider(tmp_path, server, maxTokens=100)
    await _collect(provider, ModelRequest("", [UserText("x")], max_output_tokens=4000))
    await _collect(provider, ModelRequest("", [UserText("x")], max_output_tokens=30))
    assert [server.body(i)["max_tokens"] for i in (0, 1)] == [100, 30]
    await provider.aclose()


@pytest.mark.asyncio
async def test_calls_written_as_text_become_tool_calls(tmp_path: Path) -> None:
    server = Server(chat_sse([_chunk(FENCED_READ, "stop")]))
    provider, _, _ = _provider(tmp_path, server)
    events = await _collect(provider, ModelRequest("", [UserText("read it")], tools=[READ]))
    calls = [e.item for e in events if isinstance(e, ItemDone) and isinstance(e.item, ToolCall)]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("read", {"path": "notes.txt"})]
    assert not [e for e in events if isinstance(e, ItemDone) and isinstance(e.item, AssistantText)]
    assert events[-1] == Finished("tool_calls")
    await provider.aclose()


@pytest.mark.asyncio
async def test_echoed_call_text_is_not_sent_back(tmp_path: Path) -> None:
    server = Server(chat_sse([_chunk("The word is marmalade.", "stop")]))
    provider, _, _ = _provider(tmp_path, server)
    items = [
        UserText("read notes.txt"),
        ToolCall("call_1", "read", '{"path": "notes.txt"}'),
        AssistantText(FENCED_READ),  # what the loop stored from the stream
        ToolOutput("call_1", "The secret word is: marmalade"),
    ]
    await _collect(provider, ModelRequest("", items, tools=[READ]))
    assistant = [m for m in server.body()["messages"] if m["role"] == "assistant"]
    assert assistant == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "notes.txt"}'},
                }
            ],
        }
    ]
    await provider.aclose()


def test_without_echoed_calls_keeps_everything_else() -> None:
    call = ToolCall("call_1", "read", '{"path": "notes.txt"}')
    other = AssistantText('```json\n{"name": "read", "arguments": {"path": "other.txt"}}\n```')
    mixed = AssistantText("Let me look.\n\n" + FENCED_READ)
    plain = AssistantText("Done: the word is marmalade.")
    request = ModelRequest("", [UserText("q"), call, other, mixed, plain], tools=[READ])
    out = without_echoed_calls(request).items
    # A call that was never made stays as written; only the echo itself is removed.
    assert out[2] is other
    assert out[3] == AssistantText("Let me look.")
    assert out[4] is plain
    untouched = ModelRequest("", [UserText("q"), plain])
    assert without_echoed_calls(untouched) is untouched


@pytest.mark.asyncio
async def test_engine_shared_and_released_with_the_last_provider(tmp_path: Path) -> None:
    loader = FakeLoader()
    server = Server(chat_sse([_chunk("a", "stop")]), chat_sse([_chunk("b", "stop")]))
    one, manager, _ = _provider(tmp_path, server, loader)
    two = LocalProvider(
        settings=_settings(tmp_path),
        identity=IDENTITY,
        manager=manager,
        transport=httpx.MockTransport(server),
    )
    await _collect(one, ModelRequest("", [UserText("x")]))
    await _collect(two, ModelRequest("", [UserText("y")]))
    assert len(loader.loaded) == 1
    await one.aclose()
    assert loader.alive() == 1
    await two.aclose()
    assert loader.alive() == 0
    with pytest.raises(RuntimeError, match="closed"):
        await _collect(one, ModelRequest("", [UserText("z")]))


@pytest.mark.asyncio
async def test_start_loads_ahead_of_the_first_request(tmp_path: Path) -> None:
    provider, _, loader = _provider(tmp_path, Server())
    assert await provider.start() == "http://127.0.0.1:40001"
    assert len(loader.loaded) == 1
    await provider.aclose()


def test_factory_builds_it_and_reports_a_missing_model(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_module, "require_xllamacpp", lambda: None)
    registry = ProviderRegistry()
    settings = Settings.model_validate({"provider": "local"})
    with pytest.raises(ConfigError, match="baton model install"):
        registry.get(settings, Credentials({}))


def test_factory_reports_the_missing_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eng.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match='pip install "baton\\[local\\]"'):
        ProviderRegistry().get(_settings(tmp_path), Credentials({}))


@pytest.mark.asyncio
async def test_factory_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_module, "require_xllamacpp", lambda: None)
    monkeypatch.setattr(local_module, "default_manager", lambda: eng.EngineManager(FakeLoader()))
    registry = ProviderRegistry()
    provider = registry.get(_settings(tmp_path), Credentials({}))
    assert isinstance(provider, LocalProvider)
    assert provider.identity == IDENTITY
    assert registry.get(_settings(tmp_path), Credentials({})) is provider
    await registry.aclose()
