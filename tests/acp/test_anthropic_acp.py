"""ACP on Claude: `baton acp` with only ANTHROPIC_API_KEY set talks to the Messages API."""

from __future__ import annotations

import pytest

from tests.acp.conftest import StartAcp
from tests.acp.test_acp import error_of
from tests.fake_llm import FakeLLM, reasoning, text, tool_call


@pytest.mark.asyncio
async def test_an_acp_session_runs_on_claude_with_thinking_and_the_cache(
    start_acp: StartAcp, llm: FakeLLM
) -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-acp-0123456789",
        "ANTHROPIC_BASE_URL": llm.url,
        "BATON_ANTHROPIC__THINKING_BUDGET": "1024",
    }
    acp = await start_acp(api_key=None, env=env)
    sid = await acp.new()
    (acp.cwd / "a.txt").write_text("alpha\n")
    llm.add(reasoning("look first"), tool_call("read", {"path": "a.txt"}))
    llm.add(reasoning("now answer"), text("It says alpha."))
    answer = await acp.say(sid, "what does a.txt say?")
    assert answer.stop_reason == "end_turn"
    assert acp.client.text(sid) == "It says alpha."
    assert "look first" in acp.client.text(sid, "agent_thought_chunk")
    first, second = llm.model_requests
    assert first.route == second.route == "messages"
    assert second.status == 200, second.rejected
    assert second.header("authorization") == "Bearer sk-ant-acp-0123456789"
    assert [b["thinking"] for b in second.blocks("thinking")] == ["look first"]
    assert second.anthropic_usage["cache_read_input_tokens"] > 0


@pytest.mark.asyncio
async def test_a_missing_claude_key_asks_the_editor_and_its_key_is_used(
    start_acp: StartAcp, llm: FakeLLM
) -> None:
    env = {"BATON_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": llm.url}
    acp = await start_acp(api_key=None, env=env)
    sid = await acp.new()
    needed = await error_of(acp.say(sid, "hello"))
    assert needed.code == -32000 and "no Anthropic API key" in str(needed.data)
    await acp.conn.authenticate(method_id="anthropic-api-key", apiKey="sk-ant-editor-0042abcd")
    llm.add(text("Hi from Claude."))
    assert (await acp.say(sid, "hello again")).stop_reason == "end_turn"
    assert llm.model_requests[-1].route == "messages"
    assert llm.model_requests[-1].headers["authorization"] == "Bearer sk-ant-editor-0042abcd"
