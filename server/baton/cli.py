"""Command line: `baton serve`, `baton run`, `baton sessions`, `baton schema`.

`baton run "prompt"` is Baton without an editor: one headless turn in the
current directory, the answer streamed to stdout, tool activity to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from baton import __version__
from baton import protocol as p
from baton.logs import setup_logging
from baton.session.events import ProgressReporter, ProgressScope


def _parse_tcp(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError("expected HOST:PORT, e.g. 127.0.0.1:2087")
    return host, int(port)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="baton", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"baton {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve JSON-RPC (LSP framing) on stdio or TCP")
    serve.add_argument("--tcp", type=_parse_tcp, metavar="HOST:PORT", help="listen on TCP")

    run = sub.add_parser("run", help="run one headless turn in the current directory")
    run.add_argument("prompt", help="what to ask the agent")
    run.add_argument("--mode", choices=["build", "plan"], default="build")
    run.add_argument("--session", help="continue this session instead of starting a new one")
    run.add_argument("--allow-bash", action="store_true", help="let the agent run shell commands")
    run.add_argument("--allow-write", action="store_true", help="let the agent change files")
    run.add_argument(
        "--json", action="store_true", help="print updates as JSON lines instead of text"
    )

    sub.add_parser("sessions", help="list this directory's sessions")
    sub.add_parser("schema", help="print the protocol's JSON Schema")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging("WARNING" if args.command in ("run", "sessions", "schema") else None)
    if args.command == "serve":
        return _serve(args.tcp)
    if args.command == "schema":
        json.dump(p.json_schema(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if args.command == "sessions":
        return asyncio.run(_sessions())
    if args.command == "run":
        return asyncio.run(_run(args))
    return 2


def _serve(tcp: tuple[str, int] | None) -> int:
    from baton.lsp.server import create_server

    server = create_server()
    if tcp:
        server.start_tcp(*tcp)
    else:
        server.start_io()
    return 0


async def _sessions() -> int:
    from baton.app import build_app
    from baton.session.events import NullChannel

    app = build_app(Path.cwd(), NullChannel())
    try:
        rows = app.sessions.list_sessions().sessions
        if not rows:
            print('no sessions in this directory yet; start one with: baton run "..."')
        for row in rows:
            print(f"{row.session_id}  {row.updated_at}  {row.mode:5}  {row.title}")
    finally:
        await app.close()
    return 0


class TerminalChannel:
    """Streams the agent's answer to stdout and its tool activity to stderr."""

    def __init__(self, out: TextIO, err: TextIO, *, as_json: bool, interactive: bool) -> None:
        self.out, self.err = out, err
        self.as_json = as_json
        self.interactive = interactive
        self._mid_line = False

    def send_update(self, session_id: str, update: p.WireModel) -> None:
        if self.as_json:
            self.out.write(json.dumps({"sessionId": session_id, "update": update.wire()}) + "\n")
            self.out.flush()
            return
        data = update.wire()
        kind = data.get("kind")
        if kind == "agent_message_chunk":
            self.out.write(data["text"])
            self.out.flush()
            self._mid_line = not data["text"].endswith("\n")
        elif kind == "tool_call":
            self._newline()
            summary = json.dumps(data.get("input", {}), ensure_ascii=False)
            self.err.write(f"→ {data['name']} {summary[:200]}\n")
        elif kind == "tool_call_update" and data.get("status") == "failed":
            self.err.write(f"  ✗ {str(data.get('output', ''))[:300]}\n")
        elif kind == "compaction_finished":
            record = data["compaction"]
            self._newline()
            self.err.write(
                f"[compacted: {record['tokensBefore']} → {record['tokensAfter']} tokens,"
                f" {record['strategy']}, {record['trigger']}]\n"
            )
        elif kind == "compaction_failed":
            self.err.write(f"[compaction failed: {data['error']}]\n")
        elif kind == "mode":
            self.err.write(f"[mode: {data['mode']}]\n")
        self.err.flush()

    def _newline(self) -> None:
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False

    def notify(self, method: str, params: p.WireModel) -> None:
        if self.as_json:
            self.out.write(json.dumps({"method": method, "params": params.wire()}) + "\n")
            return
        data = params.wire()
        if method == "baton/plan/show" or method == "baton/plan/didChange":
            self._newline()
            self.err.write(f"[plan v{data['version']}: {data['path']}]\n")

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        if not self.interactive:
            self._newline()
            self.err.write(
                f"  ✗ {params.tool_call.name} refused: no terminal to ask"
                " (use --allow-bash / --allow-write)\n"
            )
            return None
        self._newline()
        detail = json.dumps(params.tool_call.input, ensure_ascii=False)[:500]
        if params.diff:
            self.err.write(params.diff[:4000] + "\n")
        self.err.write(f"Allow {params.tool_call.name} {detail}? [y]es / [a]lways / [N]o: ")
        self.err.flush()
        answer = (await asyncio.to_thread(sys.stdin.readline)).strip().lower()
        option = {"y": "allow_once", "yes": "allow_once", "a": "allow_always"}.get(
            answer, "reject_once"
        )
        return p.PermissionResponse(outcome=p.SelectedOutcome(option_id=option))

    def progress(self, title: str) -> ProgressScope:
        return self._progress(title)

    @asynccontextmanager
    async def _progress(self, title: str) -> AsyncIterator[ProgressReporter]:
        self._newline()
        self.err.write(f"[{title}…]\n")

        def report(message: str, percentage: int | None = None) -> None:
            self.err.write(f"  {message}\n")

        yield report


async def _run(args: argparse.Namespace) -> int:
    from baton.app import build_app
    from baton.errors import BatonError

    channel = TerminalChannel(
        sys.stdout, sys.stderr, as_json=args.json, interactive=sys.stdin.isatty()
    )
    overrides: dict[str, Any] = {"permissions": {}}
    if args.allow_bash:
        overrides["permissions"]["bash"] = "allow"
    if args.allow_write:
        overrides["permissions"]["write"] = "allow"
    if not overrides["permissions"]:
        overrides = {}
    app = build_app(Path.cwd(), channel, client_settings=overrides or None)
    try:
        if args.session:
            session_id = args.session
            app.sessions.state(session_id)
        else:
            session_id = app.sessions.new_session(p.SessionNewParams(mode=args.mode)).session_id
        result = await app.sessions.prompt(p.PromptParams(session_id=session_id, text=args.prompt))
    except BatonError as exc:
        sys.stdout.write("\n")
        print(f"baton: {exc.message}", file=sys.stderr)
        return 1
    finally:
        await app.close()
    channel._newline()
    print(f"[{result.stop_reason}; session {session_id}]", file=sys.stderr)
    if result.error:
        print(f"baton: {result.error}", file=sys.stderr)
    return 0 if result.stop_reason in ("end_turn", "max_steps") else 1
