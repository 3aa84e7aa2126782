"""The local model's prompt cache kept on disk, so a new process need not re-read the prefix.

Every agent step starts with the same instructions and tool list (~1,800
tokens), and on a CPU reading them takes 20-100 s. Within one process
llama.cpp reuses them (`cache_prompt`); a new `baton run` would read them
again. llama.cpp can save a slot's KV cache to a file and restore it
(`POST /slots/0?action=save|restore`, files under `slot_save_path`), so:

* before a request whose prefix the slot does not hold yet, a file saved for
  that prefix is restored into the slot; llama.cpp then reuses the longest
  common prefix of the restored tokens and the new prompt and reads only the
  rest;
* after a request whose prefix has no file yet, the slot is saved.

A file is keyed by a hash of what makes its tokens valid: the model file
(path, size, modification time), the context size, the llama.cpp runtime
version, and the prefix itself (instructions and tool definitions as sent).
The slot holds the whole first request, not only the prefix; what follows
the prefix is harmless, since only the common prefix is ever reused. Files
are ~28 KB per token for the 1.5B model (50-60 MB for a first request), so
only the `KEEP` most recently used are kept.

Everything here is best effort: a failed save or restore is logged and the
request goes on, reading the prompt as it would have without the cache.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

log = logging.getLogger(__name__)

SLOT = 0  # the engine runs one slot (n_parallel = 1)
KEEP = 4
SUFFIX = ".kv"
TIMEOUT = 60.0


def runtime_version() -> str:
    try:
        return importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def prefix_key(
    model_path: Path, context_size: int, instructions: str, tools: Sequence[dict[str, Any]]
) -> str:
    """The file name (without suffix) for a prefix on a given model and runtime."""
    try:
        st = model_path.stat()
        model = f"{model_path.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    except OSError:
        model = str(model_path)
    payload = json.dumps(
        [model, context_size, runtime_version(), instructions, list(tools)],
        ensure_ascii=False,
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


class PromptCache:
    """Saved slots of one engine, in `directory` (llama.cpp's `slot_save_path`)."""

    def __init__(self, directory: Path, client: httpx.AsyncClient) -> None:
        self.directory = directory
        self._client = client
        # The prefix key the engine's slot holds now (restored or computed), per base URL:
        # a restarted engine (another port) starts empty.
        self._holding: dict[str, str] = {}

    def path(self, key: str) -> Path:
        return self.directory / f"{key}{SUFFIX}"

    def holds(self, base_url: str, key: str) -> bool:
        return self._holding.get(base_url) == key

    async def restore(self, base_url: str, key: str) -> int | None:
        """Load the saved slot for `key`, if any; the number of tokens restored."""
        if self.holds(base_url, key):
            return None
        path = self.path(key)
        if not path.is_file():
            return None
        data = await self._post(base_url, "restore", path.name)
        if data is None:
            # A file llama.cpp cannot load (another build, damaged) is of no use again.
            path.unlink(missing_ok=True)
            return None
        os.utime(path)  # most recently used
        self._holding[base_url] = key
        restored = data.get("n_restored")
        log.info("local model: restored %s prompt tokens from %s", restored, path.name)
        return restored if isinstance(restored, int) else None

    async def save(self, base_url: str, key: str) -> None:
        """After a request with prefix `key`: save the slot unless a file already has it."""
        self._holding[base_url] = key
        path = self.path(key)
        if path.is_file():
            return
        # Written under a name of its own, then renamed: another process restoring the
        # same prefix never sees half a file.
        part = self.directory / f"{key}.{os.getpid()}.part"
        data = await self._post(base_url, "save", part.name)
        if data is None:
            part.unlink(missing_ok=True)
            return
        try:
            os.replace(part, path)
        except OSError as exc:
            log.info("local model: could not keep the saved prompt: %s", exc)
            part.unlink(missing_ok=True)
            return
        log.info("local model: saved %s prompt tokens to %s", data.get("n_saved"), path.name)
        self._prune()

    async def _post(self, base_url: str, action: str, filename: str) -> dict[str, Any] | None:
        try:
            response = await self._client.post(
                f"{base_url}/slots/{SLOT}",
                params={"action": action},
                json={"filename": filename},
                timeout=TIMEOUT,
            )
            data = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            log.info("local model: slot %s failed: %s", action, exc)
            return None
        if response.status_code != 200 or not isinstance(data, dict):
            log.info("local model: slot %s failed: %s %s", action, response.status_code, data)
            return None
        return data

    def _prune(self) -> None:
        """Keep the `KEEP` most recently used files."""
        try:
            files = sorted(
                self.directory.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True
            )
        except OSError:
            return
        for old in files[KEEP:]:
            old.unlink(missing_ok=True)
