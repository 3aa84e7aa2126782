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

# Baton's own requirements stay in Baton's part of the request; hooks may add to or
# replace the instructions part (`INSTRUCTIONS`), never these.
SYSTEM = """You write the working memory of a coding agent whose earlier conversation is being \
compacted to fit its context window. The agent will continue from your summary, the ledger and \
the most recent messages.

Write markdown with exactly these five sections, as level-2 headings, in this order:
{sections}

Rules:
- Name things exactly: paths, symbols (functions, classes), commands, configuration keys and \
values, versions, error messages and test results, character for character.
- Never copy code, file contents or long tool outputs: name the file and symbol instead. \
Everything compacted stays retrievable word for word with the `recall` tool.
- The ledger (files read and changed, commands with their exit codes, errors, the plan's \
steps) is recorded by Baton from the tools and shown next to your summary: do not restate it, \
and never contradict it. A file is changed only if the ledger lists it.
- Under "Changed files and work in progress" say what each change is for, not its code.
- Under "Tool results, rejected hypotheses and incomplete work" keep approaches that failed \
and why, and anything started but not finished.
- Under "Next action" give the single next concrete step (never a step the plan shows done).
- Keep the person's explicit requests and constraints in their own words.
- Write each fact once. Do not invent anything. Write "none" in a section with nothing to say.
- Stay under {words} words.
- Do not call tools; answer with the summary only."""

INSTRUCTIONS = """Summarise the conversation for the agent's working memory."""

# Prefix reuse: the summary request is the session's own request (same instructions, the
# same items up to the cut) with this message appended, so the provider's prompt cache
# serves everything before it.
IN_PLACE = """[Baton] Stop working on the task for a moment: the conversation above, up to this \
message, is being compacted. {instructions}

{rules}

The ledger as it stands now (authoritative; do not restate it):
<ledger>
{ledger}
</ledger>{anchor}"""

ANCHOR_IN_PLACE = """

The <baton:summary> block above is the summary written at the previous compaction: update it \
with what happened since (keep what is still true, correct what changed, drop what is \
obsolete, add what is new), with the same five sections."""

ANCHORED = """Here is the summary written at the previous compaction. Update it with what \
happened since: keep what is still true, correct what changed, drop what is obsolete, add what \
is new. Keep the same five sections.

<previous-summary>
{previous}
</previous-summary>"""

TOOL_OUTPUT_CHARS = 2_000
TEXT_CHARS = 8_000


def system_prompt(words: int) -> str:
    return SYSTEM.format(sections="\n".join(f"## {name}" for name in SECTIONS), words=words)


def instructions_text(
    instructions: str | None, hook_context: list[str], base_instructions: str = INSTRUCTIONS
) -> str:
    parts = [base_instructions]
    if hook_context:
        parts.append("Also keep:\n" + "\n".join(f"- {c}" for c in hook_context))
    if instructions:
        parts.append(
            f"The person asked for this compaction with these instructions:\n{instructions}"
        )
    return "\n\n".join(parts)


def in_place_prompt(
    *,
    words: int,
    ledger: str,
    anchored: bool,
    instructions: str | None,
    hook_context: list[str],
    base_instructions: str = INSTRUCTIONS,
) -> str:
    return IN_PLACE.format(
        instructions=instructions_text(instructions, hook_context, base_instructions),
        rules=system_prompt(words),
        ledger=ledger.strip(),
        anchor=ANCHOR_IN_PLACE if anchored else "",
    )


def complete_sections(summary: str) -> tuple[str, list[str]]:
    """Add the sections a summary left out, as "none" (short: never bigger than needed)."""
    missing = missing_sections(summary)
    if not missing:
        return summary, []
    added = [f"## {name}\nnone" for name in missing]
    return summary.rstrip() + "\n\n" + "\n\n".join(added), missing


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
    ledger: str,
    base_instructions: str = INSTRUCTIONS,
) -> str:
    parts = [instructions_text(instructions, hook_context, base_instructions)]
    parts.append(
        f"The ledger as it stands now (authoritative; do not restate it):\n<ledger>\n"
        f"{ledger.strip()}\n</ledger>"
    )
    if previous:
        parts.append(ANCHORED.format(previous=previous.strip()))
    parts.append(f"<conversation>\n{transcript}\n</conversation>")
    return "\n\n".join(parts)


def _section(summary: str | None, name: str) -> str:
    """The body of one section of an earlier summary ("" when absent)."""
    if not summary:
        return ""
    out: list[str] = []
    inside = False
    for line in summary.splitlines():
        heading = re.match(r"^\s{0,3}#{1,4}\s*(.+?)\s*#*\s*$", line)
        if heading:
            inside = _norm(heading.group(1)) == _norm(name)
            continue
        if inside:
            out.append(line)
    body = "\n".join(out).strip()
    return "" if body.lower() == "none" else body


def structured_summary(
    region: Iterable[StoredMessage], previous: str | None, next_step: str | None
) -> str:
    """A summary built by code when the model's cannot be used (a loop, a timeout).

    It never restates the ledger (shown beside it): it keeps the person's requests
    and the agent's latest conclusions from the compacted messages, word for word,
    and points at `recall` for everything else.
    """
    asks: list[str] = []
    said: list[str] = []
    for message in region:
        if message.role == "user" and message.kind in ("prompt", "feedback", "approval"):
            asks.append(_clip(message.text().strip(), 240))
        elif message.role == "assistant":
            for part in message.parts:
                if part.type == "text" and part.data.get("text", "").strip():
                    said.append(_clip(part.data["text"].strip(), 200))
    goals = [_section(previous, SECTIONS[0])] + [f"- The person asked: {a}" for a in asks[-5:]]
    results = [_section(previous, SECTIONS[3])] + [f"- The agent said: {s}" for s in said[-3:]]
    work = _section(previous, SECTIONS[2])
    if next_step:
        action = f"Continue the plan's current step: {next_step}"
    elif asks:
        action = f"Continue the person's latest request: {asks[-1]}"
    else:
        action = _section(previous, SECTIONS[4]) or "none"
    bodies = [
        "\n".join(g for g in goals if g) or "none",
        _section(previous, SECTIONS[1])
        or "See the ledger; exact texts of compacted messages are one `recall` away.",
        work or "See the ledger's files changed and the plan.",
        "\n".join(r for r in results if r) or "none",
        action,
    ]
    return "\n\n".join(f"## {name}\n{body}" for name, body in zip(SECTIONS, bodies, strict=True))
