"""The real-model tests' checks on scripted answers a small model can give, good and bad.

A check that held only when the model did as asked would make `scripts/test.sh` pass or
fail with the model's mood (a summary longer than the history it summarises made the
compaction test fail on one run in two). Each check runs here on a cooperative answer
and on the answers that broke it, through the real server with the fake model.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.e2e.real_model_checks import (
    PERSON_PLAN,
    PLAN_PROMPT,
    SECRET,
    TOOL_PROMPT,
    check_plan_survives_compaction,
    check_turn_recorded_as_streamed,
)
from tests.fake_llm import FakeLLM, text, tool_call

SETTINGS: dict[str, Any] = {"maxSteps": 4, "compaction": {"auto": False}}
STATS = (resources.files("baton") / "demo_project" / "stats.py").read_text(encoding="utf-8")
SHORT_SUMMARY = "\n\n".join(f"## {name}\n- {name.lower()}" for name in SECTIONS)
# What a 1.5B model did with a 557-token history: a summary longer than the history.
RAMBLING_SUMMARY = "\n\n".join(
    f"## {name}\n" + "The session read a file and talked about it at length. " * 120
    for name in SECTIONS
)
PLAN = "# Fix stats.py\n\n- [ ] mean of empty\n- [ ] median\n- [ ] mode ties\n"

TOOL_ANSWERS = {
    "as asked": [tool_call("read", {"path": "notes.txt"}), text(f"It is {SECRET}.")],
    "no tool": [text("I cannot read files.")],
    "a missing file": [tool_call("read", {"path": "nowhere.txt"}), text("Not found.")],
    "a bad argument": [tool_call("read", {"file": 3}), text("Hmm.")],
}


@pytest.mark.asyncio
@pytest.mark.parametrize("answer", list(TOOL_ANSWERS))
async def test_the_turn_check_holds_for_any_answer(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, answer: str
) -> None:
    (workspace / "notes.txt").write_text(f"The secret word is: {SECRET}\n", encoding="utf-8")
    llm.script(TOOL_ANSWERS[answer])
    baton = await start_baton(settings=SETTINGS)
    sid = await baton.new_session()
    result = await baton.prompt(sid, TOOL_PROMPT)
    await check_turn_recorded_as_streamed(baton, sid, result)


def _plan_model(llm: FakeLLM, *, writes_plan: bool, summary: str) -> None:
    steps = (
        [
            tool_call("read", {"path": "stats.py"}),
            tool_call("plan_write", {"content": PLAN}),
            tool_call("plan_exit", {}),
            text("The plan is ready."),
        ]
        if writes_plan
        else [text("Here is what I would do: fix the TODOs.")]
    )

    def answer(req: Any) -> Any:
        if req.is_summary:
            return text(summary)
        return steps.pop(0) if steps else text("Done.")

    llm.on_request(answer)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("writes_plan", "summary", "commits"),
    # With a read in the history the compaction gains by masking its output whatever the
    # summary; without one, a rambling summary gains nothing.
    [(True, SHORT_SUMMARY, True), (False, RAMBLING_SUMMARY, False), (True, RAMBLING_SUMMARY, True)],
    ids=["as asked", "no plan, rambling summary", "plan, rambling summary"],
)
async def test_the_plan_compaction_check_holds_for_any_answer(
    start_baton: StartBaton,
    llm: FakeLLM,
    workspace: Path,
    writes_plan: bool,
    summary: str,
    commits: bool,
) -> None:
    (workspace / "stats.py").write_text(STATS, encoding="utf-8")
    _plan_model(llm, writes_plan=writes_plan, summary=summary)
    baton = await start_baton(settings=SETTINGS)
    sid = await baton.new_session(mode="plan")
    result = await baton.prompt(sid, PLAN_PROMPT)
    native = await check_plan_survives_compaction(baton, workspace, sid, result)
    assert isinstance(native, dict) and native["committed"] == commits
    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    assert plan["content"] == (PLAN if writes_plan else PERSON_PLAN)
