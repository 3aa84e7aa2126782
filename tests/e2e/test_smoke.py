from __future__ import annotations

import pytest

from tests.fake_llm import FakeLLM, text
from tests.harness import BatonClient


@pytest.mark.asyncio
async def test_prompt_streams_text(baton: BatonClient, llm: FakeLLM) -> None:
    llm.add(text("Hello", " there"))
    sid = await baton.new_session()
    result = await baton.prompt(sid, "hi")
    assert result == {"stopReason": "end_turn"}
    assert baton.streamed_text(sid) == "Hello there"
