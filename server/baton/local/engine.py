"""The embedded llama.cpp server (xllamacpp) that the `local` provider talks to.

`xllamacpp.Server(params)` loads a GGUF file and serves llama.cpp's
OpenAI-compatible HTTP API on a loopback port inside this process
(docs/local-model.md, "How it works"). Baton then speaks Chat Completions to it like to
any other server, so the request shaping, streaming, retries and text
tool-call parsing are the ones `openai-compatible` already has.

Lifecycle:

* **Lazy.** Nothing loads until the first model request: a Baton server that
  never uses the local provider never pays the 3-5 s load or the ~1.5 GB of
  memory.
* **Once per process.** Engines are shared by every session and provider
  with the same `EngineConfig` (model file, threads, context size); a
  thread lock makes concurrent first requests load the model once. A thread
  lock rather than an asyncio one because the load itself runs in a worker
  thread, and because an engine can outlive one event loop (tests).
* **One model in memory.** Starting an engine stops every other engine with
  no request in flight (a settings change leaves the old provider cached, and
  its model would otherwise stay loaded for nothing).
* **Stopped** when the last provider using it is closed (server shutdown),
  and at interpreter exit as a backstop. Dropping the `Server` object stops
  its HTTP threads and frees the model.

Sampling (temperature, top_p, seed, max_tokens) is sent per request, so it is
not part of the engine's identity and changing it needs no reload.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from platformdirs import user_cache_path

from baton.config import LocalSettings
from baton.errors import ConfigError, ProviderError
from baton.local.model_files import DEFAULT_MODEL, looks_installed, model_path

log = logging.getLogger(__name__)

INSTALL_EXTRA = 'pip install "baton[local]"'
GGUF_MAGIC = b"GGUF"
PROMPT_BATCH = 256


def require_xllamacpp() -> None:
    """Raise a `ConfigError` naming the fix when the optional dependency is missing."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise ConfigError(
            "the local provider needs the optional dependency xllamacpp, which is not installed: "
            f"{INSTALL_EXTRA} (or pip install xllamacpp==2026.10.11549)",
            cause="local_model",
        )


def resolve_model_path(local: LocalSettings) -> Path:
    """The GGUF file the local provider loads: `local.modelPath`, else the installed default.

    Raises `ConfigError` naming the fix when there is none.
    """
    if local.model_path:
        path = Path(local.model_path).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"local.modelPath is {local.model_path!r}, which is not a file; point it at a "
                "GGUF model, or remove it to use the default model (`baton model install`)",
                cause="local_model",
            )
        return path.resolve()
    path = model_path(DEFAULT_MODEL)
    if not looks_installed(path, DEFAULT_MODEL):
        state = "is incomplete" if path.exists() else "is not installed"
        raise ConfigError(
            f"the local model ({DEFAULT_MODEL.title}) {state}: run `baton model install` "
            f"(a one-time ~{DEFAULT_MODEL.size // 1_000_000:,} MB download into {path.parent}), "
            'set local.modelPath to a GGUF file, or use provider = "openai" with OPENAI_API_KEY'
        )
    return path


