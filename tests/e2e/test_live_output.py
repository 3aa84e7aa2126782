"""A running command's output reaches the client while it runs, through the real server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient, allow_once


@pytest.mark.asyncio
async def test_running_command_streams_its_output_before_the_result(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = allow_once
    llm.add(tool_call("bash", {"command": "echo first; sleep 1.5; echo second"}))
    llm.add(tool_call("bash", {"command": "true"}))
    llm.add(text("done"))
    sid = await baton.new_session()
    await baton.prompt(sid, "run it")
    updates = baton.updates(sid, "tool_call_update")
    [first_call, second_call] = list(dict.fromkeys(u["toolCallId"] for u in updates))
    first = [u for u in updates if u["toolCallId"] == first_call]
    live = [u["output"] for u in first if u["status"] == "in_progress" and "output" in u]
    # The first line shows while the command sleeps; the result comes last, whole.
    assert live and live[0] == "first\n"
    assert first[-1]["status"] == "completed"
    assert first[-1]["output"] == "first\nsecond\n[exit code 0]"
    # A command with no output sends no live updates.
    second = [u for u in updates if u["toolCallId"] == second_call]
    assert [u["status"] for u in second] == ["in_progress", "completed"]
    # The model reads the result only, not the live updates.
    outputs = list(llm.model_requests[1].tool_outputs().values())
    assert outputs == ["first\nsecond\n[exit code 0]"]
