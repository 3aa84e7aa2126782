"""The person's line-by-line review of a plan, as one message to the model.

Annotations (`baton/plan/requestChanges {annotations}`) name 1-based lines of
the plan's content (as `baton/plan/get` returns it, the numbering the model's
diffs use). Each reaches the model quoted from the plan with its line numbers,
with its kind and the person's words, all in one message with the overall
feedback. ACP editors have no panel to select lines in: `/changes` takes the
same notes as text (`parse_notes`), against the numbered plan `/review` shows.
"""

from __future__ import annotations

import re

from baton import protocol as p
from baton.agent import framing, prompts
from baton.errors import InvalidParams
from baton.plan.diff import numbered


def _squash(text: str) -> str:
    return " ".join(text.split())


def check(content: str, annotations: list[p.PlanAnnotation]) -> None:
    """Refuse annotations beyond the plan or whose quote is not on their lines (the plan
    changed since they were made): the person re-annotates the current text."""
    lines = content.splitlines()
    for n, note in enumerate(annotations, start=1):
        if note.end_line > len(lines):
            raise InvalidParams(
                f"params.annotations.{n - 1}: line {note.end_line} is beyond the plan's "
                f"{len(lines)} lines"
            )
        shown = "\n".join(lines[note.start_line - 1 : note.end_line])
        if note.quote.strip() and _squash(note.quote) not in _squash(shown):
            raise InvalidParams(
                f"params.annotations.{n - 1}: lines {note.start_line}-{note.end_line} do not "
                "hold the quoted text (the plan changed since); annotate its current text"
            )


def message(content: str, version: int, annotations: list[p.PlanAnnotation], feedback: str) -> str:
    """The one message the model gets for a review: each note quoted with its lines, kind
    and words, then the overall feedback."""
    lines = content.splitlines()
    notes = []
    for n, note in enumerate(annotations, start=1):
        first, last = note.start_line, note.end_line
        where = f"line {first}" if first == last else f"lines {first}-{last}"
        quoted = "\n".join(
            # The plan's lines may be a repository's: quoted, they cannot read as a tag.
            f"> {first + k}| {framing.neutralise(line)}"
            for k, line in enumerate(lines[first - 1 : last])
        )
        parts = [f"{n}. {where} ({note.kind}):", quoted]
        whole = _squash("\n".join(lines[first - 1 : last]))
        if note.quote.strip() and _squash(note.quote) != whole:
            parts.append(f"Selected: {framing.neutralise(repr(note.quote.strip()))}")
        if note.kind == "replace":
            parts.append("Replace with:\n" + (note.text or "").strip("\n"))
        elif note.kind == "delete":
            parts.append("Delete it." + (f" {note.text.strip()}" if note.text else ""))
        else:
            parts.append("Comment: " + (note.text or "").strip())
        notes.append("\n".join(parts))
    overall = (
        prompts.PLAN_REVIEW_OVERALL.format(feedback=feedback.strip()) if feedback.strip() else ""
    )
    return prompts.PLAN_REVIEW_MESSAGE.format(
        version=version, count=len(notes), notes="\n\n".join(notes), overall=overall
    )


_NOTE = re.compile(r"^\s*(\d+)(?:\s*-\s*(\d+))?\s*(comment|replace|delete)?\s*(?::(.*))?$", re.I)


def parse_notes(text: str, content: str) -> tuple[list[p.PlanAnnotation], str]:
    """`/changes` text → (annotations, overall feedback).

    A note is a line `7: words` (a comment), `5-6 replace: new text` or `9 delete`;
    indented lines continue the note above; every other line is overall feedback.
    Quotes are the plan's own lines."""
    lines = content.splitlines()
    raw: list[tuple[int, int, str, str]] = []  # first, last, kind, words
    feedback: list[str] = []
    for line in text.splitlines():
        match = _NOTE.match(line)
        if match and (match.group(3) or match.group(4) is not None):
            first = int(match.group(1))
            last = int(match.group(2) or first)
            kind = (match.group(3) or "comment").lower()
            raw.append((first, last, kind, (match.group(4) or "").strip()))
        elif raw and line[:1].isspace() and line.strip():
            a, b, kind, words = raw[-1]
            raw[-1] = (a, b, kind, (words + "\n" + line.strip()).strip())
        elif line.strip():
            feedback.append(line.strip())
    out = []
    for n, (a, b, kind, words) in enumerate(raw):
        if a < 1 or b < a or b > len(lines):
            raise InvalidParams(
                f"note {n + 1}: lines {a}-{b} are not lines of the plan (1-{len(lines)}); "
                "/review shows them numbered"
            )
        try:
            out.append(
                p.PlanAnnotation(
                    kind=kind,
                    start_line=a,
                    end_line=b,
                    quote="\n".join(lines[a - 1 : b]),
                    text=words or None,
                )
            )
        except ValueError:
            raise InvalidParams(
                f"note {n + 1} (line {a}, {kind}) needs words after the colon"
            ) from None
    return out, "\n".join(feedback)


def numbered_plan(path: str, version: int, status: str, content: str) -> str:
    """The plan as `/review` shows it to an ACP client: numbered as notes refer to it."""
    return prompts.PLAN_REVIEW_SHOWN.format(
        path=path, version=version, status=status, plan=numbered(content)
    )
