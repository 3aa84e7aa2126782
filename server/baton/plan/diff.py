"""A plan change as the model is shown it: the changed lines, numbered, with a little context.

The model has the plan's full text once (its `plan_write`, or the plan block
after a compaction); every later change reaches it as these hunks, so a
revision costs what it changes. Line numbers are those of the new text
(removed lines carry the number they had), the lines the person's annotations
and `read` of the plan file use.
"""

from __future__ import annotations

import difflib

CONTEXT_LINES = 1


def changed_lines(old: str, new: str, *, context: int = CONTEXT_LINES) -> str:
    """Hunks of `old` → `new`: ` n| line` context, `-n| line` removed, `+n| line` added.

    Empty when nothing changed."""
    a, b = old.splitlines(), new.splitlines()
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        if out:
            out.append("…")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(f" {j1 + k + 1}| {b[j1 + k]}" for k in range(j2 - j1))
                continue
            out.extend(f"-{i1 + k + 1}| {a[i1 + k]}" for k in range(i2 - i1))
            out.extend(f"+{j1 + k + 1}| {b[j1 + k]}" for k in range(j2 - j1))
    return "\n".join(out)


def numbered(text: str) -> str:
    """The text with 1-based line numbers, as hunks number them."""
    return "\n".join(f"{n}| {line}" for n, line in enumerate(text.splitlines(), start=1))
