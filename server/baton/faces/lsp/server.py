"""BatonServer: a pygls LanguageServer whose features register themselves from modules.

Start-up is kept light: `initialize` is answered before the core (pydantic
models, providers, the store) is imported; the features and the app are
loaded on `initialized`, or on the first Baton request if a client skips it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from baton import __version__
from baton.faces.lsp import framing
from baton.faces.lsp.protocol import PARSE_ERROR, BatonProtocol

if TYPE_CHECKING:
    from baton.agent.events import ClientChannel
    from baton.app import App
    from baton.faces.lsp.channel import LspChannel

log = logging.getLogger(__name__)


class Hub(Protocol):
    """The listener a connection belongs to (`baton serve --tcp`: baton.faces.lsp.tcp.TcpHub):
    one workspace and one app for all of its connections."""

    workspace: Path | None

    def app_for(self, build: Callable[[ClientChannel], App]) -> App:
        """The one app, built by the first connection that needs it."""
        ...


class BatonServer(LanguageServer):
    def __init__(
        self, hub: Hub | None = None, protocol_cls: type[BatonProtocol] = BatonProtocol
    ) -> None:
        # With --tcp: the listener this connection belongs to (one app for all of them).
        # Set before pygls builds the protocol, which reads it (TcpProtocol.hub).
        self.hub = hub
        super().__init__("baton", __version__, protocol_cls=protocol_cls)
        self.app: App | None = None
        self.channel: LspChannel | None = None
        # Set by `initialize`: where to work and the client's settings.
        self.start_params: tuple[Path, dict[str, Any] | None] | None = None
        # initializationOptions.workspaceTrusted: True/False, or None when absent (the
        # trust record decides); a value of another type is reported and counts as absent.
        self.editor_trust: bool | None = None
        self.editor_trust_problem: str | None = None
        # initializationOptions.capabilities: what the client offers the tools (issue 49).
        self.client_offers: dict[str, bool] = {}
        self._features_registered = False

    @property
    def initialized(self) -> bool:
        return self.start_params is not None

    def ensure_loaded(self) -> App:
        """Import the features and build the app, once."""
        if self.app is not None:
            return self.app
        if self.start_params is None:
            raise JsonRpcException(code=-32002, message="server not initialized")
        from baton.app import build_app
        from baton.faces.lsp.channel import LspChannel, LspDiagnostics, LspQuestions
        from baton.faces.lsp.features import register_all

        if not self._features_registered:
            # Once: a start that fails below (a store that cannot open) is retried on the
            # next request, and must fail with its own reason, not "already registered".
            register_all(self)
            self._features_registered = True
        self.channel = LspChannel(self)
        lsp_channel = self.channel
        offers = self.client_offers
        workspace, client_settings = self.start_params
        from baton.trust import decide

        def build(channel: ClientChannel) -> App:
            return build_app(
                workspace,
                channel,
                client_settings=client_settings,
                trust=decide(workspace, self.editor_trust),
                questions=LspQuestions(lsp_channel) if offers.get("question") else None,
                editor_diagnostics=LspDiagnostics(lsp_channel)
                if offers.get("diagnostics")
                else None,
            )

        self.app = build(self.channel) if self.hub is None else self.hub.app_for(build)
        problems = self.app.config_problems()
        if self.editor_trust_problem:
            problems.insert(0, self.editor_trust_problem)
        for problem in problems:
            self.window_show_message(
                lsp.ShowMessageParams(
                    type=lsp.MessageType.Warning, message=f"Baton configuration: {problem}"
                )
            )
        notice = self.app.trust_notice()
        if notice is not None:
            self.window_show_message(
                lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"Baton: {notice}")
            )
        return self.app

    def require_app(self) -> App:
        return self.ensure_loaded()

    def has_feature(self, name: str) -> bool:
        return name in self.protocol.fm.features

    # pygls's read loops trust the client's framing; Baton's own survives any
    # bytes (see baton.lsp.framing). These two overrides only swap the loop.

    def _start_io_async(
        self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
    ) -> None:
        self._stop_event = threading.Event()
        source = stdin or sys.stdin.buffer
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        pool = self.thread_pool
        read = getattr(source, "read1", source.read)

        async def read_chunk() -> bytes:
            return await asyncio.get_running_loop().run_in_executor(pool, read, framing.CHUNK)

        assert isinstance(self.protocol, BatonProtocol)
        try:
            asyncio.run(framing.serve(self.protocol, read_chunk, self._stop_event))
        except BrokenPipeError:
            log.error("Connection to the client is lost! Shutting down the server.")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def report_server_error(self, error: Exception, source: Any) -> None:
        if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
            assert isinstance(self.protocol, BatonProtocol)
            self.protocol.reply_error(None, PARSE_ERROR, f"Parse error: {error}")
            return
        log.debug("server error (%s): %s", getattr(source, "__name__", source), error)


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


def create_server(
    hub: Hub | None = None, protocol_cls: type[BatonProtocol] = BatonProtocol
) -> BatonServer:
    """A server for one connection (stdio; or one of a TCP hub's, with its protocol)."""
    server = BatonServer(hub, protocol_cls)

    @server.feature(lsp.INITIALIZE)
    def on_initialize(ls: BatonServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        client_settings = None
        if isinstance(options, dict) and isinstance(options.get("settings"), dict):
            client_settings = options["settings"]
        workspace = workspace_from(params)
        if ls.hub is not None:
            # One TCP server serves one workspace: the first client's.
            if ls.hub.workspace is None:
                ls.hub.workspace = workspace
            elif ls.hub.workspace != workspace:
                raise JsonRpcException(
                    code=-32600,
                    message=f"this server serves {ls.hub.workspace}, not {workspace}; start "
                    "another `baton serve --tcp` for that folder",
                )
        ls.start_params = (workspace, client_settings)
        offered = options.get("capabilities") if isinstance(options, dict) else None
        if isinstance(offered, dict):
            ls.client_offers = {k: v is True for k, v in offered.items() if isinstance(k, str)}
        trusted = options.get("workspaceTrusted") if isinstance(options, dict) else None
        if trusted is None or isinstance(trusted, bool):
            ls.editor_trust = trusted
        else:
            ls.editor_trust_problem = (
                "initializationOptions.workspaceTrusted must be true or false, not "
                f"{type(trusted).__name__}; it is ignored (the trust record decides)"
            )

    @server.feature(lsp.INITIALIZED)
    def on_initialized(ls: BatonServer, params: Any) -> None:
        ls.ensure_loaded()

    @server.feature(lsp.SHUTDOWN)
    async def on_shutdown(ls: BatonServer, *args: Any) -> None:
        # Over TCP the app is every client's: it closes when the server stops.
        if ls.app is not None and ls.hub is None:
            await ls.app.close()

    return server
