"""The `local` provider: a GGUF model run in-process by llama.cpp (xllamacpp), no key, no network.

It is Chat Completions against the embedded server (`baton.local.engine`),
so everything `OpenAIChatProvider` does applies, including the text tool-call
fallback: the small Qwen2.5-Coder models write calls as fenced JSON in the
message text rather than as structured `tool_calls` (REFERENCE.md section 7).

The identity stays `("local", model, Route("local", "none"))` whatever port the
engine happens to get, so stored items never depend on a port number; the
loopback URL is given to the chat provider as its `base_url` instead.

Construction checks what can be checked without loading anything (the
optional dependency, the model file) and raises `ConfigError` naming the fix,
so `baton/session/setModel` and the first prompt fail with a useful message
rather than a traceback. The model loads on the first `stream()`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import httpx

from baton.config import Settings
from baton.local.engine import (
    Engine,
    EngineConfig,
    EngineManager,
    default_manager,
    require_xllamacpp,
)
from baton.providers.base import (
    AssistantText,
    Item,
    ModelRequest,
    ProviderIdentity,
    StreamEvent,
    ToolCall,
    Usage,
)
from baton.providers.openai_chat import OpenAIChatProvider
from baton.providers.retry import RetryPolicy
from baton.providers.toolcall_text import parse_text_tool_calls

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0


class LocalProvider:
    """The embedded model as a `Provider`; engines are shared through an `EngineManager`."""

    def __init__(
        self,
        *,
        settings: Settings,
        identity: ProviderIdentity,
        manager: EngineManager | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """`manager` and `transport` exist for tests (a fake loader, a mock HTTP server)."""
        if manager is None:
            require_xllamacpp()
        self.identity = identity
        local = settings.local
        config = EngineConfig.from_settings(local)
        self._manager = manager or default_manager()
        self._engine: Engine | None = self._manager.acquire(config)
        self._timeout = httpx.Timeout(settings.request_timeout, connect=CONNECT_TIMEOUT)
        # Loopback: a retry only helps with a server that is still coming up or was restarted.
        self._retry = RetryPolicy(max_retries=min(settings.max_retries, 2))
        self._sampling: dict[str, Any] = {
            "temperature": local.temperature,
            "top_p": local.top_p,
            "seed": local.seed,
        }
        self._max_tokens = local.max_tokens
        self._client = httpx.AsyncClient(timeout=self._timeout, transport=transport)
        self._chat: LocalChat | None = None
        self._chat_base: str | None = None

    def __repr__(self) -> str:
        return f"LocalProvider(identity={self.identity!r}, engine={self._engine!r})"

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("the local provider is closed")
        return self._engine

    def _chat_for(self, base_url: str) -> LocalChat:
        # The engine may have been restarted on another port (a settings change stopped it).
        if self._chat is None or self._chat_base != base_url:
            self._chat = LocalChat(
                self.identity,
                self._client,
                retry=self._retry,
                timeout=self._timeout,
                text_tool_calls=True,
                extra_body=self._sampling,
                base_url=f"{base_url}/v1",
                tools_first=uses_hermes_tools(self.engine.chat_template),
            )
            self._chat_base = base_url
        return self._chat

    async def start(self) -> str:
        """Load the model now if it is not loaded yet; returns the engine's base URL."""
        engine = self.engine
        return await asyncio.to_thread(engine.start)

    def _capped(self, request: ModelRequest) -> ModelRequest:
        """`local.maxTokens` bounds every response, a summary's too.

        On a CPU a runaway answer (a small model repeating a call) costs minutes;
        an explicit bound is worth more here than a caller's generous default.
        """
        wanted = request.max_output_tokens or self._max_tokens
        return dataclasses.replace(request, max_output_tokens=min(wanted, self._max_tokens))

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        request = without_echoed_calls(self._capped(request))
        engine = self.engine
        with engine.lease():
            base_url = await asyncio.to_thread(engine.start)
            events = self._chat_for(base_url).stream(request)
            began = time.monotonic()
            try:
                async for event in events:
                    if isinstance(event, Usage):
                        # On a CPU the speed is the first thing anyone asks about.
                        log.info(
                            "local model: %d prompt tokens (%d cached), %d generated, %.1f s",
                            event.input_tokens,
                            event.cached_tokens,
                            event.output_tokens,
                            time.monotonic() - began,
                        )
                    yield event
            finally:
                # Close the HTTP stream now, inside the lease, when the consumer stops early.
                if isinstance(events, AsyncGenerator):
                    await events.aclose()

    async def aclose(self) -> None:
        engine, self._engine = self._engine, None
        await self._client.aclose()
        if engine is not None:
            await asyncio.to_thread(self._manager.release, engine)


