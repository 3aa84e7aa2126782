"""Claude through Anthropic's Messages API (`POST {base}/v1/messages`), streamed.

Every request carries the whole conversation. What Claude returns that has no
canonical meaning, or whose bytes matter, is kept as the block it came in and sent
back only to the same identity (provider, model, route), unchanged:

* `thinking` blocks with their `signature` and `redacted_thinking` blocks with their
  `data` (the API checks both when they come back with the tool results that follow);
* `tool_use` blocks, text blocks (with any citations);
* the `compaction` block of server-side compaction, which replaces everything
  before it on the server's side.

Another identity gets the canonical form (text, calls, results) and never another
model's thinking or compaction.

Headers follow the official SDK (`anthropic` on PyPI, checked in
tests/providers/test_anthropic_sdk.py): the key as it sends it, and its
`anthropic-version`. Betas are named per request in `anthropic-beta`.
Prompt-cache breakpoints are placed by `anthropic_cache.CacheMarks`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import httpx

from baton.config import AnthropicSettings
from baton.errors import ProviderError
from baton.logs import redact, register_secret
from baton.providers.anthropic_cache import CacheMarks
from baton.providers.base import (
    AnyTool,
    AssistantText,
    ContextBlock,
    Finished,
    Item,
    ItemDone,
    ModelRequest,
    Native,
    NoTool,
    OpaqueItem,
    ProviderIdentity,
    Reasoning,
    ReasoningDelta,
    RequiredCall,
    ServerCompaction,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolOutput,
    ToolSpec,
    Usage,
    UserText,
)
from baton.providers.http_errors import safe_url
from baton.providers.retry import RetryPolicy, retry_stream
from baton.providers.wire import decode_event_data, post_sse

log = logging.getLogger(__name__)

# What the official SDK sends (anthropic._constants.ANTHROPIC_API_VERSION).
ANTHROPIC_VERSION = "2026-10-21"
COMPACT_BETA = "compact-2026-01-12"
ON_DEMAND_COMPACT_BETA = "compact-2026-09-04"
CONTEXT_EDITING_BETA = "context-management-2025-06-27"
# The API refuses a compaction trigger below this many input tokens.
MIN_COMPACT_TRIGGER = 50_000
# Baton's request for one compaction now (compaction/server.py), as an input item.
TRIGGER_TYPE = "compaction_trigger"
DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)

STOP_REASONS: dict[str, Any] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "compaction": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    # The server paused a long turn of its own tools: the answer is not finished.
    "pause_turn": "length",
    "refusal": "refusal",
}
# Error types a retry can fix (streamed `error` events; HTTP statuses decide otherwise).
RETRYABLE_ERROR_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error"})


def auth_headers(api_key: str | None) -> dict[str, str]:
    """The key as the official SDK sends it, and the API version it names."""
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def messages_url(base_url: str) -> str:
    """`{host}/v1/messages`; a base URL that already ends in `/v1` is taken as such."""
    base = base_url.rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def models_url(base_url: str) -> str:
    """`GET {host}/v1/models`, as many per page as the API gives (it pages by 20 else)."""
    base = base_url.rstrip("/")
    path = f"{base}/models" if base.endswith("/v1") else f"{base}/v1/models"
    return f"{path}?limit=1000"


# ----------------------------------------------------------------------------- request


def _replayable(native: Native | None, identity: ProviderIdentity) -> bool:
    return native is not None and native.identity == identity


def _user_blocks(item: UserText | ContextBlock) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if item.text:
        blocks.append({"type": "text", "text": item.text})
    if isinstance(item, UserText):
        for image in item.images:
            source = {"type": "base64", "media_type": image.mime_type, "data": image.data}
            blocks.append({"type": "image", "source": source})
    return blocks


def _call_id(call_id: str) -> str:
    """Another provider's call id as the API accepts ids (`^[a-zA-Z0-9_-]+$`); the same
    for the call and its result, so they stay paired."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", call_id) or "call"


def _tool_use(call: ToolCall) -> dict[str, Any]:
    try:
        parsed = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        parsed = {}
    return {
        "type": "tool_use",
        "id": _call_id(call.call_id),
        "name": call.name,
        "input": parsed if isinstance(parsed, dict) else {},
    }


