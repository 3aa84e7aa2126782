"""The model a session would use now: a configuration problem is None, a bug is raised.

`identity_for` sizes tool output to the model's window (and fills the model in
`baton/session/load`); swallowing a provider's bug there would silently size
every tool's output for the default window.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from baton import protocol as p
from baton.agent.events import NullChannel
from baton.auth import Credentials
from baton.config import ConfigLoader, Settings
from baton.errors import ConfigError
from baton.providers.base import Provider
from baton.session.service import SessionService
from baton.store.db import open_workspace_db
from baton.tools.registry import default_registry


class FailingProviders:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def get(
        self,
        settings: Settings,
        credentials: Credentials,
        *,
        provider: str | None = None,
        model: str | None = None,
    ) -> Provider:
        raise self.error

    async def aclose(self) -> None:
        pass


@pytest.fixture
def service_for(workspace: Path, home: Path) -> Iterator[object]:
    made: list[SessionService] = []

    def make(error: Exception) -> SessionService:
        db = open_workspace_db(workspace)
        service = SessionService(
            workspace,
            db,
            ConfigLoader(workspace, environ={}),
            Credentials({}),
            NullChannel(),
            FailingProviders(error),
            default_registry(),
        )
        made.append(service)
        return service

    yield make
    for service in made:
        service.db.close()


def test_a_configuration_problem_means_no_identity(service_for) -> None:  # type: ignore[no-untyped-def]
    service = service_for(ConfigError("no API key for openai"))
    state = service.state(service.new_session(p.SessionNewParams()).session_id)
    assert service.identity_for(state, service.settings()) is None
    # What load reports then: the session's own (unset) provider and model.
    loaded = service.load(state.id)
    assert (loaded.provider, loaded.model) == (None, None)


def test_a_provider_bug_is_raised_not_taken_for_the_default_window(service_for) -> None:  # type: ignore[no-untyped-def]
    service = service_for(KeyError("route"))
    state = service.state(service.new_session(p.SessionNewParams()).session_id)
    with pytest.raises(KeyError, match="route"):
        service.identity_for(state, service.settings())
