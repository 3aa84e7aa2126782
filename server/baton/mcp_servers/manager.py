"""MCP servers from `[[mcp.servers]]`: started lazily, their tools offered to the model.

* **Lazily**: nothing starts with Baton. Before a turn's model step the
  manager starts every enabled server that is not running yet (concurrently,
  each bounded by its `startTimeout`), lists its tools and registers them as
  `<server>__<tool>`; the tool list the context builder sends then includes
  them (the registry's spec cache is invalidated by every change).
* **Broken servers** are reported (`mcp_server` update with `failed` and the
  error, a log line) and leave the session usable: the turn goes on without
  their tools, and a later turn tries again once the backoff has passed.
* **Crashes**: a server whose connection ends unexpectedly is restarted in the
  background with exponential backoff (0.5 s, 1 s, 2 s, … up to 30 s; after
  five failed attempts in a row it is `failed` until a later turn retries).
  Its tools stay offered meanwhile; a call waits (within the start timeout)
  for the restart, else it fails with a message the model can act on.
* **Config changes** (a server added, removed, disabled or its command
  changed) are picked up at the next step: changed servers are restarted.
* **Stopped with Baton**: `aclose()` at shutdown.

Tool calls ask permission like `bash` (category `mcp`, `permissions.mcp`),
unless the person's own settings configure the server with `allow = true`
(a workspace's `allow` never counts, and the person's `deny` always wins).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import ConfigDict

from baton import protocol as p
from baton.config import ConfigLoader, McpServerSettings
from baton.mcp_servers.connection import (
    Connection,
    McpUnavailable,
    describe_target,
    fingerprint,
    transport_of,
)
from baton.mcp_servers.results import render_result
from baton.tools.base import Tool, ToolContext, ToolInput, ToolResult
from baton.tools.policy import permission_denied

if TYPE_CHECKING:
    from mcp.types import Tool as McpToolInfo

    from baton.agent.events import ClientChannel
    from baton.agent.turn import Turn
    from baton.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

SEPARATOR = "__"
MAX_NAME = 64  # OpenAI's limit for function names
MAX_DESCRIPTION = 2_000
BACKOFF_START = 0.5
BACKOFF_MAX = 30.0
MAX_RESTARTS = 5
# After a failed start, a later turn retries no sooner than this.
RETRY_AFTER_FAILURE = 30.0
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass
class ServerEntry:
    """The manager's view of one configured server, across restarts."""

    settings: McpServerSettings
    status: p.McpStatus = "idle"
    error: str | None = None
    connection: Connection | None = None
    # Registered tool name → the server's own tool name.
    tools: dict[str, str] = field(default_factory=dict)
    retry_at: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    restart_task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.settings.name

    def info(self) -> p.McpServerInfo:
        return p.McpServerInfo(
            name=self.name,
            transport=cast(Any, transport_of(self.settings)),
            enabled=self.settings.enabled,
            status=self.status,
            tools=sorted(self.tools),
            error=self.error,
        )


