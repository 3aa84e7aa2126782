"""BatonServer: a pygls LanguageServer whose features register themselves from modules."""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from baton import __version__
from baton import protocol as p
from baton.app import App, build_app
from baton.errors import BatonError
from baton.lsp.channel import LspChannel
from baton.lsp.protocol import PARSE_ERROR, BatonProtocol

log = logging.getLogger(__name__)

P = TypeVar("P", bound=p.WireModel)


class BatonServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("baton", __version__, protocol_cls=BatonProtocol)
        self.app: App | None = None
        self.channel = LspChannel(self)

    @property
    def service(self) -> Any:
        return self.app.sessions if self.app else None

    def require_app(self) -> App:
        if self.app is None:
            raise JsonRpcException(code=-32002, message="server not initialized")
        return self.app

    def report_server_error(self, error: Exception, source: Any) -> None:
        if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
            assert isinstance(self.protocol, BatonProtocol)
            self.protocol.reply_error(None, PARSE_ERROR, f"Parse error: {error}")
            return
        log.debug("server error (%s): %s", getattr(source, "__name__", source), error)


def invalid_params(exc: ValidationError) -> JsonRpcException:
    problems = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"])
        problems.append(f"params.{loc}: {err['msg']}" if loc else f"params: {err['msg']}")
    return JsonRpcException(code=-32602, message="Invalid params: " + "; ".join(problems))


def parse_params(model: type[P], raw: Any) -> P:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise JsonRpcException(
            code=-32602, message=f"Invalid params: expected an object, got {type(raw).__name__}"
        )
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise invalid_params(exc) from None


Handler = Callable[[App, Any], Awaitable[BaseModel | None] | BaseModel | None]


def method(server: BatonServer, name: str) -> Callable[[Handler], Handler]:
    """Register `fn(app, params)` for the JSON-RPC method `name` of protocol.METHODS.

    Params are validated with the method's model (-32602 naming the field); a
    BatonError becomes its JSON-RPC code; anything else is an internal error
    that is logged, answered, and survived.
    """
    spec = p.METHODS[name]

    def decorator(fn: Handler) -> Handler:
        async def handler(ls: BatonServer, raw: Any) -> Any:
            app = ls.require_app()
            params = parse_params(spec.params, raw)
            try:
                result = fn(app, params)
                if inspect.isawaitable(result):
                    result = await result
            except BatonError as exc:
                raise JsonRpcException(code=exc.code, message=exc.message) from None
            except JsonRpcException:
                raise
            except Exception as exc:
                log.exception("%s failed", name)
                raise JsonRpcException(
                    code=-32603, message=f"internal error in {name}: {type(exc).__name__}: {exc}"
                ) from None
            if result is None:
                return None
            return result.model_dump(mode="json", by_alias=True)

        server.feature(name)(handler)
        return fn

    return decorator


def notification(server: BatonServer, name: str) -> Callable[[Callable[[App, Any], Any]], Any]:
    model = p.CLIENT_NOTIFICATIONS[name]

    def decorator(fn: Callable[[App, Any], Any]) -> Any:
        def handler(ls: BatonServer, raw: Any) -> None:
            if ls.app is None:
                return
            try:
                params = parse_params(model, raw)
                fn(ls.app, params)
            except (JsonRpcException, BatonError) as exc:
                log.warning("%s ignored: %s", name, getattr(exc, "message", exc))

        server.feature(name)(handler)
        return fn

    return decorator


def workspace_from(params: lsp.InitializeParams) -> Path:
    uri = None
    if params.workspace_folders:
        uri = params.workspace_folders[0].uri
    elif params.root_uri:
        uri = params.root_uri
    if uri:
        parsed = urlparse(uri)
        if parsed.scheme == "file":
            return Path(unquote(parsed.path)).resolve()
    if params.root_path:
        return Path(params.root_path).resolve()
    return Path.cwd().resolve()


def create_server() -> BatonServer:
    server = BatonServer()

    @server.feature(lsp.INITIALIZE)
    def on_initialize(ls: BatonServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        client_settings = None
        if isinstance(options, dict) and isinstance(options.get("settings"), dict):
            client_settings = options["settings"]
        ls.app = build_app(workspace_from(params), ls.channel, client_settings=client_settings)
        for problem in ls.app.config_problems():
            ls.window_show_message(
                lsp.ShowMessageParams(
                    type=lsp.MessageType.Warning, message=f"Baton configuration: {problem}"
                )
            )

    @server.feature(lsp.SHUTDOWN)
    async def on_shutdown(ls: BatonServer, *args: Any) -> None:
        if ls.app is not None:
            await ls.app.close()

    from baton.lsp.features import register_all

    register_all(server)
    return server
