"""What Baton itself writes into a plan file: one escaped line, never a step.

When a step built in a child ends, Baton writes its result or its failure into the
approved plan (`delegation/steps.py`). That text comes from a child's words, a
provider's error or a tool's output, so it is put on the line Baton opens for it
(`- [!] step: …`, `  - result: …`) as one line: every line break and run of white
space is one space, every other control, bidi or invisible character is shown as an
escape (`\\u202e`), and it is cut to `MAX_CHARS`. After Baton's own prefix it can
never start a line, so it can never become a checklist line (`- [ ]`, `- [x]`) or
any other line of the plan.
"""

from __future__ import annotations

from baton.terminal_escape import visible

# Text Baton writes on one plan line, at most (characters).
MAX_CHARS = 500


def plan_text(text: str, max_chars: int = MAX_CHARS) -> str:
    """`text` as one line Baton may write after its own prefix on a plan line."""
    # str.split breaks at every line separator (CR, U+2028, U+0085, …) and white space.
    line = visible(" ".join(text.split()))
    if len(line) > max_chars:
        line = line[: max_chars - 1].rstrip() + "…"
    return line
