"""Identifiers that sort by creation time: `<prefix>_<12 hex of ns time><10 random hex>`."""

from __future__ import annotations

import secrets
import threading
import time
from datetime import UTC, datetime

_lock = threading.Lock()
_last = 0


def new_id(prefix: str) -> str:
    global _last
    with _lock:
        now = time.time_ns() // 1000
        if now <= _last:
            now = _last + 1
        _last = now
    return f"{prefix}_{now:014x}{secrets.token_hex(5)}"


def utc_now() -> str:
    """ISO 8601 UTC with milliseconds and a `Z`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
