"""The terminal face of the core: `baton run` streams the answer to stdout, activity to stderr."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TextIO

from baton import protocol as p
from baton.agent.echoed_markup import MarkupFilter
from baton.agent.events import ProgressReporter, ProgressScope
from baton.faces.terminal.children import INDENT, ChildLines
from baton.faces.terminal.prompt import cut, render_request
from baton.faces.terminal.status import StatusLine, describe_progress
from baton.terminal_escape import escape_terminal, visible, write_raw

ECHOED_MARKUP_NOTE = (
    "[the model echoed markup ({tags}) into its answer; it was left out of the text shown"
    " above (the session keeps the answer as written)]\n"
)
# Columns the permission prompt wraps to when stderr is not a terminal.
DEFAULT_WIDTH = 100
# The most characters of a tool call's input / a failure shown on an activity line.
ACTIVITY_CHARS = 200
FAILURE_CHARS = 300

NO_TOOL_NOTE = "[Baton: the model answered without looking at the code; asked it to look first]\n"
SET_ASIDE_NOTE = (
    "[Baton: the model answered without looking at the code; that answer was set aside"
    " (not printed) and the model was asked to look first]\n"
)
EMPTY_ANSWER_NOTE = (
    "[Baton: the model's answer was empty (only markup); asked it once to answer in words]\n"
)
NOTES = {"no_tool": NO_TOOL_NOTE, "empty_answer": EMPTY_ANSWER_NOTE}
# The tools that change a file in the workspace.
FILE_TOOLS = ("write", "edit")


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
        # Held back answer text (`hold_answer`), None when the answer streams.
        self._held: list[str] | None = None
        # The turn's tool calls by id (name), and what became of the file-changing ones.
        self._calls: dict[str, str] = {}
        self.completed: list[str] = []
        self.failed: list[str] = []
        self.as_json = as_json
        self.interactive = interactive
        self._mid_line = False
        self.status = StatusLine(err, live=live_status)
        # `task` children: their steps are printed indented under the call.
        self.children = ChildLines()
        self.markup = MarkupFilter()
        # A terminal gets the answer with control characters escaped; a pipe or a
        # file gets it exactly as the model wrote it.
        self._out_tty = _isatty(out)

    def start(self) -> None:
        """The turn is starting: the model has been asked."""
        if not self.as_json:
            self.status.show("waiting", "waiting for the model")

    def finish(self) -> None:
        """The turn is over: end the answer's line, stop the status, note removed markup."""
        self._release()
        self._write_answer(self.markup.flush())
        self.status.close()
        self._newline()
        if self.markup.removed:
            tags = ", ".join(dict.fromkeys(self.markup.removed))
            self.err.write(ECHOED_MARKUP_NOTE.format(tags=tags))
            self.err.flush()

    def hold_answer(self) -> None:
        """Hold the answer back until the turn calls a tool or ends: for a turn the
        look-first nudge may follow, so that an answer from memory the model then
        contradicts after looking is never printed (stdout holds the final answer).
        The status line goes on meanwhile."""
        if not self.as_json:
            self._held = []

    def changed_files(self) -> bool:
        """Whether a `write` or `edit` of the turn succeeded."""
        return any(name in FILE_TOOLS for name in self.completed)

    def _release(self) -> None:
        """Print the held answer: no nudge can follow any more."""
        held, self._held = self._held, None
        if held:
            self._write_answer("".join(held))

    def _write_answer(self, text: str) -> None:
        if not text:
            return
        if self._held is not None:
            self._held.append(text)
            return
        self.status.hide()
        self.out.write(escape_terminal(text) if self._out_tty else text)
        self.out.flush()
        self._mid_line = not text.endswith("\n")

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        if self.as_json:
            line: dict[str, object] = {"sessionId": session_id, "update": update.wire()}
            if parent_id is not None:
                line["parentId"] = parent_id
            self.out.write(json.dumps(line) + "\n")
            self.out.flush()
            return
        if parent_id is not None:
            self._child_progress(session_id, update)
            return
        match update:
            case p.ChildUpdate():
                lines = self.children.changed(update)
                if lines:
                    self.status.clear()
                    self._newline()
                    self.err.write("".join(line + "\n" for line in lines))
                    self.err.flush()
                return
            case p.AgentMessageChunk(text=text):
                self._write_answer(self.markup.feed(text))
                return
            case p.ModelProgress():
                self.status.show(*describe_progress(update))
                return
        self.status.clear()
        match update:
            case p.ToolCallStarted(tool_call_id=call_id, name=name, input=args):
                self._calls[call_id] = name
                self._write_answer(self.markup.flush())
                self._release()
                self._newline()
                summary = json.dumps(args, ensure_ascii=False)
                self.err.write(f"→ {visible(name)} {_short(summary, ACTIVITY_CHARS)}\n")
                self.status.show("tool", f"running {name}")
            case p.ToolCallUpdate(status="failed", tool_call_id=call_id, output=output):
                self.failed.append(self._calls.get(call_id, ""))
                self.err.write(f"  ✗ {_short(str(output), FAILURE_CHARS)}\n")
                self.status.show("waiting", "waiting for the model")
            case p.ToolCallUpdate(status="completed", tool_call_id=call_id):
                self.completed.append(self._calls.get(call_id, ""))
                self.status.show("waiting", "waiting for the model")
            case p.TurnEnded():
                self.status.hide()
            case p.CompactionFinished(compaction=record):
                self._newline()
                self.err.write(
                    f"[compacted: {record.tokens_before} → {record.tokens_after} tokens,"
                    f" {record.strategy}, {record.trigger}]\n"
                )
                if record.score is not None:
                    self.err.write(f"[kept: {record.score.describe()}]\n")
            case p.CompactionFailed(error=error):
                self.err.write(f"[compaction failed: {error}]\n")
            case p.ModeUpdate(mode=mode):
                self.err.write(f"[mode: {mode}]\n")
            case p.NoteUpdate(reason=reason) if reason in NOTES:
                self._write_answer(self.markup.flush())
                note = NOTES[reason]
                if reason == "no_tool" and self._held:
                    # The answer from memory is dropped; the one after looking is printed.
                    self._held = []
                    note = SET_ASIDE_NOTE
                self._newline()
                self.err.write(note)
                self.status.show("waiting", "waiting for the model")
        self.err.flush()

    def _child_progress(self, child_id: str, update: p.Update) -> None:
        """A child's own tool calls, indented under its `task` call (its words stay out of
        stdout: the parent's answer is the run's answer)."""
        match update:
            case p.ToolCallStarted(tool_call_id=call_id, name=name, input=args):
                self.children.calls[call_id] = name
                self.status.clear()
                self._newline()
                summary = json.dumps(args, ensure_ascii=False)
                self.err.write(f"{INDENT}→ {visible(name)} {_short(summary, ACTIVITY_CHARS)}\n")
                self.status.show("tool", self.children.status(child_id, name))
            case p.ToolCallUpdate(status="completed" | "failed" as status, tool_call_id=call_id):
                name = self.children.calls.pop(call_id, "")
                # A build child's writes are the run's changes too.
                (self.completed if status == "completed" else self.failed).append(name)
                if status == "failed":
                    self.status.clear()
                    output = _short(str(update.output or ""), FAILURE_CHARS)
                    self.err.write(f"{INDENT}  ✗ {output}\n")
            case _:
                return
        self.err.flush()

    def end_line(self) -> None:
        """End the answer's line, if one is open, before something is asked on stderr."""
        self._newline()

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
        asker = self.children.label(params.session_id) if params.parent_id else None
        if asker is None and params.parent_id:
            asker = f"the {visible(params.agent or 'task')} child"
        if not self.interactive:
            self.status.clear()
            self._newline()
            # A child's refusal sits with its other steps, under its `task` call.
            by, indent = (f" ({asker})", INDENT) if asker else ("", "")
            self.err.write(
                f"{indent}  ✗ {params.tool_call.name} refused{by}: no terminal to ask"
                " (use --allow-bash / --allow-write)\n"
            )
            return None
        self.status.hide()
        self._newline()
        if asker:
            self.err.write(f"[{asker} asks:]\n")
        rendering = render_request(
            params.tool_call.name,
            params.tool_call.input,
            params.diff,
            params.reason,
            width=self._width(),
            styled=self._err_tty(),
        )
        shown, held_back = cut(rendering.lines)
        self._write_lines(shown)
        if held_back:
            self.err.write(
                f"  [… {held_back:,} more lines not shown ({len(rendering.lines):,} in all);"
                " answer v to see everything before you decide …]\n"
            )
        offered = {option.option_id for option in params.options}
        # The narrower "always" answers (this command, this file, this MCP tool) by number;
        # [a]lways stays the whole category, as before.
        narrower = [
            o for o in params.options if o.kind == "allow_always" and o.option_id != "allow_always"
        ]
        choices = {str(i): o.option_id for i, o in enumerate(narrower, start=1)}
        name = visible(params.tool_call.name)
        listed = False
        while True:
            if held_back:
                self.err.write(f"Allow {name}? [v]iew all / [N]o: ")
            else:
                if narrower and not listed:
                    for key, offer in zip(choices, narrower, strict=True):
                        self.err.write(f"  {key}  {visible(offer.name or offer.option_id)}\n")
                    category = next(
                        (o for o in params.options if o.option_id == "allow_always"), None
                    )
                    if category is not None:
                        self.err.write(f"  a  {visible(category.name or 'Always allow')}\n")
                    listed = True
                always = " / [a]lways" if "allow_always" in offered else ""
                numbers = f", or {'/'.join(choices)}" if choices else ""
                self.err.write(f"Allow {name}? [y]es{always} / [N]o{numbers}: ")
            self.err.flush()
            answer = (await asyncio.to_thread(sys.stdin.readline)).strip().lower()
            if answer in ("v", "view") and held_back:
                self._write_lines(rendering.lines[len(shown) :])
                held_back = 0
                continue
            option = {"y": "allow_once", "yes": "allow_once", "a": "allow_always"}.get(answer)
            option = choices.get(answer, option)
            if option is not None and held_back:
                self.err.write(
                    "  not allowed: part of the request is not shown yet; answer v to see it"
                    " all, or n\n"
                )
                continue
            if option is None or option not in offered:
                if answer in ("a", "always"):
                    self.err.write("  'always' is not offered for this request\n")
                    continue
                option = "reject_once"
            return p.PermissionResponse(outcome=p.SelectedOutcome(option_id=option))

    def _write_lines(self, lines: list[str]) -> None:
        # Rendered by terminal_prompt: every character from the call already escaped; the
        # only control sequences left are its own reverse video around the escapes.
        for line in lines:
            write_raw(self.err, line + "\n")
        self.err.flush()

    def _err_tty(self) -> bool:
        return _isatty(self.err)

    def _width(self) -> int:
        if self._err_tty():
            try:
                return os.get_terminal_size(self.err.fileno()).columns
            except (OSError, ValueError):
                pass
        return DEFAULT_WIDTH

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


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _short(text: str, limit: int) -> str:
    """An activity line: escaped (nothing printed can steer the terminal), and said to
    be cut when it is (the permission prompt, not this line, shows a call whole)."""
    shown = visible(text)
    if len(shown) <= limit:
        return shown
    return shown[:limit] + f"… [{len(shown) - limit:,} more characters]"
