"""MCP servers the tests start (written with the official `mcp` SDK)."""
