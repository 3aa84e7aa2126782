"""baton/session/rename|delete|fork|export, baton/models/list|servers, baton/mcp/servers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol as p
from baton.app import App
from baton.faces.lsp.methods import method
from baton.local.servers import find_servers
from baton.providers.models import ModelCatalog
from baton.session.manage import SessionManager

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import Registrar


def register(server: Registrar) -> None:
    catalogs: dict[int, ModelCatalog] = {}

    def manager(app: App) -> SessionManager:
        return SessionManager(app.sessions, app.plans)

    def catalog(app: App) -> ModelCatalog:
        # One per app, so the per-route cache lives as long as the server.
        key = id(app)
        if key not in catalogs:
            catalogs[key] = ModelCatalog(app.sessions.providers, app.credentials)
        return catalogs[key]

    @method(server, "baton/session/rename")
    def rename(app: App, params: p.SessionRenameParams) -> p.SessionInfo:
        return manager(app).rename(params)

    @method(server, "baton/session/delete")
    def delete(app: App, params: p.SessionRef) -> p.Empty:
        manager(app).delete(params.session_id)
        return p.Empty()

    @method(server, "baton/session/fork")
    def fork(app: App, params: p.SessionForkParams) -> p.SessionForkResult:
        return manager(app).fork(params)

    @method(server, "baton/session/export")
    def export(app: App, params: p.SessionRef) -> p.SessionExportResult:
        return manager(app).export(params.session_id)

    @method(server, "baton/models/list")
    async def models(app: App, params: p.ModelsListParams) -> p.ModelsListResult:
        pinned_provider = pinned_model = None
        if params.session_id is not None:
            state = app.sessions.state(params.session_id)
            pinned_provider, pinned_model = state.row.provider, state.row.model
        return await catalog(app).models(
            app.sessions.settings(),
            provider=params.provider,
            pinned_provider=pinned_provider,
            pinned_model=pinned_model,
        )

    @method(server, "baton/models/servers")
    async def model_servers(app: App, params: p.ModelServersParams) -> p.ModelServersResult:
        found = await find_servers(params.ports)
        return p.ModelServersResult(
            servers=[
                p.FoundModelServer(port=s.port, name=s.name, base_url=s.base_url, models=s.models)
                for s in found
            ]
        )

    @method(server, "baton/mcp/servers")
    def mcp_servers(app: App, params: p.Empty) -> p.McpServersResult:
        return app.mcp.servers()
