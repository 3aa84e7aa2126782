"""A small stdio MCP server for Baton's tests, written with the official `mcp` SDK.

Run as `python tests/mcp_servers/demo_server.py` (stdio), or with `--http PORT` to serve
streamable HTTP at `http://127.0.0.1:PORT/mcp`. Environment:

* `DEMO_PID_FILE`: append this process's pid to the file at start (restart tests);
* `DEMO_EXIT_AT_START=1`: exit at once with status 7 (a broken server);
* `DEMO_GREETING`: what `greet` answers with (env passing).

Tools: `echo`, `add`, `greet`, `picture` (an image), `fail` (a tool error),
`crash` (the process exits mid-call), `secrets` (which API-key variables it can see).
"""

from __future__ import annotations

import base64
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import ToolAnnotations

# A 1×1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

server = MCPServer("demo")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def greet(name: str) -> str:
    """Greet someone with the configured greeting."""
    return f"{os.environ.get('DEMO_GREETING', 'Hello')}, {name}!"


@server.tool()
def picture() -> Image:
    """Return a tiny PNG."""
    return Image(data=PIXEL, format="png")


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ToolError(f"failed on purpose: {reason}")


@server.tool()
def crash() -> str:
    """Exit the process while the call is running."""
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def secrets() -> str:
    """Which API-key variables this server can see."""
    names = sorted(k for k in os.environ if k.endswith("_API_KEY") or k.startswith("OPENAI"))
    return ",".join(names) or "none"


if __name__ == "__main__":
    if os.environ.get("DEMO_EXIT_AT_START") == "1":
        sys.exit(7)
    pid_file = os.environ.get("DEMO_PID_FILE")
    if pid_file:
        with open(pid_file, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
