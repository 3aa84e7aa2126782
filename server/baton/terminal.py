"""The terminal face of the core: `baton run` streams the answer to stdout, activity to stderr."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

from baton import protocol as p
from baton.session.events import ProgressReporter, ProgressScope


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
