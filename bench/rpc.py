"""A minimal JSON-RPC client over a server's stdio with LSP framing, for benchmarks and fuzzing.

Deliberately independent of pygls, so what is measured is Baton, not the client.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def isolated_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "BATON_", "XDG_"))}
    env.update(
        {
            "HOME": str(home),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "PYTHONPATH": str(REPO / "server"),
            "BATON_LOG_LEVEL": "WARNING",
        }
    )
    env.update(extra or {})
    return env


class RawServer:
    def __init__(
        self,
        workspace: Path,
        env: dict[str, str],
        command: list[str] | None = None,
        *,
        stderr: Any = subprocess.DEVNULL,
    ) -> None:
        # `stderr`: where the server's log goes (a file, to inspect it afterwards).
        self.proc = subprocess.Popen(
            command or [sys.executable, "-m", "baton", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=workspace,
            env=env,
        )
        self.workspace = workspace
        self._next = 0
        self.notifications: list[dict[str, Any]] = []

    def send_bytes(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode())

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("server closed its output")
            line = line.strip()
            if not line:
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        assert length is not None
        return json.loads(self.proc.stdout.read(length))  # type: ignore[no-any-return]

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        """Send a request; return its response (notifications on the way are kept)."""
        self._next += 1
        msg_id = self._next
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.response(msg_id)

    def response(self, msg_id: Any) -> dict[str, Any]:
        while True:
            reply = self.read()
            if reply.get("id") == msg_id and "method" not in reply:
                return reply
            self.notifications.append(reply)

    def initialize(self) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {"processId": None, "rootUri": self.workspace.as_uri(), "capabilities": {}},
        )
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return reply

    def close(self) -> None:
        try:
            self.request("shutdown")
            self.send({"jsonrpc": "2.0", "method": "exit"})
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def temp_home() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="baton-bench-")
