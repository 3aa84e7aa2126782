"""The person's side of the demo: JSON-RPC requests as an editor sends them, answered
by the server's own method handlers in this process.

The handlers are the ones `baton.faces.lsp.features` registers (params validated with the
protocol's models, errors mapped, the result serialised as on the wire), collected
through the `Registrar` seam every feature registers with, and called with the
demo's app as their host: no server, no transport."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pygls.exceptions import JsonRpcException

from baton.faces.demo.checks import clip

if TYPE_CHECKING:
    from baton.app import App

F = TypeVar("F", bound=Callable[..., Any])


class Methods:
    """A `Registrar` that keeps each method's handler, and the `AppHost` they run on."""

    def __init__(self, app: App) -> None:
        self._app = app
        self.handlers: dict[str, Callable[..., Any]] = {}

    @property
    def app(self) -> App | None:
        return self._app

    def require_app(self) -> App:
        return self._app

    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]:
        def register(fn: F) -> F:
            self.handlers[feature_name] = fn
            return fn

        return register

    def has_feature(self, name: str) -> bool:
        return name in self.handlers


class RpcError(Exception):
    def __init__(self, method: str, message: str) -> None:
        super().__init__(f"{method}: {message}")
        self.message = message


class MethodCaller:
    """Sends the person's requests and prints each with its answer, as on the wire."""

    def __init__(self, app: App, say: Callable[[str], None]) -> None:
        from baton.faces.lsp.features import register_all

        self.methods = Methods(app)
        register_all(self.methods)
        self.say = say

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send `method` with `params`: its JSON result; a JSON-RPC error is raised as
        RpcError."""
        self.say(f"  → {method} {clip(json.dumps(params, ensure_ascii=False), 150)}")
        handler = self.methods.handlers[method]
        try:
            result = handler(self.methods, params)
            if inspect.isawaitable(result):
                result = await result
        except JsonRpcException as exc:
            self.say(f"  ← error {exc.code}: {exc.message}")
            raise RpcError(method, str(exc.message)) from None
        shown = json.dumps(result, ensure_ascii=False) if result is not None else "null"
        self.say(f"  ← {clip(shown, 150)}")
        return result
