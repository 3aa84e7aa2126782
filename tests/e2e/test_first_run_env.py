"""The first run reads the environment: with OPENAI_BASE_URL set and no key (a local
Ollama or llama.cpp server), a prompt goes to that server, not to the embedded model."""

from __future__ import annotations

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text


@pytest.mark.asyncio
async def test_a_base_url_without_a_key_is_the_server_prompts_go_to(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    # The harness sets OPENAI_BASE_URL to the fake server; no key, no provider setting.
    baton = await start_baton(api_key=None, settings={"model": "gpt-fake"})
    sid = await baton.new_session()
    llm.add(text("from the server at OPENAI_BASE_URL"))
    result = await baton.prompt(sid, "hi")
    assert result["stopReason"] == "end_turn", result
    assert baton.streamed_text(sid) == "from the server at OPENAI_BASE_URL"
    assert llm.model_requests[-1].api_key is None
    loaded = await baton.load(sid)
    assert (loaded["provider"], loaded["model"]) == ("openai-compatible", "gpt-fake")


@pytest.mark.asyncio
async def test_a_base_url_without_a_model_asks_for_the_model_not_the_local_one(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(api_key=None)
    sid = await baton.new_session()
    result = await baton.prompt(sid, "hi")
    assert result["stopReason"] == "error", result
    assert "needs a model" in result["error"] and "local" not in result["error"]
    assert llm.model_requests == []
