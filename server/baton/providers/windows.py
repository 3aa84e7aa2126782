"""How large a provider's context window is: the person's setting, the local engine's size,
the model's known window, or the default."""

from __future__ import annotations

from baton.config import DEFAULT_CONTEXT_WINDOW, Settings, known_context_window
from baton.providers.base import ProviderIdentity


def context_window(settings: Settings, identity: ProviderIdentity | None) -> int:
    if settings.context_window:
        return settings.context_window
    if identity is not None and identity.provider == "local":
        return settings.local.context_size
    if identity is not None:
        known = known_context_window(identity.model)
        if known:
            return known
    return DEFAULT_CONTEXT_WINDOW
