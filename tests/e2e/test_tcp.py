"""`baton serve --tcp`: the same protocol as stdio, behind a token, for many clients at once.

Real server processes and real sockets: a client must present the token the
server wrote to a private file; each client gets its own notifications and
permission requests; a client leaving never stops the server; `exit`, SIGTERM
and `--idle-timeout` do; a non-loopback host needs `--allow-remote`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import TEST_KEY, server_env

AUTH_FAILED = -32012


class TcpServer:
    def __init__(self, proc: subprocess.Popen[bytes], log: Path, port: int, token_file: Path):
        self.proc = proc
        self.log = log
        self.port = port
        self.token_file = token_file

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()


def start_tcp_server(
    workspace: Path, env: dict[str, str], log: Path, *extra: str, host: str = "127.0.0.1"
) -> TcpServer:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "baton", "serve", "--tcp", f"{host}:0", *extra],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=out,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = re.search(r"listening on .*:(\d+)\nbaton: token file: (.*)\n", log.read_text())
        if found:
            return TcpServer(proc, log, int(found.group(1)), Path(found.group(2)))
        if proc.poll() is not None:
            raise AssertionError(f"the server exited: {log.read_text()}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"the server never listened: {log.read_text()}")


class TcpClient:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.reader = self.sock.makefile("rb")
        self.next_id = 0
        self.inbox: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def read(self) -> dict[str, Any] | None:
        """The next message, or None when the server closed the connection."""
        length = 0
        while True:
            line = self.reader.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.reader.read(length))  # type: ignore[no-any-return]

    def send_request(self, method: str, params: Any) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def wait_reply(self, msg_id: int) -> dict[str, Any]:
        while True:
            reply = self.read()
            assert reply is not None, "the server closed the connection"
            if reply.get("id") == msg_id and "method" not in reply:
                return reply
            self.inbox.append(reply)

    def request(self, method: str, params: Any) -> dict[str, Any]:
        return self.wait_reply(self.send_request(method, params))

    def wait_method(self, method: str) -> dict[str, Any]:
        for i, message in enumerate(self.inbox):
            if message.get("method") == method:
                return self.inbox.pop(i)
        while True:
            message = self.read()
            assert message is not None, "the server closed the connection"
            if message.get("method") == method:
                return message
            self.inbox.append(message)

    def initialize(self, workspace: Path, token: str | None) -> dict[str, Any]:
        options = {} if token is None else {"token": token}
        reply = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": workspace.as_uri(),
                "capabilities": {},
                "initializationOptions": options,
            },
        )
        if "result" in reply:
            self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return reply

    def closed_by_server(self) -> bool:
        """Whether the server closes the connection (after whatever it still sends)."""
        self.sock.settimeout(10)
        try:
            while self.reader.read1(65536):
                pass
        except ConnectionResetError:
            pass
        except TimeoutError:
            return False
        return True

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


@pytest.fixture
def env(llm: FakeLLM, home: Path, tmp_path: Path) -> dict[str, str]:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    return server_env(
        home,
        {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY},
        {"XDG_RUNTIME_DIR": str(runtime)},
    )


@pytest.fixture
def server(workspace: Path, env: dict[str, str], tmp_path: Path) -> Iterator[TcpServer]:
    running = start_tcp_server(workspace, env, tmp_path / "server.log")
    yield running
    if running.proc.poll() is None:
        running.proc.kill()
    running.proc.wait()


def test_serve_over_tcp_with_the_token(
    server: TcpServer, llm: FakeLLM, workspace: Path, tmp_path: Path
) -> None:
    # The token file sits in the user runtime directory, readable by the person only.
    assert server.token_file.parent == tmp_path / "runtime" / "baton"
    assert stat.S_IMODE(server.token_file.stat().st_mode) == 0o600
    assert len(server.token) >= 32
    client = TcpClient(server.port)
    init = client.initialize(workspace, server.token)
    assert init["result"]["serverInfo"]["name"] == "baton"
    session = client.request("baton/session/new", {})["result"]["sessionId"]
    llm.add(text("over tcp"))
    result = client.request("baton/session/prompt", {"sessionId": session, "text": "hi"})
    assert result["result"] == {"stopReason": "end_turn"}
    assert client.request("baton/session/load", {"sessionId": "nope"})["error"]["code"] == -32001


def test_a_client_without_the_token_is_refused_and_closed(
    server: TcpServer, workspace: Path
) -> None:
    cases: list[tuple[str, Any]] = [
        ("no token", None),
        ("wrong token", "x" * 43),
    ]
    for label, token in cases:
        client = TcpClient(server.port)
        reply = client.initialize(workspace, token)
        assert reply["error"]["code"] == AUTH_FAILED, label
        assert client.closed_by_server(), label
    # Anything before `initialize` is refused too, and nothing of it runs.
    client = TcpClient(server.port)
    reply = client.request("baton/session/list", {})
    assert reply["error"]["code"] == AUTH_FAILED
    assert "authentication required" in reply["error"]["message"]
    assert client.closed_by_server()
    # Junk bytes: an error and the door closes.
    client = TcpClient(server.port)
    client.sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert client.closed_by_server()
    # The server is still there for the person.
    good = TcpClient(server.port)
    assert "result" in good.initialize(workspace, server.token)
    assert good.request("baton/session/list", {})["result"]["sessions"] == []


def test_each_client_gets_its_own_updates_and_permission_requests(
    server: TcpServer, llm: FakeLLM, workspace: Path
) -> None:
    editor = TcpClient(server.port)
    editor.initialize(workspace, server.token)
    other = TcpClient(server.port)
    other.initialize(workspace, server.token)
    session = editor.request("baton/session/new", {})["result"]["sessionId"]
    llm.add(tool_call("bash", {"command": "echo ran > marker.txt"}))
    llm.add(text("done"))
    prompt_id = editor.send_request("baton/session/prompt", {"sessionId": session, "text": "go"})
    asked = editor.wait_method("baton/permission/request")
    assert asked["params"]["sessionId"] == session
    # The other client is answered meanwhile, and is asked nothing.
    listed = other.request("baton/session/list", {})["result"]["sessions"]
    assert [s["sessionId"] for s in listed] == [session]
    editor.send(
        {"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": {"optionId": "allow_once"}}}
    )
    assert editor.wait_reply(prompt_id)["result"] == {"stopReason": "end_turn"}
    assert (workspace / "marker.txt").read_text() == "ran\n"
    assert any(m.get("method") == "baton/session/update" for m in editor.inbox)
    # Nothing of the turn went to the other client: what the server sent it before
    # answering a request made after the turn ended is all in its inbox, in order.
    assert other.request("baton/session/list", {})["result"]["sessions"]
    assert other.inbox == []


def test_disconnects_never_stop_the_server(
    server: TcpServer, llm: FakeLLM, workspace: Path
) -> None:
    # A bare connect and close.
    socket.create_connection(("127.0.0.1", server.port)).close()
    # A client that leaves with a permission request open: the turn goes on, the
    # request counts as rejected, nothing runs.
    leaving = TcpClient(server.port)
    leaving.initialize(workspace, server.token)
    session = leaving.request("baton/session/new", {})["result"]["sessionId"]
    llm.add(tool_call("bash", {"command": "echo ran > marker.txt"}))
    llm.add(text("not allowed then"))
    leaving.send_request("baton/session/prompt", {"sessionId": session, "text": "go"})
    leaving.wait_method("baton/permission/request")
    leaving.close()
    client = TcpClient(server.port)
    client.initialize(workspace, server.token)
    deadline = time.monotonic() + 15
    while True:
        loaded = client.request("baton/session/load", {"sessionId": session})["result"]
        last = loaded["messages"][-1] if loaded["messages"] else {}
        if last.get("role") == "assistant" and "not allowed then" in json.dumps(last):
            break
        assert time.monotonic() < deadline, loaded
        time.sleep(0.2)
    # The turn went on after the disconnect (the request counted as rejected): the
    # server saw the client leave, and it is still here.
    assert server.proc.poll() is None
    assert not (workspace / "marker.txt").exists()
    # `exit` from a client stops the server, which removes its token file.
    client.request("shutdown", None)
    client.send({"jsonrpc": "2.0", "method": "exit"})
    assert server.proc.wait(15) == 0
    assert not server.token_file.exists()


def test_sigterm_and_idle_timeout_stop_it(
    workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    chosen = tmp_path / "my.token"
    running = start_tcp_server(workspace, env, tmp_path / "a.log", "--token-file", str(chosen))
    assert running.token_file == chosen and stat.S_IMODE(chosen.stat().st_mode) == 0o600
    running.proc.send_signal(signal.SIGTERM)
    assert running.proc.wait(15) == 0
    assert not chosen.exists()

    idle = start_tcp_server(workspace, env, tmp_path / "b.log", "--idle-timeout", "1.5")
    client = TcpClient(idle.port)
    client.initialize(workspace, idle.token)
    # A server with the same timeout and no client, started after that client connected:
    # when it stops idle, `idle` would have stopped already had the connection not
    # disarmed its timer (its timer started earlier).
    control = start_tcp_server(workspace, env, tmp_path / "c.log", "--idle-timeout", "1.5")
    assert control.proc.wait(15) == 0
    assert idle.proc.poll() is None  # a client is connected: not idle
    client.close()
    began = time.monotonic()
    assert idle.proc.wait(15) == 0
    assert time.monotonic() - began < 10


def test_a_non_loopback_host_needs_allow_remote(
    workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "baton", "serve", "--tcp", "0.0.0.0:0"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode == 2
    assert "refusing to listen on 0.0.0.0" in refused.stderr
    assert "--allow-remote" in refused.stderr
    allowed = start_tcp_server(
        workspace, env, tmp_path / "remote.log", "--allow-remote", host="0.0.0.0"
    )
    try:
        assert "WARNING: listening on 0.0.0.0" in allowed.log.read_text()
        client = TcpClient(allowed.port)
        assert "result" in client.initialize(workspace, allowed.token)
    finally:
        allowed.proc.send_signal(signal.SIGTERM)
        allowed.proc.wait(15)
    assert os.path.exists(allowed.log)
