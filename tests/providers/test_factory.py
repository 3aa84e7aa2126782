"""Provider resolution from settings and credentials, and the registry that caches providers."""

from __future__ import annotations

import sys
import types
from typing import Any

import httpx
import pytest

from baton.auth import Credentials
from baton.config import Settings
from baton.errors import ConfigError
from baton.providers.base import Finished, ModelRequest, ProviderIdentity, Route, UserText
from baton.providers.factory import ProviderRegistry, resolve_identity
from baton.providers.openai_chat import OpenAIChatProvider
from baton.providers.openai_responses import OpenAIResponsesProvider

from ._support import API_KEY, FakeServer, Sleeps, chat_sse, collect, sse_response

WITH_KEY = {"OPENAI_API_KEY": API_KEY}
COMPATIBLE = {
    "provider": "openai-compatible",
    "model": "qwen2.5-coder:7b",
    "baseUrl": "http://localhost:11434/v1/",
}


def settings(**data: Any) -> Settings:
    return Settings.model_validate(data)


@pytest.fixture
def no_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "baton.providers.local", None)


def test_openai_by_default_when_a_key_is_in_the_environment() -> None:
    creds = Credentials(environ=WITH_KEY)
    assert resolve_identity(settings(), creds) == ProviderIdentity(
        "openai", "gpt-5.1", Route("https://api.openai.com/v1", "api_key")
    )
    provider = ProviderRegistry().get(settings(), creds)
    assert isinstance(provider, OpenAIResponsesProvider)


def test_openai_by_default_when_the_client_set_a_key() -> None:
    creds = Credentials(environ={})
    creds.set("openai", API_KEY)
    assert resolve_identity(settings(), creds).provider == "openai"


def test_local_by_default_without_a_key(no_local: None) -> None:
    creds = Credentials(environ={})
    identity = resolve_identity(settings(), creds)
    assert identity == ProviderIdentity(
        "local", "qwen2.5-coder-1.5b-instruct", Route("local", "none")
    )
    with pytest.raises(ConfigError, match="the local provider is not available yet"):
        ProviderRegistry().get(settings(), creds)


def test_local_provider_is_imported_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[dict[str, Any]] = []

    class LocalProvider:
        summary_keeps_tools = True

        def __init__(self, **kwargs: Any) -> None:
            made.append(kwargs)
            self.identity = kwargs["identity"]

        async def aclose(self) -> None:
            pass

    module = types.ModuleType("baton.providers.local")
    module.LocalProvider = LocalProvider  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "baton.providers.local", module)
    registry = ProviderRegistry()
    s = settings(provider="local")
    provider = registry.get(s, Credentials(environ={}))
    assert isinstance(provider, LocalProvider)
    assert made == [{"settings": s, "identity": provider.identity}]
    assert registry.get(s, Credentials(environ={})) is provider


def test_local_provider_missing_optional_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(name: str) -> None:
        raise ModuleNotFoundError("No module named 'xllamacpp'", name="xllamacpp")

    monkeypatch.setattr("baton.providers.factory.importlib.import_module", fail)
    with pytest.raises(ConfigError, match=r"xllamacpp.*baton\[local\]"):
        ProviderRegistry().get(settings(provider="local"), Credentials({}))


def test_openai_without_a_key_says_how_to_set_one() -> None:
    with pytest.raises(ConfigError) as info:
        ProviderRegistry().get(settings(provider="openai"), Credentials({}))
    assert "OPENAI_API_KEY" in info.value.message
    assert "Baton: Set OpenAI API Key" in info.value.message


def test_api_key_env_names_the_variable() -> None:
    creds = Credentials(environ={"MY_KEY": API_KEY})
    s = settings(provider="openai", apiKeyEnv="MY_KEY")
    assert isinstance(ProviderRegistry().get(s, creds), OpenAIResponsesProvider)
    with pytest.raises(ConfigError, match="MY_KEY"):
        ProviderRegistry().get(s, Credentials({}))


def test_openai_compatible_needs_a_model() -> None:
    s = settings(provider="openai-compatible", baseUrl="http://localhost:11434/v1")
    with pytest.raises(ConfigError, match="`model`"):
        resolve_identity(s, Credentials({}))


def test_openai_compatible_needs_a_base_url() -> None:
    s = settings(provider="openai-compatible", model="m")
    with pytest.raises(ConfigError, match="`baseUrl`"):
        ProviderRegistry().get(s, Credentials({}))


def test_openai_compatible_identity_and_auth_kind() -> None:
    s = settings(**COMPATIBLE)
    none = resolve_identity(s, Credentials({}))
    assert none == ProviderIdentity(
        "openai-compatible", "qwen2.5-coder:7b", Route("http://localhost:11434/v1", "none")
    )
    keyed = resolve_identity(s, Credentials(WITH_KEY))
    assert keyed.route.auth_kind == "api_key"
    provider = ProviderRegistry().get(s, Credentials({}))
    assert isinstance(provider, OpenAIChatProvider) and provider.text_tool_calls


