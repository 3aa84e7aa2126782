"""Editor context attached to a prompt: files and selections, read by the server itself.

A `file:` URI (or a plain workspace-relative path) is resolved inside the workspace
with the same sandbox as the file tools; anything outside is refused (-32602 naming
the field). The server reads the file from disk unless the client sends `text`,
which it does only for a buffer with unsaved changes: what the person sees in the
editor is what they mean. A buffer that has no file (`untitled:`) must come with
`text`. A range attaches whole lines (LSP positions, 0-based; an end at character 0
of a later line stops at the line before, as an editor selection does).

The attachment is stored as a part of the prompt's user message, so the model sees
it exactly once, where it was attached, labelled with its path and line range.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from baton import protocol as p
from baton.agent import framing, prompts
from baton.errors import InvalidParams
from baton.store.model import StoredAttachment
from baton.tools.base import ToolFailure
from baton.tools.fileio import looks_binary, read_bytes
from baton.tools.sandbox import display_path, resolve_in_workspace

# One attachment's text is cut here (the model can read the rest with its tools).
MAX_ATTACHMENT_CHARS = 100_000
# Files larger than this are refused as attachments rather than loaded whole.
MAX_ATTACHED_FILE_BYTES = 16 * 1024 * 1024


def resolve_attachments(
    workspace: Path, items: list[p.ContextAttachment]
) -> list[StoredAttachment]:
    """The prompt's attachments as stored parts; InvalidParams naming the field otherwise."""
    return [
        _resolve(workspace, item, f"params.context.{index}") for index, item in enumerate(items)
    ]


def _resolve(workspace: Path, item: p.ContextAttachment, field: str) -> StoredAttachment:
    parsed = urlsplit(item.uri)
    source: Literal["disk", "editor"] = "disk" if item.text is None else "editor"
    if parsed.scheme in ("", "file") and not _is_windows_drive(item.uri):
        if parsed.scheme == "file" and parsed.netloc not in ("", "localhost"):
            raise InvalidParams(f"{field}.uri: a file on another host cannot be attached")
        raw = unquote(parsed.path) if parsed.scheme == "file" else item.uri
        try:
            real = resolve_in_workspace(workspace, raw, must_exist=item.text is None)
        except ToolFailure as exc:
            raise InvalidParams(f"{field}.uri: {exc}") from None
        shown = display_path(workspace, real)
        text = item.text if item.text is not None else _read(workspace, real, shown, field)
    else:
        # A buffer with no file behind it (untitled:, a notebook cell): only its text exists.
        if item.text is None:
            raise InvalidParams(
                f"{field}.text: required for a {parsed.scheme}: URI (the server reads only "
                "files in the workspace)"
            )
        shown, text = item.uri, item.text
    text = text.replace("\r\n", "\n")
    first: int | None = None
    last: int | None = None
    if item.range is not None:
        text, first, last = _lines(text, item.range, shown, field)
    truncated = len(text) > MAX_ATTACHMENT_CHARS
    return StoredAttachment(
        uri=item.uri,
        path=shown,
        text=text[:MAX_ATTACHMENT_CHARS],
        source=source,
        start_line=first,
        end_line=last,
        truncated=truncated,
    )


def _is_windows_drive(uri: str) -> bool:
    return len(uri) > 2 and uri[1] == ":" and uri[0].isalpha()


def _read(workspace: Path, real: Path, shown: str, field: str) -> str:
    if real.is_dir():
        raise InvalidParams(f"{field}.uri: {shown} is a directory; attach files")
    try:
        data = read_bytes(workspace, real, MAX_ATTACHED_FILE_BYTES)
    except ToolFailure as exc:
        raise InvalidParams(f"{field}.uri: {exc}") from None
    if data is None:
        raise InvalidParams(f"{field}.uri: no such file: {shown}")
    if looks_binary(data):
        raise InvalidParams(f"{field}.uri: {shown} is a binary file; attach text files")
    return data.decode("utf-8", errors="replace")


def _lines(text: str, rng: p.LineRange, shown: str, field: str) -> tuple[str, int, int]:
    """The whole lines a range covers, and their 1-based first and last numbers."""
    lines = text.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()  # the text ends with a newline: no line after it
    start, end = rng.start.line, rng.end.line
    if end > start and rng.end.character == 0:
        end -= 1
    if end < start:
        raise InvalidParams(f"{field}.range: the end is before the start")
    if start >= len(lines):
        raise InvalidParams(
            f"{field}.range: line {start + 1} is past the end of {shown} ({len(lines)} lines)"
        )
    end = min(end, len(lines) - 1)
    return "\n".join(lines[start : end + 1]), start + 1, end + 1


def render_attachment(attachment: StoredAttachment) -> str:
    """One attachment as the model sees it: labelled with its path and line range."""
    start, end = attachment.start_line, attachment.end_line
    text = attachment.text
    if attachment.truncated:
        text += "\n" + prompts.ATTACHMENT_TRUNCATED.format(limit=MAX_ATTACHMENT_CHARS)
    attrs = {"path": attachment.path}
    if start:
        attrs["lines"] = prompts.ATTACHMENT_LINES.format(start=start, end=end)
    if attachment.source == "editor":
        attrs["source"] = prompts.ATTACHMENT_UNSAVED
    return framing.block("attachment", text, attrs)