def available_cpus() -> int:
    """The CPUs this process may run on (a container's cpuset, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """Generation threads: half the CPUs, at least one.

    Generating is memory-bound, so more threads add little, and threads that
    wait on each other collapse when anything else wants a core: on this
    project's 2-core machine, busy with other work, two threads generated at
    1-2 tok/s and one at 12-16 (`bench/local_model.py`).
    """
    return max(1, available_cpus() // 2)


@dataclass(frozen=True)
class EngineConfig:
    """What a loaded engine is: requests with an equal config share it."""

    model_path: Path
    threads: int  # generating
    batch_threads: int  # reading the prompt (compute-bound: every CPU helps)
    context_size: int
    # Where llama.cpp saves and restores slots (local/prompt_cache.py); None: not at all.
    prompt_cache_dir: Path | None = None

    @staticmethod
    def from_settings(local: LocalSettings) -> EngineConfig:
        return EngineConfig(
            model_path=resolve_model_path(local),
            threads=local.threads or default_threads(),
            batch_threads=local.batch_threads or available_cpus(),
            context_size=local.context_size,
            prompt_cache_dir=prompt_cache_dir() if local.prompt_cache else None,
        )


def prompt_cache_dir() -> Path:
    """Saved prompt caches: the user cache dir (`~/.cache/baton` on Linux)."""
    return user_cache_path("baton", appauthor=False) / "prompt-cache"


class ServerHandle(Protocol):
    """The part of `xllamacpp.Server` Baton uses."""

    @property
    def listening_address(self) -> str: ...


Loader = Callable[[EngineConfig], ServerHandle]


def load_xllamacpp(config: EngineConfig) -> ServerHandle:
    """Start `xllamacpp.Server` for `config` (blocks while the model loads)."""
    xlc: Any = importlib.import_module("xllamacpp")
    params = xlc.CommonParams()
    params.model.path = str(config.model_path)
    params.n_ctx = config.context_size
    params.n_parallel = 1  # the whole context for one request; others queue (CPU-bound anyway)
    params.cpuparams.n_threads = config.threads
    params.cpuparams_batch.n_threads = config.batch_threads
    params.hostnames = ["127.0.0.1"]  # loopback only: the server has no authentication
    params.port = 0  # an ephemeral port; read back from listening_address
    params.use_jinja = True  # the model's own chat template, with tools
    params.cache_prompt = True  # agent steps share a long prefix; reuse its KV cache
    # The prompt is read in batches of this many tokens and its progress reported after
    # each: 256 tokens is a report every few seconds on a CPU, at no measurable cost.
    params.n_batch = PROMPT_BATCH
    params.verbosity = 0 if log.getEffectiveLevel() > logging.DEBUG else 3
    if config.prompt_cache_dir is not None:
        config.prompt_cache_dir.mkdir(parents=True, exist_ok=True)
        # llama.cpp joins this and the file name as strings: the separator must be there.
        params.slot_save_path = f"{config.prompt_cache_dir}{os.sep}"
    server: ServerHandle = xlc.Server(params)
    return server


class Engine:
    """One embedded llama.cpp server for one `EngineConfig`."""

    def __init__(self, config: EngineConfig, loader: Loader, manager: EngineManager) -> None:
        self.config = config
        self._loader = loader
        self._manager = manager
        self._lock = threading.Lock()
        self._server: ServerHandle | None = None
        self._base_url: str | None = None
        self._active = 0  # requests in flight
        self.load_seconds: float | None = None

    def __repr__(self) -> str:
        return f"Engine({self.config.model_path.name}, running={self.running})"

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def active(self) -> int:
        return self._active

    def start(self) -> str:
        """The server's base URL (`http://127.0.0.1:PORT`), loading the model first if needed.

        Blocking and thread-safe: call it from a worker thread.
        """
        with self._lock:
            if self._base_url is not None:
                return self._base_url
            self._manager.stop_idle(except_for=self)
            _check_gguf(self.config.model_path)
            log.info(
                "loading the local model %s (threads %d/%d, context %d)",
                self.config.model_path,
                self.config.threads,
                self.config.batch_threads,
                self.config.context_size,
            )
            started = time.monotonic()
            try:
                server = self._loader(self.config)
                base_url = str(server.listening_address).rstrip("/")
            except Exception as exc:
                raise ProviderError(
                    f"the local model could not be loaded from {self.config.model_path}: {exc}. "
                    "Check the file (`baton model install --force` re-installs the default "
                    "model), or lower local.contextSize if memory is short",
                    cause="local_model",
                ) from exc
            self.load_seconds = time.monotonic() - started
            self._server, self._base_url = server, base_url
            log.info("local model ready at %s in %.1f s", base_url, self.load_seconds)
            return base_url

    @contextmanager
    def lease(self) -> Iterator[None]:
        """Marks a request in flight, so `stop_idle` leaves this engine alone meanwhile."""
        with self._manager.lock:
            self._active += 1
        try:
            yield
        finally:
            with self._manager.lock:
                self._active -= 1

    def stop(self) -> None:
        """Stop the server and free the model (blocking; a no-op when not running)."""
        with self._lock:
            self._stop_locked()

    def stop_if_idle(self) -> None:
        """Stop unless a request is in flight, or another thread is starting or stopping it.

        Never waits for this engine's lock: two engines starting at once each
        try to stop the other, and waiting there could deadlock.
        """
        if not self._lock.acquire(blocking=False):
            return
        try:
            with self._manager.lock:
                if self._active:
                    return
            self._stop_locked()
        finally:
            self._lock.release()

    def _stop_locked(self) -> None:
        server, self._server, self._base_url = self._server, None, None
        if server is not None:
            log.info("stopping the local model %s", self.config.model_path.name)
            # xllamacpp stops its HTTP threads and frees the model when the object goes.
            del server


class EngineManager:
    """Every engine of this process, keyed by config; see the module docstring."""

    def __init__(self, loader: Loader = load_xllamacpp) -> None:
        self.loader = loader
        self.lock = threading.Lock()
        self._engines: dict[EngineConfig, Engine] = {}
        self._users: dict[EngineConfig, int] = {}

    def acquire(self, config: EngineConfig) -> Engine:
        """The engine for `config` (not started), counted as used until `release`."""
        with self.lock:
            engine = self._engines.get(config)
            if engine is None:
                engine = Engine(config, self.loader, self)
                self._engines[config] = engine
            self._users[config] = self._users.get(config, 0) + 1
            return engine

    def release(self, engine: Engine) -> None:
        """One user fewer; the last one stops the engine (blocking)."""
        with self.lock:
            left = self._users.get(engine.config, 0) - 1
            if left > 0:
                self._users[engine.config] = left
                return
            self._users.pop(engine.config, None)
            if self._engines.get(engine.config) is engine:
                del self._engines[engine.config]
        engine.stop()

    def stop_idle(self, *, except_for: Engine) -> None:
        for engine in self.engines():
            if engine is not except_for and engine.running:
                engine.stop_if_idle()

    def engines(self) -> list[Engine]:
        with self.lock:
            return list(self._engines.values())

    def stop_all(self) -> None:
        for engine in self.engines():
            engine.stop()


def _check_gguf(path: Path) -> None:
    """A readable GGUF file, or a `ProviderError` that says so (llama.cpp only says 'failed')."""
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ProviderError(
            f"the local model file {path} cannot be read: {exc.strerror}", cause="local_model"
        ) from exc
    if magic != GGUF_MAGIC:
        raise ProviderError(
            f"{path} is not a GGUF model file; point local.modelPath at a .gguf file "
            "or run `baton model install --force`",
            cause="local_model",
        )


_manager: EngineManager | None = None
_manager_lock = threading.Lock()


def default_manager() -> EngineManager:
    """The process-wide manager; its engines are stopped at interpreter exit."""
    global _manager
    with _manager_lock:
        if _manager is None:
            _manager = EngineManager()
            atexit.register(_manager.stop_all)
        return _manager