def test_base_url_from_openai_base_url_setting() -> None:
    # config.py maps OPENAI_BASE_URL to baseUrl; a proxy keeps the provider id but not the route.
    s = settings(baseUrl="https://proxy.example/v1")
    identity = resolve_identity(s, Credentials(WITH_KEY))
    assert identity.provider == "openai"
    assert identity.route.base_url == "https://proxy.example/v1"


def test_overrides() -> None:
    creds = Credentials(WITH_KEY)
    s = settings(**COMPATIBLE)
    same = resolve_identity(s, creds, model_override="llama3.2")
    assert same.model == "llama3.2" and same.route.base_url == "http://localhost:11434/v1"
    # Another provider than the configured one: the configured model and base URL are not its.
    other = resolve_identity(s, creds, provider_override="openai")
    assert other == ProviderIdentity(
        "openai", "gpt-5.1", Route("https://api.openai.com/v1", "api_key")
    )
    with pytest.raises(ConfigError, match="unknown provider"):
        resolve_identity(s, creds, provider_override="bedrock")
    claude = resolve_identity(s, creds, provider_override="anthropic")
    assert claude == ProviderIdentity(
        "anthropic", "claude-sonnet-4-6", Route("https://api.anthropic.com", "api_key")
    )
    explicit_openai = settings(provider="openai", baseUrl="https://proxy.example/v1")
    with pytest.raises(ConfigError, match='configured one is for provider "openai"'):
        resolve_identity(
            explicit_openai, creds, provider_override="openai-compatible", model_override="m"
        )


def test_override_with_automatic_provider_uses_the_configured_base_url() -> None:
    # No `provider` in the settings: the base URL is not tied to any provider.
    s = settings(baseUrl="http://localhost:11434/v1")
    identity = resolve_identity(
        s, Credentials({}), provider_override="openai-compatible", model_override="llama3.2"
    )
    assert identity == ProviderIdentity(
        "openai-compatible", "llama3.2", Route("http://localhost:11434/v1", "none")
    )


def test_identity_agrees_with_the_provider() -> None:
    registry = ProviderRegistry()
    for s, creds in [
        (settings(), Credentials(WITH_KEY)),
        (settings(**COMPATIBLE), Credentials({})),
        (settings(**COMPATIBLE), Credentials(WITH_KEY)),
    ]:
        assert registry.get(s, creds).identity == resolve_identity(s, creds)


@pytest.mark.asyncio
async def test_registry_reuses_providers_and_clients_and_closes_them() -> None:
    registry = ProviderRegistry()
    creds = Credentials(WITH_KEY)
    a = registry.get(settings(), creds)
    assert registry.get(settings(), creds) is a
    b = registry.get(settings(), creds, model="gpt-5.1-mini")
    assert b is not a and b.identity.model == "gpt-5.1-mini"
    client_a = registry.client("https://api.openai.com/v1", 600)
    assert registry.client("https://api.openai.com/v1", 600) is client_a
    other_key = Credentials({"OPENAI_API_KEY": "sk-other-key-000000000"})
    assert registry.get(settings(), other_key) is not a
    await registry.aclose()
    assert client_a.is_closed


def test_key_is_in_no_repr() -> None:
    registry = ProviderRegistry()
    provider = registry.get(settings(), Credentials(WITH_KEY))
    for text in (repr(provider), str(provider), repr(registry), repr(provider.identity)):
        assert API_KEY not in text
    assert API_KEY not in repr(registry._providers)


@pytest.mark.asyncio
async def test_made_providers_talk_through_the_shared_transport() -> None:
    ok = chat_sse(
        [{"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}]
    )
    server = FakeServer(sse_response(ok))
    registry = ProviderRegistry(transport=httpx.MockTransport(server), sleep=Sleeps())
    creds = Credentials({"OPENAI_API_KEY": API_KEY})
    provider = registry.get(settings(**COMPATIBLE), creds)
    out = await collect(provider.stream(ModelRequest(instructions="", items=[UserText("x")])))
    assert out[-1] == Finished("stop")
    sent = server.requests[0]
    assert str(sent.url) == "http://localhost:11434/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    await registry.aclose()


def test_registry_get_matches_the_session_service_call() -> None:
    """SessionService calls `providers.get(settings, credentials, provider=..., model=...)`."""
    registry = ProviderRegistry()
    p = registry.get(settings(), Credentials(WITH_KEY), provider=None, model=None)
    assert p.identity.provider == "openai"