def to_messages(items: Sequence[Item], identity: ProviderIdentity) -> list[dict[str, Any]]:
    """Canonical items as Messages API `messages`: consecutive blocks of one role in one
    message, tool results first in theirs; another identity's thinking and opaque
    blocks left out. Replayed blocks are copies (breakpoints are added to the body)."""
    blocks: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        if isinstance(item, UserText | ContextBlock):
            blocks.extend(("user", b) for b in _user_blocks(item))
        elif isinstance(item, ToolOutput):
            blocks.append(
                (
                    "user",
                    {
                        "type": "tool_result",
                        "tool_use_id": _call_id(item.call_id),
                        "content": item.output,
                    },
                )
            )
        elif isinstance(item, OpaqueItem):
            if _replayable(item.native, identity) and item.native.item.get("type") != TRIGGER_TYPE:
                blocks.append(("assistant", dict(item.native.item)))
        elif isinstance(item, Reasoning):
            if _replayable(item.native, identity):
                assert item.native is not None
                blocks.append(("assistant", dict(item.native.item)))
        elif _replayable(item.native, identity):
            assert item.native is not None
            block = dict(item.native.item)
            # The API refuses an empty text block, even one it returned.
            if block.get("type") != "text" or block.get("text"):
                blocks.append(("assistant", block))
        elif isinstance(item, AssistantText):
            if item.text:
                blocks.append(("assistant", {"type": "text", "text": item.text}))
        else:
            blocks.append(("assistant", _tool_use(item)))
    messages: list[dict[str, Any]] = []
    for role, block in blocks:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].append(block)
        else:
            messages.append({"role": role, "content": [block]})
    for message in messages:
        if message["role"] == "user":
            content = message["content"]
            message["content"] = [b for b in content if b["type"] == "tool_result"] + [
                b for b in content if b["type"] != "tool_result"
            ]
    return messages


def to_tool(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}


def _unthought_tool_turn(messages: list[dict[str, Any]]) -> bool:
    """Whether the request continues a tool call made without thinking (a step that forced
    a tool, or another model's call): with thinking on, the API wants the assistant
    message of the tool call it continues to start with a thinking block."""
    if len(messages) < 2 or messages[-1]["role"] != "user":
        return False
    results = any(b.get("type") == "tool_result" for b in messages[-1]["content"])
    last = messages[-2]
    if not results or last["role"] != "assistant":
        return False
    first = last["content"][0].get("type") if last["content"] else None
    return first not in ("thinking", "redacted_thinking")


def _trigger(request: ModelRequest, identity: ProviderIdentity) -> bool:
    """Whether the request ends with Baton's ask for a compaction now."""
    last = request.items[-1] if request.items else None
    return (
        isinstance(last, OpaqueItem)
        and last.native.identity == identity
        and last.native.item.get("type") == TRIGGER_TYPE
    )


# ----------------------------------------------------------------------------- response


def _usage(data: Any, into: dict[str, int]) -> None:
    if not isinstance(data, dict):
        return
    for name in (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ):
        value = data.get(name)
        if isinstance(value, int):
            into[name] = value


@dataclass
class _Block:
    start: dict[str, Any]
    text: list[str] = field(default_factory=list)
    json: list[str] = field(default_factory=list)
    signature: list[str] = field(default_factory=list)
    citations: list[Any] = field(default_factory=list)
    compaction: dict[str, Any] = field(default_factory=dict)


