"""What `baton run` shows of a tool call before it asks: all of it, and legibly.

The person answers y/N to what they read, so what they read must be what runs:

* every field of the input, whole, wrapped to the terminal's width (a wrapped
  line goes on after `┆`, a new line of the text after `│`);
* control and invisible characters (ESC, CR, backspace, C1 controls, bidi
  overrides, zero-width characters, ...) shown as escapes (`\\x1b`, `\\r`,
  `\\u202e`), so nothing from the model or a file can move the cursor, rewrite
  the line, recolour text or set the clipboard; in a TTY the escapes are shown
  in reverse video;
* a run of many spaces shown as `[… 520 spaces …]`, so a tail pushed out of
  sight by padding is on the same line as the start;
* the diff of a write or edit escaped the same way (tabs expanded).

A very large request is shown up to `MAX_SHOWN_LINES` lines, then an explicit
marker says how much is left; the prompt then offers only `v` (view it all) or
no, so a hidden tail can never be approved.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from typing import Any

from baton.terminal_escape import escape_char, visible

# Lines of a request shown before the rest waits for `v`.
MAX_SHOWN_LINES = 200
# A run of at least this many spaces in a tool's input is shown as a count.
SPACE_RUN = 24
# Input fields a write/edit diff already shows (their size is said instead).
DIFF_FIELDS = frozenset({"content", "old_string", "new_string"})
_REVERSE, _PLAIN = "\x1b[7m", "\x1b[27m"


@dataclass(frozen=True)
class _Token:
    text: str
    width: int
    marker: bool = False


def _char_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _tokens(line: str, *, collapse_spaces: bool) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == " " and collapse_spaces:
            end = i
            while end < len(line) and line[end] == " ":
                end += 1
            if end - i >= SPACE_RUN:
                label = f"[… {end - i} spaces …]"
                tokens.append(_Token(label, len(label), marker=True))
                i = end
                continue
        escaped = escape_char(ch)
        if escaped is not None:
            tokens.append(_Token(escaped, len(escaped), marker=True))
        else:
            tokens.append(_Token(ch, _char_width(ch)))
        i += 1
    return tokens


class Rendering:
    """Lines of text for the terminal, wrapped to `width`, escapes marked."""

    def __init__(self, width: int, *, styled: bool) -> None:
        self.width = max(width, 20)
        self.styled = styled
        self.lines: list[str] = []
        self.escaped = False

    def add(self, line: str) -> None:
        """A line of Baton's own words (no escaping; never wrapped mid-word by us)."""
        self.lines.append(line)

    def text(self, text: str, *, first: str, cont: str, wrap: str, collapse_spaces: bool) -> None:
        """`text` (any number of lines): its first line after `first`, each next line
        after `cont`, each wrapped piece after `wrap`."""
        for index, line in enumerate(text.split("\n")):
            prefix = first if index == 0 else cont
            if not collapse_spaces:
                line = line.expandtabs(8)
            self._wrapped(_tokens(line, collapse_spaces=collapse_spaces), prefix, wrap)

    def _wrapped(self, tokens: list[_Token], prefix: str, wrap: str) -> None:
        room = self.width - len(prefix)
        current: list[_Token] = []
        used = 0
        for token in tokens:
            if current and used + token.width > room:
                self._emit(prefix, current)
                prefix, current, used = wrap, [], 0
                room = self.width - len(prefix)
            current.append(token)
            used += token.width
        self._emit(prefix, current)

    def _emit(self, prefix: str, tokens: list[_Token]) -> None:
        parts = [prefix]
        for token in tokens:
            if token.marker:
                self.escaped = True
                parts.append(f"{_REVERSE}{token.text}{_PLAIN}" if self.styled else token.text)
            else:
                parts.append(token.text)
        line = "".join(parts)
        self.lines.append(line if tokens else line.rstrip())


def render_request(
    tool: str,
    input: dict[str, Any],
    diff: str | None,
    reason: str | None,
    *,
    width: int,
    styled: bool,
) -> Rendering:
    """Everything the person should read before answering, as lines."""
    out = Rendering(width, styled=styled)
    out.add(f"The model asks to run {visible(tool)} with:")
    if not input:
        out.add("  (no input)")
    for key, value in input.items():
        label = visible(str(key))
        if diff is not None and key in DIFF_FIELDS and isinstance(value, str):
            out.add(f"  {label}: ({len(value):,} characters, shown in the diff below)")
            continue
        if isinstance(value, str):
            if "\n" in value:
                out.add(f"  {label}:")
                out.text(value, first="  │ ", cont="  │ ", wrap="  ┆ ", collapse_spaces=True)
            else:
                shown = value if value else '""'
                out.text(shown, first=f"  {label}: ", cont="", wrap="  ┆ ", collapse_spaces=True)
        else:
            raw = json.dumps(value, ensure_ascii=False)
            out.text(raw, first=f"  {label}: ", cont="", wrap="  ┆ ", collapse_spaces=True)
    if reason:
        out.text(reason, first="  why Baton asks: ", cont="  ", wrap="  ┆ ", collapse_spaces=False)
    if diff:
        out.add("  diff:")
        body = diff[:-1] if diff.endswith("\n") else diff
        out.text(body, first="", cont="", wrap="┆ ", collapse_spaces=False)
    if out.escaped:
        out.add(
            "  (escaped: control and invisible characters as \\xNN / \\uNNNN;"
            " long runs of spaces counted)"
        )
    return out


def cut(lines: list[str]) -> tuple[list[str], int]:
    """The lines shown before asking, and how many are held back (0: all shown)."""
    if len(lines) <= MAX_SHOWN_LINES:
        return lines, 0
    shown = lines[: MAX_SHOWN_LINES - 1]
    return shown, len(lines) - len(shown)
