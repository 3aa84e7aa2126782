"""The native summary: what the model is asked to write, from what, and how it is checked.

The summary is anchored: a later compaction hands the model the previous
summary and asks it to update it with what happened since, rather than to
rewrite everything from a transcript it no longer has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from baton import protocol as p
from baton.agent import authors, framing
from baton.agent.tokens import estimate
from baton.store.model import StoredMessage

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
- The person's messages are shown verbatim next to your summary: do not repeat them; \
say what was decided about them.
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
{ledger}{leaving}{anchor}"""

LEAVING = """

These ledger entries fold at this compaction (to one line or a count; each stays one \
`recall` away). Where one matters for the work ahead, give its gist in a few words in the \
fitting section; do not copy them:
{entries}"""

ANCHOR_IN_PLACE = """

The <baton:summary> block above is the summary written at the previous compaction: update it \
with what happened since (keep what is still true, correct what changed, drop what is \
obsolete, add what is new), with the same five sections."""

ANCHORED = """Here is the summary written at the previous compaction. Update it with what \
happened since: keep what is still true, correct what changed, drop what is obsolete, add what \
is new. Keep the same five sections.

{previous}"""

# The person's messages are in the `<baton:requests>` block, verbatim: a summary built by
# code points at them rather than quoting them a second time.
REQUESTS_POINTER = (
    "The person's requests and constraints are in the <baton:requests> block, verbatim."
)
LATEST_REQUEST = "Continue the person's latest request (the last one in <baton:requests>)."
FACTS_POINTER = "See the ledger; exact texts of compacted messages are one `recall` away."

_HEADING = re.compile(r"^\s{0,3}#{1,4}\s*(.+?)\s*#*\s*$")

TOOL_OUTPUT_CHARS = 2_000
# What a transcript shows of each tool output when the region is summarised from it,
# most first (`output_clip`).
OUTPUT_CLIPS = (TOOL_OUTPUT_CHARS, 800, 300)
TEXT_CHARS = 8_000

# The summary's output budget: this share of what the model reads to write it, within
# these bounds, and never below the previous summary it updates (docs/compaction.md,
# "The summary").
SUMMARY_SHARE = 0.2
MIN_SUMMARY_TOKENS = 128
MAX_SUMMARY_TOKENS = 2_000
# The prompt asks for this share of the budget in words.
WORDS_PER_TOKEN = 0.7

# After a summary stopped at its cap: ask for what it did not finish.
CONTINUE = """[Baton] Your summary stopped at its length limit. Do not repeat what you wrote. \
Write only these sections, complete, as level-2 headings, in this order:
{sections}
Stay under {words} words; write "none" in a section with nothing to say."""


