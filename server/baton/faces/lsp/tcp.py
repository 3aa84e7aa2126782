"""`baton serve --tcp`: one server, any number of authenticated clients, one core.

Anyone who can reach a TCP port can talk to it, and what Baton does for a
client (run commands, write files) it does as the person. So the server makes
a random token, writes it to a file only the person can read (the user runtime
directory unless `--token-file` says otherwise) and says where on stderr; a
connection must present it as `initializationOptions.token` in `initialize`,
before anything else, or it gets an error and is closed. Until it has, it may
send one frame of at most `PRE_AUTH_MAX_BODY` bytes (a larger Content-Length is
refused at its header, nothing of its body buffered), it has `--auth-timeout`
seconds to do so, and at most `MAX_UNAUTHENTICATED` connections may wait at
once (one more closes the one that has waited longest): a stranger cannot make
the server hold memory, nor keep the person out by holding every slot.

Each connection is its own pygls server and protocol (its own writer, pending
requests, capabilities) over the one `App`: the core talks back through a
`RoutingChannel`, which sends what a request caused (a turn's updates, its
permission requests) to the connection that made the request, found through a
context variable that every task started for that connection inherits. What no
connection caused (a plan file changed on disk) goes to every connection.

A connection closing never stops the server: its pending permission requests
fail (a failed request counts as rejected) and its turns go on. The server
stops on `exit` from a client, on SIGTERM/SIGINT, or after `--idle-timeout`
seconds without a connection.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import hmac
import ipaddress
import logging
import os
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pygls.exceptions import JsonRpcException

from baton.faces.lsp import framing
from baton.faces.lsp.protocol import BatonProtocol

if TYPE_CHECKING:
    from baton import protocol as p
    from baton.agent.events import ClientChannel, ProgressScope
    from baton.app import App
    from baton.faces.lsp.channel import LspChannel
    from baton.faces.lsp.server import BatonServer

log = logging.getLogger(__name__)

# `initialize` without the right token, or anything before it.
AUTH_FAILED = -32012
# Seconds a connection has to authenticate before it is closed (`--auth-timeout`).
AUTH_DEADLINE = 10.0
# Until a connection has authenticated, its one frame may be at most this big: an
# `initialize` is a few hundred bytes, and a larger claim is refused at its header,
# before any of its body is buffered.
PRE_AUTH_MAX_BODY = 64 * 1024
# Connections waiting to authenticate at once; one more closes the one that waited longest.
MAX_UNAUTHENTICATED = 8

# The connection whose message started the current task (None: none did).
CURRENT: contextvars.ContextVar[BatonServer | None] = contextvars.ContextVar(
    "baton_tcp_connection", default=None
)


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback address."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def default_token_file(port: int) -> Path:
    """`<user runtime dir>/baton/tcp-<port>.token` (the state dir where there is none)."""
    from platformdirs import user_runtime_path, user_state_path

    for base in (user_runtime_path("baton", appauthor=False), user_state_path("baton") / "run"):
        try:
            base.mkdir(mode=0o700, parents=True, exist_ok=True)
            return base / f"tcp-{port}.token"
        except OSError:
            continue
    raise OSError("no runtime directory for the token file; give one with --token-file")


def write_token(path: Path, token: str) -> None:
    """Write the token to `path`, readable and writable by the person only."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        # An existing file keeps its mode through O_CREAT: make it private first.
        os.fchmod(fd, 0o600)
        os.write(fd, token.encode("ascii") + b"\n")
    finally:
        os.close(fd)


