"""baton/auth/set: an API key held in memory for this server's life."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol as p
from baton.app import App
from baton.faces.lsp.methods import method

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import Registrar


def register(server: Registrar) -> None:
    @method(server, "baton/auth/set")
    def set_key(app: App, params: p.AuthSetParams) -> p.Empty:
        app.credentials.set(params.provider, params.api_key)
        return p.Empty()
