"""The official OpenAI Responses API (`POST {base}/responses`), used statelessly.

Every request carries the whole input (`store: false`), so nothing depends on
server-side state that could expire, and reasoning is kept across turns by
asking for `reasoning.encrypted_content` and replaying the reasoning items as
returned. Provider-specific items (reasoning, messages, calls, compaction
artifacts) are stored verbatim with this provider's identity and sent back
only to that same identity (provider, model, base URL, auth kind): an
encrypted artifact is meaningless, or an error, anywhere else. They are sent
as returned, content byte for byte; only the server-side `id` handle is left
out while `store` is false (see `_replay`). Items from another identity fall
back to their canonical form, or are dropped when they have none (reasoning,
opaque artifacts).

`compact()` calls the standalone `POST {base}/responses/compact`; in-stream
compaction (`context_management`) surfaces as a `ServerCompaction` event.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

import httpx

from baton.errors import ProviderError
from baton.logs import register_secret
from baton.providers.base import (
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
    ServerCompaction,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolOutput,
    ToolSpec,
    Usage,
    UserText,
)
from baton.providers.http_errors import error_from_payload, safe_url
from baton.providers.retry import RetryPolicy, retry_call, retry_stream
from baton.providers.wire import auth_headers, decode_event_data, post_json, post_sse

log = logging.getLogger(__name__)

COMPACTION_TYPES = frozenset({"compaction", "compaction_summary"})
DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)


# ----------------------------------------------------------------------------- request


def _user_message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _replayable(native: Native | None, identity: ProviderIdentity) -> bool:
    return native is not None and native.identity == identity


def _replay(item: dict[str, Any], store: bool) -> dict[str, Any]:
    """A stored output item as input: every field as returned, except, when nothing is
    stored server-side, its `id`. That id names a server object that `store: false` never
    kept, and echoing it invites "Item with id 'rs_…' not found" (and the pairing check
    of a call with its reasoning). OpenAI's own stateless client (Codex) omits it too."""
    if store or "id" not in item:
        return item
    return {key: value for key, value in item.items() if key != "id"}


def to_responses_input(
    items: Sequence[Item], identity: ProviderIdentity, *, store: bool = False
) -> list[dict[str, Any]]:
    """Canonical items as Responses input items, for a provider with `identity`."""
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, UserText) and item.images:
            message = _user_message(item.text)
            if not item.text:
                message["content"] = []
            message["content"].extend(
                {"type": "input_image", "image_url": i.data_url()} for i in item.images
            )
            out.append(message)
        elif isinstance(item, UserText | ContextBlock):
            out.append(_user_message(item.text))
        elif isinstance(item, ToolOutput):
            out.append(
                {"type": "function_call_output", "call_id": item.call_id, "output": item.output}
            )
        elif isinstance(item, OpaqueItem):
            if _replayable(item.native, identity):
                out.append(_replay(item.native.item, store))
        elif isinstance(item, Reasoning):
            native = item.native
            if native is None or not _replayable(native, identity):
                continue  # another model's reasoning means nothing here
            if not store and not native.item.get("encrypted_content"):
                # Without its encrypted content a stateless replay only names an id the
                # server never kept ("Item with id 'rs_…' not found"): drop it.
                continue
            out.append(_replay(native.item, store))
        elif _replayable(item.native, identity):
            assert item.native is not None
            out.append(_replay(item.native.item, store))
        elif isinstance(item, AssistantText):
            out.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": item.text}],
                }
            )
        else:
            out.append(
                {
                    "type": "function_call",
                    "call_id": item.call_id,
                    "name": item.name,
                    "arguments": item.arguments,
                }
            )
    return out


def to_responses_tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "strict": False,
    }


# ----------------------------------------------------------------------------- response


def _usage(data: Any) -> Usage | None:
    if not isinstance(data, dict):
        return None
    in_details = data.get("input_tokens_details") or {}
    out_details = data.get("output_tokens_details") or {}
    return Usage(
        input_tokens=int(data.get("input_tokens") or 0),
        output_tokens=int(data.get("output_tokens") or 0),
        cached_tokens=int(in_details.get("cached_tokens") or 0),
        reasoning_tokens=int(out_details.get("reasoning_tokens") or 0),
    )


def _texts(parts: Any, *types: str) -> list[str]:
    out: list[str] = []
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, dict) and part.get("type") in types:
                text = part.get("text", part.get("refusal"))
                if isinstance(text, str):
                    out.append(text)
    return out