class MessagesStreamParser:
    """Turns Messages API stream events (decoded JSON) into `StreamEvent`s; no I/O."""

    def __init__(self, identity: ProviderIdentity, label: str) -> None:
        self.identity = identity
        self.label = label
        self.done = False
        self.stop_reason: str | None = None
        self.usage: dict[str, int] = {}
        self._blocks: dict[int, _Block] = {}

    def feed(self, payload: dict[str, Any]) -> list[StreamEvent]:
        if self.done:
            return []
        kind = payload.get("type")
        if kind == "message_start":
            message = payload.get("message") or {}
            _usage(message.get("usage"), self.usage)
            return []
        if kind == "content_block_start":
            start = payload.get("content_block")
            if isinstance(start, dict):
                self._blocks[int(payload.get("index") or 0)] = _Block(dict(start))
            return []
        if kind == "content_block_delta":
            return self._delta(payload)
        if kind == "content_block_stop":
            block = self._blocks.pop(int(payload.get("index") or 0), None)
            return self._finish_block(block) if block is not None else []
        if kind == "message_delta":
            delta = payload.get("delta") or {}
            reason = delta.get("stop_reason")
            if isinstance(reason, str):
                self.stop_reason = reason
            _usage(payload.get("usage"), self.usage)
            return []
        if kind == "message_stop":
            return self._finish()
        if kind == "error":
            raise stream_error(payload, label=self.label)
        return []  # ping, and events this version does not know

    def _delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        block = self._blocks.get(int(payload.get("index") or 0))
        delta = payload.get("delta")
        if block is None or not isinstance(delta, dict):
            return []
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            block.text.append(delta["text"])
            return [TextDelta(delta["text"])] if delta["text"] else []
        if kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            block.text.append(delta["thinking"])
            return [ReasoningDelta(delta["thinking"])] if delta["thinking"] else []
        if kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            block.json.append(delta["partial_json"])
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            block.signature.append(delta["signature"])
        elif kind == "citations_delta" and "citation" in delta:
            block.citations.append(delta["citation"])
        elif kind == "compaction_delta":
            for key in ("content", "encrypted_content"):
                if isinstance(delta.get(key), str):
                    block.compaction[key] = block.compaction.get(key, "") + delta[key]
        return []

    def _finish_block(self, block: _Block) -> list[StreamEvent]:
        start = block.start
        kind = start.get("type")
        if kind == "text":
            text = (start.get("text") or "") + "".join(block.text)
            native = {**start, "text": text}
            if block.citations:
                native["citations"] = [*(start.get("citations") or []), *block.citations]
            elif native.get("citations") is None:
                native.pop("citations", None)
            return [ItemDone(AssistantText(text, native=Native(self.identity, native)))]
        if kind == "thinking":
            thinking = (start.get("thinking") or "") + "".join(block.text)
            signature = (start.get("signature") or "") + "".join(block.signature)
            native = {**start, "thinking": thinking, "signature": signature}
            return [ItemDone(Reasoning(thinking, native=Native(self.identity, native)))]
        if kind == "redacted_thinking":
            return [ItemDone(Reasoning("", native=Native(self.identity, dict(start))))]
        if kind == "tool_use":
            raw = "".join(block.json)
            arguments = raw if raw.strip() else json.dumps(start.get("input") or {})
            try:
                parsed = json.loads(arguments)
            except ValueError:
                parsed = None
            native = {**start, "input": parsed if isinstance(parsed, dict) else {}}
            call = ToolCall(
                call_id=str(start.get("id") or ""),
                name=str(start.get("name") or ""),
                arguments=arguments,
                native=Native(self.identity, native),
            )
            return [ItemDone(call)]
        if kind == "compaction":
            native = {**start, **block.compaction}
            if block.compaction.get("content") is not None and start.get("content"):
                native["content"] = start["content"] + block.compaction["content"]
            return [ServerCompaction(OpaqueItem(Native(self.identity, native)))]
        # A server tool's block or one this version does not know: this model may need it.
        return [ItemDone(OpaqueItem(Native(self.identity, dict(start))))]

    def _finish(self) -> list[StreamEvent]:
        self.done = True
        events: list[StreamEvent] = []
        u = self.usage
        read = u.get("cache_read_input_tokens", 0)
        written = u.get("cache_creation_input_tokens", 0)
        events.append(
            Usage(
                # Anthropic counts cached input apart; Baton's input is all of it.
                input_tokens=u.get("input_tokens", 0) + read + written,
                output_tokens=u.get("output_tokens", 0),
                cached_tokens=read,
                cache_write_tokens=written,
            )
        )
        events.append(Finished(STOP_REASONS.get(self.stop_reason or "end_turn", "stop")))
        return events

    def check_complete(self) -> None:
        if not self.done:
            raise ProviderError(
                f"{self.label}: the stream ended before the message completed", retryable=True
            )


def stream_error(payload: dict[str, Any], *, label: str) -> ProviderError:
    """A streamed `error` event (`{type: error, error: {type, message}}`)."""
    err = payload.get("error") if isinstance(payload.get("error"), dict) else payload
    assert isinstance(err, dict)
    kind = str(err.get("type") or "error")
    message = str(err.get("message") or "the provider reported an error without a message")
    overflow = "prompt is too long" in message.lower()
    return ProviderError(
        redact(f"{label} failed: {message} ({kind})"),
        status=529 if kind == "overloaded_error" else None,
        retryable=kind in RETRYABLE_ERROR_TYPES and not overflow,
        overflow=overflow,
    )


# ----------------------------------------------------------------------------- provider


