"""The one escaping function for terminal output (pure parts; the CLI at a pseudo-terminal
is tested in tests/reliability/test_hardening2.py)."""

from __future__ import annotations

import io

from baton.terminal_escape import EscapingStream, escape_terminal, has_control, write_raw


def test_escape_keeps_text_lines_and_tabs_and_shows_every_control() -> None:
    assert escape_terminal("plain ünïcode 中文\n\tok") == "plain ünïcode 中文\n\tok"
    assert escape_terminal("a\x1b]52;c;eA==\x07b") == "a\\x1b]52;c;eA==\\x07b"
    assert escape_terminal("\x1b[2J\rx\bY\x7f\x9b\u202e") == "\\x1b[2J\\rx\\x08Y\\x7f\\x9b\\u202e"


def test_a_stream_escapes_every_write_even_split_sequences_but_not_raw_ones() -> None:
    sink = io.StringIO()
    stream = EscapingStream(sink)
    print("name\x1b", end="", file=stream)
    stream.write("]52;c;eA==\x07\n")
    write_raw(stream, "\r\x1b[K")
    assert sink.getvalue() == "name\\x1b]52;c;eA==\\x07\n\r\x1b[K"


def test_names_with_controls_are_recognised() -> None:
    assert not has_control(".baton/plans")
    assert all(has_control(f"p{c}x") for c in ("\x1b", "\n", "\t", "\u202e", "\u2028", "\x9b"))
