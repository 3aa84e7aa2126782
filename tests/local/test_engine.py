"""The embedded engine's lifecycle, with a fake loader in place of xllamacpp."""

from __future__ import annotations

import gc
import os
import threading
import time
import weakref
from pathlib import Path

import pytest

from baton.config import LocalSettings
from baton.errors import ConfigError, ProviderError
from baton.local import engine as eng
from baton.local.model_files import DEFAULT_MODEL, model_path


class FakeServer:
    def __init__(self, port: int) -> None:
        self.listening_address = f"http://127.0.0.1:{port}/"


class FakeLoader:
    def __init__(self, delay: float = 0.0, error: Exception | None = None) -> None:
        self.delay = delay
        self.error = error
        self.loaded: list[eng.EngineConfig] = []
        self.servers: list[weakref.ref[FakeServer]] = []
        self._lock = threading.Lock()

    def __call__(self, config: eng.EngineConfig) -> FakeServer:
        time.sleep(self.delay)
        if self.error is not None:
            raise self.error
        with self._lock:
            self.loaded.append(config)
            server = FakeServer(40000 + len(self.loaded))
        self.servers.append(weakref.ref(server))
        return server

    def alive(self) -> int:
        gc.collect()
        return sum(1 for ref in self.servers if ref() is not None)


def _gguf(tmp_path: Path, name: str = "m.gguf") -> Path:
    path = tmp_path / name
    path.write_bytes(b"GGUF" + b"\0" * 60)
    return path


def _config(path: Path, context: int = 2048) -> eng.EngineConfig:
    return eng.EngineConfig(model_path=path, threads=1, batch_threads=2, context_size=context)


def test_lazy_and_loaded_once_for_concurrent_first_requests(tmp_path: Path) -> None:
    loader = FakeLoader(delay=0.2)
    manager = eng.EngineManager(loader)
    engine = manager.acquire(_config(_gguf(tmp_path)))
    assert loader.loaded == [] and not engine.running  # nothing loads before first use
    urls: list[str] = []
    threads = [threading.Thread(target=lambda: urls.append(engine.start())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loader.loaded) == 1
    assert urls == ["http://127.0.0.1:40001"] * 4
    assert engine.load_seconds is not None and engine.load_seconds >= 0.2


def test_shared_by_equal_configs_and_stopped_with_the_last_user(tmp_path: Path) -> None:
    loader = FakeLoader()
    manager = eng.EngineManager(loader)
    config = _config(_gguf(tmp_path))
    first, second = manager.acquire(config), manager.acquire(config)
    assert first is second
    first.start()
    manager.release(first)
    assert first.running and loader.alive() == 1
    manager.release(second)
    assert not first.running and loader.alive() == 0  # the server object is gone
    assert manager.engines() == []


def test_starting_another_model_stops_an_idle_one(tmp_path: Path) -> None:
    loader = FakeLoader()
    manager = eng.EngineManager(loader)
    a = manager.acquire(_config(_gguf(tmp_path, "a.gguf")))
    b = manager.acquire(_config(_gguf(tmp_path, "b.gguf")))
    a.start()
    b.start()
    assert not a.running and b.running and loader.alive() == 1
    # ...but not one with a request in flight.
    with b.lease():
        a.start()
        assert a.running and b.running
    # A stopped engine loads again when it is used again.
    assert len(loader.loaded) == 3


def test_stop_all(tmp_path: Path) -> None:
    loader = FakeLoader()
    manager = eng.EngineManager(loader)
    engine = manager.acquire(_config(_gguf(tmp_path)))
    engine.start()
    manager.stop_all()
    assert not engine.running and loader.alive() == 0


def test_a_load_failure_names_the_file_and_the_fix(tmp_path: Path) -> None:
    path = _gguf(tmp_path)
    manager = eng.EngineManager(FakeLoader(error=RuntimeError("Failed to init server")))
    engine = manager.acquire(_config(path))
    with pytest.raises(ProviderError) as info:
        engine.start()
    assert str(path) in info.value.message and "Failed to init server" in info.value.message
    assert "baton model install --force" in info.value.message
    assert not engine.running


def test_a_file_that_is_not_gguf_is_refused_before_loading(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_text("<html>not a model</html>")
    loader = FakeLoader()
    engine = eng.EngineManager(loader).acquire(_config(path))
    with pytest.raises(ProviderError, match="not a GGUF model file"):
        engine.start()
    assert loader.loaded == []


def test_model_path_from_settings(tmp_path: Path) -> None:
    path = _gguf(tmp_path)
    assert eng.resolve_model_path(LocalSettings(model_path=str(path))) == path.resolve()
    with pytest.raises(ConfigError, match=r"local\.modelPath is .*not a file"):
        eng.resolve_model_path(LocalSettings(model_path=str(tmp_path / "missing.gguf")))


def test_default_model_not_installed_says_how_to_install(home: Path) -> None:
    with pytest.raises(ConfigError) as info:
        eng.resolve_model_path(LocalSettings())
    message = info.value.message
    assert "is not installed" in message and "baton model install" in message
    assert "local.modelPath" in message and "OPENAI_API_KEY" in message


def test_default_model_installed(home: Path) -> None:
    path = model_path(DEFAULT_MODEL)
    path.parent.mkdir(parents=True)
    with path.open("wb") as handle:
        handle.truncate(DEFAULT_MODEL.size)  # sparse: the right size costs no disk
    assert eng.resolve_model_path(LocalSettings()) == path
    with path.open("r+b") as handle:
        handle.truncate(1000)
    with pytest.raises(ConfigError, match="is incomplete"):
        eng.resolve_model_path(LocalSettings())


def test_missing_optional_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eng.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match='pip install "baton\\[local\\]"'):
        eng.require_xllamacpp()


def test_threads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert eng.available_cpus() == 4 and eng.default_threads() == 2
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert eng.default_threads() == 1
    path = _gguf(tmp_path)
    config = eng.EngineConfig.from_settings(LocalSettings(model_path=str(path), context_size=4096))
    assert (config.threads, config.batch_threads, config.context_size) == (1, 1, 4096)
    config = eng.EngineConfig.from_settings(
        LocalSettings(model_path=str(path), threads=3, batch_threads=5)
    )
    assert (config.threads, config.batch_threads) == (3, 5)