class McpManager:
    def __init__(
        self,
        workspace: Path,
        config: ConfigLoader,
        tools: ToolRegistry,
        channel: ClientChannel,
    ) -> None:
        self.workspace = workspace
        self.config = config
        self.registry = tools
        self.channel = channel
        self._servers: dict[str, ServerEntry] = {}
        # Servers a client brought for its sessions (ACP `mcpServers`): the person's
        # editor configuration, added to the configured ones (a configured name wins).
        self.client_servers: dict[str, McpServerSettings] = {}
        # Where status changes are reported: the session whose turn last used MCP.
        self._report_to: str | None = None
        self._closed = False

    # ------------------------------------------------------------------ lifecycle

    async def prepare(self, turn: Turn) -> None:
        """The session's step seam: make sure every enabled server has been started."""
        self._report_to = turn.session_id
        await self.ensure_started()

    async def ensure_started(self) -> None:
        if self._closed:
            return
        await self._reconcile()
        now = time.monotonic()
        due = [
            entry
            for entry in self._servers.values()
            if entry.settings.enabled
            # "starting": another session's turn is starting it; wait for the same outcome.
            and (
                entry.status in ("idle", "starting")
                or (entry.status == "failed" and now >= entry.retry_at)
            )
        ]
        if due:
            await asyncio.gather(*(self._start(entry) for entry in due))

    async def _reconcile(self) -> None:
        """Follow the configuration: new servers are added, removed or changed ones stopped."""
        wanted = self._wanted()
        for name in list(self._servers):
            entry = self._servers[name]
            settings = wanted.get(name)
            if settings is None or fingerprint(settings) != fingerprint(entry.settings):
                await self._stop(entry, "stopped")
                del self._servers[name]
            elif settings.enabled != entry.settings.enabled and not settings.enabled:
                entry.settings = settings
                await self._stop(entry, "disabled")
            else:
                if settings.enabled and entry.status == "disabled":
                    entry.status = "idle"
                entry.settings = settings
        for name, settings in wanted.items():
            if name not in self._servers:
                problem = _config_problem(settings)
                entry = ServerEntry(settings, status="idle" if settings.enabled else "disabled")
                if problem:
                    entry.status, entry.error = "failed", problem
                    entry.retry_at = float("inf")
                self._servers[name] = entry

    def _wanted(self) -> dict[str, McpServerSettings]:
        wanted = dict(self.client_servers)
        wanted.update((s.name, s) for s in self.config.settings().mcp.servers)
        return wanted

    async def _start(self, entry: ServerEntry) -> bool:
        async with entry.lock:
            if entry.status == "ready" and entry.connection and not entry.connection.closed:
                return True
            if self._closed or (entry.status == "failed" and time.monotonic() < entry.retry_at):
                # Stopped, or an attempt that failed while this one waited for the lock.
                return False
            restarting = entry.status == "restarting"
            if not restarting:
                entry.status = "starting"
            connection = Connection(entry.settings, self.workspace, self._closed_by_server)
            try:
                connected = await connection.start()
            except BaseException as exc:
                if isinstance(exc, asyncio.CancelledError):
                    entry.status = "idle"
                    raise
                entry.error = _explain(exc, entry.settings)
                entry.retry_at = time.monotonic() + RETRY_AFTER_FAILURE
                if not restarting:
                    entry.status = "failed"
                    self._unregister(entry)
                    log.warning("MCP server %s did not start: %s", entry.name, entry.error)
                    self._report(entry)
                return False
            entry.connection = connection
            entry.status = "ready"
            entry.error = None
            self._register(entry, connected.tools)
            entry.ready.set()
            log.info(
                "MCP server %s ready with %d tools: %s",
                entry.name,
                len(entry.tools),
                ", ".join(sorted(entry.tools)),
            )
            self._report(entry)
            return True

    def _closed_by_server(self, connection: Connection) -> None:
        entry = next((e for e in self._servers.values() if e.connection is connection), None)
        if entry is None or self._closed:
            return
        entry.connection = None
        entry.ready.clear()
        entry.status = "restarting"
        entry.error = "the server exited or closed the connection"
        log.warning("MCP server %s crashed; restarting with backoff", entry.name)
        self._report(entry)
        if entry.restart_task is None or entry.restart_task.done():
            entry.restart_task = asyncio.get_running_loop().create_task(
                self._restart(entry), name=f"mcp-restart-{entry.name}"
            )

    async def _restart(self, entry: ServerEntry) -> None:
        delay = BACKOFF_START
        for _attempt in range(MAX_RESTARTS):
            await asyncio.sleep(delay)
            if self._closed or entry.status != "restarting":
                return
            if await self._start(entry):
                return
            delay = min(BACKOFF_MAX, delay * 2)
        entry.status = "failed"
        entry.retry_at = time.monotonic() + RETRY_AFTER_FAILURE
        self._unregister(entry)
        log.warning("MCP server %s could not be restarted: %s", entry.name, entry.error)
        self._report(entry)

    async def _stop(self, entry: ServerEntry, status: p.McpStatus) -> None:
        if entry.restart_task is not None:
            entry.restart_task.cancel()
        connection, entry.connection = entry.connection, None
        entry.ready.clear()
        entry.status = status
        self._unregister(entry)
        if connection is not None:
            await connection.stop()

    async def aclose(self) -> None:
        """Stop every server (Baton is shutting down)."""
        self._closed = True
        entries = list(self._servers.values())
        await asyncio.gather(
            *(self._stop(entry, "stopped") for entry in entries), return_exceptions=True
        )

    # ------------------------------------------------------------------ calls

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
        entry = self._servers.get(server)
        if entry is None:
            return ToolResult(f"MCP server {server} is not configured any more", is_error=True)
        if entry.connection is not None and entry.connection.closed:
            # The server died and its close has not been noticed yet: restart it now
            # rather than send this call down a dead connection.
            self._closed_by_server(entry.connection)
        if entry.status in ("restarting", "starting"):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(entry.ready.wait(), timeout=entry.settings.start_timeout)
        connection = entry.connection
        if connection is None or entry.status != "ready":
            why = f": {entry.error}" if entry.error else ""
            return ToolResult(
                f"MCP server {server} is not available ({entry.status}{why}). "
                "Its tools cannot be used right now; continue without them or try again later.",
                is_error=True,
            )
        from mcp import MCPError

        try:
            result = await connection.call(tool, arguments)
        except MCPError as exc:
            from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

            if exc.code == CONNECTION_CLOSED:
                # Start the restart at once, so the next call waits for it instead of
                # racing the notice that the connection closed.
                self._closed_by_server(connection)
                return ToolResult(
                    f"MCP server {server} stopped while running {tool} (it crashed or closed "
                    "the connection); Baton is restarting it. The call did not complete: "
                    "try again once, or continue without it.",
                    is_error=True,
                )
            if exc.code == REQUEST_TIMEOUT:
                return ToolResult(
                    f"{tool} on MCP server {server} did not answer within "
                    f"{entry.settings.timeout:.0f} s",
                    is_error=True,
                )
            return ToolResult(f"MCP server {server} refused {tool}: {exc.message}", is_error=True)
        except McpUnavailable as exc:
            return ToolResult(str(exc), is_error=True)
        except TimeoutError:
            return ToolResult(
                f"{tool} on MCP server {server} did not answer within "
                f"{entry.settings.timeout:.0f} s",
                is_error=True,
            )
        output, is_error = render_result(result)
        return ToolResult(output, is_error=is_error)

    def allowed_without_asking(self, server: str) -> bool:
        """Whether `server`'s tools run unasked: `allow = true` counts only from the
        person's own settings (never the workspace's layer, trusted or not), and never
        against their `permissions.mcp = "deny"` (the caller checks that first)."""
        entry = self._servers.get(server)
        if entry is None or not entry.settings.allow:
            return False
        own = [s for s in self.config.person_settings().mcp.servers if s.name == server]
        if not own and server in self.client_servers:
            own = [self.client_servers[server]]
        return any(s.allow and fingerprint(s) == fingerprint(entry.settings) for s in own)

    # ------------------------------------------------------------------ tools

    def _register(self, entry: ServerEntry, tools: list[McpToolInfo]) -> None:
        previous = set(entry.tools)
        entry.tools = {}
        for info in tools:
            name = tool_name(entry.name, info.name, taken=set(entry.tools))
            entry.tools[name] = info.name
            self.registry.register(cast(Tool, McpTool(self, entry.name, name, info)), replace=True)
        for gone in previous - set(entry.tools):
            self.registry.unregister(gone)

    def _unregister(self, entry: ServerEntry) -> None:
        for name in entry.tools:
            self.registry.unregister(name)
        entry.tools = {}

    def _report(self, entry: ServerEntry) -> None:
        if self._report_to is None:
            return
        self.channel.send_update(
            self._report_to,
            p.McpServerUpdate(
                server=entry.name,
                status=entry.status,
                tools=sorted(entry.tools),
                error=entry.error,
            ),
        )

    def servers(self) -> p.McpServersResult:
        known = self._wanted()
        infos = []
        for name, settings in known.items():
            entry = self._servers.get(name)
            if entry is not None and fingerprint(entry.settings) == fingerprint(settings):
                infos.append(entry.info())
            else:
                status: p.McpStatus = "idle" if settings.enabled else "disabled"
                infos.append(ServerEntry(settings, status=status).info())
        return p.McpServersResult(servers=infos)


