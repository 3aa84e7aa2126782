"""From settings and credentials to a configured `Provider`, reusing connections.

Resolution (the settings are in README.md, "Configuration"):

* provider: the override, else `settings.provider`, else `openai` when an OpenAI
  key is available (client key or the `apiKeyEnv` variable), else
  `openai-compatible` when a base URL other than OpenAI's is set (`OPENAI_BASE_URL`
  of a keyless local server), else `local`;
* model: the override, else `settings.model`, else the provider's default
  (`openai-compatible` has none: the `model` key is required);
* base URL: `settings.base_url` (which already carries `OPENAI_BASE_URL`), else
  the provider's default (`openai-compatible` has none: `baseUrl` is required);
  when an override names a different provider than the one `settings.provider`
  names, the configured `model` and `baseUrl` belong to that other provider and
  are not used;
* route auth kind: `api_key` when a key is sent, else `none` (`openai` always
  sends one).

The identity (provider, model, route) decides where stored artifacts may be
replayed, so `resolve_identity` and `ProviderRegistry.get` must always agree; both go
through `_resolve`.

`ProviderRegistry` keeps one `httpx.AsyncClient` per base URL and one provider
per (identity, key, options), so connections are reused across requests and
sessions; `aclose()` releases them at shutdown. Keys are held only inside the
providers' Authorization header and in this registry's cache key as a digest.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Literal, cast

import httpx

from baton.auth import Credentials
from baton.config import DEFAULT_BASE_URLS, DEFAULT_MODELS, Settings
from baton.errors import ConfigError
from baton.providers.anthropic_messages import AnthropicMessagesProvider
from baton.providers.base import Provider, ProviderIdentity, Route
from baton.providers.openai_chat import OpenAIChatProvider
from baton.providers.openai_responses import OpenAIResponsesProvider
from baton.providers.retry import RetryPolicy, Sleep

# The embedded model has no HTTP route of its own worth naming; this marks its identity.
LOCAL_BASE_URL = "local"
CONNECT_TIMEOUT = 10.0
# Providers whose route always carries a key (the official APIs).
KEYED_PROVIDERS = frozenset({"openai", "anthropic"})
KEY_NAMES = {"openai": "OpenAI", "anthropic": "Anthropic"}
LOCAL_UNAVAILABLE = (
    'the local provider is not available yet; set provider = "openai" or "openai-compatible"'
)


@dataclass(frozen=True)
class _Resolved:
    identity: ProviderIdentity
    api_key: str | None = field(repr=False)


def configured_provider(settings: Settings, credentials: Credentials) -> str:
    if settings.provider:
        return settings.provider
    if credentials.get("openai", settings.api_key_env):
        return "openai"
    if credentials.get("anthropic", settings.person_key_env_for("anthropic")):
        return "anthropic"
    # A base URL and no key (OPENAI_BASE_URL of an Ollama, llama.cpp or vLLM server): that
    # server is what the person set up, not the embedded model.
    if settings.base_url and settings.base_url.rstrip("/") != DEFAULT_BASE_URLS["openai"]:
        return "openai-compatible"
    return "local"


def _resolve(
    settings: Settings,
    credentials: Credentials,
    model_override: str | None,
    provider_override: str | None,
) -> _Resolved:
    configured = configured_provider(settings, credentials)
    provider = provider_override or configured
    # Are the configured model and baseUrl meant for this provider? Not when the settings
    # name another one: that could send an OpenAI key to an Ollama URL, or the reverse.
    own = provider == configured or settings.provider is None
    if provider not in ("openai", "openai-compatible", "local", "anthropic"):
        raise ConfigError(
            f'unknown provider "{provider}": use "openai", "anthropic", "openai-compatible" '
            'or "local"',
            cause="not_configured",
        )
    model = model_override or (settings.model if own else None) or DEFAULT_MODELS.get(provider)
    if not model:
        raise ConfigError(
            f'provider "{provider}" needs a model: set the `model` key '
            '(for example model = "qwen2.5-coder:7b")',
            cause="model_missing",
        )
    if provider == "local":
        return _Resolved(ProviderIdentity("local", model, Route(LOCAL_BASE_URL, "none")), None)

    configured_url = settings.base_url if own else None
    url_key = "baseUrl"
    if provider == "anthropic":
        configured_url, url_key = _anthropic_url(settings, configured_url)
    base_url = configured_url or DEFAULT_BASE_URLS.get(provider)
    if not base_url:
        note = f' (the configured one is for provider "{configured}")' if settings.base_url else ""
        raise ConfigError(
            f'provider "{provider}" needs a base URL{note}: set the `baseUrl` key '
            '(for example baseUrl = "http://localhost:11434/v1" for Ollama)',
            cause="not_configured",
        )
    base_url = base_url.rstrip("/")
    workspace_url = configured_url is not None and not settings.from_person(url_key)
    api_key = _bound_key(settings, credentials, provider, workspace_url=workspace_url)
    if provider in KEYED_PROVIDERS:
        # The official routes always authenticate; a missing key is reported by
        # ProviderRegistry.get.
        return _Resolved(ProviderIdentity(provider, model, Route(base_url, "api_key")), api_key)
    auth_kind: Literal["api_key", "none"] = "api_key" if api_key else "none"
    return _Resolved(ProviderIdentity(provider, model, Route(base_url, auth_kind)), api_key)


def _anthropic_url(settings: Settings, configured: str | None) -> tuple[str | None, str]:
    """Claude's configured base URL and the setting it came from: `anthropic.baseUrl`
    (ANTHROPIC_BASE_URL), else a settings file's `baseUrl`, never the environment's
    `baseUrl` (OPENAI_BASE_URL is an OpenAI-compatible server's, not Claude's)."""
    if settings.anthropic.base_url:
        return settings.anthropic.base_url, "anthropic.baseUrl"
    if configured is not None and settings.origin("baseUrl") == "environment":
        return None, "baseUrl"
    return configured, "baseUrl"


def _bound_key(
    settings: Settings, credentials: Credentials, provider: str, *, workspace_url: bool
) -> str | None:
    """The key a route may carry: keys stay bound to where the person meant them to go.

    The person's key (the variable their own layers name in `apiKeyEnv`, by default
    `OPENAI_API_KEY`, or one the editor set with `baton/auth/set`) goes only to a base
    URL from the person's own layers or the provider's default, and such a URL gets only
    it (a workspace's `apiKeyEnv` does not pick another variable for it). A trusted
    workspace's own `baseUrl` gets a key only when the workspace's `apiKeyEnv` names a
    variable the person listed in `env.workspaceKeys`, and never one holding the
    person's key or a value equal to it; an untrusted workspace can set neither
    (`baton.config`).
    """
    own_var = settings.person_key_env_for(provider)
    if not workspace_url:
        return credentials.get(provider, own_var)
    name = settings.api_key_env
    if settings.origin("apiKeyEnv") != "workspace" or name == own_var:
        return None
    if not any(
        fnmatchcase(name.upper(), allowed.upper()) for allowed in settings.env.workspace_keys
    ):
        return None
    value = credentials.from_environment(name)
    if value is None or value in credentials.persons_keys(own_var):
        return None
    return value


def resolve_identity(
    settings: Settings,
    credentials: Credentials,
    model_override: str | None = None,
    provider_override: str | None = None,
) -> ProviderIdentity:
    """The identity `ProviderRegistry.get` would use, without building a provider.

    Raises `ConfigError` for an incomplete configuration (no model or base URL
    for `openai-compatible`, an unknown provider), but not for a missing
    OpenAI key: the identity of the `openai` route does not depend on it.
    """
    return _resolve(settings, credentials, model_override, provider_override).identity


def route_key(settings: Settings, credentials: Credentials, provider: str) -> str | None:
    """The key requests to `provider`'s configured route may carry (see `_bound_key`)."""
    return _resolve(settings, credentials, "-", provider).api_key


def key_digest(secret: str | None) -> str | None:
    return hashlib.sha256(secret.encode()).hexdigest() if secret else None


class ProviderRegistry:
    """Providers and HTTP clients, shared across sessions; close with `aclose()`.

    `transport` and `sleep` exist for tests (an `httpx.MockTransport`, a sleep
    that records delays instead of waiting).
    """

    def __init__(
        self,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep | None = None,
    ) -> None:
        self._transport = transport
        self._sleep: Sleep = sleep or asyncio.sleep
        self._clients: dict[str, httpx.AsyncClient] = {}
        self._providers: dict[tuple[Any, ...], Provider] = {}

    def __repr__(self) -> str:
        return f"ProviderRegistry(clients={len(self._clients)}, providers={len(self._providers)})"

    def client(self, base_url: str, request_timeout: float) -> httpx.AsyncClient:
        """The shared client for `base_url` (timeouts are also passed per request)."""
        client = self._clients.get(base_url)
        if client is None:
            client = httpx.AsyncClient(
                timeout=httpx.Timeout(request_timeout, connect=CONNECT_TIMEOUT),
                transport=self._transport,
            )
            self._clients[base_url] = client
        return client

    def get(
        self,
        settings: Settings,
        credentials: Credentials,
        *,
        provider: str | None = None,
        model: str | None = None,
    ) -> Provider:
        """The provider for `settings`, with a session's pinned `provider`/`model` if any."""
        resolved = _resolve(settings, credentials, model, provider)
        identity = resolved.identity
        if identity.provider == "local":
            key: tuple[Any, ...] = (identity, settings.local.model_dump_json())
            if key not in self._providers:
                self._providers[key] = _local_provider(settings, identity)
            return self._providers[key]
        if identity.provider in KEYED_PROVIDERS and not resolved.api_key:
            name = KEY_NAMES[identity.provider]
            workspace_url = (not settings.from_person("baseUrl") and settings.base_url) or (
                identity.provider == "anthropic"
                and not settings.from_person("anthropic.baseUrl")
                and settings.anthropic.base_url
            )
            if workspace_url:
                raise ConfigError(
                    f"the workspace's baseUrl ({workspace_url}) does not get your {name} "
                    "key: set baseUrl in your own settings, or list the variable the "
                    "workspace's apiKeyEnv names in your own env.workspaceKeys",
                    cause="key_missing",
                )
            # The editor command exists for OpenAI's key; Claude's comes from the
            # environment, or from an ACP editor's authenticate (baton/auth/set).
            how = (
                'or run "Baton: Set OpenAI API Key"'
                if identity.provider == "openai"
                else "or send it with baton/auth/set (an ACP editor: authenticate)"
            )
            raise ConfigError(
                f"no {name} API key: set "
                f"{settings.person_key_env_for(identity.provider)} in the environment {how}",
                cause="key_missing",
            )
        key = (
            identity,
            key_digest(resolved.api_key),
            settings.request_timeout,
            settings.max_retries,
            settings.anthropic.model_dump_json() if identity.provider == "anthropic" else None,
        )
        cached = self._providers.get(key)
        if cached is None:
            cached = self._build(identity, resolved.api_key, settings)
            self._providers[key] = cached
        return cached

    def _build(
        self, identity: ProviderIdentity, api_key: str | None, settings: Settings
    ) -> Provider:
        client = self.client(identity.route.base_url, settings.request_timeout)
        retry = RetryPolicy(max_retries=settings.max_retries, sleep=self._sleep)
        timeout = httpx.Timeout(settings.request_timeout, connect=CONNECT_TIMEOUT)
        if identity.provider == "anthropic":
            return AnthropicMessagesProvider(
                identity,
                client,
                api_key=api_key,
                options=settings.anthropic,
                retry=retry,
                timeout=timeout,
            )
        if identity.provider == "openai":
            return OpenAIResponsesProvider(
                identity, client, api_key=api_key, retry=retry, timeout=timeout
            )
        return OpenAIChatProvider(
            identity,
            client,
            api_key=api_key,
            retry=retry,
            timeout=timeout,
            text_tool_calls=True,
        )

    async def aclose(self) -> None:
        providers, self._providers = list(self._providers.values()), {}
        clients, self._clients = list(self._clients.values()), {}
        for provider in providers:
            await provider.aclose()
        for client in clients:
            await client.aclose()


def _local_provider(settings: Settings, identity: ProviderIdentity) -> Provider:
    """`baton.providers.local.LocalProvider(settings=..., identity=...)`, imported lazily.

    Lazily, because the embedded model's dependency (xllamacpp) is optional.
    """
    try:
        module = importlib.import_module("baton.providers.local")
    except ModuleNotFoundError as exc:
        if exc.name in ("baton.providers.local", "baton.providers"):
            raise ConfigError(LOCAL_UNAVAILABLE, cause="local_model") from None
        raise ConfigError(
            f'the local provider needs the optional dependency {exc.name}: pip install "baton[local]"',
            cause="local_model",
        ) from None
    factory = getattr(module, "LocalProvider", None)
    if factory is None:
        raise ConfigError(LOCAL_UNAVAILABLE, cause="local_model")
    return cast(Provider, factory(settings=settings, identity=identity))
