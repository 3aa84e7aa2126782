"""The native summary: what the model is asked to write, from what, and how it is checked.

The summary is anchored: a later compaction hands the model the previous
summary and asks it to update it with what happened since, rather than to
rewrite everything from a transcript it no longer has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from baton.session.model import StoredMessage

SECTIONS: tuple[str, ...] = (
    "Goals, constraints, preferences and open questions",
    "Exact facts",
    "Changed files and work in progress",
    "Tool results, rejected hypotheses and incomplete work",
    "Next action",
)

# Baton's own requirements stay in the system part; hooks may add to or replace the
# user-part instructions, never these.
SYSTEM = """You write the working memory of a coding agent whose earlier conversation is being \
compacted to fit its context window. The agent will continue from your summary alone plus the \
most recent messages, so anything you leave out is lost.

Write markdown with exactly these five sections, as level-2 headings, in this order:
{sections}

Rules:
- Be exact. Copy paths, commands, configuration keys and values, versions, URLs, identifiers, \
error messages and test results character for character; never paraphrase them.
- Under "Exact facts" list every concrete value that may matter later.
- Under "Changed files and work in progress" list each file changed and what state it is in.
- Under "Tool results, rejected hypotheses and incomplete work" keep results that matter, \
approaches that failed and why, and anything started but not finished.
- Under "Next action" give the single next concrete step.
- Keep the person's explicit requests and constraints in their own words.
- Do not invent anything. Write "none" in a section with nothing to say.
- Do not call tools; answer with the summary only."""

INSTRUCTIONS = """Summarise the conversation below for the agent's working memory."""

ANCHORED = """Here is the summary written at the previous compaction. Update it with what \
happened since: keep what is still true, correct what changed, drop what is obsolete, add what \
is new. Keep the same five sections.

<previous-summary>
{previous}
</previous-summary>"""

RETRY = """Your summary is missing these sections: {missing}. Write the whole summary again \
with all five sections as level-2 headings: {sections}."""

TOOL_OUTPUT_CHARS = 2_000
TEXT_CHARS = 8_000


def system_prompt() -> str:
    return SYSTEM.format(sections="\n".join(f"## {name}" for name in SECTIONS))


def missing_sections(summary: str) -> list[str]:
    present = {
        _norm(m.group(1)) for m in re.finditer(r"^\s{0,3}#{1,4}\s*(.+?)\s*#*\s*$", summary, re.M)
    }
    return [name for name in SECTIONS if _norm(name) not in present]


def _norm(text: str) -> str:
    return re.sub(r"[^a-z]+", " ", text.lower()).strip()


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    return f"{text[:head]}\n[… {len(text) - limit} characters omitted …]\n{text[-(limit - head) :]}"


def render_transcript(messages: Iterable[StoredMessage], masked: dict[str, str]) -> str:
    """The slice being compacted, as plain text for the summariser.

    Tool outputs are clipped: the ledger keeps their exact facts, and the
    summary request must stay small enough to fit the window.
    """
    lines: list[str] = []
    for message in messages:
        if message.kind == "compaction":
            continue
        if message.role == "user":
            label = {"continue": "baton", "pre_compact": "hook"}.get(message.kind, "user")
            lines.append(f"[{label}] {_clip(message.text(), TEXT_CHARS)}")
            continue
        for part in message.parts:
            if part.type == "text" and part.data.get("text"):
                lines.append(f"[assistant] {_clip(part.data['text'], TEXT_CHARS)}")
            elif part.type == "tool_call":
                call_id = part.data["toolCallId"]
                args = json.dumps(part.data.get("input", {}), ensure_ascii=False)
                lines.append(f"[tool call] {part.data['name']} {_clip(args, TEXT_CHARS)}")
                result = message.results.get(call_id)
                if call_id in masked:
                    output = masked[call_id]
                elif result is not None:
                    output = _clip(result.output, TOOL_OUTPUT_CHARS)
                else:
                    output = "[no result recorded]"
                status = result.status if result else "failed"
                lines.append(f"[tool result, {status}] {output}")
        if message.incomplete:
            lines.append("[assistant response was interrupted]")
    return "\n\n".join(lines)


def user_prompt(
    transcript: str,
    *,
    previous: str | None,
    instructions: str | None,
    hook_context: list[str],
    base_instructions: str = INSTRUCTIONS,
) -> str:
    parts = [base_instructions]
    if hook_context:
        parts.append("Also keep:\n" + "\n".join(f"- {c}" for c in hook_context))
    if instructions:
        parts.append(
            f"The person asked for this compaction with these instructions:\n{instructions}"
        )
    if previous:
        parts.append(ANCHORED.format(previous=previous.strip()))
    parts.append(f"<conversation>\n{transcript}\n</conversation>")
    return "\n\n".join(parts)
