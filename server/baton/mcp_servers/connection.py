"""One configured MCP server: start, list tools, call, notice a crash, stop.

The official `mcp` SDK's `Client` is an anyio async context manager whose
cancel scopes must be entered and left by the same task, so each connection
lives in a runner task that owns the `async with` and waits until it is told
to stop or the server goes away; tool calls from turns use the connected
client meanwhile. The read stream is watched so that a server that exits (or
an HTTP stream that ends) is noticed at once, not at the next call.

The SDK is imported only when a server is started: a workspace without MCP
servers never pays for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton import __version__
from baton.config import McpServerSettings
from baton.terminal_escape import child_stderr

if TYPE_CHECKING:
    from mcp import Client
    from mcp.types import CallToolResult
    from mcp.types import Tool as McpToolInfo

log = logging.getLogger(__name__)

MAX_TOOL_PAGES = 20
STOP_TIMEOUT = 8.0


class McpUnavailable(Exception):
    """The server is not connected (it failed to start, crashed, or was stopped)."""


@dataclass(frozen=True)
class Connected:
    client: Client
    tools: list[McpToolInfo]


def transport_of(settings: McpServerSettings) -> str:
    return "http" if settings.url and not settings.command else "stdio"


def describe_target(settings: McpServerSettings) -> str:
    if settings.command:
        return " ".join(settings.command)
    return settings.url or "?"


def fingerprint(settings: McpServerSettings) -> str:
    """What decides how the server is started: a change means a restart."""
    return settings.model_dump_json(include={"command", "url", "env"})


class Connection:
    """The runner task of one connected server, and the client it serves calls with."""

    def __init__(
        self,
        settings: McpServerSettings,
        workspace: Path,
        on_closed: Callable[[Connection], None],
    ) -> None:
        self.settings = settings
        self.workspace = workspace
        self._on_closed = on_closed
        self._wake = asyncio.Event()
        self._stopping = False
        self._runner: asyncio.Task[None] | None = None
        self.connected: Connected | None = None

    @property
    def closed(self) -> bool:
        return self._runner is not None and self._runner.done()

    async def start(self) -> Connected:
        """Connect and list the tools; raises when that fails or takes too long."""
        ready: asyncio.Future[Connected] = asyncio.get_running_loop().create_future()
        self._runner = asyncio.create_task(self._run(ready), name=f"mcp-{self.settings.name}")
        try:
            connected = await asyncio.wait_for(
                asyncio.shield(ready), timeout=self.settings.start_timeout
            )
        except BaseException:
            await self.stop()
            raise
        self.connected = connected
        return connected

    async def stop(self) -> None:
        """Leave the client's context (the SDK closes stdin, then terminates the process)."""
        self._stopping = True
        self._wake.set()
        runner = self._runner
        if runner is None or runner.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(runner), timeout=STOP_TIMEOUT)
        except (TimeoutError, asyncio.CancelledError):
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
        except Exception:
            log.debug("MCP server %s ended with an error while stopping", self.settings.name)

    async def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        connected = self.connected
        if connected is None or self.closed or self._stopping:
            raise McpUnavailable(f"MCP server {self.settings.name} is not connected")
        return await connected.client.call_tool(
            name, arguments, read_timeout_seconds=self.settings.timeout
        )

    def _closed_by_server(self) -> None:
        if not self._stopping:
            self._wake.set()

    async def _run(self, ready: asyncio.Future[Connected]) -> None:
        from mcp import Client
        from mcp.types import Implementation

        try:
            async with Client(
                self._target(),
                client_info=Implementation(name="baton", version=__version__),
                read_timeout_seconds=self.settings.timeout,
            ) as client:
                tools = await _list_tools(client)
                if not ready.done():
                    ready.set_result(Connected(client, tools))
                await self._wake.wait()
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, asyncio.CancelledError):
                    ready.cancel()
                else:
                    ready.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
                return
            if not isinstance(exc, Exception):
                raise
            log.warning("MCP server %s: connection ended: %r", self.settings.name, exc)
        finally:
            self.connected = None
        if not self._stopping:
            self._on_closed(self)

    def _target(self) -> Any:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        settings = self.settings
        if settings.command:
            # Only a few safe variables (PATH, HOME, …) are inherited by default, plus the
            # configured `env`: the server never sees Baton's API keys.
            params = StdioServerParameters(
                command=settings.command[0],
                args=list(settings.command[1:]),
                env=dict(settings.env),
                cwd=self.workspace,
            )
            # Its stderr reaches Baton's through the terminal escaping: a server cannot
            # send control sequences to the person's terminal.
            errlog = child_stderr()
            return _Watched(stdio_client(params, errlog=errlog), self._closed_by_server)
        assert settings.url is not None
        return _Watched(streamable_http_client(settings.url), self._closed_by_server)


async def _list_tools(client: Client) -> list[McpToolInfo]:
    tools: list[McpToolInfo] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


class _Watched:
    """A transport whose read stream reports its end (the server exited or hung up)."""

    def __init__(self, inner: AbstractAsyncContextManager[Any], on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof
        self._cm: AbstractAsyncContextManager[Any] | None = None

    async def __aenter__(self) -> Any:
        self._cm = self._streams()
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> bool | None:
        assert self._cm is not None
        return await self._cm.__aexit__(*exc)

    @asynccontextmanager
    async def _streams(self) -> AsyncIterator[Any]:
        async with self._inner as (read, write):
            yield _WatchedRead(read, self._on_eof), write


class _WatchedRead:
    """Forwards a read stream and calls `on_eof` once when it ends."""

    def __init__(self, inner: Any, on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof

    def _ended(self) -> None:
        callback, self._on_eof = self._on_eof, _nothing
        callback()

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended()
            raise

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        await self.aclose()
        return None

    def __getattr__(self, name: str) -> Any:
        # `last_context` and anything else the SDK reads from its streams.
        return getattr(self._inner, name)


def _nothing() -> None:
    return None
