"""The pure part of compaction (compaction/planning.py, cut.py, ledger.py), without a server:
the cut, the escalation, "never bigger", and the ledger of a failing-then-fixed command."""

from __future__ import annotations

import json

from baton.compaction import planning
from baton.compaction.cut import choose_cut, message_tokens
from baton.compaction.ledger import build_ledger, render_ledger
from baton.store.model import StoredMessage, StoredText, ToolResultRecord, part_from_json
from baton.tools.base import Fact


def person(seq: int, text: str) -> StoredMessage:
    return StoredMessage(seq, f"m{seq}", "s", "user", "prompt", "", [StoredText(text)])


def answer(seq: int, text: str) -> StoredMessage:
    return StoredMessage(seq, f"m{seq}", "s", "assistant", "step", "", [StoredText(text)])


def run(seq: int, command: str, output: str, code: int) -> StoredMessage:
    call = f"call{seq}"
    args = {"command": command}
    part = part_from_json(
        "tool_call",
        {"toolCallId": call, "name": "bash", "input": args, "arguments": json.dumps(args)},
    )
    result = ToolResultRecord(
        call,
        "completed" if code == 0 else "failed",
        f"{output}\n[exit code {code}]",
        [Fact("command", command=command, exit_code=code)],
    )
    return StoredMessage(
        seq, f"m{seq}", "s", "assistant", "step", "", [part], results={call: result}
    )


def history(turns: int) -> list[StoredMessage]:
    out: list[StoredMessage] = []
    for t in range(turns):
        out += [person(2 * t, f"question {t}"), answer(2 * t + 1, f"answer {t} " + "x " * 200)]
    return out


def test_the_cut_keeps_the_newest_messages_within_budget_and_starts_at_the_person() -> None:
    messages = history(6)
    sizes = [message_tokens(m, {}) for m in messages]
    cut = choose_cut(messages, {}, keep_tokens=sizes[-1] + sizes[-2] + 10, protected=len(messages))
    assert messages[cut.index].kind == "prompt"  # starts at the person's message
    assert cut.index == len(messages) - 2 and cut.kept_tokens == sizes[-1] + sizes[-2]
    assert cut.region_tokens == sum(sizes[: cut.index])
    # The protected messages (the step the model is on) stay whatever the budget.
    cut = choose_cut(messages, {}, keep_tokens=0, protected=len(messages) - 1)
    assert cut.index == len(messages) - 1


def test_budgets_halve_the_history_and_never_aim_at_the_same_size() -> None:
    manual = planning.budgets(
        "manual",
        before=10_000,
        history=8_000,
        threshold=20_000,
        usable=24_000,
        protect=None,
        keep_recent=None,
    )
    assert (manual.target, manual.forced) == (6_000, True)
    auto = planning.budgets(
        "auto",
        before=10_000,
        history=8_000,
        threshold=9_000,
        usable=12_000,
        protect=None,
        keep_recent=None,
    )
    assert auto.target == 5_400 and not auto.forced
    assert (auto.protect, auto.keep_recent) == (3_000, 3_000)
    tiny = planning.budgets(
        "auto",
        before=1_000,
        history=100,
        threshold=100_000,
        usable=120_000,
        protect=0,
        keep_recent=0,
    )
    assert tiny.target == 999  # smaller than before, always
    switch = planning.budgets(
        "model_switch",
        before=1_000,
        history=100,
        threshold=100_000,
        usable=120_000,
        protect=0,
        keep_recent=0,
    )
    assert switch.target == 60_000  # only needs to fit
    assert planning.prune_is_enough(5_000, auto)
    assert not planning.prune_is_enough(5_000, manual)  # manual always summarises
    assert not planning.prune_is_enough(None, auto)  # a server chain is not pruned


def test_the_escalation_keeps_a_quarter_then_nothing_and_stops_when_it_cannot_gain() -> None:
    assert planning.level_keeps(4_000) == (4_000, 1_000, 0)
    assert planning.after_level(1, built=900, kept=400, target=1_000) == "done"
    assert planning.after_level(1, built=1_500, kept=800, target=1_000) == "escalate"
    # Summarising every kept message would still miss the target: no second call.
    assert planning.after_level(1, built=1_500, kept=300, target=1_000) == "stop"
    assert planning.after_level(3, built=1_500, kept=0, target=1_000) == "escalate"  # last
    assert not planning.worth_summarising(150, anchored=False)
    assert planning.worth_summarising(150, anchored=True)  # updating a summary is cheap


def test_the_outcome_and_never_bigger() -> None:
    assert planning.outcome(800, 900, 2, threshold=1_000, forced=False) == "summary"
    assert planning.outcome(1_200, 900, 2, threshold=1_000, forced=False) == "too_big"
    assert planning.outcome(1_200, 900, 2, threshold=1_000, forced=True) == "summary"
    assert planning.outcome(None, 900, 2, threshold=1_000, forced=True) == "pruned"
    assert planning.outcome(None, 900, 0, threshold=1_000, forced=True) == "nothing"
    args = {"before": 1_000, "history": 700, "made_by": "a summary"}
    assert planning.never_bigger("native", "manual", after=999, **args) is None
    reason = planning.never_bigger("native", "manual", after=1_000, **args)
    assert reason == (
        "nothing to compact: the view is 1000 tokens (history 700); a summary would make it 1000"
    )
    assert planning.never_bigger("native", "model_switch", after=1_500, **args) is None
    assert planning.never_bigger("server", "manual", after=1_500, **args) is None
    assert planning.never_bigger("fresh", "manual", after=1_500, **args) is None
    assert planning.should_compact(900, 900, auto=True)
    assert not planning.should_compact(900, 900, auto=False)


def test_the_ledger_of_a_command_that_failed_twice_then_passed() -> None:
    first = "E   TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'\n1 failed"
    second = "E   AssertionError: assert 41 == 42\n1 failed, 5 passed"
    messages = [
        run(1, "pytest -q", first, 1),
        run(2, "pytest -q", second, 1),
        run(3, "pytest -q", "6 passed in 0.2s", 0),
    ]
    ledger = build_ledger(messages, None)
    [command] = ledger.commands
    assert command.exit_codes == [1, 1, 0]
    assert [f.run for f in command.failures] == [1, 2]
    assert command.failures[0].error.startswith("E   TypeError")
    assert command.output == "6 passed in 0.2s"
    assert ledger.errors == []
    [resolved] = ledger.resolved_errors
    assert "AssertionError: assert 41 == 42" in resolved.message
    text = render_ledger(ledger)
    assert "- `pytest -q` → 1, 1, 0" in text
    assert "run 1 (1): E   TypeError" in text  # the first error, not only the latest
    assert text.count("AssertionError: assert 41 == 42") == 1  # shown once, as resolved
