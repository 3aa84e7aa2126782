"""The edit tool's matching: one exact occurrence of a text replaced (CRLF files too).

Its own module, so what checks an edit before it runs (tools/git_runs.py, the
ACP diff preview) sees the edit's result without importing the edit tool.
"""

from __future__ import annotations

from baton.tools.base import ToolFailure


def replace_exact(
    text: str, old: str, new: str, replace_all: bool, shown: str
) -> tuple[str, int, int]:
    """Replace `old` by `new` in `text`: (new text, occurrences replaced, first line).

    The model reads files with universal newlines, so its `old` has `\\n` where a
    CRLF file has `\\r\\n`; when the plain match fails such a file is matched
    (and edited) with CRLF line ends.
    """
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        crlf_old = old.replace("\n", "\r\n")
        crlf_count = text.count(crlf_old)
        if crlf_count:
            old, new, count = crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n"), crlf_count
    if count == 0:
        raise ToolFailure(
            f"old_string not found in {shown}; read the file again and copy the exact text, "
            "including whitespace and indentation"
        )
    if count > 1 and not replace_all:
        raise ToolFailure(
            f"old_string found {count} times in {shown}; add surrounding lines to make it "
            "unique, or set replace_all to replace every occurrence"
        )
    line = text.count("\n", 0, text.index(old)) + 1
    replaced = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return replaced, count, line
