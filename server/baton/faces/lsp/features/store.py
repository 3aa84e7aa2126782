"""baton/store/check and baton/store/repair: the way out of a damaged store, from an editor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol as p
from baton.app import App
from baton.faces.lsp.methods import method

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import Registrar


def register(server: Registrar) -> None:
    @method(server, "baton/store/check")
    def check(app: App, params: p.Empty) -> p.StoreCheckResult:
        return app.check_store()

    @method(server, "baton/store/repair")
    def repair(app: App, params: p.Empty) -> p.StoreRepairResult:
        return app.repair_store()
