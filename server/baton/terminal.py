"""The terminal face of the core: `baton run` streams the answer to stdout, activity to stderr."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

from baton import protocol as p
from baton.echoed_markup import MarkupFilter
from baton.session.events import ProgressReporter, ProgressScope
from baton.terminal_status import StatusLine, describe_progress

ECHOED_MARKUP_NOTE = (
    "[the model echoed markup ({tags}) into its answer; it was left out of the text shown"
    " above (the session keeps the answer as written)]\n"
)


class TerminalChannel:
    """Streams the agent's answer to stdout and its tool activity to stderr.

    stdout carries only the model's answer, without markup it echoed
    (`echoed_markup`); stderr carries Baton's own lines and, while the model
    works silently, its status (`terminal_status`: a spinner in a TTY).
    """

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        *,
        as_json: bool,
        interactive: bool,
        live_status: bool = False,
    ) -> None:
        self.out, self.err = out, err
        self.as_json = as_json
        self.interactive = interactive
        self._mid_line = False
        self.status = StatusLine(err, live=live_status)
        self.markup = MarkupFilter()

    def start(self) -> None:
        """The turn is starting: the model has been asked."""
        if not self.as_json:
            self.status.show("waiting", "waiting for the model")

    def finish(self) -> None:
        """The turn is over: end the answer's line, stop the status, note removed markup."""
        self._write_answer(self.markup.flush())
        self.status.close()
        self._newline()
        if self.markup.removed:
            tags = ", ".join(dict.fromkeys(self.markup.removed))
            self.err.write(ECHOED_MARKUP_NOTE.format(tags=tags))
            self.err.flush()

    def _write_answer(self, text: str) -> None:
        if not text:
            return
        self.status.hide()
        self.out.write(text)
        self.out.flush()
        self._mid_line = not text.endswith("\n")

    def send_update(self, session_id: str, update: p.WireModel) -> None:
        if self.as_json:
            self.out.write(json.dumps({"sessionId": session_id, "update": update.wire()}) + "\n")
            self.out.flush()
            return
        data = update.wire()
        kind = data.get("kind")
        if kind == "agent_message_chunk":
            self._write_answer(self.markup.feed(data["text"]))
            return
        if kind == "model_progress":
            self.status.show(*describe_progress(data))
            return
        self.status.clear()
        if kind == "tool_call":
            self._write_answer(self.markup.flush())
            self._newline()
            summary = json.dumps(data.get("input", {}), ensure_ascii=False)
            self.err.write(f"→ {data['name']} {summary[:200]}\n")
            self.status.show("tool", f"running {data['name']}")
        elif kind == "tool_call_update" and data.get("status") == "failed":
            self.err.write(f"  ✗ {str(data.get('output', ''))[:300]}\n")
            self.status.show("waiting", "waiting for the model")
        elif kind == "tool_call_update" and data.get("status") == "completed":
            self.status.show("waiting", "waiting for the model")
        elif kind == "turn_ended":
            self.status.hide()
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
            self.status.clear()
            self._newline()
            self.err.write(f"[plan v{data['version']}: {data['path']}]\n")

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        if not self.interactive:
            self.status.clear()
            self._newline()
            self.err.write(
                f"  ✗ {params.tool_call.name} refused: no terminal to ask"
                " (use --allow-bash / --allow-write)\n"
            )
            return None
        self.status.hide()
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
        self.status.clear()
        self._newline()
        self.err.write(f"[{title}…]\n")

        def report(message: str, percentage: int | None = None) -> None:
            self.err.write(f"  {message}\n")

        yield report