def summary_budget(read_tokens: int, usable_window: int, previous_tokens: int = 0) -> int:
    """max_output_tokens for a summary of `read_tokens` (the region and the previous
    summary): SUMMARY_SHARE of it, at least the previous summary and a little more
    (an update must not be forced to drop what it updates), within the bounds."""
    bound = min(MAX_SUMMARY_TOKENS, max(MIN_SUMMARY_TOKENS, usable_window // 8))
    want = max(int(read_tokens * SUMMARY_SHARE), previous_tokens + MIN_SUMMARY_TOKENS // 2)
    return max(MIN_SUMMARY_TOKENS, min(bound, want))


def words_for(max_out: int) -> int:
    return max(60, int(max_out * WORDS_PER_TOKEN))


def split_cut(summary: str) -> tuple[str, list[str]]:
    """A summary cut at its cap: (the sections it finished, the ones still to write).

    The section the cut fell in is unfinished (its last line may stop mid-word), so
    it is dropped and asked for again with the ones after it."""
    lines = summary.rstrip().splitlines()
    names = {_norm(name) for name in SECTIONS}
    starts = [i for i, line in enumerate(lines) if _heading(line) in names]
    if not starts:
        return "", list(SECTIONS)
    kept = "\n".join(lines[: starts[-1]]).rstrip()
    return kept, missing_sections(kept)


def merge_sections(kept: str, built: str, unfinished: Sequence[str]) -> str:
    """The five sections: those `kept` finished as it wrote them, the `unfinished` ones
    from `built` (the summary built by code), in the order of `SECTIONS`."""
    out = []
    for name in SECTIONS:
        source = built if name in unfinished else kept
        out.append(f"## {name}\n{_section(source, name) or 'none'}")
    return "\n\n".join(out)


def continue_prompt(missing: list[str], words: int) -> str:
    return CONTINUE.format(sections="\n".join(f"## {name}" for name in missing), words=words)


def output_clip(region: Sequence[StoredMessage], masked: dict[str, str], budget: int) -> int:
    """How much of each tool output a transcript shows: the most of `OUTPUT_CLIPS` with
    which the whole region fits one request of `budget` tokens, else the least. Every
    chunk is one more call that reads and writes (minutes on a CPU), and the outputs'
    facts are in the ledger and their text one `recall` away."""
    for clip in OUTPUT_CLIPS:
        if estimate(render_transcript(region, masked, clip)) <= budget:
            return clip
    return OUTPUT_CLIPS[-1]


def next_chunk(
    region: Sequence[StoredMessage], masked: dict[str, str], start: int, budget: int, clip: int
) -> tuple[str, int]:
    """The transcript of the messages from `start` that fit `budget` tokens (at least one
    message, cut to the budget when it alone is larger), and where the next chunk starts."""
    rendered: list[str] = []
    size = 0
    end = start
    while end < len(region):
        text = render_transcript([region[end]], masked, clip)
        tokens = estimate(text) + 1  # the blank line between messages
        if rendered and size + tokens > budget:
            break
        rendered.append(text)
        size += tokens
        end += 1
    transcript = "\n\n".join(t for t in rendered if t)
    if estimate(transcript) > budget:
        transcript = _clip(transcript, max(200, budget * 4 - 80))  # 4 characters a token
    return transcript, end


def current_step(ledger: p.Ledger) -> str | None:
    """The plan's step in progress, else its first open one."""
    steps = ledger.plan.steps if ledger.plan is not None else []
    for state in ("in_progress", "open"):
        for step in steps:
            if step.state == state:
                return step.text
    return None


def system_prompt(words: int) -> str:
    return SYSTEM.format(sections="\n".join(f"## {name}" for name in SECTIONS), words=words)


def instructions_text(
    instructions: str | None, hook_context: list[str], base_instructions: str = INSTRUCTIONS
) -> str:
    parts = [base_instructions]
    if hook_context:
        parts.append("Also keep:\n" + "\n".join(f"- {framing.entry(c)}" for c in hook_context))
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
    leaving: Sequence[str] = (),
) -> str:
    return IN_PLACE.format(
        instructions=instructions_text(instructions, hook_context, base_instructions),
        rules=system_prompt(words),
        ledger=framing.block("ledger", ledger.strip()),
        leaving=leaving_text(leaving),
        anchor=ANCHOR_IN_PLACE if anchored else "",
    )


def leaving_text(leaving: Sequence[str]) -> str:
    """What the summary request says of the ledger entries that fold ("" when none)."""
    if not leaving:
        return ""
    return LEAVING.format(entries=framing.block("ledger-folding", "\n".join(leaving)))


def complete_sections(
    summary: str, region: Iterable[StoredMessage] = (), next_step: str | None = None
) -> tuple[str, list[str]]:
    """Add the sections a complete (not cut) summary left out: the next action built by
    code (the plan's current step, else the person's latest request), the others as
    "none" (short: the person's messages and the ledger are shown beside it)."""
    missing = missing_sections(summary)
    if not missing:
        return summary, []
    action = SECTIONS[4]
    added = [
        f"## {name}\n{_next_action(region, next_step) if name == action else 'none'}"
        for name in missing
    ]
    return summary.rstrip() + "\n\n" + "\n\n".join(added), missing


# A small model sometimes copies the request into its summary ("Exact facts: The
# conversation above, up to this message, is being compacted."): a sentence sharing a run
# of this many words with Baton's own summary prompts is an echo, not a fact.
ECHO_WORDS = 8
_WORD = re.compile(r"[a-z0-9'`_]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LABEL = re.compile(r"^[\s>*-]*(?:[\w ,'`]{0,60}:)?[\s*]*$")


def _runs_of_words(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)}


_PROMPT_RUNS = _runs_of_words(
    "\n".join((SYSTEM, INSTRUCTIONS, IN_PLACE, ANCHOR_IN_PLACE, ANCHORED, CONTINUE))
)


def drop_echoes(summary: str) -> tuple[str, list[str]]:
    """The summary without the sentences that restate Baton's summary request, and those
    sentences. A line left with only its label ("Exact facts:") goes with them."""
    return _drop_runs(summary, _PROMPT_RUNS)


def drop_repeats(summary: str, shown: Iterable[str]) -> tuple[str, list[str]]:
    """The summary without the sentences that repeat what the request shows beside it
    (the person's messages, the ledger): each fact once per request. A sentence goes
    when it shares a run of `ECHO_WORDS` words with one of `shown`."""
    runs: set[tuple[str, ...]] = set()
    for text in shown:
        runs |= _runs_of_words(text)
    return _drop_runs(summary, runs)


def _drop_runs(summary: str, runs: set[tuple[str, ...]]) -> tuple[str, list[str]]:
    kept: list[str] = []
    echoed: list[str] = []
    for line in summary.splitlines():
        if _heading(line) is not None:
            kept.append(line)
            continue
        sentences = _SENTENCE_END.split(line)
        echoes = [s for s in sentences if _runs_of_words(s) & runs]
        if not echoes:
            kept.append(line)
            continue
        echoed.extend(e.strip() for e in echoes)
        rest = " ".join(s for s in sentences if s not in echoes)
        if rest.strip() and not _LABEL.match(rest):
            kept.append(rest)
    return "\n".join(kept), echoed


def _next_action(region: Iterable[StoredMessage], next_step: str | None) -> str:
    if next_step:
        return f"Continue the plan's current step: {next_step}"
    asks = [m.text().strip() for m in region if m.role == "user" and m.kind == "prompt"]
    if asks and asks[-1]:
        return LATEST_REQUEST
    return "none"


def _heading(line: str) -> str | None:
    match = _HEADING.match(line)
    return _norm(match.group(1)) if match else None


def missing_sections(summary: str) -> list[str]:
    present = {_heading(line) for line in summary.splitlines()}
    return [name for name in SECTIONS if _norm(name) not in present]


def _norm(text: str) -> str:
    return re.sub(r"[^a-z]+", " ", text.lower()).strip()


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 3 // 4
    return f"{text[:head]}\n[… {len(text) - limit} characters omitted …]\n{text[-(limit - head) :]}"


def render_transcript(
    messages: Iterable[StoredMessage], masked: dict[str, str], clip: int = TOOL_OUTPUT_CHARS
) -> str:
    """The slice being compacted, as plain text for the summariser.

    Tool outputs are clipped: the ledger keeps their exact facts, and the
    summary request must stay small enough to fit the window.
    """
    lines: list[str] = []
    for message in messages:
        if message.kind == "compaction":
            continue
        if message.role == "user":
            label = authors.transcript_label(message)
            lines.append(f"[{label}] {framing.entry(_clip(message.text(), TEXT_CHARS))}")
            continue
        for part in message.parts:
            if part.type == "text" and part.text:
                lines.append(f"[assistant] {framing.entry(_clip(part.text, TEXT_CHARS))}")
            elif part.type == "tool_call":
                call_id = part.tool_call_id
                args = json.dumps(part.input, ensure_ascii=False)
                name = framing.inline(part.name)
                lines.append(f"[tool call] {name} {framing.entry(_clip(args, TEXT_CHARS))}")
                result = message.results.get(call_id)
                if call_id in masked:
                    output = masked[call_id]
                elif result is not None:
                    output = _clip(result.output, clip)
                else:
                    output = "[no result recorded]"
                status = result.status if result else "failed"
                lines.append(f"[tool result, {status}] {framing.entry(output)}")
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
    leaving: Sequence[str] = (),
) -> str:
    parts = [instructions_text(instructions, hook_context, base_instructions)]
    parts.append(
        "The ledger as it stands now (authoritative; do not restate it):\n"
        + framing.block("ledger", ledger.strip())
        + leaving_text(leaving)
    )
    if previous:
        parts.append(ANCHORED.format(previous=framing.block("previous-summary", previous)))
    parts.append(framing.block("conversation", transcript))
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

    It never restates the ledger nor the person's messages (both shown beside it, the
    latter verbatim in `<baton:requests>`): it points at them, keeps the agent's latest
    conclusions from the compacted messages word for word, and points at `recall` for
    everything else.
    """
    asks = False
    said: list[str] = []
    for message in region:
        if message.role == "user" and message.kind in ("prompt", "feedback", "approval"):
            asks = asks or bool(message.text().strip())
        elif message.role == "assistant":
            for part in message.parts:
                if part.type == "text" and part.text.strip():
                    said.append(_clip(part.text.strip(), 200))
    earlier_goals = _section(previous, SECTIONS[0]).replace(REQUESTS_POINTER, "").strip()
    goals = [earlier_goals, REQUESTS_POINTER if asks or previous else ""]
    results = [_section(previous, SECTIONS[3])] + [f"- The agent said: {s}" for s in said[-3:]]
    work = _section(previous, SECTIONS[2])
    if next_step:
        action = f"Continue the plan's current step: {next_step}"
    elif asks:
        action = LATEST_REQUEST
    else:
        action = _section(previous, SECTIONS[4]) or "none"
    bodies = [
        "\n".join(g for g in goals if g) or "none",
        _section(previous, SECTIONS[1]) or FACTS_POINTER,
        work or "See the ledger's files changed and the plan.",
        "\n".join(r for r in results if r) or "none",
        action,
    ]
    return "\n\n".join(f"## {name}\n{body}" for name, body in zip(SECTIONS, bodies, strict=True))
