"""One bound and one escape for every label a face shows the person.

A label is a short text a face puts in a title, a list row or a menu: a session's
title, a child's task description, an agent's or a command's name and description,
the title of a tool call or of a permission request. Many come from the model, a
plan file or a workspace file, so they may hold anything: 600,000 characters, forty
newlines, an OSC 52 sequence, a bidi override. Every face (LSP, ACP, the CLI) shows
a label the same way, made by `label`:

- **one line:** a line break is shown as an escape (`\\n`, `\\r`, `\\u2028`), never
  taken, so a label cannot push text out of sight or start a line of its own;
- **escaped:** every other control, bidi or invisible character is shown as an escape
  (`\\x1b`, `\\u202e`, `\\u200b`), as `baton.terminal_escape.visible` shows them;
- **bounded:** at most `max_chars` characters (`TITLE_MAX`, 500, as every title), the
  cut marked with `…`.

`label` is idempotent (a label of a label is the same label), so a face may apply it
again to what the core already labelled.
"""

from __future__ import annotations

from baton.terminal_escape import visible

# Characters of a title, at most: as `session/new`, `session/rename` and plan headings.
TITLE_MAX = 500
CUT = "…"


def label(text: str, max_chars: int = TITLE_MAX) -> str:
    """`text` as a label: one line, escaped, at most `max_chars` characters."""
    shown = visible(text)
    if len(shown) <= max_chars:
        return shown
    return shown[: max_chars - len(CUT)].rstrip() + CUT


def was_cut(text: str, max_chars: int = TITLE_MAX) -> bool:
    """Whether `label(text, max_chars)` leaves part of `text` out."""
    return len(visible(text)) > max_chars
