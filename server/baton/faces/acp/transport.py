"""Newline-delimited JSON-RPC on stdio for `baton acp`, on the SDK's framing.

Two things the SDK's own stdio transport does not do: a line that is JSON but
not a JSON-RPC object (`[1]`, `"x"`) is answered with an error instead of
ending the connection, and the face can write a message the SDK has no model
for yet (the draft `compaction_update`) through the same ordered writer.
The raw `initialize` params are kept so draft client capabilities the SDK's
models drop (`session.compaction`) can still be read.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp._transport import NdjsonTransport
from acp.task import MessageSender, TaskSupervisor


class LineTransport:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._tasks = TaskSupervisor(source="baton.faces.acp")
        self._inner = NdjsonTransport(reader, MessageSender(writer, self._tasks))
        self.initialize_params: dict[str, Any] = {}

    async def send(self, message: dict[str, Any]) -> None:
        await self._inner.send(message)

    async def receive(self) -> dict[str, Any] | None:
        while True:
            message: Any = await self._inner.receive()
            if message is None:
                return None
            if not isinstance(message, dict):
                await self.send(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": -32600,
                            "message": "Invalid request: a JSON-RPC message is a JSON object",
                        },
                    }
                )
                continue
            if message.get("method") == "initialize" and isinstance(message.get("params"), dict):
                self.initialize_params = message["params"]
            return message

    async def close(self) -> None:
        await self._inner.close()
        await self._tasks.shutdown()
