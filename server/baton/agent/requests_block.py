"""The person's own words after a compaction: the `<baton:requests>` block, built by code.

A small model's summary drops constraints ("never touch `vendor/`") and values
the person gave (a date, a bucket URL, a region) with the user messages it
summarises. So a summary never stands in for them: every message the person
wrote before the view's first kept message is shown verbatim in one block after
the checkpoint (docs/compaction.md, "What happens"). Long pasted blocks are cut
to their head and their end, with the message id that `recall` returns them by,
exactly as old tool outputs are masked. The block has a budget like every block
(15% of the usable window, at most `compaction.requestsMaxTokens`): past it, the
least telling old messages fold to a one-line head or a count, each one `recall`
away, and the block says so.

Pure: a function of the stored messages and the view's cut, so it is cumulative
across compactions and the same at every request between two of them (the
prefix cache keeps serving it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from baton.agent import authors, framing, prompts
from baton.agent.tokens import estimate
from baton.store.model import StoredMessage

# The kinds of user message that carry the person's words (a prompt, plan feedback, an
# approval); Baton's own notes, continue messages and hook prompts are not theirs.
PERSON_KINDS = frozenset({"prompt", "feedback", "approval"})
# A message longer than this (characters) is a pasted block: its head and end stay, the
# rest is one `recall` away.
PASTE_CHARS = 2_000
PASTE_HEAD = 700
PASTE_TAIL = 300
# Above this share of the usable window, the oldest long messages are cut harder (to a
# head of `SHORT_HEAD` characters); short messages (constraints, values) always stay.
BUDGET_SHARE = 0.15
SHORT_HEAD = 240
# Still over it, whole messages fold (`_fold`); these never do: the first, which states
# the task, and the newest few, which the work in view follows from.
NEWEST_KEPT = 3
# A folded message keeps this many characters on one line, and its id.
FOLD_HEAD = 100
# A message with no constraint or value in it and at most this long is a reply ("yes",
# "go on", "run it again"): it folds first.
REPLY_CHARS = 24
# What marks a constraint or a value: a negation, an obligation or a preference, a
# quoted or backticked text, a URL, a date, an assignment, a number with a unit-like
# separator. Coarse on purpose: a message it misses still folds last among its peers
# and stays one `recall` away.
CUE = re.compile(
    r"\b(?:never|not|no|don't|do not|doesn't|mustn't|must|always|only|avoid|keep|without"
    r"|instead|prefer|should|shouldn't|ensure|make sure|until|deadline)\b"
    r"|://|`|\"|\d{4}-\d{2}-\d{2}|\w=\S|\d[.,:]\d",
    re.IGNORECASE,
)
# Estimated tokens a label, a count line and the fold note cost (`_fold` sizes by them).
LABEL_TOKENS = 3
RUN_TOKENS = 32
# The block's tags around the text (`<baton:requests>`, its close and the recall line).
TAG_TOKENS = 12
NOTE_TOKENS = 40
RUN_PREFIX = "requests:"
FOLD_NOTE = (
    "Past this block's budget, older messages are folded: a line ending in [id] is the "
    'head of one, and `recall {"call_id": "<id>"}` returns the message or the run exactly.'
)

HEADER = "The person's earlier messages, verbatim, in order:"
# A child's block: its task entries are what the session that started it asked.
CHILD_HEADER = (
    "This session's earlier messages, verbatim, in order ([task]: what the session that "
    "started this one asked of it, not the person's words):"
)


def person_messages(
    messages: Iterable[StoredMessage], before_seq: int | None, reverted: Iterable[str] = ()
) -> list[StoredMessage]:
    """The person's messages that a view starting at `before_seq` no longer shows."""
    if before_seq is None:
        return []
    gone = set(reverted)
    return [
        m
        for m in messages
        if m.role == "user"
        and m.kind in PERSON_KINDS
        and m.seq < before_seq
        and m.id not in gone
        and m.text().strip()
    ]


def person_words(message: StoredMessage) -> str:
    """The message as the block shows it: plan feedback without Baton's own wrapper (the
    "Changes requested" opening and the "Revise it" direction, which the label and the plan
    block say), so what stays is what the person wrote."""
    command = message.meta.get("command")
    if isinstance(command, dict) and isinstance(command.get("typed"), str):
        # A slash command as the person typed it: a skill's body is kept in its own block.
        return str(command["typed"]).strip()
    text = message.text().strip()
    if message.kind == "feedback":
        text = text.removesuffix(prompts.PLAN_REVISE.strip()).rstrip()
        text = text.removeprefix(prompts.PLAN_FEEDBACK_HEAD).lstrip()
    return text


def _masked(message: StoredMessage, text: str, head: int, tail: int) -> str:
    hidden = len(text) - head - tail
    return (
        f"{text[:head].rstrip()}\n[… {hidden:,} more characters of this message; "
        f'`recall {{"call_id": "{message.id}"}}` returns it exactly]'
        + (f"\n{text[-tail:].lstrip()}" if tail else "")
    )


