"""Each retry of a model request reaches the client (reason, attempt, countdown), and
Stop during the wait ends the turn without another request. Through the real server."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.fake_llm import FakeLLM, error, rate_limit, text
from tests.harness import BatonClient


@pytest.mark.asyncio
async def test_each_retry_is_reported_with_its_reason_and_delay(
    baton: BatonClient, llm: FakeLLM
) -> None:
    llm.add(rate_limit(retry_after=1))
    llm.add(error(503))
    llm.add(text("after the wait"))
    sid = await baton.new_session()
    assert (await baton.prompt(sid, "hi"))["stopReason"] == "end_turn"
    retries = baton.updates(sid, "model_retry")
    assert [(r["attempt"], r["status"]) for r in retries] == [(1, 429), (2, 503)]
    assert retries[0]["delaySeconds"] == 1.0
    assert retries[0]["maxRetries"] >= 2
    assert "429" in retries[0]["reason"] and "503" in retries[1]["reason"]
    # Reported before the wait, so the answer's text comes after them.
    kinds = [u["kind"] for u in baton.updates(sid)]
    assert kinds.index("model_retry") < kinds.index("agent_message_chunk")


@pytest.mark.asyncio
async def test_stop_during_a_retry_wait_ends_the_turn(baton: BatonClient, llm: FakeLLM) -> None:
    llm.add(rate_limit(retry_after=20))
    llm.add(text("never asked for"))
    sid = await baton.new_session()
    started = time.monotonic()
    prompt = asyncio.ensure_future(baton.prompt(sid, "hi"))
    retry = await baton.wait_update("model_retry", sid)
    assert retry["delaySeconds"] == 20.0
    baton.notify("baton/session/cancel", {"sessionId": sid})
    assert (await asyncio.wait_for(prompt, 10))["stopReason"] == "cancelled"
    assert time.monotonic() - started < 10
    assert len(llm.model_requests) == 1
