"""The person's requests block within its budget (`agent/requests_block.py`): what folds
first, what never folds, and that every folded message comes back by its id."""

from __future__ import annotations

import re

from baton.agent.requests_block import (
    NEWEST_KEPT,
    folded_run,
    render_requests,
)
from baton.agent.tokens import estimate
from baton.store.model import StoredMessage, StoredText

TASK = "Port the exporter to the new API. Never touch vendor/ and keep Python 3.9 support."
INSTRUCTION = (
    "Review the module mod_{k} and tidy it up: rename the helpers, split the long functions"
    " and add the missing docstrings."
)
CONSTRAINT = "Do not change the public CLI flags; the release is on 2026-03-14."


def person(seq: int, text: str) -> StoredMessage:
    return StoredMessage(seq, f"m{seq:04d}", "s", "user", "prompt", "", [StoredText(text)])


def day(replies: int, instructions: int) -> list[StoredMessage]:
    """The first message, then replies and plain instructions, one constraint in the
    middle, and three newest messages."""
    messages = [person(0, TASK)]
    for k in range(instructions):
        messages.append(person(len(messages), INSTRUCTION.format(k=k)))
        if k == instructions // 2:
            messages.append(person(len(messages), CONSTRAINT))
        for _ in range(replies):
            messages.append(person(len(messages), "go on"))
    return messages + [person(len(messages) + k, f"Newest request {k}.") for k in range(3)]


def test_under_its_budget_every_message_is_shown_whole_and_without_ids() -> None:
    messages = day(replies=1, instructions=5)
    text = render_requests(messages, 10_000)
    assert text is not None
    assert "folded" not in text and "[m0" not in text
    for message in messages:
        assert message.text() in text


def test_past_its_budget_replies_fold_first_then_plain_instructions_and_constraints_last() -> None:
    messages = day(replies=2, instructions=40)
    whole = estimate(render_requests(messages, 100_000) or "")
    budget = whole // 2
    text = render_requests(messages, budget) or ""
    assert estimate(text) <= budget
    assert "older messages are folded" in text
    # The task and the newest ones stay whole; so does the constraint, whose peers (plain
    # instructions) and the replies went first.
    assert TASK in text and CONSTRAINT in text
    for message in messages[-NEWEST_KEPT:]:
        assert message.text() in text
    assert "go on" not in text
    # Instructions folded to their heads, each naming the id `recall` takes.
    heads = re.findall(r"\[person\] (Review the module mod_\d+ .*…) \[(m\d{4})\]", text)
    assert heads
    assert all(INSTRUCTION.startswith(h[0][:20]) for h in heads)


def test_a_tiny_budget_counts_runs_away_and_each_run_comes_back_by_recall() -> None:
    messages = day(replies=3, instructions=200)
    text = render_requests(messages, 600) or ""
    assert estimate(text) <= 600
    assert TASK in text
    runs = re.findall(r"\[(requests:m\d+\.\.m\d+)\]", text)
    assert runs
    heads = re.findall(r"\[(m\d{4})\]", text)
    recalled = {m.id for run in runs for m in folded_run(messages, run) or []}
    # Every message is shown whole, as a head naming its id, or inside a counted run.
    for message in messages:
        assert message.text() in text or message.id in heads or message.id in recalled


def test_the_same_messages_and_budget_fold_the_same_way() -> None:
    messages = day(replies=2, instructions=60)
    assert render_requests(messages, 700) == render_requests(list(messages), 700)


def test_a_run_id_that_names_no_run_is_none() -> None:
    messages = day(replies=0, instructions=3)
    assert folded_run(messages, "requests:m0001..m0002") is not None
    assert folded_run(messages, "requests:m0002..m0001") is None
    assert folded_run(messages, "requests:m0001") is None
    assert folded_run(messages, "requests:nope..m0002") is None
