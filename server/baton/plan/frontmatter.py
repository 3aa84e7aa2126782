"""The small front-matter block at the top of a plan file.

The store is the truth for a plan's status; the block shows it (and the owning
session) to whoever opens the file, and is rewritten whenever the status
changes. Everything after it is the plan's content, which is what versions,
hashes and the model's view are made of, so a status change never looks like
an edit.
"""

from __future__ import annotations

FENCE = "---"


def render(content: str, *, status: str, session_id: str) -> str:
    """The whole file: the front matter, one blank line, then `content` unchanged."""
    return f"{FENCE}\nstatus: {status}\nsession: {session_id}\n{FENCE}\n\n{content}"


def split(text: str) -> tuple[dict[str, str], str]:
    """(front-matter fields, content) of a plan file's text.

    `split(render(c, ...))[1] == c` for any `c`, so a write is never mistaken
    for an edit. A file without a well-formed block (the person deleted it, or
    wrote the file from scratch) is all content.
    """
    text = text.replace("\r\n", "\n")
    if not text.startswith(FENCE + "\n"):
        return {}, text
    end = text.find(f"\n{FENCE}\n", len(FENCE))
    if end < 0:
        return {}, text
    fields: dict[str, str] = {}
    for line in text[len(FENCE) + 1 : end].split("\n"):
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            # Not the block Baton writes: leave the text to the person as it is.
            return {}, text
        fields[key.strip()] = value.strip()
    body = text[end + len(FENCE) + 2 :]
    if body.startswith("\n"):
        body = body[1:]
    return fields, body
