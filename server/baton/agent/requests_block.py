"""The person's own words after a compaction: the `<baton:requests>` block, built by code.

A small model's summary drops constraints ("never touch `vendor/`") and values
the person gave (a date, a bucket URL, a region) with the user messages it
summarises. So a summary never stands in for them: every message the person
wrote before the view's first kept message is shown verbatim in one block after
the checkpoint (docs/compaction.md, "What happens"). Long pasted blocks are cut
to their head and their end, with the message id that `recall` returns them by,
exactly as old tool outputs are masked.

Pure: a function of the stored messages and the view's cut, so it is cumulative
across compactions and the same at every request between two of them (the
prefix cache keeps serving it).
"""

from __future__ import annotations

from collections.abc import Iterable

from baton.agent import framing, prompts
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

HEADER = "The person's earlier messages, verbatim, in order:"


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
    """The block's text for these messages, within `budget_tokens` where it can be.

    Every message is kept whole up to PASTE_CHARS; a longer one keeps its head and
    end. If that is still over the budget, the oldest long messages are cut to a
    short head until it fits; a short message is never cut (the budget is not a
    reason to lose a constraint).
    """
    if not messages:
        return None
    texts = [person_words(m) for m in messages]
    shown = [
        _masked(m, t, PASTE_HEAD, PASTE_TAIL) if len(t) > PASTE_CHARS else t
        for m, t in zip(messages, texts, strict=True)
    ]
    total = sum(estimate(s) for s in shown)
    for index, (message, text) in enumerate(zip(messages, texts, strict=True)):
        if total <= budget_tokens:
            break
        if len(text) > PASTE_CHARS:
            cut = _masked(message, text, SHORT_HEAD, 0)
            total -= estimate(shown[index]) - estimate(cut)
            shown[index] = cut
    # Short labels: the block is paid for in every request until the next compaction.
    lines = [HEADER]
    for message, text in zip(messages, shown, strict=True):
        label = {"feedback": "plan feedback", "approval": "plan approval"}.get(
            message.kind, "person"
        )
        # No message id unless it is needed (a cut message names its own): ids cost
        # tokens, and a fork's copies have other ids but should send the same view.
        # Every further line indented: no line of theirs can read as another entry.
        lines.append(f"[{label}] {framing.entry(text)}")
    return "\n".join(lines)


def budget(usable_window: int) -> int:
    return max(500, int(usable_window * BUDGET_SHARE))
