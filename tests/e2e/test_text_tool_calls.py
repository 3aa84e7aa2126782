"""A model that writes tool calls as text (small local models) through openai-compatible."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text


@pytest.mark.asyncio
async def test_a_call_written_as_text_runs_once_and_is_stored_once(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    baton = await start_baton(
        settings={"provider": "openai-compatible", "baseUrl": llm.base_url, "model": "gpt-fake"}
    )
    call = '```json\n{"name": "read", "arguments": {"path": "a.txt"}}\n```'
    llm.add(text(call))
    llm.add(text("It says alpha."))
    sid = await baton.new_session()
    assert (await baton.prompt(sid, "what is in a.txt?"))["stopReason"] == "end_turn"
    # The person saw the call's text stream by; the history keeps only the call.

    second = llm.model_requests[1]
    assert second.route == "chat.completions"
    assert [c["name"] for c in second.function_calls()] == ["read"]
    sent = second.input_text()
    assert sent.count('"name": "read"') == 0, "the call's text is not replayed beside the call"
    assert "alpha" in next(iter(second.tool_outputs().values()))
    loaded = await baton.load(sid)
    parts = loaded["messages"][1]["parts"]
    assert [p["type"] for p in parts] == ["tool_call"]
