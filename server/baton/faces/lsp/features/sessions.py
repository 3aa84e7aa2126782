"""baton/session/*: create, list, load, prompt, cancel, mode, model, context."""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton import protocol as p
from baton.app import App
from baton.faces.lsp.methods import method, notification

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import Registrar


def register(server: Registrar) -> None:
    @method(server, "baton/session/new")
    def new(app: App, params: p.SessionNewParams) -> p.SessionNewResult:
        if params.plan_path is not None:
            result = app.plans.new_session(params)
        else:
            result = app.sessions.new_session(params)
        app.announce_trust(result.session_id)
        return result

    @method(server, "baton/session/list")
    def list_(app: App, params: p.Empty) -> p.SessionListResult:
        return app.sessions.list_sessions()

    @method(server, "baton/session/load")
    def load(app: App, params: p.SessionRef) -> p.SessionLoadResult:
        result = app.sessions.load(params.session_id)
        app.announce_trust(params.session_id)
        return result

    @method(server, "baton/session/prompt")
    async def prompt(app: App, params: p.PromptParams) -> p.PromptResult:
        return await app.sessions.prompt(params)

    @method(server, "baton/session/queue")
    def queue(app: App, params: p.QueueParams) -> p.QueueResult:
        state = app.sessions.state(params.session_id)
        return app.sessions.turns.queue.add(state, params.text, params.delivery)

    @method(server, "baton/session/unqueue")
    def unqueue(app: App, params: p.UnqueueParams) -> p.QueueResult:
        return app.sessions.turns.queue.remove(app.sessions.state(params.session_id), params.id)

    @method(server, "baton/session/setMode")
    def set_mode(app: App, params: p.SetModeParams) -> p.SetModeResult:
        return app.sessions.set_mode(params)

    @method(server, "baton/session/setModel")
    def set_model(app: App, params: p.SetModelParams) -> p.SetModelResult:
        return app.sessions.set_model(params)

    @method(server, "baton/session/context")
    def context(app: App, params: p.SessionRef) -> p.ContextResult:
        return app.sessions.context_info(params.session_id)

    @notification(server, "baton/session/cancel")
    def cancel(app: App, params: p.SessionRef) -> None:
        app.sessions.cancel(params.session_id)
