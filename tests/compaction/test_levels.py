"""The escalation plan and the level loop both strategies run (planning.escalation,
planning.escalate), driven by scripted levels: no server, no model."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from baton.agent.state import View
from baton.compaction import planning
from baton.compaction.planning import AfterLevel, Level, Tried


def test_the_plan_is_three_levels_the_last_masking_everything() -> None:
    plan = planning.escalation(4_001)
    assert [(level.number, level.keep, level.last) for level in plan] == [
        (1, 4_001, False),
        (2, 1_000, False),
        (3, 0, True),
    ]
    assert planning.level_keeps(4_001) == tuple(level.keep for level in plan)


def test_the_keep_default_is_a_quarter_of_the_window_within_bounds() -> None:
    assert planning.keep_recent_tokens(None, 40_000) == 10_000
    assert planning.keep_recent_tokens(None, 2_000) == 1_000
    assert planning.keep_recent_tokens(None, 400_000) == 20_000
    assert planning.keep_recent_tokens(123, 400_000) == 123  # the setting wins
    budgets = planning.budgets(
        "auto", before=1, history=1, threshold=1, usable=40_000, protect=None, keep_recent=None
    )
    assert budgets.keep_recent == planning.keep_recent_tokens(None, 40_000)


class Script:
    """Each level's result by number (None: nothing to try at that level)."""

    def __init__(self, sizes: dict[int, int | None], kept: int = 0) -> None:
        self.sizes = sizes
        self.kept = kept
        self.tried: list[int] = []

    async def attempt(self, level: Level) -> Tried | None:
        self.tried.append(level.number)
        size = self.sizes.get(level.number)
        if size is None:
            return None
        return Tried(View(summary=f"level {level.number}"), size, self.kept)


def run(
    script: Script, target: int = 1_000, levels: Sequence[Level] | None = None
) -> planning.Escalated:
    def judge(level: Level, tried: Tried) -> AfterLevel:
        return planning.after_level(level.number, tried.tokens, tried.kept, target)

    plan = planning.escalation(4_000) if levels is None else levels
    return asyncio.run(planning.escalate(plan, script.attempt, judge))


def test_the_first_level_that_fits_ends_the_loop() -> None:
    script = Script({1: 900, 2: 500, 3: 100}, kept=400)
    result = run(script)
    assert script.tried == [1]
    assert result.level is not None and result.level.number == 1
    assert result.met is not None and result.met.view.summary == "level 1"


def test_a_level_that_misses_escalates_and_the_next_that_fits_is_met() -> None:
    script = Script({1: 1_500, 2: 950, 3: 100}, kept=800)
    result = run(script)
    assert script.tried == [1, 2]
    assert result.level is not None and result.level.number == 2
    assert result.best is not None and result.best.tokens == 950


def test_a_level_with_nothing_to_try_is_skipped() -> None:
    script = Script({1: None, 2: None, 3: 700})
    result = run(script)
    assert script.tried == [1, 2, 3]
    assert result.level is not None and result.level.number == 3


def test_it_stops_when_summarising_every_kept_message_could_not_meet_the_target() -> None:
    # 1,500 with only 300 kept verbatim: summarising those too still leaves 1,200.
    script = Script({1: 1_500, 2: 900, 3: 100}, kept=300)
    result = run(script)
    assert script.tried == [1]
    assert result.level is None and result.met is None
    assert result.best is not None and result.best.tokens == 1_500


def test_no_level_fits_the_smallest_candidate_is_offered() -> None:
    script = Script({1: 1_800, 2: 1_300, 3: 1_400}, kept=900)
    result = run(script)
    assert script.tried == [1, 2, 3]
    assert result.met is None
    assert result.best is not None and result.best.view.summary == "level 2"


def test_nothing_to_try_anywhere_gives_no_candidate() -> None:
    result = run(Script({}))
    assert result == planning.Escalated(None, None, None)
