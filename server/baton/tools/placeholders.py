"""Whole-file writes that would cut a file down to a sketch of itself.

Models (small ones most) often `write` a file back with the parts they did not
change elided: a bare `...`, `# ... rest of the code ...`, `// existing code
unchanged`. Written as is, everything elided is lost. A write is refused when
its content has such a line that the file did not already have and the file
would get shorter; the model is told to use `edit` or to write the whole file.
"""

from __future__ import annotations

import re

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


def placeholder_line(old: str, new: str) -> tuple[int, str] | None:
    """(line number, text) of the first elision in `new` that `old` lacks, if `new` is shorter."""
    old_lines = old.splitlines()
    new_lines = new.splitlines()
    if len(new_lines) >= len(old_lines):
        return None
    existing = {line.strip() for line in old_lines}
    for number, line in enumerate(new_lines, start=1):
        text = line.strip()
        if text and text not in existing and _PLACEHOLDER.fullmatch(text):
            return number, text
    return None
