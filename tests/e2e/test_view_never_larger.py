"""Once the budgets are reached, the view a compaction leaves is never larger than the
last view at its budgets before it, through the real server (issue 44).

A long session on a small window compacts on its own again and again. Its turns read
large files and run commands whose results the ledger keeps, until a compaction's ledger
cannot show them all (facts fold one `recall` away): the view is at its budgets. Before,
each view was sized by the room alone, so where the cut fell, how the ledger's fold
landed and which level a compaction chose (masking old outputs, or moving the cut) moved
it up as often as down (5,919, 5,908, 5,917, ... tokens). Each view must now fit in the
last one at its budgets (`planning.ceiling`); the person's requests still growing to
their budget take their room from the ledger. Every third turn is quiet (commands, no
read), so views differ in what they keep. The record's `tokensAfter` is the count the
server sized the view by, so no tolerance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.e2e.test_compaction import start_baton as start_baton  # pins native compaction
from tests.fake_llm import FakeLLM, text, tool_call
from tests.fake_llm.records import RecordedRequest

WINDOW = 16_000
SETTINGS = {
    "permissions": {"bash": "allow", "write": "allow"},
    "contextWindow": WINDOW,
    "maxSteps": 10_000,
}
TURNS = 30
# Every third turn reads nothing: a compaction in it shows every fact in a smaller view.
QUIET = 3
# A view that folds facts is at its ceiling within this (the fill's and the cut's margins).
ROOM_MARGIN = 200
SUMMARY = "\n\n".join(f"## {name}\nkept: {name.lower()}" for name in SECTIONS)


class Model:
    """Each turn: a large file read, then commands that print a fact each, then an answer."""

    turn = 0

    def __call__(self, request: RecordedRequest) -> Any:
        if request.is_summary:
            return text(SUMMARY)
        prompt = request.last_user_text() or ""
        # A compaction that interrupted a turn continues it with a message of its own.
        if prompt.startswith("Turn "):
            self.turn = int(prompt.split()[1])
        turn = self.turn
        items = request.items
        last_user = max(i for i, item in enumerate(items) if item.get("role") == "user")
        step = sum(1 for item in items[last_user + 1 :] if item.get("type") == "function_call")
        if step < 2 and turn % QUIET:
            return tool_call("read", {"path": f"src/big{(2 * turn + step) % 4}.py"})
        if step <= 9:
            return tool_call("bash", {"command": f"echo '{self.fact(turn, step)}'"})
        return text(f"Turn {turn} done.")

    def fact(self, turn: int, step: int) -> str:
        return f"fact {turn}.{step}: build {turn * 7 + step} checked against release r{turn}"


@pytest.mark.asyncio
async def test_the_view_after_a_compaction_never_outgrows_the_one_before_once_budgets_are_reached(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "src").mkdir()
    for i in range(4):
        body = "".join(f"def g{i}_{j}(x):\n    return x * {j}  # line {j}\n\n" for j in range(100))
        (workspace / "src" / f"big{i}.py").write_text(body)
    llm.on_request(Model())
    baton = await start_baton(settings=SETTINGS)
    sid = await baton.new_session()
    for turn in range(TURNS):
        result = await baton.prompt(sid, f"Turn {turn} read and check.")
        assert result["stopReason"] == "end_turn", result

    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    records = [r for r in listed["compactions"] if r.get("committed", True)]
    held = held_views(records)
    assert len(held) >= 5, records
    over = [(i, ceiling, tokens) for i, ceiling, tokens in held if tokens > ceiling]
    assert not over, (over, held)
    # No view sinks the ones after it: the views at their budgets stay near the first (in
    # the whole day, held to a view that had shown every fact in 3,948 tokens, the next
    # four folded 10 to 37 facts to stay under it, the room 6,400).
    at_budgets = [int(r["tokensAfter"]) for r in records if at_its_budgets(r)]
    assert min(at_budgets) >= 0.75 * at_budgets[0], at_budgets


def at_its_budgets(record: dict[str, Any]) -> bool:
    """Whether the view a compaction left was at its budgets: its ledger could not show
    every fact in the room the rest of the view left it (some are one `recall` away)."""
    return int((record.get("score") or {}).get("oneRecall", 0)) > 0


def held_views(records: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """(index, ceiling, tokens after) of each of a session's compactions (committed, not
    undone, in order) made once the budgets were reached: its ceiling is the last view
    before it that was at its budgets (`planning.ceiling`), and no view may be larger."""
    held: list[tuple[int, int, int]] = []
    ceiling: int | None = None
    for i, record in enumerate(records):
        tokens = int(record["tokensAfter"])
        if record.get("strategy") != "native":
            ceiling = None
            continue
        if ceiling is not None:
            held.append((i, ceiling, tokens))
        if at_its_budgets(record):
            ceiling = tokens
    return held


class RepeatingModel(Model):
    """Like `Model`, but its commands come back in rotation (48 of them): the ledger holds
    a set of facts that hardly grows, so whether they fold depends on the room the rest of
    the view leaves, a large read in progress or not."""

    def fact(self, turn: int, step: int) -> str:
        k = (turn * 8 + step) % 48
        return f"fact {k}: build {k * 7} checked against release r{k}"


@pytest.mark.asyncio
async def test_a_view_that_shows_every_fact_in_less_room_holds_no_later_view_under_it(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    """Once a compaction in the middle of a read had to fold facts (the budgets reached),
    later ones at quieter points show every fact again in smaller views. Held to each such
    view (the previous view as the ceiling), the next compaction with a read in progress
    had to fold facts and mask the read with the room a third empty. A view folds facts
    only when it is at its ceiling, within the estimate's margin."""
    (workspace / "src").mkdir()
    for i in range(4):
        body = "".join(f"def g{i}_{j}(x):\n    return x * {j}  # line {j}\n\n" for j in range(100))
        (workspace / "src" / f"big{i}.py").write_text(body)
    llm.on_request(RepeatingModel())
    baton = await start_baton(settings=SETTINGS)
    sid = await baton.new_session()
    for turn in range(TURNS):
        result = await baton.prompt(sid, f"Turn {turn} read and check.")
        assert result["stopReason"] == "end_turn", result

    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    records = [r for r in listed["compactions"] if r.get("committed", True)]
    held = held_views(records)
    assert len(held) >= 5, records
    assert not [(i, c, t) for i, c, t in held if t > c], held
    # Facts fold only in a view at its ceiling: none with room left under it.
    folded_with_room = [
        (i, ceiling, tokens, records[i]["score"]["oneRecall"])
        for i, ceiling, tokens in held
        if at_its_budgets(records[i]) and tokens < ceiling - ROOM_MARGIN
    ]
    assert not folded_with_room, (folded_with_room, [int(r["tokensAfter"]) for r in records])
