"""Chat Completions (`POST {base}/chat/completions`): Ollama, llama.cpp, vLLM, LM Studio, OpenRouter.

The lowest common denominator of local and third-party servers, so the
request is shaped for the strictest of them: consecutive user texts are merged
into one message (many chat templates insist that roles alternate), an
assistant's text and the calls that follow it form one message, and
provider-specific items (reasoning, opaque artifacts) are dropped since no
Chat Completions server can use another model's.

Tool calls written as text. Small models often write a call as JSON in the
message text instead of structured `tool_calls`. With `text_tool_calls` (on by
default) and no structured call in the answer, the finished text is parsed by
`toolcall_text`; recognised calls become `ToolCall` items and are removed from
the `AssistantText` item. The text deltas were streamed before the answer was
complete and cannot be taken back, so the live view may show the JSON; the
stored item, and so every later request, does not. A structured call always
wins: then the text is left exactly as written.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from baton.errors import ProviderError
from baton.ids import new_id
from baton.logs import register_secret
from baton.providers.base import (
    AssistantText,
    ContextBlock,
    Finished,
    ImageInput,
    Item,
    ItemDone,
    ModelRequest,
    NoTool,
    Progress,
    ProviderIdentity,
    Reasoning,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolOutput,
    ToolSpec,
    Usage,
    UserText,
)
from baton.providers.http_errors import error_from_payload, safe_url
from baton.providers.retry import RetryPolicy, retry_stream
from baton.providers.toolcall_gate import ToolCallTextGate
from baton.providers.toolcall_text import parse_text_tool_calls
from baton.providers.wire import auth_headers, decode_event_data, post_sse

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
FinishReason = Literal["stop", "tool_calls", "length", "refusal", "content_filter"]


# ----------------------------------------------------------------------------- request


def _join(a: str, b: str) -> str:
    return f"{a}\n\n{b}" if a and b else a or b


def _with_images(content: Any, text: str, images: Sequence[ImageInput]) -> Any:
    """A user message's content with `text` joined and `images` as `image_url` parts: a
    plain string while there is no image (what every server takes), parts once there is."""
    if not images and isinstance(content, str):
        return _join(content, text)
    parts: list[dict[str, Any]] = (
        [{"type": "text", "text": content}] if isinstance(content, str) and content else []
    )
    if isinstance(content, list):
        parts = content
    if text:
        parts.append({"type": "text", "text": text})
    parts.extend({"type": "image_url", "image_url": {"url": i.data_url()}} for i in images)
    return parts


def to_chat_messages(
    instructions: str, items: Sequence[Item], *, images: bool = True
) -> list[dict[str, Any]]:
    """The `messages` array for `items`, with `instructions` as the system message;
    `images` False for a model that takes none (their messages' text is still sent)."""
    messages: list[dict[str, Any]] = []
    if instructions:
        messages.append({"role": "system", "content": instructions})

    def last(role: str) -> dict[str, Any] | None:
        return messages[-1] if messages and messages[-1]["role"] == role else None

    for item in items:
        if isinstance(item, UserText | ContextBlock):
            shown = item.images if images and isinstance(item, UserText) else ()
            prev = last("user")
            if prev is not None:
                prev["content"] = _with_images(prev["content"], item.text, shown)
            else:
                messages.append({"role": "user", "content": _with_images("", item.text, shown)})
        elif isinstance(item, AssistantText):
            prev = last("assistant")
            if prev is not None:
                prev["content"] = _join(prev["content"], item.text)
            else:
                messages.append({"role": "assistant", "content": item.text})
        elif isinstance(item, ToolCall):
            prev = last("assistant")
            if prev is None:
                # "" rather than null: Ollama rejects a null content.
                prev = {"role": "assistant", "content": ""}
                messages.append(prev)
            prev.setdefault("tool_calls", []).append(
                {
                    "id": item.call_id,
                    "type": "function",
                    "function": {"name": item.name, "arguments": item.arguments or "{}"},
                }
            )
        elif isinstance(item, ToolOutput):
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})
        # Reasoning and OpaqueItem: provider-specific, nothing here can replay them.
    return messages


def to_chat_tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


# ----------------------------------------------------------------------------- response


@dataclass
class _PartialCall:
    call_id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) else 0


def _usage(data: dict[str, Any]) -> Usage:
    prompt_details = data.get("prompt_tokens_details") or {}
    completion_details = data.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=_int(data.get("prompt_tokens")),
        output_tokens=_int(data.get("completion_tokens")),
        cached_tokens=_int(prompt_details.get("cached_tokens")),
        reasoning_tokens=_int(completion_details.get("reasoning_tokens")),
    )


