"""A model that repeats the same tool call: refused after `tools.repeatLimit`, then stopped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient


def outputs(llm: FakeLLM) -> list[str]:
    return list(llm.model_requests[-1].tool_outputs().values())


@pytest.mark.asyncio
async def test_a_looping_call_is_refused_then_the_turn_stops(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    for _ in range(6):
        llm.add(tool_call("read", {"path": "a.txt"}))
    sid = await baton.new_session()
    result = await baton.prompt(sid, "read a.txt")

    assert result["stopReason"] == "error"
    assert "the same read call 4 times in a row" in result["error"]
    # Two reads ran, the third and fourth were refused, and no fifth request was made.
    assert len(llm.model_requests) == 4
    seen = outputs(llm)
    assert ["alpha" in o for o in seen] == [True, True, False]
    assert "you have already made this exact read call 2 times in a row" in seen[2]
    calls = [p for m in (await baton.load(sid))["messages"] for p in m["parts"] if p.get("name")]
    assert [c["status"] for c in calls] == ["completed", "completed", "failed", "failed"]
    # The session is fine afterwards: a new turn starts a new count.
    llm.add(tool_call("read", {"path": "a.txt"}))
    llm.add(text("alpha it is"))
    assert (await baton.prompt(sid, "once more"))["stopReason"] == "end_turn"


@pytest.mark.asyncio
async def test_the_same_edit_is_applied_once(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"write": "allow"}})
    (workspace / "stats.py").write_text("def mean(v):\n    return sum(v) / len(v)\n")
    insertion = {
        "path": "stats.py",
        "old_string": "    return sum(v) / len(v)",
        "new_string": "    if not v:\n        return 0.0\n    return sum(v) / len(v)",
    }
    llm.add(tool_call("edit", insertion))
    llm.add(tool_call("edit", insertion))
    llm.add(text("Done."))
    sid = await baton.new_session()
    assert (await baton.prompt(sid, "guard the empty list"))["stopReason"] == "end_turn"

    assert (workspace / "stats.py").read_text() == (
        "def mean(v):\n    if not v:\n        return 0.0\n    return sum(v) / len(v)\n"
    )
    first, second = outputs(llm)
    assert first.startswith("edited stats.py")
    assert "making it again would apply it twice" in " ".join(second.split())


@pytest.mark.asyncio
async def test_other_calls_in_between_and_the_limit_are_respected(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"tools": {"repeatLimit": 3}})
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    for path in ("a.txt", "a.txt", "b.txt", "a.txt", "a.txt", "a.txt"):
        llm.add(tool_call("read", {"path": path}))
    llm.add(text("read them all"))
    sid = await baton.new_session()
    assert (await baton.prompt(sid, "read"))["stopReason"] == "end_turn"
    assert all("not run" not in o for o in outputs(llm))
    assert len(outputs(llm)) == 6
