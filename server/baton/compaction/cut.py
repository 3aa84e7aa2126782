"""Where a compaction cuts the history: what is summarised and what stays verbatim.

The cut may fall between any two messages, inside a running turn too (a step's
tool calls live in the same message as their results, so they always stay
together). Three rules make it behave:

* the recent part kept verbatim is bounded by a share of the history as well
  as by `keepRecentTokens`, so it grows with the history and never swallows a
  short one whole (which left nothing to summarise);
* the step in progress and the last complete step are never cut and their
  outputs never masked: the model is reading them;
* the preference for starting at a person's message may move the cut forward
  by at most `PERSON_SLACK` of the kept part, so the kept part cannot jump
  from everything to half as the history grows by one message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from baton.agent.state import SessionState
from baton.agent.tokens import estimate
from baton.store.model import StoredMessage

# The share of the message history a compaction keeps verbatim at most.
KEEP_SHARE = 0.25
# How much of the kept part the prefer-a-person's-message rule may drop.
PERSON_SLACK = 0.25
PROMPT_KINDS = {"prompt", "feedback", "approval", "continue", "pre_compact"}


def message_tokens(message: StoredMessage, masked: dict[str, str]) -> int:
    """A stored message's estimated size in the view, masks applied."""
    total = 0
    for part in message.parts:
        if part.type in ("text", "reasoning"):
            total += estimate(part.text)
        elif part.type == "tool_call":
            total += estimate(part.arguments) + 8
            call_id = part.tool_call_id
            if call_id in masked:
                total += estimate(masked[call_id])
            elif call_id in message.results:
                total += estimate(message.results[call_id].output)
    return total + 4


def protected_start(messages: Sequence[StoredMessage], state: SessionState) -> int:
    """Index of the first message no compaction may cut or mask.

    From the last complete step (the newest assistant message whose calls all
    have results) on: the step in progress, if any, follows it, and so does the
    person's pending input. With no assistant message, the pending input alone.
    Only while a turn runs: between turns nobody is in the middle of a step.
    """
    if not state.busy:
        return len(messages)
    running = state.running_call_ids
    start = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and index == len(messages) - 1:
            start = index
            continue
        if message.role != "assistant":
            if message.role == "user" and message.kind in PROMPT_KINDS:
                break  # an earlier turn: nothing of it is in progress
            continue
        start = index
        settled = message.answered(running)
        if settled:
            break
    return start


def protected_call_ids(messages: Sequence[StoredMessage], start: int) -> frozenset[str]:
    return frozenset(
        part.tool_call_id for message in messages[start:] for part in message.tool_calls()
    )


@dataclass
class Cut:
    index: int  # first message kept verbatim (len(messages): none)
    kept_tokens: int
    region_tokens: int  # what is before the cut


def keep_budget(history_tokens: int, keep_recent: int) -> int:
    """The verbatim part's budget: a share of the history, at most `keepRecentTokens`."""
    return max(0, min(keep_recent, int(KEEP_SHARE * history_tokens)))


def choose_cut(
    messages: Sequence[StoredMessage],
    masked: dict[str, str],
    keep_tokens: int,
    protected: int,
) -> Cut:
    """The newest messages up to `keep_tokens` (the protected ones whatever their size)."""
    sizes = [message_tokens(m, masked) for m in messages]
    index = len(messages)
    kept = 0
    for i in range(len(messages) - 1, -1, -1):
        if i >= protected or kept + sizes[i] <= keep_tokens:
            kept += sizes[i]
            index = i
            continue
        break
    # Prefer to start at a person's message, within a bounded move forward.
    for j in range(index, min(protected, len(messages))):
        message = messages[j]
        if message.role == "user" and message.kind in PROMPT_KINDS:
            dropped = sum(sizes[index:j])
            if j > index and dropped <= PERSON_SLACK * kept:
                kept -= dropped
                index = j
            break
    return Cut(index=index, kept_tokens=kept, region_tokens=sum(sizes[:index]))