class TcpProtocol(BatonProtocol):
    """A connection's protocol: nothing but an authenticating `initialize` until it has one."""

    authenticated = False

    @property
    def hub(self) -> TcpHub:
        """The listener this connection belongs to: its server was made for that hub."""
        hub = cast("BatonServer", self._server).hub
        assert isinstance(hub, TcpHub), "a TcpProtocol serves a connection of a TcpHub"
        return hub

    def handle_message(self, message: Any) -> None:
        if not self.authenticated:
            self._authenticate(message)
            return
        if isinstance(message, dict) and message.get("method") == "exit":
            # `exit` stops the whole server (every connection), not just this one.
            self.hub.stop()
            return
        super().handle_message(message)

    def _authenticate(self, message: Any) -> None:
        msg_id = message.get("id") if isinstance(message, dict) else None
        params = message.get("params") if isinstance(message, dict) else None
        options = params.get("initializationOptions") if isinstance(params, dict) else None
        token = options.get("token") if isinstance(options, dict) else None
        if (
            isinstance(message, dict)
            and message.get("method") == "initialize"
            and isinstance(token, str)
            and hmac.compare_digest(token.encode("utf-8", "replace"), self.hub.token.encode())
        ):
            self.authenticated = True
            self.hub.authenticated(self)
            super().handle_message(message)
            return
        reason = (
            "authentication failed: the token is wrong"
            if isinstance(token, str)
            else "authentication required: send `initialize` with initializationOptions.token "
            "(the server printed the token file's path on stderr)"
        )
        self.reply_error(msg_id, AUTH_FAILED, reason)

    def reply_error(self, msg_id: Any, code: int, message: str) -> None:
        super().reply_error(msg_id, code, message)
        if not self.authenticated:
            self.hub.drop(self)


class RoutingChannel:
    """The core's channel for many clients: each reply goes to the client that caused it."""

    def __init__(self, hub: TcpHub) -> None:
        self.hub = hub

    def _targets(self) -> list[LspChannel]:
        server = CURRENT.get()
        if server is not None:
            channel = server.channel
            return [channel] if channel is not None and server in self.hub.connections else []
        return [s.channel for s in list(self.hub.connections) if s.channel is not None]

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        for channel in self._targets():
            channel.send_update(session_id, update, parent_id=parent_id)

    def notify(self, method: str, params: p.WireModel) -> None:
        for channel in self._targets():
            channel.notify(method, params)

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        server = CURRENT.get()
        channel = server.channel if server is not None else None
        if server is None or channel is None or server not in self.hub.connections:
            # Nobody to ask (the client that started the turn has gone): not allowed.
            return None
        return await channel.request_permission(params)

    def progress(self, title: str) -> ProgressScope:
        from baton.agent.events import no_progress

        targets = self._targets() if CURRENT.get() is not None else []
        return targets[0].progress(title) if targets else no_progress()


