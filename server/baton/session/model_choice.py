"""Which model a session's requests go to: the one pinned with setModel, else the configured."""

from __future__ import annotations

from typing import Protocol

from baton import protocol as p
from baton.agent.state import SessionState
from baton.auth import Credentials
from baton.config import Settings
from baton.errors import BatonError
from baton.providers.base import Provider, ProviderIdentity
from baton.store.sessions import SessionStore


class ProviderSource(Protocol):
    def get(
        self,
        settings: Settings,
        credentials: Credentials,
        *,
        provider: str | None = None,
        model: str | None = None,
    ) -> Provider: ...

    async def aclose(self) -> None: ...


class SessionModels:
    def __init__(
        self, providers: ProviderSource, credentials: Credentials, store: SessionStore
    ) -> None:
        self.providers = providers
        self.credentials = credentials
        self.store = store

    def pin(
        self, state: SessionState, settings: Settings, params: p.SetModelParams
    ) -> p.SetModelResult:
        """`baton/session/setModel`: resolved now, so a bad combination fails here, not
        at the next prompt."""
        provider_id = params.provider or state.row.provider or settings.provider
        provider = self.providers.get(
            settings, self.credentials, provider=provider_id, model=params.model
        )
        self.store.update_session(state.id, provider=provider.identity.provider, model=params.model)
        state.row.provider = provider.identity.provider
        state.row.model = params.model
        return p.SetModelResult(provider=provider.identity.provider, model=params.model)

    def provider_for(self, state: SessionState, settings: Settings) -> Provider:
        return self.providers.get(
            settings,
            self.credentials,
            provider=state.row.provider,
            model=state.turn_model or state.row.model,
        )

    def identity_for(self, state: SessionState, settings: Settings) -> ProviderIdentity | None:
        """The identity the session's next request would have; None when no provider can
        be made for it (a configuration problem, said when a turn starts). Anything else
        is a bug and is raised: a None here sizes tool output for the default window."""
        try:
            return self.provider_for(state, settings).identity
        except BatonError:
            return None

    def provider_id(self, state: SessionState, settings: Settings) -> str | None:
        """The provider the session's next request goes to, as far as it is known now."""
        identity = self.identity_for(state, settings)
        return identity.provider if identity else (state.row.provider or settings.provider)
