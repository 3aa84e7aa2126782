"""The saved prompt: llama.cpp slots saved after a request and restored in a new process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from baton.local import engine as eng
from baton.local import prompt_cache as pc
from baton.providers.base import ModelRequest, ToolSpec, UserText
from baton.providers.local import LocalProvider
from tests.local.test_engine import FakeLoader
from tests.local.test_local_provider import IDENTITY, _chunk, _settings
from tests.providers._support import chat_sse, sse_response

READ = ToolSpec("read", "Read a file", {"type": "object", "properties": {}})


class SlotServer:
    """Chat answers plus llama.cpp's slot save/restore, writing files as llama.cpp does."""

    def __init__(self, directory: Path, *, restore_fails: bool = False) -> None:
        self.directory = directory
        self.restore_fails = restore_fails
        self.calls: list[tuple[str, str]] = []  # (action or "chat", filename or system prompt)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path == "/slots/0":
            action, name = request.url.params["action"], body["filename"]
            self.calls.append((action, name))
            if action == "save":
                (self.directory / name).write_bytes(b"kv" * 10)
                return httpx.Response(200, json={"id_slot": 0, "n_saved": 20})
            if self.restore_fails or not (self.directory / name).is_file():
                return httpx.Response(400, json={"error": {"message": "failed to restore"}})
            return httpx.Response(200, json={"id_slot": 0, "n_restored": 20})
        self.calls.append(("chat", body["messages"][0]["content"]))
        return sse_response(chat_sse([_chunk("ok", "stop")]))


def _provider(tmp_path: Path, server: SlotServer) -> LocalProvider:
    model = tmp_path / "m.gguf"
    settings = _settings(tmp_path / "unused", promptCache=True, modelPath=str(model))
    if not model.exists():  # the same file, unchanged, for every "process"
        model.write_bytes(b"GGUF" + b"\0" * 60)
    return LocalProvider(
        settings=settings,
        identity=IDENTITY,
        manager=eng.EngineManager(FakeLoader()),  # a new manager: a new process
        transport=httpx.MockTransport(server),
    )


async def _ask(provider: LocalProvider, instructions: str = "be brief") -> None:
    request = ModelRequest(instructions, [UserText("hello")], tools=[READ])
    async for _ in provider.stream(request):
        pass


def _files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.asyncio
async def test_saved_after_the_first_run_and_restored_by_the_next(
    tmp_path: Path, home: Path
) -> None:
    directory = eng.prompt_cache_dir()
    directory.mkdir(parents=True)
    server = SlotServer(directory)
    first = _provider(tmp_path, server)
    assert first.engine.config.prompt_cache_dir == directory
    await _ask(first)
    await _ask(first)  # the slot holds this prefix now: nothing to restore or save
    await first.aclose()
    [(action, part)] = [c for c in server.calls if c[0] != "chat"]
    assert action == "save" and part.endswith(".part")
    [kept] = _files(directory)
    assert kept.endswith(pc.SUFFIX) and kept.split(".")[0] == part.split(".")[0]

    server.calls.clear()
    second = _provider(tmp_path, server)
    await _ask(second)
    assert server.calls == [("restore", kept), ("chat", "be brief")], "restored before reading"

    server.calls.clear()
    await _ask(second, "other instructions")
    await second.aclose()
    assert [c[0] for c in server.calls] == ["chat", "save"], "another prefix, another file"
    assert len(_files(directory)) == 2


@pytest.mark.asyncio
async def test_a_file_that_cannot_be_restored_is_dropped(tmp_path: Path, home: Path) -> None:
    directory = eng.prompt_cache_dir()
    directory.mkdir(parents=True)
    first = _provider(tmp_path, SlotServer(directory))
    await _ask(first)
    await first.aclose()
    server = SlotServer(directory, restore_fails=True)
    second = _provider(tmp_path, server)
    await _ask(second)  # the request goes on, reading the prompt in full
    await second.aclose()
    assert [c[0] for c in server.calls] == ["restore", "chat", "save"]
    assert len(_files(directory)) == 1, "the bad file was replaced by a fresh save"


@pytest.mark.asyncio
async def test_only_the_most_recent_files_are_kept(tmp_path: Path, home: Path) -> None:
    directory = eng.prompt_cache_dir()
    directory.mkdir(parents=True)
    provider = _provider(tmp_path, SlotServer(directory))
    for n in range(pc.KEEP + 2):
        await _ask(provider, f"instructions {n}")
    await provider.aclose()
    assert len(_files(directory)) == pc.KEEP


def test_the_key_follows_the_model_file_and_the_prefix(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    tools: list[dict[str, Any]] = [{"type": "function", "function": {"name": "read"}}]
    key = pc.prefix_key(model, 8192, "system", tools)
    assert key == pc.prefix_key(model, 8192, "system", tools)
    assert key != pc.prefix_key(model, 4096, "system", tools)
    assert key != pc.prefix_key(model, 8192, "system!", tools)
    assert key != pc.prefix_key(model, 8192, "system", [])
    model.write_bytes(b"GGUF another model")
    assert key != pc.prefix_key(model, 8192, "system", tools)


def test_off_by_setting(tmp_path: Path, home: Path) -> None:
    local = _settings(tmp_path, promptCache=False).local
    assert eng.EngineConfig.from_settings(local).prompt_cache_dir is None
