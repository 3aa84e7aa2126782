"""baton/session/compact, compactions, uncompact."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol as p
from baton.app import App
from baton.faces.lsp.methods import method

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import Registrar


def register(server: Registrar) -> None:
    @method(server, "baton/session/compact")
    async def compact(app: App, params: p.CompactParams) -> p.CompactionRecord:
        return await app.compaction.compact(
            params.session_id,
            instructions=params.instructions,
            strategy=params.strategy,
            fresh=params.fresh,
        )

    @method(server, "baton/session/compactions")
    def compactions(app: App, params: p.SessionRef) -> p.CompactionsResult:
        return app.compaction.compactions(params.session_id)

    @method(server, "baton/session/uncompact")
    def uncompact(app: App, params: p.UncompactParams) -> p.CompactionRecord:
        return app.compaction.uncompact(params.session_id, params.compaction_id)