def with_timings(usage: Usage | None, timings: dict[str, Any] | None) -> Usage | None:
    """llama.cpp's `timings` say how the prompt was read: `prompt_n` tokens evaluated,
    `cache_n` reused from the KV cache of the previous request (its common prefix). Its
    `usage` may leave the cached part out, so the prompt is the two together."""
    if timings is None or not isinstance(timings.get("cache_n"), int):
        return usage
    cached = _int(timings.get("cache_n"))
    prompt = _int(timings.get("prompt_n")) + cached
    if usage is None:
        return Usage(
            input_tokens=prompt,
            output_tokens=_int(timings.get("predicted_n")),
            cached_tokens=cached,
        )
    return dataclasses.replace(
        usage, input_tokens=max(usage.input_tokens, prompt), cached_tokens=cached
    )


class ChatStreamParser:
    """Accumulates Chat Completions chunks; `finish()` yields the finished items.

    Structured tool-call fragments are joined by their `index` (by `id`, when a
    server leaves the index out) and arguments are kept exactly as streamed,
    even when they are not valid JSON: the agent loop reports that to the model.
    """

    def __init__(
        self,
        label: str,
        *,
        tool_names: Collection[str] = (),
        text_tool_calls: bool = True,
        new_call_id: Callable[[], str] = lambda: new_id("call"),
    ) -> None:
        self.label = label
        self.tool_names = tool_names
        self.text_tool_calls = text_tool_calls
        self.new_call_id = new_call_id
        self.saw_done = False
        self.finish_reason: str | None = None
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._usage: Usage | None = None
        self._timings: dict[str, Any] | None = None
        self._refusal = False
        # Calls written as text are held back from the live text (the final items decide).
        self._gate = ToolCallTextGate(tool_names) if text_tool_calls and tool_names else None

    @property
    def complete(self) -> bool:
        return self.saw_done or self.finish_reason is not None

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        if chunk.get("error"):
            raise error_from_payload(chunk, label=self.label)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = _usage(usage)
        timings = chunk.get("timings")  # llama.cpp: prompt tokens evaluated vs served from cache
        if isinstance(timings, dict):
            self._timings = timings
        events: list[StreamEvent] = []
        progress = chunk.get("prompt_progress")  # llama.cpp, asked with `return_progress`
        if isinstance(progress, dict):
            events.append(
                Progress(
                    "reading",
                    done=_int(progress.get("processed")),
                    total=_int(progress.get("total")),
                    cached=_int(progress.get("cache")),
                )
            )
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                self._reasoning.append(reasoning)
                events.append(ReasoningDelta(reasoning))
            for key in ("content", "refusal"):
                text = delta.get(key)
                if isinstance(text, str) and text:
                    self._refusal = self._refusal or key == "refusal"
                    self._text.append(text)
                    shown = self._gate.feed(text) if self._gate and key == "content" else text
                    if shown:
                        events.append(TextDelta(shown))
            for fragment in delta.get("tool_calls") or []:
                if isinstance(fragment, dict):
                    self._add_fragment(fragment)
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return events

    def _add_fragment(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index")
        call_id = fragment.get("id") or None
        if not isinstance(index, int):
            known = [i for i, c in self._calls.items() if call_id and c.call_id == call_id]
            index = known[0] if known else max(self._calls, default=-1) + 1
        entry = self._calls.setdefault(index, _PartialCall())
        if call_id and not entry.call_id:
            entry.call_id = str(call_id)
        function = fragment.get("function") or {}
        name = function.get("name")
        if isinstance(name, str) and name and not entry.name:
            entry.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            entry.arguments.append(arguments)
        elif isinstance(arguments, dict):  # some servers send the decoded object
            entry.arguments = [json.dumps(arguments, ensure_ascii=False)]

    def finish(self) -> list[StreamEvent]:
        """The finished items, usage and finish reason; raises if the stream was cut short."""
        if not self.complete:
            raise ProviderError(
                f"{self.label}: the stream ended before the response finished",
                retryable=True,
                cause="connection_dropped",
            )
        events: list[StreamEvent] = []
        if self._gate is not None and (shown := self._gate.flush()):
            events.append(TextDelta(shown))
        reasoning = "".join(self._reasoning)
        if reasoning:
            events.append(ItemDone(Reasoning(reasoning)))
        text = "".join(self._text)
        calls = [
            ToolCall(
                call_id=c.call_id or self.new_call_id(),
                name=c.name,
                arguments="".join(c.arguments) or "{}",
            )
            for _, c in sorted(self._calls.items())
        ]
        if not calls and self.text_tool_calls and self.tool_names:
            text, calls = parse_text_tool_calls(text, self.tool_names, new_call_id=self.new_call_id)
        if text:
            events.append(ItemDone(AssistantText(text)))
        events.extend(ItemDone(c) for c in calls)
        usage = with_timings(self._usage, self._timings)
        if usage is not None:
            events.append(usage)
        events.append(Finished(self._reason(bool(calls))))
        return events

    def _reason(self, has_calls: bool) -> FinishReason:
        if self.finish_reason == "length":
            return "length"
        if has_calls:
            return "tool_calls"
        if self.finish_reason == "content_filter":
            return "content_filter"
        if self._refusal:
            return "refusal"
        return "stop"


# ----------------------------------------------------------------------------- provider


def _rejects_stream_options(exc: ProviderError) -> bool:
    return exc.status in (400, 422) and "stream_options" in exc.message


def tool_call_schema(tools: list[ToolSpec]) -> dict[str, Any]:
    """A JSON schema matching exactly one call `{"name": ..., "arguments": {...}}` of
    one of `tools`, each with its own parameters."""
    return {
        "oneOf": [
            {
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": t.parameters},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for t in tools
        ]
    }


class OpenAIChatProvider:
    """A Chat Completions endpoint, streamed; one instance per identity and key."""

    def __init__(
        self,
        identity: ProviderIdentity,
        client: httpx.AsyncClient,
        *,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        text_tool_calls: bool = True,
        extra_body: Mapping[str, Any] | None = None,
        base_url: str | None = None,
        owns_client: bool = False,
        llamacpp: bool = False,
    ) -> None:
        """`base_url` overrides where requests go when it is not the identity's route
        (the embedded local model: identity route "local", server on an ephemeral port);
        `llamacpp` says the server takes llama.cpp's own sampling fields (repeat_penalty)."""
        self.llamacpp = llamacpp
        if api_key:
            register_secret(api_key)
        self.identity = identity
        self.text_tool_calls = text_tool_calls
        self._client = client
        self._headers = auth_headers(api_key)
        self._retry = retry or RetryPolicy()
        self._timeout = timeout
        self._extra = dict(extra_body or {})
        self._owns_client = owns_client
        self._stream_options = True
        self._base = (base_url or identity.route.base_url).rstrip("/")
        self._label = f"{identity.provider} ({safe_url(self._base)})"

    def __repr__(self) -> str:
        return f"OpenAIChatProvider(identity={self.identity!r})"

    @property
    def summary_keeps_tools(self) -> bool:
        """Whether a summary request is sent with the session's tools (never offered).

        llama.cpp renders the tools inside the system message, after the
        instructions (Qwen2.5's template): a request without them differs from the
        turn before it right after the instructions, and the whole history must be
        read again, minutes on a CPU. With the same tools and `tool_choice: none`
        the prompt is the turn's own prefix, served from the KV cache."""
        return self.llamacpp

    def _tools(self, request: ModelRequest) -> list[ToolSpec]:
        """The tools a model may call: none in a summary."""
        return request.tools if request.purpose != "summary" else []

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            **self._extra,
            "model": self.identity.model,
            "messages": to_chat_messages(
                request.instructions, request.items, images=not self.llamacpp
            ),
            "stream": True,
        }
        if self._stream_options:
            body["stream_options"] = {"include_usage": True}
        tools = self._tools(request)
        if request.purpose == "summary" and self.summary_keeps_tools and request.tools:
            body["tools"] = [to_chat_tool(t) for t in request.tools]
            body["tool_choice"] = "none"  # rendered as in the turn; nothing parsed as a call
        if tools:
            body["tools"] = [to_chat_tool(t) for t in tools]
            if isinstance(request.require_tool, NoTool):
                body["tool_choice"] = "none"
            elif request.require_tool:
                required = request.required_tools()
                if self.llamacpp:
                    # llama.cpp does not enforce tool_choice for templates such as
                    # Qwen2.5's; a schema of the calls constrains the text to one call,
                    # which the text tool-call parser reads back.
                    body["json_schema"] = tool_call_schema(required)
                elif len(required) < len(tools):
                    body["tool_choice"] = {
                        "type": "function",
                        "function": {"name": required[0].name},
                    }
                else:
                    body["tool_choice"] = "required"
        if request.max_output_tokens:
            body["max_tokens"] = request.max_output_tokens
        if request.sampling is not None:
            body.update(request.sampling.chat_fields(llamacpp=self.llamacpp))
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        names = [t.name for t in self._tools(request)]
        while True:
            body = self.build_body(request)
            delivered = False
            try:
                events = retry_stream(
                    functools.partial(self._attempt, body, names), self._retry, label=self._label
                )
                async with aclosing(events):  # an abandoned stream closes its connection now
                    async for event in events:
                        delivered = True
                        yield event
                return
            except ProviderError as exc:
                if delivered or not self._stream_options or not _rejects_stream_options(exc):
                    raise
                log.info("%s: no stream_options support; usage will not be reported", self._label)
                self._stream_options = False

    async def _attempt(self, body: dict[str, Any], names: list[str]) -> AsyncIterator[StreamEvent]:
        parser = ChatStreamParser(
            self._label, tool_names=names, text_tool_calls=self.text_tool_calls
        )
        events = post_sse(
            self._client,
            f"{self._base}/chat/completions",
            body,
            headers=self._headers,
            timeout=self._timeout,
            label=self._label,
        )
        async with aclosing(events):
            async for sse in events:
                data = sse.data.strip()
                if data == "[DONE]":
                    parser.saw_done = True
                    break
                if not data:
                    continue
                chunk = decode_event_data(data, label=self._label)
                if isinstance(chunk, dict):
                    for event in parser.feed(chunk):
                        yield event
        for event in parser.finish():
            yield event

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()