# The tool block of the Qwen2.5 / Hermes chat templates, in their own words.
_TOOLS_HEAD = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


def uses_hermes_tools(template: str | None) -> bool:
    """Does the model's template describe tools in a `<tools>` block and expect `<tool_call>`s?"""
    return bool(template) and "<tools>" in str(template) and "<tool_call>" in str(template)


def tool_block(tools: list[dict[str, Any]]) -> str:
    return (
        _TOOLS_HEAD + "".join("\n" + json.dumps(t, ensure_ascii=False) for t in tools) + _TOOLS_TAIL
    )


class LocalChat(OpenAIChatProvider):
    """Chat Completions to the engine; with `tools_first`, the tool block leads the system text.

    Templates of the Hermes kind (Qwen2.5's among them) render Baton's
    instructions first and the tool definitions (~1,600 tokens for Baton's
    tools) after them. The instructions name the mode, so every switch between
    plan and build mode changed the prompt before the tool block and the
    engine re-read all of it: about a minute on two CPU cores. Sending the
    same block ourselves, ahead of the instructions, keeps it in the prompt
    cache. The block is the template's own text; the model's calls are then
    parsed from its text as before (`toolcall_text`), since no `tools` field
    is sent.
    """

    def __init__(self, *args: Any, tools_first: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tools_first = tools_first
        self._order: list[str] = []  # tool names in the order last sent

    def _stable(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`tools` in the order last sent, new ones after: the longest cacheable prefix.

        Plan and build mode offer different tools (no `write` in plan mode, no
        `plan_exit` in build mode); in the registry's order the first
        difference comes after one tool, in this order after most of them.
        """
        by_name = {t["function"]["name"]: t for t in tools}
        order = [n for n in self._order if n in by_name]
        order += [n for n in by_name if n not in order]
        self._order = order
        return [by_name[n] for n in order]

    def build_body(self, request: ModelRequest) -> dict[str, Any]:
        body = super().build_body(request)
        tools = body.get("tools")
        if not self.tools_first or not tools:
            return body
        del body["tools"]
        block = tool_block(self._stable(tools))
        messages: list[dict[str, Any]] = body["messages"]
        if messages and messages[0]["role"] == "system":
            messages[0] = {**messages[0], "content": f"{block}\n\n{messages[0]['content']}"}
        else:
            messages.insert(0, {"role": "system", "content": block})
        return body


def _call_key(name: str, arguments: str) -> tuple[str, str]:
    try:
        return name, json.dumps(json.loads(arguments or "{}"), sort_keys=True)
    except ValueError:
        return name, arguments


def without_echoed_calls(request: ModelRequest) -> ModelRequest:
    """The request without assistant text that only repeats calls already in it as `ToolCall`s.

    When a model writes a call as text, the agent loop stores the text it
    streamed (it cannot be taken back) as well as the parsed call. Sent both
    ways, the small model sees each earlier call twice, once as its fenced
    JSON and once as the chat template's `<tool_call>`, and measurably starts
    re-issuing old calls at the start of every answer. Only text whose every
    recognised call matches a structured call of this request (same name and
    arguments) is trimmed; anything else in it is kept.
    """
    calls = {_call_key(i.name, i.arguments) for i in request.items if isinstance(i, ToolCall)}
    if not calls:
        return request
    names = {name for name, _ in calls}
    items: list[Item] = []
    changed = False
    for item in request.items:
        if isinstance(item, AssistantText) and item.native is None:
            rest, echoed = parse_text_tool_calls(item.text, names)
            if echoed and all(_call_key(c.name, c.arguments) in calls for c in echoed):
                changed = True
                if rest:
                    items.append(AssistantText(rest))
                continue
        items.append(item)
    return dataclasses.replace(request, items=items) if changed else request
