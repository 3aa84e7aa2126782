"""The Agent Client Protocol face (`baton acp`): Zed, JetBrains, Neovim, Emacs and others.

Built on the official Python SDK (`agent-client-protocol`, imported as `acp`);
see docs/acp.md for what maps to what.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from acp.interfaces import Agent

# Big enough for an embedded file in a prompt (the SDK's default for stdio).
STDIO_LIMIT = 50 * 1024 * 1024


def _streamable(fd: int) -> bool:
    """Whether asyncio can stream `fd`: a pipe, a socket or a terminal.

    A regular file is refused by asyncio with a ValueError, and a character device such
    as /dev/null by epoll with a PermissionError logged from inside the event loop, after
    the fact; asking first gives one clear message instead.
    """
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def _refuse_stdio() -> int:
    print(
        "baton acp: stdin and stdout must be pipes (an editor starts it);"
        " `baton acp --help` says how",
        file=sys.stderr,
    )
    return 2


async def serve() -> int:
    """Serve one ACP client on stdin/stdout until it closes the connection."""
    from acp.agent.connection import AgentSideConnection
    from acp.meta import AGENT_METHODS
    from acp.router import MessageRouter
    from acp.schema import DeleteSessionRequest
    from acp.stdio import stdio_streams

    from baton.faces.acp.agent import BatonAgent
    from baton.faces.acp.transport import LineTransport

    if not (_streamable(sys.stdin.fileno()) and _streamable(sys.stdout.fileno())):
        return _refuse_stdio()
    try:
        reader, writer = await stdio_streams(limit=STDIO_LIMIT)
    except ValueError:
        return _refuse_stdio()
    transport = LineTransport(reader, writer)
    agent = BatonAgent(transport)
    # The SDK (0.12.1) routes `session/resume` and `session/close` only with its unstable
    # switch (they are stable in the protocol's schema since), and `session/delete` not at
    # all: it is added to the SDK's router here. `session/fork`, which BatonAgent does not
    # implement, is answered "method not found".
    conn = AgentSideConnection(
        cast("Agent", agent), transport, listening=False, use_unstable_protocol=True
    )
    router = conn._conn._handler
    if isinstance(router, MessageRouter):
        router.route_request(
            AGENT_METHODS["session_delete"], DeleteSessionRequest, agent, "delete_session"
        )
    try:
        await conn.listen()
    finally:
        await asyncio.shield(agent.aclose())
        await asyncio.shield(conn.close())
    return 0