class TcpHub:
    """The listening socket, its connections, the shared app, and when to stop."""

    def __init__(
        self, token: str, idle_timeout: float | None, auth_timeout: float = AUTH_DEADLINE
    ) -> None:
        self.token = token
        self.idle_timeout = idle_timeout
        self.auth_timeout = auth_timeout
        # Connections that have not authenticated yet, with their frame parsers.
        self._waiting: dict[BatonProtocol, framing.FrameParser] = {}
        self.connections: set[BatonServer] = set()
        self.app: App | None = None
        self.workspace: Path | None = None
        self.channel = RoutingChannel(self)
        self._writers: dict[BatonProtocol, asyncio.StreamWriter] = {}
        self._stopped: asyncio.Event | None = None
        self._idle: asyncio.TimerHandle | None = None

    def app_for(self, build: Callable[[ClientChannel], App]) -> App:
        """The one app, built by the first connection that needs it."""
        if self.app is None:
            self.app = build(self.channel)
        return self.app

    def stop(self) -> None:
        if self._stopped is not None:
            self._stopped.set()

    def authenticated(self, protocol: BatonProtocol) -> None:
        """`protocol` presented the token: it may send frames of any accepted size."""
        parser = self._waiting.pop(protocol, None)
        if parser is not None:
            parser.max_body = framing.MAX_BODY

    def drop(self, protocol: BatonProtocol) -> None:
        writer = self._writers.get(protocol)
        if writer is not None:
            writer.close()

    def _arm_idle(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        if self.idle_timeout is not None and not self._writers:
            loop = asyncio.get_running_loop()
            self._idle = loop.call_later(self.idle_timeout, self.stop)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        from baton.faces.lsp.server import create_server

        server = create_server(hub=self, protocol_cls=TcpProtocol)
        protocol = server.protocol
        assert isinstance(protocol, TcpProtocol)
        protocol.set_writer(writer)
        self._writers[protocol] = writer
        self._arm_idle()
        CURRENT.set(server)
        peer = writer.get_extra_info("peername")
        if len(self._waiting) >= MAX_UNAUTHENTICATED:
            # Unauthenticated connections cost memory and a slot each. The one that has
            # waited longest makes room: a real client sends `initialize` as soon as it
            # connects, so a flood of idle connections cannot keep the person out.
            oldest = next(iter(self._waiting))
            del self._waiting[oldest]
            log.warning("client dropped: %d connections wait to authenticate", MAX_UNAUTHENTICATED)
            oldest.reply_error(
                None,
                AUTH_FAILED,
                f"too many connections waiting to authenticate (at most {MAX_UNAUTHENTICATED});"
                " this one waited longest and is closed",
            )
        parser = framing.FrameParser(max_body=PRE_AUTH_MAX_BODY)
        self._waiting[protocol] = parser
        deadline = asyncio.get_running_loop().call_later(
            self.auth_timeout, lambda: None if protocol.authenticated else writer.close()
        )
        self.connections.add(server)
        log.info("client connected from %s", peer)
        try:
            await framing.serve(
                protocol, lambda: reader.read(framing.CHUNK), threading.Event(), parser
            )
        except (ConnectionError, OSError) as exc:
            log.info("client %s: connection lost: %s", peer, exc)
        finally:
            deadline.cancel()
            self._waiting.pop(protocol, None)
            self.connections.discard(server)
            self._writers.pop(protocol, None)
            _fail_pending(protocol)
            writer.close()
            log.info("client %s disconnected", peer)
            self._arm_idle()

    async def serve(self, host: str, port: int, on_listening: Any) -> None:
        self._stopped = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self.stop)
        listener = await asyncio.start_server(self._connection, host, port)
        bound = listener.sockets[0].getsockname()[1]
        on_listening(int(bound))
        self._arm_idle()
        try:
            await self._stopped.wait()
        finally:
            listener.close()
            for writer in list(self._writers.values()):
                writer.close()
            if self.app is not None:
                with contextlib.suppress(Exception):
                    await self.app.close()
            log.info("server stopped")


def _fail_pending(protocol: BatonProtocol) -> None:
    """Requests the server sent to a client that has gone fail now instead of never.

    (The same table holds the client's own requests as tasks: those run on.)
    """
    futures = getattr(protocol, "_request_futures", {})
    for msg_id, future in list(futures.items()):
        if isinstance(future, concurrent.futures.Future) and not future.done():
            future.set_exception(JsonRpcException(message="the client disconnected"))
            futures.pop(msg_id, None)


def serve_tcp(
    host: str,
    port: int,
    *,
    token_file: Path | None,
    allow_remote: bool,
    idle_timeout: float | None,
    auth_timeout: float = AUTH_DEADLINE,
) -> int:
    """Run the TCP face until it is stopped; returns the exit status."""
    if not is_loopback(host):
        if not allow_remote:
            print(
                f"baton: refusing to listen on {host}: it is not a loopback address, so other "
                "machines could reach Baton (which runs commands and writes files as you); "
                "use 127.0.0.1, or pass --allow-remote if you mean it",
                file=sys.stderr,
            )
            return 2
        print(
            f"baton: WARNING: listening on {host}, reachable from other machines; anyone "
            "with the token can act as you. Prefer an SSH tunnel to 127.0.0.1.",
            file=sys.stderr,
        )
    token = secrets.token_urlsafe(32)
    hub = TcpHub(token, idle_timeout, auth_timeout)
    written: list[Path] = []

    def on_listening(bound: int) -> None:
        path = token_file or default_token_file(bound)
        write_token(path, token)
        written.append(path)
        print(f"baton: listening on {host}:{bound}", file=sys.stderr)
        print(f"baton: token file: {path}", file=sys.stderr, flush=True)

    try:
        asyncio.run(hub.serve(host, port, on_listening))
    except OSError as exc:
        print(f"baton: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    finally:
        for path in written:
            with contextlib.suppress(OSError):
                path.unlink()
    return 0
