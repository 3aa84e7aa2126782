"""The ledger keeps the trail through the real server: a command that failed and then
passed shows both runs, and its error stands under it (the record keeps it as resolved)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text, tool_call


@pytest.mark.asyncio
async def test_fail_then_pass_command_keeps_its_runs_and_resolved_error(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(
        settings={"permissions": {"bash": "allow"}},
        env={"BATON_COMPACTION__STRATEGY": "native"},
    )
    sid = await baton.new_session()
    llm.add(tool_call("bash", {"command": "cat flag.txt"}))
    llm.add(tool_call("bash", {"command": "echo ok > flag.txt"}))
    llm.add(tool_call("bash", {"command": "cat flag.txt"}))
    # History worth compacting is the agent's (the person's words stay verbatim anyway).
    llm.add(text("Fixed. " + "carefully " * 100))
    await baton.prompt(sid, "make cat flag.txt pass")
    llm.add(text("## Summary\nnone"))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True, record["notes"]
    ledger = record["ledger"]
    runs = {c["command"]: c["exitCodes"] for c in ledger["commands"]}
    assert runs["cat flag.txt"] == [1, 0]
    assert ledger["errors"] == []
    [resolved] = ledger["resolvedErrors"]
    assert resolved["source"] == "bash `cat flag.txt`"
    assert "No such file or directory" in resolved["message"]
    assert resolved["resolvedBy"] == "`cat flag.txt` → 0"

    llm.add(text("ok"))
    await baton.prompt(sid, "next")
    sent = llm.model_requests[-1].input_text()
    assert "- `cat flag.txt` → 1, 0" in sent
    # A command's error stands once, under the command whose later run fixed it.
    assert re.search(
        r"- `cat flag.txt` → 1, 0\n  run 1 \(1\): [^\n]*No such file or directory", sent
    )
