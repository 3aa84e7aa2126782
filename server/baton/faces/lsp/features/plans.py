"""baton/plan/*: read, edit, approve, request changes, and the version history."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol as p
from baton.app import App
from baton.faces.lsp.methods import method

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import Registrar


def register(server: Registrar) -> None:
    @method(server, "baton/plan/get")
    def get(app: App, params: p.SessionRef) -> p.PlanInfo | None:
        return app.plans.get(params.session_id)

    @method(server, "baton/plan/update")
    def update(app: App, params: p.PlanUpdateParams) -> p.PlanUpdateResult:
        return app.plans.update(params)

    @method(server, "baton/plan/approve")
    async def approve(app: App, params: p.PlanApproveParams) -> p.PlanApproveResult:
        if params.build == "steps":
            return await app.steps.approve(params)
        return await app.plans.approve(params)

    @method(server, "baton/plan/requestChanges")
    def request_changes(app: App, params: p.PlanRequestChangesParams) -> p.PlanStatusResult:
        return app.plans.request_changes(params)

    @method(server, "baton/plan/history")
    def history(app: App, params: p.SessionRef) -> p.PlanHistoryResult:
        return app.plans.history(params.session_id)

    @method(server, "baton/plan/getVersion")
    def get_version(app: App, params: p.PlanGetVersionParams) -> p.PlanVersionContent:
        return app.plans.get_version(params)

    @method(server, "baton/plan/list")
    async def list_(app: App, params: p.Empty) -> p.PlanListResult:
        return await app.plans.list_plans()

    @method(server, "baton/plan/attach")
    def attach(app: App, params: p.PlanAttachParams) -> p.PlanAttachResult:
        return app.plans.attach(params)