class McpInput(ToolInput):
    """Arguments of an MCP tool: any JSON object (the server validates it)."""

    model_config = ConfigDict(extra="allow")


class McpTool:
    """One tool of an MCP server, as the registry offers and runs it."""

    def __init__(self, manager: McpManager, server: str, name: str, info: McpToolInfo) -> None:
        self.manager = manager
        self.server = server
        self.name = name
        self.remote_name = info.name
        description = (info.description or info.title or info.name).strip()
        self.description = (
            f"{description[:MAX_DESCRIPTION]}\n(Tool `{info.name}` of the MCP server `{server}`.)"
        )
        annotations = info.annotations
        self.read_only = bool(annotations and annotations.read_only_hint)
        self.input_model = _input_model(info.input_schema)

    async def run(self, args: ToolInput, ctx: ToolContext) -> ToolResult:
        arguments = args.model_dump()
        # The person's deny wins over any allow: ask_permission refuses it unasked.
        denied = ctx.settings.permissions.mcp == "deny"
        if denied or not self.manager.allowed_without_asking(self.server):
            allowed = await ctx.ask_permission(self.name, ctx.tool_call_id, arguments)
            if not allowed:
                return permission_denied(f"calling {self.remote_name} on MCP server {self.server}")
        return await self.manager.call(self.server, self.remote_name, arguments)


