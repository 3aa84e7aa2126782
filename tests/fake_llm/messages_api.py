"""Anthropic's Messages API as the fake answers it: ``POST /v1/messages``, streamed or not.

The event order and payloads follow the official ``anthropic`` SDK's stream types
(``message_start``, ``content_block_start`` / ``_delta`` / ``_stop``, ``message_delta``,
``message_stop``, ``ping``, ``error``) and are checked against the SDK's own stream
accumulator in ``tests/test_fake_llm_anthropic.py``.

What the fake keeps per server (``MessagesState``):

* every ``thinking`` signature and ``redacted_thinking`` payload it handed out, with the
  text it signed: a block sent back altered or foreign is answered with the API's 400,
  and an assistant turn that called a tool after thinking must bring that thinking back;
* every ``compaction`` block (content and signature): later requests must carry it
  unchanged; everything before it is dropped from the count, as the API does;
* a prompt cache: entries written at each ``cache_control`` breakpoint, keyed by the
  digest of the prefix; a breakpoint reads the furthest entry at or up to twenty
  blocks before it. Usage reports ``cache_read_input_tokens`` (what was read),
  ``cache_creation_input_tokens`` (from there to the last breakpoint) and
  ``input_tokens`` (the rest), in the fake's estimate of characters / 4.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from .registry import Registry
from .script import (
    Compaction,
    Reasoning,
    Refusal,
    Reply,
    StreamError,
    Text,
    ToolCall,
    split_even,
    split_words,
)

LOOKBACK = 20
MAX_BREAKPOINTS = 4
_NO_CACHE_CONTROL = frozenset({"thinking", "redacted_thinking"})

ERROR_TYPES: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
    500: ("api_error", "An unexpected error has occurred internal to Anthropic's systems."),
    529: ("overloaded_error", "Overloaded"),
}


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    kind, default = ERROR_TYPES.get(status, ("api_error", f"HTTP {status}"))
    return {
        "type": "error",
        "error": {"type": kind, "message": message or default},
        "request_id": "req_fake",
    }


def invalid(message: str) -> dict[str, Any]:
    return error_body(400, message)


def _canonical(block: Any) -> bytes:
    if isinstance(block, dict):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(block, sort_keys=True, ensure_ascii=False).encode()


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


@dataclass
class Flat:
    """A request as the cache sees it: each block with its prefix digest and size."""

    digests: list[str] = field(default_factory=list)
    chars: list[int] = field(default_factory=list)  # cumulative characters through each block
    marks: list[int] = field(default_factory=list)  # positions carrying cache_control
    first_message: int = 0  # position of the first message block
    compaction: int | None = None  # position of the newest compaction block

    def effective(self, position: int) -> int:
        """Characters counted through `position`: the API drops the message blocks before
        the newest compaction block."""
        if position < 0:
            return 0
        if self.compaction is None or position < self.first_message:
            return self.chars[position]
        before = self.chars[self.first_message - 1] if self.first_message else 0
        if position < self.compaction:
            return before
        dropped = self.chars[self.compaction - 1] - before if self.compaction else 0
        return self.chars[position] - dropped


def flatten(body: dict[str, Any]) -> Flat:
    flat = Flat()
    running = hashlib.sha256()
    total = 0

    def add(block: Any, tag: bytes) -> None:
        nonlocal total
        data = _canonical(block)
        running.update(tag + data)
        total += len(data)
        if isinstance(block, dict) and block.get("cache_control"):
            flat.marks.append(len(flat.digests))
        flat.digests.append(running.hexdigest())
        flat.chars.append(total)

    for tool in body.get("tools") or []:
        add(tool, b"tool:")
    system = body.get("system")
    if isinstance(system, str):
        add({"type": "text", "text": system}, b"system:")
    elif isinstance(system, list):
        for block in system:
            add(block, b"system:")
    running.update(
        json.dumps(
            {"tool_choice": body.get("tool_choice"), "thinking": body.get("thinking")},
            sort_keys=True,
        ).encode()
    )
    flat.first_message = len(flat.digests)
    for message in body.get("messages") or []:
        running.update(f"role:{message.get('role')}".encode())
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content or []:
            if isinstance(block, dict) and block.get("type") == "compaction":
                flat.compaction = len(flat.digests)
            add(block, b"block:")
    return flat


@dataclass
class CacheResult:
    read: int = 0
    written: int = 0
    uncached: int = 0


class MessagesState:
    """Signatures, compaction blocks and the prompt cache of one fake server."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._lock = threading.Lock()
        self.signatures: dict[str, str] = {}  # signature → thinking text it signs
        self.redacted: set[str] = set()
        self.compactions: dict[str, str | None] = {}  # signature → content
        self.thinking_of_call: dict[str, str] = {}  # tool_use id → signature before it
        self.cache: set[str] = set()

    def reset(self) -> None:
        with self._lock:
            self.cache.clear()

    def sign(self, kind: str) -> str:
        return self.registry.new_secret(kind).replace("enc_", "sig_", 1)

    # ---------------------------------------------------------------- validation

    def check(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The API's 400 for a request it would refuse, or None."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return invalid("messages: at least one message is required")
        if not isinstance(body.get("max_tokens"), int):
            return invalid("max_tokens: Field required")
        marks = 0
        for tool in body.get("tools") or []:
            marks += bool(tool.get("cache_control"))
        for block in body.get("system") if isinstance(body.get("system"), list) else []:
            marks += bool(block.get("cache_control"))
        previous_role = None
        pending_calls: set[str] = set()
        for number, message in enumerate(messages):
            role = message.get("role")
            if role not in ("user", "assistant"):
                return invalid(f"messages.{number}.role: Input should be 'user' or 'assistant'")
            if role == previous_role:
                return invalid(
                    f"messages.{number}: roles must alternate between user and assistant"
                )
            previous_role = role
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            if not content:
                return invalid(f"messages.{number}: all messages must have non-empty content")
            results_done = False
            for index, block in enumerate(content):
                where = f"messages.{number}.content.{index}"
                kind = block.get("type")
                if block.get("cache_control"):
                    marks += 1
                    if kind in _NO_CACHE_CONTROL:
                        return invalid(f"{where}: {kind} blocks cannot carry cache_control")
                if kind == "text" and not block.get("text"):
                    return invalid(f"{where}: text content blocks must be non-empty")
                problem = self._check_block(where, role, block)
                if problem:
                    return invalid(problem)
                if role == "user":
                    if kind == "tool_result":
                        if results_done:
                            return invalid(f"{where}: tool_result blocks must come first")
                        if block.get("tool_use_id") not in pending_calls:
                            return invalid(
                                f"{where}: unexpected `tool_use_id` found in `tool_result` "
                                "blocks: each `tool_result` block must have a corresponding "
                                "`tool_use` block in the previous message"
                            )
                        pending_calls.discard(block.get("tool_use_id"))
                    else:
                        results_done = True
            if role == "user" and pending_calls:
                return invalid(
                    f"messages.{number}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(sorted(pending_calls))}"
                )
            if role == "assistant":
                problem = self._check_thinking(number, content)
                if problem:
                    return invalid(problem)
                pending_calls = {b.get("id") for b in content if b.get("type") == "tool_use"}
        if _thinking_on(body) and len(messages) >= 2:
            last, results = messages[-2], messages[-1]
            content = last.get("content") if last.get("role") == "assistant" else None
            continues = isinstance(results.get("content"), list) and any(
                b.get("type") == "tool_result" for b in results["content"]
            )
            first = content[0].get("type") if isinstance(content, list) and content else None
            if continues and first is not None and first not in ("thinking", "redacted_thinking"):
                return invalid(
                    f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
                    "`redacted_thinking`, but found "
                    f"`{first}`. When `thinking` is enabled, a final "
                    "`assistant` message must start with a thinking block."
                )
        if marks > MAX_BREAKPOINTS:
            return invalid(
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {marks}."
            )
        return None

    def _check_block(self, where: str, role: str, block: dict[str, Any]) -> str | None:
        kind = block.get("type")
        with self._lock:
            if kind == "thinking":
                signature = block.get("signature")
                if self.signatures.get(signature) != block.get("thinking"):
                    return f"{where}: Invalid `signature` in `thinking` block"
            elif kind == "redacted_thinking":
                if block.get("data") not in self.redacted:
                    return f"{where}: Invalid `data` in `redacted_thinking` block"
            elif kind == "compaction":
                signature = block.get("signature")
                if signature not in self.compactions or self.compactions[signature] != block.get(
                    "content"
                ):
                    return f"{where}: Invalid `compaction` block: sent back altered or unknown"
        if kind == "tool_use" and not re.fullmatch(r"[a-zA-Z0-9_-]+", str(block.get("id"))):
            return f"{where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
        if (
            kind in ("thinking", "redacted_thinking", "tool_use", "compaction")
            and role != "assistant"
        ):
            return f"{where}: {kind} blocks belong to assistant messages"
        return None

    def _check_thinking(self, number: int, content: list[dict[str, Any]]) -> str | None:
        """A tool call made after thinking needs that thinking with it, before it."""
        signatures = [
            b.get("signature") if b.get("type") == "thinking" else b.get("data")
            for b in content
            if b.get("type") in ("thinking", "redacted_thinking")
        ]
        for block in content:
            if block.get("type") != "tool_use":
                continue
            with self._lock:
                needed = self.thinking_of_call.get(str(block.get("id")))
            if needed is not None and needed not in signatures:
                return (
                    f"messages.{number}.content: Expected `thinking` or `redacted_thinking`, "
                    "but found `tool_use`. When `thinking` is enabled, a final `assistant` "
                    "message must start with a thinking block (preceding the lastmost set of "
                    "`tool_use` and `tool_result` blocks)."
                )
        return None

    # ---------------------------------------------------------------- cache

    def cached(self, body: dict[str, Any]) -> tuple[CacheResult, int]:
        """Prompt-cache usage for `body`, and its input tokens (after compaction)."""
        flat = flatten(body)
        counted = flat.effective(len(flat.chars) - 1)
        result = CacheResult()
        if not flat.marks:
            result.uncached = _tokens(counted)
            return result, _tokens(counted)
        with self._lock:
            hit = -1
            for mark in flat.marks:
                for position in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                    if flat.digests[position] in self.cache:
                        hit = max(hit, position)
                        break
            for mark in flat.marks:
                self.cache.add(flat.digests[mark])
        last = flat.marks[-1]
        read_chars = flat.effective(hit)
        written_chars = flat.effective(last) - read_chars if last > hit else 0
        result.read = _tokens(read_chars)
        result.written = _tokens(written_chars)
        result.uncached = max(0, _tokens(counted) - result.read - result.written)
        return result, _tokens(counted)


# --------------------------------------------------------------------- rendering


@dataclass
class Context:
    body: dict[str, Any]
    state: MessagesState
    cache: CacheResult
    input_tokens: int
    auto_compact: bool = False
    on_demand: bool = False


@dataclass
class Rendered:
    events: list[dict[str, Any]]
    message: dict[str, Any]
    failure: StreamError | None = None
    compactions: list[dict[str, Any]] = field(default_factory=list)


def _thinking_on(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def render(ctx: Context, reply: Reply) -> Rendered:
    state, body = ctx.state, ctx.body
    registry = state.registry
    message_id = registry.new_id("msg")
    usage: dict[str, Any] = {
        "input_tokens": ctx.cache.uncached,
        "cache_creation_input_tokens": ctx.cache.written,
        "cache_read_input_tokens": ctx.cache.read,
        "output_tokens": 1,
    }
    start = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or "claude-fake",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": dict(usage),
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": copy.deepcopy(start)}]
    content: list[dict[str, Any]] = []
    compactions: list[dict[str, Any]] = []
    output_chars = 0
    last_signature: str | None = None
    refused = False
    parts = list(reply.output)
    if ctx.on_demand:
        parts = [p for p in parts if isinstance(p, Compaction)] or [Compaction()]
    elif ctx.auto_compact and not any(isinstance(p, Compaction) for p in parts):
        parts.insert(0, Compaction())
    for part in parts:
        index = len(content)
        if isinstance(part, Text | Refusal):
            refused = refused or isinstance(part, Refusal)
            block = {"type": "text", "text": part.content}
            _stream_block(
                events,
                index,
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": piece} for piece in part.pieces],
            )
            output_chars += len(part.content)
        elif isinstance(part, Reasoning):
            if part.redacted:
                data = state.sign("redacted")
                with state._lock:
                    state.redacted.add(data)
                block = {"type": "redacted_thinking", "data": data}
                _stream_block(events, index, dict(block), [])
                last_signature = data
            else:
                thinking = "\n\n".join(part.summary)
                signature = state.sign("thinking")
                with state._lock:
                    state.signatures[signature] = thinking
                block = {"type": "thinking", "thinking": thinking, "signature": signature}
                deltas: list[dict[str, Any]] = [
                    {"type": "thinking_delta", "thinking": piece} for piece in split_words(thinking)
                ]
                deltas.append({"type": "signature_delta", "signature": signature})
                _stream_block(
                    events, index, {"type": "thinking", "thinking": "", "signature": ""}, deltas
                )
                output_chars += len(thinking)
                last_signature = signature
        elif isinstance(part, ToolCall):
            call_id = part.call_id or registry.new_id("toolu")
            try:
                parsed = json.loads(part.arguments)
            except ValueError:
                parsed = {}
            block = {"type": "tool_use", "id": call_id, "name": part.name, "input": parsed}
            _stream_block(
                events,
                index,
                {"type": "tool_use", "id": call_id, "name": part.name, "input": {}},
                [
                    {"type": "input_json_delta", "partial_json": piece}
                    for piece in split_even(part.arguments, part.chunks)
                ],
            )
            if last_signature is not None:
                with state._lock:
                    state.thinking_of_call[call_id] = last_signature
            output_chars += len(part.arguments)
        else:
            summary = (
                part.note or f"Summary of the conversation so far ({ctx.input_tokens} tokens)."
            )
            signature = state.sign("compaction")
            with state._lock:
                state.compactions[signature] = summary
            block = {"type": "compaction", "content": summary, "signature": signature}
            _stream_block(
                events,
                index,
                {"type": "compaction", "content": None, "signature": signature},
                [{"type": "compaction_delta", "content": summary}],
            )
            compactions.append(block)
        content.append(block)
    has_calls = any(b["type"] == "tool_use" for b in content)
    if ctx.on_demand:
        stop = "compaction"
    elif reply.incomplete is not None:
        stop = "max_tokens"
    elif refused:
        stop = "refusal"
    elif has_calls:
        stop = "tool_use"
    else:
        stop = "end_turn"
    output = max(1, math.ceil(output_chars / 4))
    if reply.usage is not None:
        if reply.usage.input is not None:
            usage["input_tokens"] = reply.usage.input
        if reply.usage.cached is not None:
            usage["cache_read_input_tokens"] = reply.usage.cached
        if reply.usage.output is not None:
            output = reply.usage.output
    usage["output_tokens"] = output
    events.insert(1, {"type": "ping"})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {
                "input_tokens": usage["input_tokens"],
                "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                "cache_read_input_tokens": usage["cache_read_input_tokens"],
                "output_tokens": output,
            },
        }
    )
    events.append({"type": "message_stop"})
    message = {**start, "content": content, "stop_reason": stop, "usage": usage}
    failure = reply.stream_error
    if failure is not None:
        cut = 2 if failure.after is None else max(0, min(failure.after, len(events)))
        kind = (
            "overloaded_error"
            if failure.code in ("overloaded", "overloaded_error")
            else "api_error"
        )
        events = [
            *events[:cut],
            {"type": "error", "error": {"type": kind, "message": failure.message}},
        ]
    return Rendered(events, message, failure, compactions)


def _stream_block(
    events: list[dict[str, Any]], index: int, start: dict[str, Any], deltas: list[dict[str, Any]]
) -> None:
    events.append({"type": "content_block_start", "index": index, "content_block": start})
    for delta in deltas:
        events.append({"type": "content_block_delta", "index": index, "delta": delta})
    events.append({"type": "content_block_stop", "index": index})


def sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


MALFORMED = 'event: content_block_delta\ndata: {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "oops\n\n'
