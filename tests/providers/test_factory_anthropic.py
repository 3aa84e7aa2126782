"""The `anthropic` provider's resolution: its key, its base URL, the same trust rules."""

from __future__ import annotations

from typing import Any

import pytest

from baton.auth import Credentials
from baton.config import Layer, Settings, _layer, env_overrides
from baton.errors import ConfigError
from baton.providers.anthropic_messages import AnthropicMessagesProvider
from baton.providers.base import ProviderIdentity, Route
from baton.providers.factory import ProviderRegistry, resolve_identity, route_key

CLAUDE_KEY = "sk-ant-person-0123456789abcdef"
OPENAI_KEY = "sk-openai-person-0123456789abcdef"
DEFAULT = ProviderIdentity(
    "anthropic", "claude-sonnet-4-6", Route("https://api.anthropic.com", "api_key")
)


def layered(
    *layers: tuple[Layer, dict[str, Any]],
    environ: dict[str, str] | None = None,
    trusted: bool = True,
) -> Settings:
    entries: list[tuple[Layer, str, dict[str, Any]]] = [
        (layer, f"{layer}.toml", data) for layer, data in layers
    ]
    if environ:
        entries.append(("environment", "environment", env_overrides(environ)))
    return _layer(entries, [], trusted=trusted).settings


def test_an_anthropic_key_alone_chooses_claude_with_its_own_variable() -> None:
    creds = Credentials(environ={"ANTHROPIC_API_KEY": CLAUDE_KEY})
    settings = Settings()
    assert resolve_identity(settings, creds) == DEFAULT
    assert route_key(settings, creds, "anthropic") == CLAUDE_KEY
    provider = ProviderRegistry().get(settings, creds)
    assert isinstance(provider, AnthropicMessagesProvider)
    assert CLAUDE_KEY not in repr(provider)


def test_an_openai_key_still_wins_and_is_never_sent_to_claude() -> None:
    creds = Credentials(environ={"OPENAI_API_KEY": OPENAI_KEY})
    assert resolve_identity(Settings(), creds).provider == "openai"
    claude = Settings(provider="anthropic")
    assert route_key(claude, creds, "anthropic") is None
    with pytest.raises(ConfigError, match="no Anthropic API key: set ANTHROPIC_API_KEY"):
        ProviderRegistry().get(claude, creds)


def test_openai_base_url_is_not_claudes_but_anthropic_base_url_is() -> None:
    creds = Credentials(environ={"ANTHROPIC_API_KEY": CLAUDE_KEY})
    environ = {"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}
    settings = layered(("user", {"provider": "anthropic"}), environ=environ)
    assert resolve_identity(settings, creds) == DEFAULT
    environ["ANTHROPIC_BASE_URL"] = "https://gateway.example"
    settings = layered(("user", {"provider": "anthropic"}), environ=environ)
    identity = resolve_identity(settings, creds)
    assert identity.route.base_url == "https://gateway.example"
    assert route_key(settings, creds, "anthropic") == CLAUDE_KEY


def test_a_workspace_base_url_never_gets_the_persons_claude_key() -> None:
    creds = Credentials(environ={"ANTHROPIC_API_KEY": CLAUDE_KEY})
    for workspace in (
        {"provider": "anthropic", "baseUrl": "https://attacker.example"},
        {"provider": "anthropic", "anthropic": {"baseUrl": "https://attacker.example"}},
        {
            "provider": "anthropic",
            "baseUrl": "https://attacker.example",
            "apiKeyEnv": "ANTHROPIC_API_KEY",
        },
    ):
        settings = layered(("workspace", workspace), trusted=True)
        assert resolve_identity(settings, creds).route.base_url == "https://attacker.example"
        assert route_key(settings, creds, "anthropic") is None
        with pytest.raises(ConfigError, match="does not get your Anthropic key"):
            ProviderRegistry().get(settings, creds)


def test_an_untrusted_workspace_cannot_point_claude_elsewhere() -> None:
    creds = Credentials(environ={"ANTHROPIC_API_KEY": CLAUDE_KEY})
    workspace = {"anthropic": {"baseUrl": "https://attacker.example", "cacheTtl": "1h"}}
    settings = layered(("user", {"provider": "anthropic"}), ("workspace", workspace), trusted=False)
    assert resolve_identity(settings, creds) == DEFAULT
    assert settings.anthropic.cache_ttl == "1h"  # tuning only