class ResponsesStreamParser:
    """Turns Responses stream events (decoded JSON) into `StreamEvent`s.

    Kept free of I/O so every event shape can be tested directly.
    """

    def __init__(self, identity: ProviderIdentity, label: str) -> None:
        self.identity = identity
        self.label = label
        self.done = False
        self._function_calls = 0
        self._refusal = False
        self._items = 0
        self._text: list[str] = []

    def feed(self, payload: dict[str, Any]) -> list[StreamEvent]:
        kind = payload.get("type")
        if self.done:
            return []
        if kind == "response.output_text.delta":
            return self._delta(payload, TextDelta)
        if kind == "response.refusal.delta":
            self._refusal = True
            return self._delta(payload, TextDelta)
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return self._delta(payload, ReasoningDelta)
        if kind == "response.reasoning_summary_part.added":
            # Summary parts are paragraphs; keep them apart in the streamed thought.
            return [ReasoningDelta("\n\n")] if payload.get("summary_index", 0) else []
        if kind == "response.output_item.done":
            return self._item_done(payload.get("item"))
        if kind == "response.completed":
            return self._finish(payload.get("response"), incomplete=None)
        if kind == "response.incomplete":
            response = payload.get("response") or {}
            details = response.get("incomplete_details") or {}
            return self._finish(response, incomplete=str(details.get("reason") or ""))
        if kind == "response.failed":
            response = payload.get("response") or {}
            raise error_from_payload(
                response.get("error") or "the response failed", label=self.label
            )
        if kind == "error":
            raise error_from_payload(payload, label=self.label)
        return []

    def _delta(
        self, payload: dict[str, Any], make: type[TextDelta] | type[ReasoningDelta]
    ) -> list[StreamEvent]:
        delta = payload.get("delta")
        if not isinstance(delta, str) or not delta:
            return []
        if make is TextDelta:
            self._text.append(delta)
        return [make(delta)]

    def _item_done(self, item: Any) -> list[StreamEvent]:
        if not isinstance(item, dict):
            return []
        self._items += 1
        native = Native(self.identity, item)
        kind = item.get("type")
        if kind == "message":
            content = item.get("content")
            if _texts(content, "refusal"):
                self._refusal = True
            text = "".join(_texts(content, "output_text", "refusal"))
            return [ItemDone(AssistantText(text, native=native))]
        if kind == "reasoning":
            parts = _texts(item.get("summary"), "summary_text") or _texts(
                item.get("content"), "reasoning_text"
            )
            return [ItemDone(Reasoning("\n\n".join(parts), native=native))]
        if kind == "function_call":
            self._function_calls += 1
            arguments = item.get("arguments", "")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            return [
                ItemDone(
                    ToolCall(
                        call_id=str(item.get("call_id") or item.get("id") or ""),
                        name=str(item.get("name") or ""),
                        arguments=arguments,
                        native=native,
                    )
                )
            ]
        if kind in COMPACTION_TYPES:
            return [ServerCompaction(OpaqueItem(native))]
        # Anything else (a hosted tool's item...) has no canonical meaning but may matter
        # to this same model later: keep it opaque.
        return [ItemDone(OpaqueItem(native))]

    def _finish(self, response: Any, *, incomplete: str | None) -> list[StreamEvent]:
        self.done = True
        events: list[StreamEvent] = []
        if not isinstance(response, dict):
            response = {}
        if self._items == 0:
            # Some proxies skip `output_item.done`; the final response still lists the output.
            output = response.get("output")
            for item in output if isinstance(output, list) else []:
                events.extend(self._item_done(item))
            if self._items == 0 and self._text:
                events.append(ItemDone(AssistantText("".join(self._text))))
        usage = _usage(response.get("usage"))
        if usage is not None:
            events.append(usage)
        if incomplete is not None:
            events.append(
                Finished("content_filter" if incomplete == "content_filter" else "length")
            )
        elif self._function_calls:
            events.append(Finished("tool_calls"))
        elif self._refusal:
            events.append(Finished("refusal"))
        else:
            events.append(Finished("stop"))
        return events

    def check_complete(self) -> None:
        if not self.done:
            raise ProviderError(
                f"{self.label}: the stream ended before the response completed",
                retryable=True,
                cause="connection_dropped",
            )


def _rejects_encrypted_content(exc: ProviderError) -> bool:
    """A model without reasoning refuses `include: ["reasoning.encrypted_content"]`.

    Only the "not supported" refusal counts: a corrupted or foreign replayed
    artifact ("invalid_encrypted_content", "could not be verified/decrypted")
    also mentions encrypted content but must surface as an error, not switch
    the include off for good.
    """
    message = exc.message.lower()
    return (
        exc.status == 400
        and "encrypted content" in message
        and ("not supported" in message or "unsupported" in message)
        and "invalid_encrypted_content" not in message
        and "verif" not in message
        and "decrypt" not in message
    )


