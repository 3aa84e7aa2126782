"""What a provider's prompt cache could reuse: the common prefix of two requests.

Providers cache exact prefixes of the rendered prompt (OpenAI bills a cached
input token at a tenth of the price; llama.cpp re-evaluates only what follows
the longest common prefix with the previous request). A request is rendered,
roughly, as its instructions, then its tool list, then its input items in
order (Chat: the leading system messages, then the tools, then the other
messages), so it is compared here as those three segments: a segment that
differs ends the shared prefix at its first differing character.

The fake reports ``cached_tokens`` from this (characters / 4, the same crude
estimate as its input count, tool specs excluded like there), and tests and
``bench/cache.py`` use it to measure how much of each request repeats the one
before it. No minimum length or block granularity is applied.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SYSTEM_ROLES = ("system", "developer")


@dataclass(frozen=True)
class Segments:
    """A request as its prompt cache sees it."""

    instructions: str
    tools: str
    items: str

    @property
    def chars(self) -> int:
        return len(self.instructions) + len(self.tools) + len(self.items)


def segments(body: Any) -> Segments:
    """The three cached segments of a Responses or Chat Completions request body."""
    if not isinstance(body, dict):
        return Segments("", "", "")
    tools = _dumps(body.get("tools") or [])
    if "messages" in body:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        lead = 0
        while lead < len(messages) and messages[lead].get("role") in SYSTEM_ROLES:
            lead += 1
        return Segments(_lines(messages[:lead]), tools, _lines(messages[lead:]))
    instructions = body.get("instructions")
    raw = body.get("input", "")
    if isinstance(raw, str):
        raw = [{"role": "user", "content": raw}]
    items = raw if isinstance(raw, list) else []
    return Segments(instructions if isinstance(instructions, str) else "", tools, _lines(items))


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of `a` and `b` (slice compares, not a char loop)."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while low < high:  # a[:low] == b[:low] and a[:high] != b[:high]
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


@dataclass(frozen=True)
class Shared:
    """Characters of a request, per segment, that repeat an earlier request's prefix."""

    instructions: int = 0
    tools: int = 0
    items: int = 0

    @property
    def chars(self) -> int:
        return self.instructions + self.tools + self.items

    @property
    def without_tools(self) -> int:
        return self.instructions + self.items


def shared(previous: Segments, current: Segments) -> Shared:
    """How much of `current` is the prefix it shares with `previous`."""
    if previous.instructions != current.instructions:
        return Shared(common_prefix(previous.instructions, current.instructions))
    if previous.tools != current.tools:
        return Shared(len(current.instructions), common_prefix(previous.tools, current.tools))
    return Shared(
        len(current.instructions), len(current.tools), common_prefix(previous.items, current.items)
    )


def best_shared(earlier: list[Segments], current: Segments) -> Shared:
    """The longest prefix `current` shares with any of `earlier` (a cache keeps several)."""
    best = Shared()
    for previous in earlier:
        candidate = shared(previous, current)
        if candidate.chars > best.chars:
            best = candidate
    return best


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _lines(items: list[Any]) -> str:
    """One JSON line per item: a request that only appends items has its predecessor's
    string as an exact prefix (a JSON array's closing bracket would differ)."""
    return "".join(_dumps(item) + "\n" for item in items)
