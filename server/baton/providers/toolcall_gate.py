"""The streaming side of text tool calls: hold back what may be a call until it is known.

A model that writes its tool calls as text (see `toolcall_text`) streams them as
ordinary text deltas first. Shown as they arrive, the person would see the raw
JSON and then the tool card for the same call. The gate passes text through at
once, except from the start of a line that may open a call (a fence in a call
language such as ```json, a `<tool_call>` tag, a `{`) until that block is
complete: then the block is dropped when it is a call (the finished response
carries it as a call) and released when it is not. Code blocks in other
languages stream as usual. Only what is shown live changes: the stored text is
decided on the whole response by `parse_text_tool_calls`, the same function
the gate asks.
"""

from __future__ import annotations

from collections.abc import Collection

from baton.providers.toolcall_text import FENCE_LANGS, parse_text_tool_calls

_TRIGGERS = {"```": "fence", "<tool_call>": "tag", "{": "brace"}
_TAG_END = "</tool_call>"
# A block longer than this is shown whatever it is: holding it back would look like a hang.
MAX_HELD_CHARS = 64_000


class ToolCallTextGate:
    """Feed it text deltas in order; it returns what can be shown now."""

    def __init__(self, tool_names: Collection[str]) -> None:
        self._names = tool_names
        self._at_line_start = True
        self._line = ""  # the current line's start while it may still open a call
        self._in_code = False  # inside a code block that is not a call: shown as it comes
        self._held: list[str] | None = None
        self._held_size = 0
        self._kind = ""
        self._held_line = ""  # the held block's current line
        self._opener_done = False
        self._tail = ""
        # A held `{`: JSON nesting, strings, and whether the object has closed.
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._seen_key = False
        self._closed = False

    def feed(self, text: str) -> str:
        out: list[str] = []
        for ch in text:
            if self._held is not None:
                self._hold(ch, out)
            elif self._at_line_start:
                self._line_start(ch, out)
            else:
                out.append(ch)
                self._at_line_start = ch == "\n"
        return "".join(out)

    def flush(self) -> str:
        """At the end of the response: whatever is still held, decided on what there is."""
        out: list[str] = []
        if self._held is not None:
            self._decide(out)
        elif self._line:
            out.append(self._line)
            self._line = ""
        return "".join(out)

    # ------------------------------------------------------------------ line starts

    def _line_start(self, ch: str, out: list[str]) -> None:
        self._line += ch
        stripped = self._line.lstrip(" \t")
        triggers = ("```",) if self._in_code else tuple(_TRIGGERS)
        for trigger in triggers:
            if stripped.startswith(trigger):
                if self._in_code:  # the closing fence of a block being shown
                    self._in_code = False
                    self._release_line(ch, out)
                else:
                    self._start_hold(_TRIGGERS[trigger])
                return
        if ch != "\n" and any(t.startswith(stripped) for t in triggers):
            return  # still undecided ("`", "<tool", indentation)
        self._release_line(ch, out)

    def _release_line(self, ch: str, out: list[str]) -> None:
        out.append(self._line)
        self._line = ""
        self._at_line_start = ch == "\n"

    # ------------------------------------------------------------------ holding

    def _start_hold(self, kind: str) -> None:
        self._held = [self._line]
        self._held_size = len(self._line)
        self._held_line = self._line
        self._line = ""
        self._kind = kind
        self._opener_done = False
        self._tail = self._held_line[-len(_TAG_END) :]
        self._depth, self._in_string, self._escape = 1, False, False
        self._seen_key = self._closed = False

    def _hold(self, ch: str, out: list[str]) -> None:
        assert self._held is not None
        self._held.append(ch)
        self._held_size += 1
        if self._kind == "fence":
            self._fence(ch, out)
        elif self._kind == "tag":
            if self._closed:
                if ch == "\n":  # decided with the rest of its line
                    self._decide(out)
            else:
                self._tail = (self._tail + ch)[-len(_TAG_END) :]
                self._closed = self._tail == _TAG_END
        else:
            self._brace(ch, out)
        if self._held is not None and self._held_size > MAX_HELD_CHARS:
            self._release(out)

    def _fence(self, ch: str, out: list[str]) -> None:
        if ch != "\n":
            self._held_line += ch
            return
        line, self._held_line = self._held_line.strip(), ""
        if not self._opener_done:
            self._opener_done = True
            if line[3:].strip().lower() not in FENCE_LANGS:
                self._in_code = True  # ```python and the like: a code block, shown live
                self._release(out)
            return
        if line.startswith("```"):
            self._decide(out)

    def _brace(self, ch: str, out: list[str]) -> None:
        if self._closed:
            # Decided at the end of the line: prose after the object makes it an example.
            if ch == "\n":
                self._decide(out)
            return
        if self._in_string:
            if self._escape:
                self._escape = False
            elif ch == "\\":
                self._escape = True
            elif ch == '"':
                self._in_string = False
            return
        if not self._seen_key and not ch.isspace():
            # A call is a JSON object: its first key is a string. `{ int x; }` is not.
            self._seen_key = True
            if ch not in '"}':
                self._release(out)
                return
        if ch == '"':
            self._in_string = True
        elif ch == "{":
            self._depth += 1
        elif ch == "}":
            self._depth -= 1
            self._closed = self._depth == 0

    def _decide(self, out: list[str]) -> None:
        assert self._held is not None
        block = "".join(self._held)
        rest, calls = parse_text_tool_calls(block, self._names)
        if not calls:
            self._release(out)
            return
        if rest:
            out.append(rest + ("\n" if block.endswith("\n") else ""))
        self._held = None
        self._at_line_start = block.endswith("\n")

    def _release(self, out: list[str]) -> None:
        assert self._held is not None
        block = "".join(self._held)
        out.append(block)
        self._held = None
        self._at_line_start = block.endswith("\n")
