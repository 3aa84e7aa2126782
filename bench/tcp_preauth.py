"""Memory of `baton serve --tcp` under unauthenticated connections sending huge frames.

Four connections without the token each send a 60 MB frame.
Prints, as the median of several runs, the server's peak RSS (VmHWM) after an
authenticated client's round trip (the baseline, same run) and after the
flood, and how many of the four connections the server closed before taking
their whole body.

    python bench/tcp_preauth.py [--runs 3] [--server PATH_TO_SERVER_DIR]

`--server` points PYTHONPATH at another checkout's `server/` (for a before/after
comparison: `git archive <commit> server | tar -x -C /tmp/old`).
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.rpc import isolated_env

FRAME = 60_000_000
CONNECTIONS = 4


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    assert found is not None
    return int(found.group(1)) / 1024


def send(sock: socket.socket, message: dict[str, object]) -> None:
    body = json.dumps(message).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def read_one(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
    while len(rest) < length:
        rest += sock.recv(65536)
    return rest


def flood(port: int) -> bool:
    """One unauthenticated 60 MB frame; whether the server closed the connection first."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    try:
        sock.sendall(b"Content-Length: %d\r\n\r\n" % FRAME)
        chunk = b"a" * (1 << 20)
        sent = 0
        while sent < FRAME:
            piece = chunk[: FRAME - sent]
            sock.sendall(piece)
            sent += len(piece)
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(65536):
            pass
        return False
    except (BrokenPipeError, ConnectionResetError):
        return True
    finally:
        sock.close()


def one_run(server_dir: Path) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        (root / "runtime").mkdir(mode=0o700)
        env = isolated_env(root / "home", {"XDG_RUNTIME_DIR": str(root / "runtime")})
        env["PYTHONPATH"] = str(server_dir)
        log = root / "server.log"
        with log.open("wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "baton", "serve", "--tcp", "127.0.0.1:0"],
                cwd=root / "ws",
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        try:
            deadline = time.monotonic() + 30
            while True:
                found = re.search(
                    r"listening on .*:(\d+)\nbaton: token file: (.*)\n", log.read_text()
                )
                if found or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert found, log.read_text()
            port, token = int(found.group(1)), Path(found.group(2)).read_text().strip()
            person = socket.create_connection(("127.0.0.1", port), timeout=30)
            options = {"token": token}
            params = {"processId": None, "rootUri": (root / "ws").as_uri(), "capabilities": {}}
            send(
                person,
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {**params, "initializationOptions": options},
                },
            )
            read_one(person)
            send(person, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
            send(person, {"jsonrpc": "2.0", "id": 2, "method": "baton/session/list", "params": {}})
            read_one(person)
            before = peak_rss_mb(proc.pid)
            with ThreadPoolExecutor(CONNECTIONS) as pool:
                closed = sum(pool.map(flood, [port] * CONNECTIONS))
            after = peak_rss_mb(proc.pid)
            person.close()
            return before, after, closed
        finally:
            proc.kill()
            proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--server", type=Path, default=Path(__file__).resolve().parent.parent / "server"
    )
    args = parser.parse_args()
    runs = [one_run(args.server) for _ in range(args.runs)]
    before = statistics.median(r[0] for r in runs)
    after = statistics.median(r[1] for r in runs)
    closed = statistics.median(r[2] for r in runs)
    print(f"server: {args.server}")
    print(
        f"{CONNECTIONS} unauthenticated connections x {FRAME / 1e6:.0f} MB frames, {args.runs} runs (median)"
    )
    print(f"peak RSS after an authenticated round trip (baseline): {before:.0f} MB")
    print(
        f"peak RSS after the flood:                              {after:.0f} MB (+{after - before:.0f} MB)"
    )
    print(f"connections closed before their body was taken:        {closed:.0f} of {CONNECTIONS}")


if __name__ == "__main__":
    main()
