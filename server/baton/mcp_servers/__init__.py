"""MCP servers (`[[mcp.servers]]`): their tools, offered to the model as `<server>__<tool>`.

`manager.McpManager` starts servers lazily and restarts crashed ones;
`connection.Connection` is one connected server (the official `mcp` SDK);
`results.render_result` turns a tool result into the text the model reads.
"""

from baton.mcp_servers.manager import McpManager

__all__ = ["McpManager"]
