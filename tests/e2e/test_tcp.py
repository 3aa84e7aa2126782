"""`baton serve --tcp HOST:PORT` speaks the same protocol as stdio."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.fake_llm import FakeLLM, text
from tests.harness import TEST_KEY, server_env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TcpClient:
    def __init__(self, port: int) -> None:
        deadline = time.monotonic() + 20
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.reader = self.sock.makefile("rb")
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def read(self) -> dict[str, Any]:
        length = 0
        while True:
            line = self.reader.readline().strip()
            if not line:
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.reader.read(length))  # type: ignore[no-any-return]

    def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id and "method" not in reply:
                return reply


def test_serve_over_tcp(llm: FakeLLM, workspace: Path, home: Path) -> None:
    port = _free_port()
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "baton", "serve", "--tcp", f"127.0.0.1:{port}"],
        cwd=workspace,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = TcpClient(port)
        init = client.request(
            "initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
        )
        assert init["result"]["serverInfo"]["name"] == "baton"
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        session = client.request("baton/session/new", {})["result"]["sessionId"]
        llm.add(text("over tcp"))
        result = client.request("baton/session/prompt", {"sessionId": session, "text": "hi"})
        assert result["result"] == {"stopReason": "end_turn"}
        assert (
            client.request("baton/session/load", {"sessionId": "nope"})["error"]["code"] == -32001
        )
    finally:
        proc.kill()
        proc.wait()
