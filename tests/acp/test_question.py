"""`question` over ACP (issue 49): a form elicitation for a client that supports forms,
not offered to one that does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.acp.conftest import StartAcp
from tests.fake_llm import FakeLLM, text, tool_call

QUESTION = {
    "question": "Which store?",
    "options": [{"label": "SQLite", "description": "one file"}, {"label": "Postgres"}],
    "multiple": True,
}


@pytest.mark.asyncio
async def test_question_is_a_form_elicitation_and_its_answer_the_result(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp(elicitation=True)
    acp.client.elicitation_content = {"choice": ["SQLite", "Postgres"]}
    llm.add(tool_call("question", QUESTION, call_id="call_q"))
    llm.add(text("Both."))
    session = await acp.new()
    await acp.say(session, "which store?")
    assert "question" in llm.model_requests[0].tool_names
    ((message, mode),) = acp.client.elicitations
    assert message == "Which store?"
    assert mode.session_id == session and mode.tool_call_id == "call_q"
    field = mode.requested_schema.properties["choice"]
    assert [o.const for o in field.items.any_of] == ["SQLite", "Postgres"]
    output = llm.model_requests[1].tool_outputs()["call_q"]
    assert output == "The person chose: SQLite; Postgres"


@pytest.mark.asyncio
async def test_a_declined_form_closes_the_question(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp(elicitation=True)
    llm.add(tool_call("question", QUESTION, call_id="call_q"))
    llm.add(text("ok"))
    await acp.say(await acp.new(), "which store?")
    assert "closed the question" in llm.model_requests[1].tool_outputs()["call_q"]


@pytest.mark.asyncio
async def test_question_is_not_offered_to_a_client_without_forms(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp()
    llm.add(text("ok"))
    await acp.say(await acp.new(), "hello")
    assert "question" not in llm.model_requests[0].tool_names
