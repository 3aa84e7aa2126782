"""The Agent Client Protocol face (`baton acp`): Zed, JetBrains, Neovim, Emacs and others.

Built on the official Python SDK (`agent-client-protocol`, imported as `acp`);
see docs/acp.md for what maps to what.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from acp.interfaces import Agent

# Big enough for an embedded file in a prompt (the SDK's default for stdio).
STDIO_LIMIT = 50 * 1024 * 1024


async def serve() -> int:
    """Serve one ACP client on stdin/stdout until it closes the connection."""
    from acp.agent.connection import AgentSideConnection
    from acp.stdio import stdio_streams

    from baton.acp.agent import BatonAgent
    from baton.acp.transport import LineTransport

    try:
        reader, writer = await stdio_streams(limit=STDIO_LIMIT)
    except ValueError:
        # asyncio's pipe transports refuse a regular file (`baton acp > out.txt`).
        print(
            "baton acp: stdin and stdout must be pipes (an editor starts it);"
            " `baton acp --help` says how",
            file=sys.stderr,
        )
        return 2
    transport = LineTransport(reader, writer)
    agent = BatonAgent(transport)
    # BatonAgent implements the stable methods; the SDK answers the unstable ones it
    # lacks (fork, resume, close) with "method not found".
    conn = AgentSideConnection(cast("Agent", agent), transport, listening=False)
    try:
        await conn.listen()
    finally:
        await asyncio.shield(agent.aclose())
        await asyncio.shield(conn.close())
    return 0
