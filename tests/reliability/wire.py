"""A raw wire client for the reliability suites: arbitrary bytes in, every frame out, timeouts.

`bench.rpc.RawServer` speaks the framing without pygls; this subclass reads
the server's output on a thread, so a test can wait for a reply with a
timeout instead of hanging when the server goes deaf, and it checks the
server's own framing strictly (a malformed frame from the server is a
finding, not something to tolerate).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

from bench.rpc import RawServer


class ServerGone(Exception):
    """The server stopped answering: it exited, closed its output, or timed out."""


class WireServer(RawServer):
    def __init__(
        self, workspace: Path, env: dict[str, str], *, stderr: IO[bytes] | int | None = None
    ) -> None:
        super().__init__(workspace, env, stderr=subprocess.DEVNULL if stderr is None else stderr)
        self._inbox: queue.Queue[dict[str, Any] | BaseException] = queue.Queue()
        self.bad_frames: list[str] = []
        self.sent = 0
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ output

    def _read_loop(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        raise EOFError("server closed its output")
                    if line == b"\r\n":
                        break
                    name, sep, value = line.decode("ascii").partition(":")
                    if not sep or not line.endswith(b"\r\n"):
                        self.bad_frames.append(f"bad header line {line!r}")
                    if name.lower() == "content-length":
                        length = int(value)
                if length is None:
                    self.bad_frames.append("frame without Content-Length")
                    continue
                body = out.read(length)
                try:
                    message = json.loads(body)
                except ValueError:
                    self.bad_frames.append(f"frame body is not JSON: {body[:200]!r}")
                    continue
                if not isinstance(message, dict):
                    self.bad_frames.append(f"frame body is not an object: {body[:200]!r}")
                    continue
                self._inbox.put(message)
        except BaseException as exc:
            self._inbox.put(exc)

    def read(self, timeout: float = 15.0) -> dict[str, Any]:
        try:
            item = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise ServerGone(f"no message from the server within {timeout:g}s") from None
        if isinstance(item, BaseException):
            self._inbox.put(item)  # every later read fails the same way
            raise ServerGone(f"server output ended: {item}") from item
        return item

    def drain(self) -> list[dict[str, Any]]:
        """Messages already received and not yet read."""
        out = []
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                return out
            if isinstance(item, BaseException):
                self._inbox.put(item)
                return out
            out.append(item)

    def response(self, msg_id: Any, timeout: float = 15.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            reply = self.read(max(0.01, deadline - time.monotonic()))
            if reply.get("id") == msg_id and "method" not in reply:
                return reply
            self.notifications.append(reply)

    # ------------------------------------------------------------------ input

    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (no framing added)."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ServerGone(f"cannot write to the server: {exc}") from exc
        self.sent += 1

    def send_bytes(self, body: bytes) -> None:
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.alive:
            self.proc.kill()
        self.proc.wait()
