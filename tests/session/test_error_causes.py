"""A failed turn names its cause, through the real server, on every wire it reaches.

The prompt's JSON-RPC error carries `data.cause`, the `turn_ended` update and a turn's
result carry `cause`, and a reopened session's turn outcomes keep it, so the sidebar
titles a 429 that gave up as a rate limit and a dropped stream as a dropped connection
instead of "not fully configured" (issue 50, point 1).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from baton.causes import TITLES, cause_of_message, headline
from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, cut_after, error, rate_limit, stream_error, text

LONG = text("The partial answer begins here " + " ".join(f"w{i}" for i in range(30)))


async def _fail(baton: Any, sid: str, prompt: str) -> tuple[str, Any]:
    """(the error's message, its data) of a prompt that must fail."""
    with pytest.raises(JsonRpcException) as failed:
        await asyncio.wait_for(baton.prompt(sid, prompt), 60)
    return failed.value.message, failed.value.data


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_each_provider_failure_is_named_by_its_cause(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(
        settings={
            "provider": "openai-compatible",
            "baseUrl": llm.base_url,
            "model": "gpt-fake",
            "maxRetries": 1,
        }
    )
    sid = await baton.new_session()
    cases: list[tuple[str, list[Any], str]] = [
        ("a 429 that gave up", [rate_limit(0), rate_limit(0)], "rate_limit"),
        ("a 503 that gave up", [error(503), error(503)], "server_error"),
        ("a stream cut mid-answer", [[LONG, cut_after(6)]], "connection_dropped"),
        (
            "an error event mid-stream",
            [[LONG, stream_error("backend fell over", after=6)]],
            "server_error",
        ),
        ("an unknown model", [error(404)], "model_not_found"),
        ("a refused key", [error(401)], "key_refused"),
    ]
    for name, replies, cause in cases:
        llm.reset()
        for reply in replies:
            llm.add(*reply) if isinstance(reply, list) else llm.add(reply)
        before = len(baton.updates(sid))
        message, data = await _fail(baton, sid, name)
        assert data["cause"] == cause, (name, message, data)
        ended = [u for u in baton.updates(sid)[before:] if u["kind"] == "turn_ended"]
        assert [u.get("cause") for u in ended] == [cause], name
        # The provider's own words stay the detail.
        assert ended[0]["error"] == message
    # A 429 that gave up is said so, by the title the faces share.
    turns = (await baton.load(sid))["turns"]
    assert [t.get("cause") for t in turns] == [c for _, _, c in cases], "\n".join(
        t["error"] for t in turns
    )
    assert "gave up after 1 retry" in turns[0]["error"]
    assert headline("rate_limit", turns[0]["error"]) == (
        "The model server is rate-limiting requests. Baton retried 1 time."
        " Wait a moment, then retry."
    )


@pytest.mark.asyncio
@pytest.mark.timeout(60)
async def test_a_server_without_a_model_asks_for_one(start_baton: StartBaton, llm: FakeLLM) -> None:
    # The first run the issue describes: OPENAI_BASE_URL names a server, nothing names a model.
    baton = await start_baton(settings={"provider": "openai-compatible", "baseUrl": llm.base_url})
    sid = await baton.new_session()
    result = await baton.prompt(sid, "hello")
    assert result["stopReason"] == "error"
    assert result["cause"] == "model_missing"
    assert "needs a model" in result["error"]
    assert llm.model_requests == []


def test_stored_messages_are_read_back_to_their_cause() -> None:
    # Errors of Baton's own making, as the providers word them.
    label = "the OpenAI-compatible server at http://127.0.0.1:9/v1"
    assert (
        cause_of_message(f"{label} returned HTTP 429: slow down (gave up after 4 retries)")
        == "rate_limit"
    )
    assert (
        cause_of_message(
            f"the stream broke after partial output: {label}: connection failed: ReadError: x"
        )
        == "connection_dropped"
    )
    assert (
        cause_of_message(
            f"the stream broke after partial output: {label} failed: boom (server_error)"
        )
        == "server_error"
    )
    assert cause_of_message(f"{label}: could not connect: ConnectError: refused") == "unreachable"
    assert (
        cause_of_message(f"{label} returned HTTP 401: Incorrect API key provided") == "key_refused"
    )
    assert (
        cause_of_message('provider "openai-compatible" needs a model: set the `model` key')
        == "model_missing"
    )
    assert cause_of_message("internal error: KeyError: 'x'") is None
    assert cause_of_message(None) is None
    assert set(TITLES) >= {"rate_limit", "server_error", "connection_dropped", "model_not_found"}
