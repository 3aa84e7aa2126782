"""baton/commands/list: the slash commands (built-ins, skills, command files)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol as p
from baton.app import App
from baton.faces.lsp.methods import method

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import Registrar


def register(server: Registrar) -> None:
    @method(server, "baton/commands/list")
    async def list_commands(app: App, params: p.CommandsListParams) -> p.CommandsListResult:
        result = await app.skills.list_commands()
        if params.session_id is not None:
            # The session is told of later changes from now on (a `skills` update).
            app.skills.announce(params.session_id)
        return result
