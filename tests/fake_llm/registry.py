"""Ids and opaque secrets the fake hands out, remembered so replays can be recognised.

Real ``encrypted_content`` is opaque to clients; the contract is only that the client
sends it back byte-for-byte. The fake makes each secret an HMAC over a counter with a
per-instance key, so it looks opaque, never repeats, cannot be forged by a test (or by
Baton), and is recognised on replay by exact lookup.
"""

import hashlib
import hmac
import itertools
import math
import secrets
import threading
from collections.abc import Sequence
from typing import Any, Literal

from .records import CompactionArtifact
from .script import Reply

Trigger = Literal["auto", "scripted", "trigger", "standalone"]


class Registry:
    """Thread-safe counters, secrets and the compaction artifact log of one fake server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key = secrets.token_bytes(16)
        self._counter = itertools.count(1)
        self._secrets: dict[str, str] = {}  # secret → kind
        self.artifacts: list[CompactionArtifact] = []

    def new_id(self, prefix: str) -> str:
        """``resp_``, ``msg_``, ``fc_``, ``call_``, ``rs_``, ``cmp_`` … plus a unique tail."""
        with self._lock:
            n = next(self._counter)
        return f"{prefix}_fake{n:06d}"

    def new_secret(self, kind: str) -> str:
        with self._lock:
            n = next(self._counter)
            digest = hmac.new(self._key, f"{kind}:{n}".encode(), hashlib.sha256).hexdigest()
            secret = f"enc_{kind}_{digest[:40]}"
            self._secrets[secret] = kind
        return secret

    def is_known(self, secret: str) -> bool:
        with self._lock:
            return secret in self._secrets

    def new_compaction(
        self, trigger: Trigger, request_index: int, note: str | None, source_items: Sequence[Any]
    ) -> CompactionArtifact:
        artifact = CompactionArtifact(
            id=self.new_id("cmp"),
            encrypted_content=self.new_secret("cmp"),
            trigger=trigger,
            request_index=request_index,
            note=note,
            source_items=tuple(source_items),
        )
        with self._lock:
            self.artifacts.append(artifact)
        return artifact

    def snapshot(self) -> list[CompactionArtifact]:
        with self._lock:
            return list(self.artifacts)

    def artifact(self, secret: str) -> CompactionArtifact | None:
        with self._lock:
            return next((a for a in self.artifacts if a.encrypted_content == secret), None)

    def clear_artifacts(self) -> None:
        """Forget the log (``reset``) but keep recognising secrets already handed out."""
        with self._lock:
            self.artifacts.clear()


def usage_numbers(
    reply: Reply, input_tokens: int, output_chars: int, reasoning_chars: int, cached: int = 0
) -> dict[str, int]:
    """Estimated usage (chars / 4; ``cached`` from the common prefix with earlier requests),
    with the reply's ``usage()`` overrides applied."""
    override = reply.usage
    reasoning = math.ceil(reasoning_chars / 4)
    numbers = {
        "input": input_tokens,
        "cached": min(cached, input_tokens),
        "reasoning": reasoning,
        "output": max(1, math.ceil(output_chars / 4) + reasoning),
    }
    if override is not None:
        for name in ("input", "cached", "reasoning", "output"):
            value = getattr(override, name)
            if value is not None:
                numbers[name] = value
    total = override.total if override is not None and override.total is not None else None
    numbers["total"] = total if total is not None else numbers["input"] + numbers["output"]
    return numbers
