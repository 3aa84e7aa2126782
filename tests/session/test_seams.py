"""What the features contribute is folded into one frozen Seams, in the features' order."""

from __future__ import annotations

import dataclasses

import pytest

from baton.agent.state import SessionState
from baton.session.seams import Contribution, NoTurnHooks, fold
from baton.tools.base import ToolServices


class Recall:
    def recall(
        self, session_id: str, *, call_id: str | None, query: str | None, offset: int = 0
    ) -> str:
        return ""


def test_lists_run_in_the_order_the_features_are_folded_and_services_merge() -> None:
    seen: list[str] = []

    def first(state: SessionState) -> None:
        seen.append("first")

    def second(state: SessionState) -> None:
        seen.append("second")

    recall = Recall()
    hooks = NoTurnHooks()
    seams = fold(
        Contribution(turn=hooks, session_loaded=(first,)),
        Contribution(tool_services=ToolServices(recall=recall), session_loaded=(second,)),
    )
    assert seams.turn is hooks
    assert seams.session_loaded == (first, second)
    assert seams.tool_services.recall is recall and seams.tool_services.plan is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        seams.turn = NoTurnHooks()  # type: ignore[misc]


def test_a_one_of_seam_given_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="turn seam"):
        fold(Contribution(turn=NoTurnHooks()), Contribution(turn=NoTurnHooks()))
    with pytest.raises(ValueError, match="recall tool service"):
        fold(
            Contribution(tool_services=ToolServices(recall=Recall())),
            Contribution(tool_services=ToolServices(recall=Recall())),
        )


def test_nothing_folded_is_the_bare_loop() -> None:
    seams = fold()
    assert isinstance(seams.turn, NoTurnHooks)
    assert seams.change_recorder is None and seams.tool_services == ToolServices()
    assert (seams.before_step, seams.session_loaded, seams.after_turn, seams.on_cancel) == (
        (),
        (),
        (),
        (),
    )
