"""Where Baton puts Claude's prompt-cache breakpoints (`cache_control`), at most four.

Anthropic caches only up to blocks a request marks, and reads an entry only where an
earlier request wrote one (looking back about twenty blocks from each mark). Baton's
requests are append-only between compactions, so a request can read everything an
earlier one wrote if it marks the right blocks:

* the last tool (the tool list changes least: it survives a changed system prompt);
* the last system block (tools and instructions: what a fresh approval, a child's first
  request and the first request after a local compaction still share);
* the furthest block whose prefix an earlier request is known to have written (the
  end of the previous request, as a rule; after a plan edit or an approval that
  rewrote the middle, the furthest entry still valid), so the read never depends on
  the twenty-block lookback;
* the newest block, which writes the entry the next request will read.

What was written is remembered per provider (one model, route and key: the cache's
own scope), by a digest of each prefix, so a child or a second session of the same
model finds the entries of the first. A digest never holds text.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_BREAKPOINTS = 4
# Blocks that may carry `cache_control`; thinking blocks may not (they are cached with
# the message that holds them), nor empty text.
_MARKABLE = frozenset(
    {"text", "image", "document", "tool_use", "tool_result", "compaction", "search_result"}
)
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
REMEMBERED = 512


@dataclass
class _Position:
    block: dict[str, Any]
    where: str
    digest: str
    markable: bool
    in_messages: bool


def _canonical(block: dict[str, Any]) -> bytes:
    clean = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(clean, sort_keys=True, ensure_ascii=False).encode()


class CacheMarks:
    """Remembers which prefixes were written and marks the next request's blocks."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._written: OrderedDict[str, float] = OrderedDict()

    def place(self, body: dict[str, Any], ttl: str) -> int:
        """Mark `body`'s tools, system and messages in place; returns the marks placed."""
        positions = self._positions(body)
        now = self._clock()
        lifetime = TTL_SECONDS.get(ttl, 300.0)
        control: dict[str, Any] = {"type": "ephemeral"}
        if ttl != "5m":
            control["ttl"] = ttl
        chosen: list[_Position] = []
        tools = [p for p in positions if p.where == "tool"]
        system = [p for p in positions if p.where == "system"]
        if tools:
            chosen.append(tools[-1])
        if system and system[-1].markable:
            chosen.append(system[-1])
        markable = [p for p in positions if p.in_messages and p.markable]
        newest = markable[-1] if markable else None
        known = next(
            (
                p
                for p in reversed(markable[:-1])
                if now - self._written.get(p.digest, -lifetime) < lifetime
            ),
            None,
        )
        if known is not None:
            chosen.append(known)
        if newest is not None:
            chosen.append(newest)
        chosen = chosen[-MAX_BREAKPOINTS:]
        for position in chosen:
            position.block["cache_control"] = dict(control)
            self._remember(position.digest, now)
        # A read refreshes the entries before it too: keep them alive in memory.
        for position in positions:
            if position.digest in self._written and all(position is not c for c in chosen):
                self._remember(position.digest, now)
        return len(chosen)

    def _remember(self, digest: str, now: float) -> None:
        self._written[digest] = now
        self._written.move_to_end(digest)
        while len(self._written) > REMEMBERED:
            self._written.popitem(last=False)

    @staticmethod
    def _positions(body: dict[str, Any]) -> list[_Position]:
        """Every block in the order the server reads them, with its prefix's digest.

        Messages hash on top of what changes their cache without being in them (the tool
        choice and thinking settings invalidate cached messages, not tools or system)."""
        running = hashlib.sha256()
        out: list[_Position] = []
        for tool in body.get("tools") or []:
            running.update(b"tool:" + _canonical(tool))
            out.append(_Position(tool, "tool", running.hexdigest(), True, False))
        system = body.get("system")
        if isinstance(system, list):
            for block in system:
                running.update(b"system:" + _canonical(block))
                markable = bool(block.get("text"))
                out.append(_Position(block, "system", running.hexdigest(), markable, False))
        running.update(
            json.dumps(
                {"tool_choice": body.get("tool_choice"), "thinking": body.get("thinking")},
                sort_keys=True,
            ).encode()
        )
        for message in body.get("messages") or []:
            running.update(f"role:{message.get('role')}".encode())
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                running.update(b"block:" + _canonical(block))
                kind = block.get("type")
                markable = kind in _MARKABLE and not (kind == "text" and not block.get("text"))
                out.append(_Position(block, "message", running.hexdigest(), markable, True))
        return out
