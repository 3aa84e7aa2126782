"""A pygls protocol that answers every request, however malformed.

pygls as shipped turns custom params into namedtuples, never answers a request
whose JSON omits `params`, drops malformed JSON and non-object messages without
a reply, and ignores requests after `shutdown`. Baton keeps custom params as
plain dicts (validated later with pydantic) and answers each of those cases with
a well-formed JSON-RPC error.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol, runtime_checkable

from lsprotocol.types import ResponseErrorMessage
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002

_LIFECYCLE = {"initialize", "initialized", "shutdown", "exit", "$/cancelRequest", "$/setTrace"}
# Client notifications that must not carry an id (`exit` with one still exits).
_NOTIFICATIONS = {"initialized", "$/cancelRequest", "$/setTrace", "baton/session/cancel"}


def _valid_id(value: Any) -> bool:
    return (isinstance(value, (str, int))) and not isinstance(value, bool)


@runtime_checkable
class LoadingServer(Protocol):
    """What the protocol asks of its server (baton.faces.lsp.server.BatonServer): whether the
    client sent `initialize`, and the core built on demand."""

    @property
    def initialized(self) -> bool: ...

    def ensure_loaded(self) -> object: ...


class BatonProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        # Called by json.loads for every object, innermost first: keep them all as
        # plain data and structure the whole message once, in handle_message.
        return data

    def reply_error(self, msg_id: Any, code: int, message: str) -> None:
        self._send_data(
            {
                "jsonrpc": "2.0",
                "id": msg_id if _valid_id(msg_id) else None,
                "error": {"code": code, "message": message},
            }
        )

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            kind = (
                "an array (batches are not supported)"
                if isinstance(message, list)
                else type(message).__name__
            )
            self.reply_error(
                None, INVALID_REQUEST, f"Invalid Request: expected a JSON object, got {kind}"
            )
            return
        msg_id: Any = message.get("id")
        has_id = "id" in message
        if message.get("jsonrpc") != "2.0":
            if has_id or "method" in message:
                self.reply_error(
                    msg_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"'
                )
            return
        if has_id and not _valid_id(msg_id) and msg_id is not None:
            self.reply_error(
                None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer"
            )
            return

        if "method" not in message:
            self._handle_response_message(message)
            return
        method = message["method"]
        if not isinstance(method, str) or not method:
            if has_id:
                self.reply_error(
                    msg_id, INVALID_REQUEST, "Invalid Request: method must be a non-empty string"
                )
            return
        is_request = has_id and msg_id is not None
        if self._shutdown and method != "exit":
            if is_request:
                self.reply_error(
                    msg_id, INVALID_REQUEST, "Invalid Request: the server is shutting down"
                )
            return
        server = self._server if isinstance(self._server, LoadingServer) else None
        initialized = server is not None and server.initialized
        if method.startswith("baton/") and not initialized:
            if is_request:
                self.reply_error(
                    msg_id,
                    SERVER_NOT_INITIALIZED,
                    "server not initialized: send `initialize` first",
                )
            return
        if method == "initialize" and initialized:
            if is_request:
                self.reply_error(msg_id, INVALID_REQUEST, "Invalid Request: already initialized")
            return

        if is_request and method in _NOTIFICATIONS:
            # A notification sent as a request: running it and answering `null`
            # would hide the client's mistake (a cancel that cancels nothing).
            self.reply_error(
                msg_id,
                INVALID_REQUEST,
                f"Invalid Request: {method} is a notification; send it without an id",
            )
            return
        if (
            is_request
            and not method.startswith("baton/")
            and method not in self.fm.features
            and method not in self.fm.builtin_features
        ):
            # An LSP method Baton does not serve is not found, whatever its params
            # (pygls would first validate them and answer a vague "Invalid Params").
            self.reply_error(msg_id, METHOD_NOT_FOUND, f"Method Not Found: {method}")
            return
        if method.startswith("baton/") and server is not None:
            # Features load after `initialize`; a client that skips `initialized` still works.
            try:
                server.ensure_loaded()
            except Exception as exc:
                log.exception("Baton failed to start")
                if is_request:
                    self.reply_error(msg_id, -32603, f"Baton failed to start: {exc}")
                return
        params = message.get("params")
        if method.startswith("baton/") or (
            method not in _LIFECYCLE and self.get_message_type(method) is None
        ):
            structured: Any
            if is_request:
                structured = JsonRPCRequestMessage(
                    id=msg_id, method=method, jsonrpc="2.0", params=params
                )
            else:
                structured = JsonRPCNotification(method=method, jsonrpc="2.0", params=params)
        else:
            data = dict(message)
            if "params" not in data:
                data["params"] = None
            if not is_request:
                data.pop("id", None)
            try:
                structured = LanguageServerProtocol.structure_message(self, data)
            except JsonRpcException as exc:
                if is_request:
                    self.reply_error(msg_id, INVALID_PARAMS, f"Invalid params for {method}: {exc}")
                return
        super().handle_message(structured)

    def _handle_response_message(self, message: dict[str, Any]) -> None:
        msg_id: Any = message.get("id")
        if "error" in message:
            try:
                structured: Any = self._converter.structure(message, ResponseErrorMessage)
            except Exception:
                log.warning("malformed error response from client for id %r", msg_id)
                future = self._request_futures.pop(msg_id, None)
                if future is not None and not future.done():
                    future.set_exception(JsonRpcException("malformed error response"))
                return
            super().handle_message(structured)
            return
        self._result_types.pop(msg_id, None)
        super().handle_message(
            JsonRPCResponseMessage(id=msg_id, jsonrpc="2.0", result=message.get("result"))
        )
