"""baton/session/revert and baton/session/changes: undo turns, review what tools changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol as p
from baton.app import App
from baton.faces.lsp.methods import method

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import Registrar


def register(server: Registrar) -> None:
    @method(server, "baton/session/revert")
    def revert(app: App, params: p.RevertParams) -> p.RevertResult:
        return app.review.revert(params)

    @method(server, "baton/session/changes")
    def changes(app: App, params: p.ChangesParams) -> p.ChangesResult:
        return app.review.changes(params)
