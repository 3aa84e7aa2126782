"""What models get wrong in whole-file writes, caught before the file is touched.

* A sketch of the file: the parts the model did not change elided with a bare
  `...`, `# ... rest of the code ...`, `// existing code unchanged`. Written as
  is, everything elided is lost. Such a write is refused when its content has
  a placeholder line the file did not already have and the file would get
  shorter; the model is told to use `edit` or to write the whole file.
* Content wrapped in a markdown code fence (```` ```python ```` … ```` ``` ````),
  as the model would show code in chat. The fence is not part of the file:
  for files that are not markdown it is taken off.
"""

from __future__ import annotations

import re

from baton.tools.base import ToolFailure

_COMMENT = r"(?:#|//|/\*+|<!--|--|;+|\*)"
_ELLIPSIS = r"(?:\.\.\.|…)"
_FORMS = (
    _ELLIPSIS,  # ...
    rf"{_COMMENT}\s*\[?{_ELLIPSIS}.*",  # # ... anything
    rf"{_COMMENT}\s*(?:the\s+)?(?:rest|remainder)\b.*",  # // rest unchanged
    rf"{_COMMENT}.*\b(?:rest|remainder)\s+of\s+(?:the\s+)?"
    r"(?:code|file|function|class|module|implementation|method)\b.*",
    rf"{_COMMENT}.*\bexisting\s+(?:code|content|implementation|methods|functions)\b.*",
    rf"{_COMMENT}\s*(?:code|everything\s+else|other\s+(?:code|methods|functions))"
    r"\s+(?:remains\s+|stays\s+|is\s+)?unchanged\b.*",
)
_PLACEHOLDER = re.compile("|".join(f"(?:{form})" for form in _FORMS), re.IGNORECASE)


def refuse_sketch(shown: str, old: str, new: str) -> None:
    """Raise when `new` is shorter than `old` and has an elision `old` lacks."""
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    if len(new_lines) >= len(old_lines):
        return
    existing = {line.strip() for line in old_lines}
    for number, line in enumerate(new_lines, start=1):
        text = line.strip()
        if text and text not in existing and _PLACEHOLDER.fullmatch(text):
            raise ToolFailure(
                f"not written: line {number} of the new content is a placeholder ({text!r}),"
                f" and {shown} would shrink from {len(old_lines)} to {len(new_lines)}"
                " lines. write replaces the whole file, so what the placeholder stands for"
                " would be lost: use edit to change part of the file, or write all of it."
            )


_OPENING_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[\w+#.-]*[ \t]*$")
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".rst", ".txt", ".ipynb"})


def strip_wrapping_fence(content: str, suffix: str) -> str:
    """`content` without a code fence that wraps all of it, unless the file is prose."""
    if suffix.lower() in MARKDOWN_SUFFIXES:
        return content
    lines = content.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) < 2:
        return content
    opening = _OPENING_FENCE.match(lines[0])
    if opening is None or lines[-1].strip() != opening.group(1):
        return content
    inner = lines[1:-1]
    if any(line.strip().startswith(opening.group(1)) for line in inner):
        return content  # fences inside: not one wrapped block
    return "\n".join(inner) + "\n"