class AnthropicMessagesProvider:
    """`POST {base}/v1/messages` with `stream: true`; one instance per identity and key.

    The instance remembers which prompt prefixes it had cached (`CacheMarks`), so it is
    shared by every session and child of one model, route and key (ProviderRegistry).
    """

    def __init__(
        self,
        identity: ProviderIdentity,
        client: httpx.AsyncClient,
        *,
        api_key: str | None,
        options: AnthropicSettings | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        owns_client: bool = False,
        cache_marks: CacheMarks | None = None,
    ) -> None:
        if api_key:
            register_secret(api_key)
        self.identity = identity
        self.options = options or AnthropicSettings()
        self.cache_marks = cache_marks or CacheMarks()
        self._client = client
        self._headers = auth_headers(api_key)
        self._retry = retry or RetryPolicy()
        self._timeout = timeout
        self._owns_client = owns_client
        self._url = messages_url(identity.route.base_url)
        self._label = f"{identity.provider} ({safe_url(identity.route.base_url)})"

    def __repr__(self) -> str:
        return f"AnthropicMessagesProvider(identity={self.identity!r})"

    # The cached prefix starts with the tools: a summary request keeps them (none callable).
    summary_keeps_tools = True

    def build(self, request: ModelRequest) -> tuple[dict[str, Any], list[str]]:
        """The JSON body of a streamed request and the betas it needs."""
        options = self.options
        betas: list[str] = []
        body: dict[str, Any] = {
            "model": self.identity.model,
            "max_tokens": request.max_output_tokens or options.max_tokens,
            "messages": to_messages(request.items, self.identity),
            "stream": True,
        }
        if request.instructions:
            body["system"] = [{"type": "text", "text": request.instructions}]
        forced = False
        if request.tools:
            body["tools"] = [to_tool(t) for t in request.tools]
            if request.purpose == "summary" or isinstance(request.require_tool, NoTool):
                body["tool_choice"] = {"type": "none"}
            elif isinstance(request.require_tool, RequiredCall | AnyTool):
                forced = True
                required = request.required_tools()
                if len(required) < len(request.tools):
                    body["tool_choice"] = {"type": "tool", "name": required[0].name}
                else:
                    body["tool_choice"] = {"type": "any"}
        compacting = _trigger(request, self.identity)
        # Thinking cannot be asked for with a forced tool call (the API refuses both), and
        # a compaction request samples nothing after its block.
        if (
            options.thinking_budget
            and not forced
            and not compacting
            and not _unthought_tool_turn(body["messages"])
        ):
            body["thinking"] = {"type": "enabled", "budget_tokens": options.thinking_budget}
            body["max_tokens"] += options.thinking_budget
        elif request.sampling is not None:
            if request.sampling.temperature is not None:
                body["temperature"] = min(request.sampling.temperature, 1.0)
            if request.sampling.top_p is not None:
                body["top_p"] = request.sampling.top_p
        if compacting:
            body["compaction"] = {"type": "summarize"}
            betas.append(ON_DEMAND_COMPACT_BETA)
        else:
            edits = self._edits(request, body)
            if edits:
                body["context_management"] = {"edits": edits}
                if any(e["type"] == "compact_20260112" for e in edits):
                    betas.append(COMPACT_BETA)
                if any(e["type"] != "compact_20260112" for e in edits):
                    betas.append(CONTEXT_EDITING_BETA)
        self.cache_marks.place(body, options.cache_ttl)
        return body, betas

    def _edits(self, request: ModelRequest, body: dict[str, Any]) -> list[dict[str, Any]]:
        edits: list[dict[str, Any]] = []
        options = self.options
        if options.context_editing and request.purpose == "turn":
            trigger = {"type": "input_tokens", "value": options.context_editing_trigger}
            if "thinking" in body:
                # Thinking of the latest assistant turn only; older turns' is cleared.
                keep = {"type": "thinking_turns", "value": 1}
                edits.append({"type": "clear_thinking_20251015", "keep": keep})
            edits.append({"type": "clear_tool_uses_20250919", "trigger": trigger})
        if request.compact_threshold is not None and request.purpose == "turn":
            value = max(request.compact_threshold, MIN_COMPACT_TRIGGER)
            edits.append(
                {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": value}}
            )
        return edits

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body, betas = self.build(request)
        headers = dict(self._headers)
        if betas:
            headers["anthropic-beta"] = ",".join(betas)
        async with aclosing(
            retry_stream(lambda: self._attempt(body, headers), self._retry, label=self._label)
        ) as events:
            async for event in events:
                yield event

    async def _attempt(
        self, body: dict[str, Any], headers: dict[str, str]
    ) -> AsyncIterator[StreamEvent]:
        parser = MessagesStreamParser(self.identity, self._label)
        async with aclosing(
            post_sse(
                self._client,
                self._url,
                body,
                headers=headers,
                timeout=self._timeout,
                label=self._label,
            )
        ) as source:
            async for sse in source:
                if not sse.data:
                    continue
                payload = decode_event_data(sse.data, label=self._label)
                if not isinstance(payload, dict):
                    continue
                if "type" not in payload and sse.event:
                    payload["type"] = sse.event
                for event in parser.feed(payload):
                    yield event
                if parser.done:
                    break
        parser.check_complete()

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()
