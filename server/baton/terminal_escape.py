"""The one escaping function for what Baton prints to a terminal.

Names from a workspace (config keys, plugin file names, `plans.dir`), the
model's words and a tool's output reach `baton run`'s notices, its trust
question, its plan lines, its log lines and its answer. A terminal obeys
control sequences in them: OSC 52 writes the clipboard, `ESC [2J` clears the
screen, `\\r` rewrites a line, a bidi override reorders what is read. So the
CLI does not trust its call sites to remember: `install()` wraps
`sys.stderr` (always, for every command: it is for people, the log lines of
`baton serve` too) and `sys.stdout` (at a terminal, for the commands whose
stdout is not JSON-RPC or JSON) in an
`EscapingStream` whose `write` passes every string through `escape_terminal`.
Baton's own control sequences (the spinner's line erase, the permission
prompt's reverse video around already-escaped characters) are the only ones
that pass, and only through `write_raw`, which no workspace string reaches.

`escape_terminal` keeps newlines and tabs and shows every other C0/C1 control
character and bidi control as a visible escape (`\\x1b`, `\\r`, `\\u202e`);
one character at a time, so a sequence split across writes is escaped too.
"""

from __future__ import annotations

import codecs
import io
import os
import sys
import threading
import unicodedata
from typing import Any, TextIO

# Bidi controls: they reorder what is shown without being seen.
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_NAMED = {"\r": "\\r", "\t": "\\t"}


def escape_char(ch: str) -> str | None:
    """The escape shown for a control or invisible character; None for a visible one."""
    if ch in _NAMED:
        return _NAMED[ch]
    if unicodedata.category(ch) not in _HIDDEN_CATEGORIES:
        return None
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escape_terminal(text: str) -> str:
    """`text` safe for a terminal: newlines and tabs kept, every other control character
    (C0, DEL, C1: ESC, CR, BS, BEL, CSI, OSC...) and bidi control shown as an escape."""
    if text.isprintable():
        return text
    out: list[str] = []
    for ch in text:
        if ch in "\n\t" or (unicodedata.category(ch) not in ("Cc", "Cs") and ch not in BIDI):
            out.append(ch)
        else:
            out.append(escape_char(ch) or ch)
    return "".join(out)


def has_control(text: str) -> bool:
    """Whether `text` holds a character `escape_terminal` would escape, or a newline or
    tab (refused in names: a folder name is one line)."""
    return any(unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") or ch in BIDI for ch in text)


class EscapingStream(io.TextIOBase):
    """A text stream whose every `write` goes through `escape_terminal`."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(escape_terminal(text))
        return len(text)

    def raw(self, text: str) -> None:
        """Baton's own control sequences, unescaped (see `write_raw`)."""
        self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def write_raw(stream: TextIO, text: str) -> None:
    """Write Baton's own control sequence `text` (built by Baton, holding nothing from the
    workspace, the model or a tool that is not already escaped) past the escaping."""
    raw = getattr(stream, "raw", None)
    if callable(raw):
        raw(text)
    else:
        stream.write(text)


def install(*, stdout: bool = True) -> None:
    """Route the CLI's output through `escape_terminal` (see the module doc): stderr
    always, stdout when `stdout` and it is a terminal."""
    if not isinstance(sys.stderr, EscapingStream):
        sys.stderr = EscapingStream(sys.stderr)
    if stdout and not isinstance(sys.stdout, EscapingStream) and _isatty(sys.stdout):
        sys.stdout = EscapingStream(sys.stdout)


_child_stderr: TextIO | None = None
_child_stderr_lock = threading.Lock()


def child_stderr() -> TextIO:
    """A file to give a child process (an MCP server) as its stderr: what it writes
    reaches Baton's stderr through `escape_terminal`, instead of the terminal's file
    descriptor directly. One pipe and one reader thread for the whole process."""
    global _child_stderr
    with _child_stderr_lock:
        if _child_stderr is None:
            read_fd, write_fd = os.pipe()  # not inherited by other children (PEP 446)
            threading.Thread(
                target=_forward, args=(read_fd,), name="child-stderr", daemon=True
            ).start()
            _child_stderr = os.fdopen(write_fd, "w", buffering=1, encoding="utf-8")
        return _child_stderr


def _forward(read_fd: int) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    while True:
        try:
            chunk = os.read(read_fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        try:
            sys.stderr.write(escape_terminal(decoder.decode(chunk)))
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # stderr closed: what a child says is dropped, never blocks it


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def visible(text: str) -> str:
    """`text` on one line with every control or invisible character escaped (for
    short lines such as activity notes; newlines become `\\n`)."""
    out: list[str] = []
    for ch in text:
        escaped = "\\n" if ch == "\n" else escape_char(ch)
        out.append(ch if escaped is None else escaped)
    return "".join(out)
