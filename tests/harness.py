"""Drive the real Baton server process over stdio, as an editor would.

`BatonClient` is a pytest-lsp client whose Baton results and notifications stay
plain JSON (pygls would turn them into namedtuples), which records every
`baton/*` notification, and which answers `baton/permission/request` with a
policy the test chooses.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

REPO = Path(__file__).resolve().parent.parent
TEST_KEY = "sk-test-baton-0123456789abcdef"


class RawClientProtocol(LanguageClientProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        return data

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        if "method" in message:
            method = message["method"]
            if method.startswith("baton/"):
                if "id" in message:
                    structured: Any = JsonRPCRequestMessage(
                        id=message["id"], method=method, jsonrpc="2.0", params=message.get("params")
                    )
                else:
                    structured = JsonRPCNotification(
                        method=method, jsonrpc="2.0", params=message.get("params")
                    )
            else:
                data = dict(message)
                data.setdefault("params", None)
                structured = LanguageServerProtocol.structure_message(self, data)
        elif "error" in message:
            structured = LanguageServerProtocol.structure_message(self, message)
        elif self._result_types.get(message.get("id")) is None:
            self._result_types.pop(message.get("id"), None)
            structured = JsonRPCResponseMessage(
                id=message["id"], jsonrpc="2.0", result=message.get("result")
            )
        else:
            structured = LanguageServerProtocol.structure_message(self, message)
        super().handle_message(structured)


PermissionPolicy = Callable[[dict[str, Any]], Any]


def allow_once(_: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": {"optionId": "allow_once"}}


def reject(_: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": {"optionId": "reject_once"}}


def never_answer(withdrawn: asyncio.Event) -> PermissionPolicy:
    """Nobody at the editor: never answers; sets `withdrawn` when the server takes it back."""

    async def wait(_: dict[str, Any]) -> Any:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            withdrawn.set()
            raise

    return wait


class BatonClient:
    """A test client bound to one running server process."""

    def __init__(self, client: LanguageClient, workspace: Path, env: dict[str, str]) -> None:
        self.lsp = client
        self.workspace = workspace
        self.env = env
        self.notifications: list[tuple[str, dict[str, Any]]] = []
        self.permission_requests: list[dict[str, Any]] = []
        self.permission_policy: PermissionPolicy = reject
        # `baton/question/request` and `baton/editor/diagnostics` (a client announcing
        # `capabilities.question` / `.diagnostics`): what was asked, and the answers.
        self.question_requests: list[dict[str, Any]] = []
        self.question_policy: PermissionPolicy = lambda _: {"outcome": "cancelled"}
        self.diagnostics_requests: list[dict[str, Any]] = []
        self.diagnostics_policy: PermissionPolicy = lambda _: {"items": []}
        self.dead = False
        self._waiters: list[tuple[Callable[[str, dict[str, Any]], bool], asyncio.Future[Any]]] = []

    # ---------------------------------------------------------------- process

    @property
    def pid(self) -> int:
        return self.lsp._server.pid  # type: ignore[union-attr]

    async def wait_exit(self, timeout: float = 15.0) -> int:
        """Wait until the server process has ended (and is reaped); its exit status."""
        process = self.lsp._server
        assert process is not None
        return await asyncio.wait_for(process.wait(), timeout)  # type: ignore[union-attr]

    async def stderr_forwarded(self, timeout: float = 15.0) -> None:
        """Wait until the server has ended and pytest-lsp has forwarded everything it
        wrote to stderr (its forwarder reads the pipe to end of file)."""
        await self.wait_exit(timeout)
        forwarder = self.lsp._stderr_forwarder
        if forwarder is not None:
            await asyncio.wait_for(asyncio.shield(forwarder), timeout)
        sys.stderr.flush()

    def kill(self) -> None:
        """SIGKILL the server; requests in flight fail at once."""
        os.kill(self.pid, signal.SIGKILL)
        self.dead = True
        for future in list(self.lsp.protocol._request_futures.values()):
            if not future.done():
                future.set_exception(ConnectionError("server killed"))

    # ---------------------------------------------------------------- requests

    async def request(self, method: str, params: Any = None) -> Any:
        return await self.lsp.protocol.send_request_async(method, params)

    async def error(self, method: str, params: Any = None) -> JsonRpcException:
        """Send a request that must fail; return its JSON-RPC error."""
        try:
            result = await self.request(method, params)
        except JsonRpcException as exc:
            return exc
        raise AssertionError(f"{method} succeeded with {result!r}; an error was expected")

    def notify(self, method: str, params: Any = None) -> None:
        self.lsp.protocol.notify(method, params)

    async def new_session(self, **params: Any) -> str:
        result = await self.request("baton/session/new", params)
        return str(result["sessionId"])

    async def prompt(self, session_id: str, text: str, **extra: Any) -> dict[str, Any]:
        return await self.request(  # type: ignore[no-any-return]
            "baton/session/prompt", {"sessionId": session_id, "text": text, **extra}
        )

    async def load(self, session_id: str) -> dict[str, Any]:
        return await self.request("baton/session/load", {"sessionId": session_id})  # type: ignore[no-any-return]

    # ---------------------------------------------------------------- notifications

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notifications.append((method, params))
        for predicate, future in list(self._waiters):
            if not future.done() and predicate(method, params):
                future.set_result(params)
                self._waiters.remove((predicate, future))

    def updates(
        self, session_id: str | None = None, kind: str | None = None
    ) -> list[dict[str, Any]]:
        out = []
        for method, params in self.notifications:
            if method != "baton/session/update":
                continue
            if session_id is not None and params["sessionId"] != session_id:
                continue
            if kind is not None and params["update"]["kind"] != kind:
                continue
            out.append(params["update"])
        return out

    def streamed_text(self, session_id: str) -> str:
        return "".join(u["text"] for u in self.updates(session_id, "agent_message_chunk"))

    async def wait_for(
        self,
        predicate: Callable[[str, dict[str, Any]], bool],
        timeout: float = 15.0,
        *,
        include_past: bool = True,
    ) -> dict[str, Any]:
        if include_past:
            for method, params in self.notifications:
                if predicate(method, params):
                    return params
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        return await asyncio.wait_for(future, timeout)  # type: ignore[no-any-return]

    async def wait_update(
        self,
        kind: str,
        session_id: str | None = None,
        timeout: float = 15.0,
        include_past: bool = False,
    ) -> dict[str, Any]:
        params = await self.wait_for(
            lambda m, p: (
                m == "baton/session/update"
                and p["update"]["kind"] == kind
                and (session_id is None or p["sessionId"] == session_id)
            ),
            timeout,
            include_past=include_past,
        )
        return params["update"]  # type: ignore[no-any-return]


def server_env(
    home: Path, llm_env: dict[str, str] | None, extra: dict[str, str] | None
) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "BATON_", "XDG_")) and not k.endswith("_API_KEY")
    }
    env.update(
        {
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "XDG_STATE_HOME": str(home / "state"),
            "PYTHONPATH": str(REPO / "server"),
            "BATON_LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
        }
    )
    if llm_env:
        env.update(llm_env)
    if extra:
        env.update(extra)
    return env


async def start_client(
    workspace: Path,
    env: dict[str, str],
    *,
    settings: dict[str, Any] | None = None,
    progress: bool = True,
    trusted: Any = True,
    offers: dict[str, bool] | None = None,
) -> BatonClient:
    """Start the server for `workspace`. The client declares the workspace trusted (as VS
    Code does for a folder the person trusts) unless `trusted` says otherwise: False for
    Restricted Mode, None to send no `workspaceTrusted` at all, any other value to test
    a client that sends a wrong type."""
    client = LanguageClient(protocol_cls=RawClientProtocol, converter_factory=default_converter)
    register_lsp_features(client)
    baton = BatonClient(client, workspace, env)

    for method in ("baton/session/update", "baton/plan/didChange", "baton/plan/show"):

        def handler(ls: Any, params: Any, _method: str = method) -> None:
            baton._on_notification(_method, params)

        client.feature(method)(handler)

    @client.feature("baton/permission/request")
    async def on_permission(ls: Any, params: Any) -> Any:
        baton.permission_requests.append(params)
        answer = baton.permission_policy(params)
        if asyncio.iscoroutine(answer):
            answer = await answer
        return answer

    @client.feature("baton/question/request")
    async def on_question(ls: Any, params: Any) -> Any:
        baton.question_requests.append(params)
        answer = baton.question_policy(params)
        if asyncio.iscoroutine(answer):
            answer = await answer
        return answer

    @client.feature("baton/editor/diagnostics")
    async def on_diagnostics(ls: Any, params: Any) -> Any:
        baton.diagnostics_requests.append(params)
        answer = baton.diagnostics_policy(params)
        if asyncio.iscoroutine(answer):
            answer = await answer
        return answer

    await client.start_io(sys.executable, "-m", "baton", "serve", env=env, cwd=str(workspace))
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(
                window=lsp.WindowClientCapabilities(work_done_progress=progress)
            ),
            root_uri=workspace.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=_init_options(settings, trusted, offers),
        )
    )
    return baton


def _init_options(
    settings: dict[str, Any] | None, trusted: Any, offers: dict[str, bool] | None = None
) -> dict[str, Any] | None:
    options: dict[str, Any] = {}
    if offers:
        options["capabilities"] = offers
    if settings:
        options["settings"] = settings
    if trusted is not None:
        options["workspaceTrusted"] = trusted
    return options or None


async def stop_client(baton: BatonClient) -> None:
    if baton.dead:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(baton.lsp.stop(), 5)
        return
    with contextlib.suppress(Exception):
        await asyncio.wait_for(baton.lsp.shutdown_session(), 10)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(baton.lsp.stop(), 10)