def render_requests(messages: list[StoredMessage], budget_tokens: int) -> str | None:
    """The block's text for these messages, within `budget_tokens`.

    Every message is kept whole up to PASTE_CHARS; a longer one keeps its head and
    end. Over the budget, in this order until it fits: the oldest long messages are cut
    to a short head; then whole messages fold to a one-line head with their id, the
    least telling first (short replies, then messages without a constraint or a value,
    then the rest), oldest first; then folded heads are counted away in one line. The
    session's first message (it states the task) and the newest NEWEST_KEPT are never
    folded. Each fold names the id `recall` returns the text by, so nothing is lost.
    """
    if not messages:
        return None
    texts = [person_words(m) for m in messages]
    shown = [
        _masked(m, t, PASTE_HEAD, PASTE_TAIL) if len(t) > PASTE_CHARS else t
        for m, t in zip(messages, texts, strict=True)
    ]
    entries = [_Entry(m, s, _rank(t)) for m, t, s in zip(messages, texts, shown, strict=True)]
    total = sum(e.tokens() for e in entries)
    for entry, text in zip(entries, texts, strict=True):
        if total <= budget_tokens - TAG_TOKENS:
            break
        if len(text) > PASTE_CHARS:
            total -= entry.tokens()
            entry.shown = _masked(entry.message, text, SHORT_HEAD, 0)
            total += entry.tokens()
    if total > budget_tokens - TAG_TOKENS:
        _fold(entries, texts, budget_tokens - TAG_TOKENS)
    return _render(entries)


@dataclass
class _Entry:
    message: StoredMessage
    shown: str
    rank: int
    # FULL (as `shown`), HEAD (one line and the id) or COUNTED (in the count line).
    level: int = 0

    def tokens(self) -> int:
        return 0 if self.level == COUNTED else estimate(self.shown) + LABEL_TOKENS


FULL, HEAD, COUNTED = 0, 1, 2
# What folds, in order: replies are counted away first (a reply is its own head), then
# instructions and then constraints shorten to their heads, then both are counted.
FOLD_STEPS = ((0, COUNTED), (1, HEAD), (2, HEAD), (1, COUNTED), (2, COUNTED))


def _rank(text: str) -> int:
    """How much a message tells a later reader: 0 a short reply ("yes", "go on"), 1 an
    instruction with no constraint or value in it, 2 one with (kept whole longest)."""
    if CUE.search(text):
        return 2
    return 0 if len(text) <= REPLY_CHARS else 1


def _head(message: StoredMessage, text: str) -> str:
    line = " ".join(text.split())
    if len(line) > FOLD_HEAD:
        line = line[:FOLD_HEAD].rstrip() + "…"
    return f"{line} [{message.id}]"


def _fold(entries: list[_Entry], texts: list[str], budget_tokens: int) -> None:
    """Fold entries, oldest first, in FOLD_STEPS order until the block fits; the first
    entry and the newest NEWEST_KEPT stay FULL."""
    protected = {0, *range(max(1, len(entries) - NEWEST_KEPT), len(entries))}
    total = sum(e.tokens() for e in entries) + NOTE_TOKENS
    for rank, level in FOLD_STEPS:
        for index, entry in enumerate(entries):
            if total <= budget_tokens:
                return
            if index in protected or entry.rank != rank or entry.level >= level:
                continue
            before = entry.tokens()
            if level == HEAD:
                head = _head(entry.message, texts[index])
                if estimate(head) >= estimate(entry.shown):
                    continue  # a short message is its own head
                entry.shown, entry.level = head, HEAD
                total += entry.tokens() - before
                continue
            # Every counted message is in the block's one count line.
            if not any(e.level == COUNTED for e in entries):
                total += RUN_TOKENS
            entry.level = COUNTED
            total -= before


def _render(entries: list[_Entry]) -> str:
    # Short labels: the block is paid for in every request until the next compaction.
    lines = [CHILD_HEADER if any(authors.from_parent(e.message) for e in entries) else HEADER]
    if any(e.level != FULL for e in entries):
        lines.append(FOLD_NOTE)
    counted = [e for e in entries if e.level == COUNTED]
    for entry in entries:
        if entry.level == COUNTED:
            if entry is counted[0]:
                # One line for all of them, where the first was: a line per run would cost
                # more than the replies it stands for.
                first, last = counted[0].message.id, counted[-1].message.id
                whose = (
                    ""
                    if any(authors.from_parent(e.message) for e in counted)
                    else " of the person's"
                )
                lines.append(
                    f"[… {len(counted)} earlier messages{whose}, folded "
                    f"[{RUN_PREFIX}{first}..{last}]]"
                )
            continue
        # In a child, what its parent asked is labelled as such, never as the person's.
        label = authors.requests_label(entry.message)
        # No message id unless it is needed (a cut or folded message names its own): ids
        # cost tokens, and a fork's copies have other ids but should send the same view.
        # Every further line indented: no line of theirs can read as another entry.
        lines.append(f"[{label}] {framing.entry(entry.shown)}")
    return "\n".join(lines)


def folded_run(messages: Iterable[StoredMessage], run_id: str) -> list[StoredMessage] | None:
    """The person's messages from the first to the last a count line's id
    (`requests:<first id>..<last id>`) names, in order; None when it names no such run."""
    first, sep, last = run_id.removeprefix(RUN_PREFIX).partition("..")
    if not sep:
        return None
    person = [m for m in messages if m.role == "user" and m.kind in PERSON_KINDS]
    ids = [m.id for m in person]
    if first not in ids or last not in ids or ids.index(first) > ids.index(last):
        return None
    return person[ids.index(first) : ids.index(last) + 1]


def budget(usable_window: int, max_tokens: int) -> int:
    """The block's budget: BUDGET_SHARE of the usable window, at most `max_tokens`
    (`compaction.requestsMaxTokens`)."""
    return min(max(500, int(usable_window * BUDGET_SHARE)), max_tokens)