def _input_model(schema: dict[str, Any]) -> type[ToolInput]:
    """A model that accepts any object and offers the server's own JSON Schema."""
    offered = dict(schema) if isinstance(schema, dict) else {}
    offered["type"] = "object"
    offered.setdefault("properties", {})

    class Input(McpInput):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            import copy

            return copy.deepcopy(offered)

    return Input


def tool_name(server: str, tool: str, *, taken: set[str]) -> str:
    """`<server>__<tool>`, made safe for every provider (letters, digits, `_`, `-`, ≤ 64)."""
    name = f"{server}{SEPARATOR}{_UNSAFE.sub('_', tool)}"
    if len(name) > MAX_NAME or name in taken:
        digest = hashlib.sha256(tool.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


def _config_problem(settings: McpServerSettings) -> str | None:
    if settings.command and settings.url:
        return "set either `command` (stdio) or `url` (streamable HTTP), not both"
    if not settings.command and not settings.url:
        return "set `command` (a stdio server) or `url` (a streamable HTTP server)"
    return None


def _explain(exc: BaseException, settings: McpServerSettings) -> str:
    target = describe_target(settings)
    if isinstance(exc, TimeoutError):
        return f"{target} did not start within {settings.start_timeout:.0f} s"
    if isinstance(exc, FileNotFoundError):
        return f"cannot run {target}: command not found"
    message = str(exc) or type(exc).__name__
    if isinstance(exc, BaseExceptionGroup):
        leaves = [e for e in _leaves(exc)]
        message = "; ".join(str(e) or type(e).__name__ for e in leaves) or message
    return f"{target}: {message}"


def _leaves(group: BaseExceptionGroup[Any]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            out += _leaves(exc)
        else:
            out.append(exc)
    return out
