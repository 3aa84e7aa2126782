"""`baton/models/list`: the models a person can switch to, with the window Baton uses for each.

The list comes from the provider where it has one (`GET {baseUrl}/models` on
the OpenAI API and on OpenAI-compatible servers: Ollama, llama.cpp, vLLM, LM
Studio, OpenRouter; `GET /v1/models` on Anthropic's, Claude models only), else from the configuration (the configured model, the
provider's default, the session's pinned model). A provider that cannot be
reached is not an error: the configured models are listed and `error` says why.
Context windows come from `providers.windows.context_window`, the same function the
context builder uses, so the picker and the context meter always agree.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import httpx

from baton import protocol as p
from baton.auth import Credentials
from baton.config import DEFAULT_MODELS, Settings
from baton.errors import ConfigError
from baton.logs import redact
from baton.providers.anthropic_messages import auth_headers as anthropic_headers
from baton.providers.anthropic_messages import models_url as anthropic_models_url
from baton.providers.base import ProviderIdentity, Route
from baton.providers.factory import (
    LOCAL_BASE_URL,
    ProviderRegistry,
    configured_provider,
    key_digest,
    resolve_identity,
    route_key,
)
from baton.providers.windows import context_window

log = logging.getLogger(__name__)

CACHE_SECONDS = 60.0
LIST_TIMEOUT = 10.0
# The official API lists every model it serves (embeddings, speech, images, …);
# only those that can drive a coding session are offered.
OPENAI_CHAT_PREFIXES = ("gpt-", "o1", "o3", "o4", "codex", "chatgpt")
OPENAI_EXCLUDED = (
    "audio",
    "realtime",
    "tts",
    "transcribe",
    "image",
    "embedding",
    "moderation",
    "search",
    "dall-e",
    "whisper",
)


@dataclass
class _Cached:
    at: float
    ids: list[str]


class ModelCatalog:
    """Lists models per provider route, caching each route's answer for a minute."""

    def __init__(self, providers: Any, credentials: Credentials) -> None:
        self.providers = providers
        self.credentials = credentials
        self._cache: dict[tuple[str, str | None], _Cached] = {}

    async def models(
        self,
        settings: Settings,
        *,
        provider: str | None,
        pinned_provider: str | None,
        pinned_model: str | None,
    ) -> p.ModelsListResult:
        configured = configured_provider(settings, self.credentials)
        provider_id = provider or pinned_provider or configured
        # A pinned model belongs to the pinned provider only.
        pinned = pinned_model if (pinned_provider or configured) == provider_id else None
        current: str | None
        try:
            current = resolve_identity(settings, self.credentials, pinned, provider_id).model
        except ConfigError:
            current = pinned
        candidates = [current, pinned, settings.model if provider_id == configured else None]
        candidates.append(DEFAULT_MODELS.get(provider_id))
        fallback = _unique([m for m in candidates if m])

        route = self._route(settings, provider_id)
        ids: list[str] | None = None
        error: str | None = None
        if route is not None:
            try:
                ids = await self._fetch(route, settings, provider_id)
            except Exception as exc:
                error = redact(_describe(exc))
                log.info("listing models of %s failed: %s", route.base_url, error)
        source: Any = "provider" if ids else "configured"
        listed = ids or fallback
        if current and current not in listed:
            listed = [current, *listed]
        models = [
            p.ModelInfo(
                id=model,
                context_window=context_window(
                    settings, ProviderIdentity(provider_id, model, route or Route("", "none"))
                ),
            )
            for model in listed
        ]
        return p.ModelsListResult(
            provider=provider_id, models=models, current=current, source=source, error=error
        )

    def _route(self, settings: Settings, provider_id: str) -> Route | None:
        if provider_id == "local":
            return None
        try:
            # The route does not depend on the model; any id resolves it.
            identity = resolve_identity(settings, self.credentials, "-", provider_id)
        except ConfigError:
            return None
        if identity.route.base_url == LOCAL_BASE_URL:
            return None
        return identity.route

    async def _fetch(self, route: Route, settings: Settings, provider_id: str) -> list[str]:
        # The same key binding as the provider's own requests: never the person's key to a
        # base URL the workspace chose.
        key = route_key(settings, self.credentials, provider_id)
        cache_key = (route.base_url, key_digest(key))
        cached = self._cache.get(cache_key)
        if cached is not None and time.monotonic() - cached.at < CACHE_SECONDS:
            return list(cached.ids)
        if provider_id == "anthropic":
            headers = anthropic_headers(key)
            url = anthropic_models_url(route.base_url)
        else:
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            url = route.base_url.rstrip("/") + "/models"
        timeout = httpx.Timeout(LIST_TIMEOUT)
        if isinstance(self.providers, ProviderRegistry):
            client = self.providers.client(route.base_url, settings.request_timeout)
            response = await client.get(url, headers=headers, timeout=timeout)
        else:
            async with httpx.AsyncClient(timeout=timeout) as own:
                response = await own.get(url, headers=headers)
        if response.status_code >= 400:
            text = response.text[:300].strip()
            raise ValueError(f"GET /models answered {response.status_code}: {text}")
        body = response.json()
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise ValueError("GET /models answered without a `data` list")
        ids = sorted(
            {str(item["id"]) for item in data if isinstance(item, dict) and item.get("id")}
        )
        if provider_id == "openai":
            ids = [m for m in ids if _openai_chat_model(m)]
        elif provider_id == "anthropic":
            ids = [m for m in ids if m.lower().startswith("claude")]
        self._cache[cache_key] = _Cached(time.monotonic(), ids)
        return list(ids)


def _openai_chat_model(model: str) -> bool:
    lowered = model.lower()
    return lowered.startswith(OPENAI_CHAT_PREFIXES) and not any(
        bad in lowered for bad in OPENAI_EXCLUDED
    )


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _describe(exc: Exception) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"the provider did not answer within {LIST_TIMEOUT:.0f} s"
    if isinstance(exc, httpx.HTTPError):
        return f"cannot reach the provider: {type(exc).__name__}: {exc}"
    return str(exc) or type(exc).__name__
