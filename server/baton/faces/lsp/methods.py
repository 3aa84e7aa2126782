"""Registering JSON-RPC methods: params validated with the protocol models, errors mapped.

Imported when the server loads its features (after `initialize`), so the cost
of building the pydantic models is not paid before the first answer.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException

from baton import protocol as p
from baton.app import App
from baton.errors import BatonError

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import AppHost, Registrar

log = logging.getLogger(__name__)

P = TypeVar("P", bound=p.WireModel)


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


def method(server: Registrar, name: str) -> Callable[[Handler], Handler]:
    """Register `fn(app, params)` for the JSON-RPC method `name` of protocol.METHODS.

    Params are validated with the method's model (-32602 naming the field); a
    BatonError becomes its JSON-RPC code; anything else is an internal error
    that is logged, answered, and survived.
    """
    spec = p.METHODS[name]

    def decorator(fn: Handler) -> Handler:
        async def handler(ls: AppHost, raw: Any) -> Any:
            app = ls.require_app()
            params = parse_params(spec.params, raw)
            try:
                result = fn(app, params)
                if inspect.isawaitable(result):
                    result = await result
            except BatonError as exc:
                raise JsonRpcException(code=exc.code, message=exc.message, data=exc.data) from None
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


def notification(server: Registrar, name: str) -> Callable[[Callable[[App, Any], Any]], Any]:
    model = p.CLIENT_NOTIFICATIONS[name]

    def decorator(fn: Callable[[App, Any], Any]) -> Any:
        def handler(ls: AppHost, raw: Any) -> None:
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
