"""baton/workspace/trust and baton/workspace/setTrust: the person's trust decision."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol as p
from baton.app import App
from baton.faces.lsp.methods import method

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import Registrar


def register(server: Registrar) -> None:
    @method(server, "baton/workspace/trust")
    def trust(app: App, params: p.Empty) -> p.WorkspaceTrustResult:
        return app.trust_result()

    @method(server, "baton/workspace/setTrust")
    def set_trust(app: App, params: p.SetTrustParams) -> p.WorkspaceTrustResult:
        return app.set_trust(params.trusted)
