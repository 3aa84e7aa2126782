"""The `local` provider: a GGUF model run in-process by llama.cpp (xllamacpp), no key, no network.

It is Chat Completions against the embedded server (`baton.local.engine`),
so everything `OpenAIChatProvider` does applies, including the text tool-call
fallback: the small Qwen2.5-Coder models write calls as fenced JSON in the
message text rather than as structured `tool_calls` (docs/local-model.md).

The identity stays `("local", model, Route("local", "none"))` whatever port the
engine happens to get, so stored items never depend on a port number; the
loopback URL is given to the chat provider as its `base_url` instead.

Construction checks what can be checked without loading anything (the
optional dependency, the model file) and raises `ConfigError` naming the fix,
so `baton/session/setModel` and the first prompt fail with a useful message
rather than a traceback. The model loads on the first `stream()`.

Tried and left out: the Qwen template puts Baton's instructions (which name
the mode) before the ~1,600-token tool block, so a plan/build mode switch
re-reads the whole prompt. Sending the tool block ahead of the instructions
kept ~1,000 more tokens cached across the switch, but the 1.5B model then
called `plan_write` for 1 of 3 planning prompts instead of 3 of 3.
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
from baton.local.prompt_cache import PromptCache, prefix_key
from baton.providers.base import (
    AssistantText,
    Item,
    ModelRequest,
    Progress,
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
            # llama.cpp streams `prompt_progress` while it reads the prompt (minutes on a CPU).
            "return_progress": True,
        }
        self._max_tokens = local.max_tokens
        self._client = httpx.AsyncClient(timeout=self._timeout, transport=transport)
        cache_dir = self.engine.config.prompt_cache_dir
        self._prompt_cache = PromptCache(cache_dir, self._client) if cache_dir else None
        self._chat: OpenAIChatProvider | None = None
        self._chat_base: str | None = None

    def __repr__(self) -> str:
        return f"LocalProvider(identity={self.identity!r}, engine={self._engine!r})"

    # llama.cpp: a summary request keeps the turn's tools, so its prompt is the turn's
    # cached prefix (OpenAIChatProvider.summary_keeps_tools).
    summary_keeps_tools = True

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("the local provider is closed")
        return self._engine

    def _chat_for(self, base_url: str) -> OpenAIChatProvider:
        # The engine may have been restarted on another port (a settings change stopped it).
        if self._chat is None or self._chat_base != base_url:
            self._chat = OpenAIChatProvider(
                self.identity,
                self._client,
                retry=self._retry,
                timeout=self._timeout,
                text_tool_calls=True,
                extra_body=self._sampling,
                base_url=f"{base_url}/v1",
                llamacpp=True,
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
            if not engine.running:
                yield Progress("loading")
            base_url = await asyncio.to_thread(engine.start)
            chat = self._chat_for(base_url)
            key = self._prefix_key(chat, request)
            if key is not None and self._prompt_cache is not None:
                await self._prompt_cache.restore(base_url, key)
            events = chat.stream(request)
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
            if key is not None and self._prompt_cache is not None:
                await self._prompt_cache.save(base_url, key)

    def _prefix_key(self, chat: OpenAIChatProvider, request: ModelRequest) -> str | None:
        """The saved-prompt key of the request's static prefix: instructions and tools as sent."""
        if self._prompt_cache is None:
            return None
        body = chat.build_body(request)
        messages = body.get("messages") or []
        system = messages[0] if messages and messages[0].get("role") == "system" else None
        config = self.engine.config
        return prefix_key(
            config.model_path,
            config.context_size,
            json.dumps(system, ensure_ascii=False),
            body.get("tools") or [],
        )

    async def aclose(self) -> None:
        engine, self._engine = self._engine, None
        await self._client.aclose()
        if engine is not None:
            await asyncio.to_thread(self._manager.release, engine)


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