class OpenAIResponsesProvider:
    """`POST {base}/responses` with `stream: true`; one instance per identity and key."""

    def __init__(
        self,
        identity: ProviderIdentity,
        client: httpx.AsyncClient,
        *,
        api_key: str | None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        store: bool = False,
        owns_client: bool = False,
    ) -> None:
        if api_key:
            register_secret(api_key)
        self.identity = identity
        self._client = client
        self._headers = auth_headers(api_key)
        self._retry = retry or RetryPolicy()
        self._timeout = timeout
        self._store = store
        self._owns_client = owns_client
        self._include_encrypted = True
        self._base = identity.route.base_url.rstrip("/")
        self._label = f"{identity.provider} ({safe_url(self._base)})"

    def __repr__(self) -> str:
        return f"OpenAIResponsesProvider(identity={self.identity!r})"

    # OpenAI's prompt cache matches the request's exact prefix, tools included: a summary
    # request without the turn's tools would be read at the full price from its first
    # item on. It is sent them with `tool_choice: "none"` (nothing can be called), so it
    # is the turn's own prefix plus the summary request.
    summary_keeps_tools = True

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of a streamed request (also what context inspection can show)."""
        body: dict[str, Any] = {
            "model": self.identity.model,
            "input": to_responses_input(request.items, self.identity, store=self._store),
            "stream": True,
            "store": self._store,
        }
        if request.instructions:
            body["instructions"] = request.instructions
        if self._include_encrypted:
            body["include"] = ["reasoning.encrypted_content"]
        if request.tools:
            body["tools"] = [to_responses_tool(t) for t in request.tools]
            if request.purpose == "summary" or isinstance(request.require_tool, NoTool):
                body["tool_choice"] = "none"
            elif request.require_tool:
                required = request.required_tools()
                if len(required) < len(request.tools):
                    body["tool_choice"] = {"type": "function", "name": required[0].name}
                else:
                    body["tool_choice"] = "required"
        if request.max_output_tokens:
            body["max_output_tokens"] = request.max_output_tokens
        if request.cache_key:
            body["prompt_cache_key"] = request.cache_key
        if request.compact_threshold:
            body["context_management"] = [
                {"type": "compaction", "compact_threshold": request.compact_threshold}
            ]
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        while True:
            body = self.build_body(request)
            delivered = False
            try:
                events = retry_stream(
                    functools.partial(self._attempt, body), self._retry, label=self._label
                )
                async with aclosing(events):  # an abandoned stream closes its connection now
                    async for event in events:
                        delivered = True
                        yield event
                return
            except ProviderError as exc:
                if delivered or not self._include_encrypted or not _rejects_encrypted_content(exc):
                    raise
                # Non-reasoning models (gpt-4o, gpt-4.1) reject the include; ask without it.
                log.info("%s: model has no encrypted reasoning; retrying without it", self._label)
                self._include_encrypted = False

    async def _attempt(self, body: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        parser = ResponsesStreamParser(self.identity, self._label)
        events = post_sse(
            self._client,
            f"{self._base}/responses",
            body,
            headers=self._headers,
            timeout=self._timeout,
            label=self._label,
        )
        async with aclosing(events):
            async for sse in events:
                if not sse.data or sse.data == "[DONE]":
                    continue
                payload = decode_event_data(sse.data, label=self._label)
                if not isinstance(payload, dict):
                    continue
                if "type" not in payload and sse.event and sse.event != "message":
                    payload["type"] = sse.event
                for event in parser.feed(payload):
                    yield event
                if parser.done:
                    break
        parser.check_complete()

    async def compact(self, request: ModelRequest) -> tuple[list[dict[str, Any]], Usage]:
        """`POST {base}/responses/compact`: the compacted window to replay, and its usage.

        The output (retained items plus the opaque compaction item) must be sent
        back unchanged, followed by new input (docs/compaction.md, "Server-side compaction
        (OpenAI)").
        """
        body: dict[str, Any] = {
            "model": self.identity.model,
            "input": to_responses_input(request.items, self.identity, store=self._store),
        }
        if request.instructions:
            body["instructions"] = request.instructions
        if request.cache_key:
            body["prompt_cache_key"] = request.cache_key
        data = await retry_call(
            functools.partial(
                post_json,
                self._client,
                f"{self._base}/responses/compact",
                body,
                headers=self._headers,
                timeout=self._timeout,
                label=self._label,
            ),
            self._retry,
            label=self._label,
        )
        output = data.get("output") if isinstance(data, dict) else None
        if not isinstance(output, list) or not all(isinstance(i, dict) for i in output):
            raise ProviderError(f"{self._label}: the compact answer has no output items")
        usage = _usage(data.get("usage")) or Usage(input_tokens=0, output_tokens=0)
        return output, usage

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()
