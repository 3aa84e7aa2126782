"""Backoff, Retry-After, give-up messages and overflow detection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from baton.errors import ProviderError
from baton.providers.base import Finished, ModelRequest, UserText
from baton.providers.http_errors import error_from_response, parse_retry_after
from baton.providers.openai_chat import OpenAIChatProvider
from baton.providers.openai_responses import OpenAIResponsesProvider
from baton.providers.retry import RetryPolicy, StreamBroken, retry_call, retry_stream

from ._support import (
    API_KEY,
    FakeServer,
    Sleeps,
    chat_sse,
    collect,
    collect_until_error,
    identity,
    json_response,
    policy,
    sse_response,
)

CHAT = identity("openai-compatible", "m", "http://localhost:8080/v1", "api_key")
OK_CHAT = chat_sse(
    [{"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}]
)


def chat(server: FakeServer, sleeps: Sleeps, **kwargs: Any) -> OpenAIChatProvider:
    return OpenAIChatProvider(
        CHAT, server.client(), api_key=API_KEY, retry=policy(sleeps, **kwargs)
    )


def request() -> ModelRequest:
    return ModelRequest(instructions="", items=[UserText("hi")])


def error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return json_response({"error": {"message": message, "type": "x"}}, status, headers)


@pytest.mark.asyncio
async def test_retry_after_seconds_is_honoured() -> None:
    sleeps = Sleeps()
    server = FakeServer(
        error(429, "Rate limit reached", {"retry-after": "3"}), sse_response(OK_CHAT)
    )
    out = await collect(chat(server, sleeps).stream(request()))
    assert out[-1] == Finished("stop")
    assert sleeps.delays == [3.0]


@pytest.mark.asyncio
async def test_retry_after_ms_wins_and_long_waits_are_capped() -> None:
    sleeps = Sleeps()
    server = FakeServer(
        error(503, "busy", {"retry-after-ms": "250", "retry-after": "9"}),
        error(529, "overloaded", {"retry-after": "3600"}),
        sse_response(OK_CHAT),
    )
    await collect(chat(server, sleeps).stream(request()))
    assert sleeps.delays == [0.25, 60.0]


@pytest.mark.asyncio
async def test_full_jitter_exponential_backoff_without_retry_after() -> None:
    sleeps = Sleeps()
    server = FakeServer(error(500, "a"), error(502, "b"), error(504, "c"), sse_response(OK_CHAT))
    await collect(chat(server, sleeps, jitter=0.5).stream(request()))
    assert sleeps.delays == [0.5, 1.0, 2.0]  # 0.5 x 1, 2, 4 seconds


def test_backoff_is_bounded() -> None:
    p = RetryPolicy(base_delay=1.0, max_delay=30.0, jitter=lambda: 1.0)
    assert [p.delay(n) for n in range(7)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert RetryPolicy(jitter=lambda: 0.0).delay(3) == 0.0
    assert p.delay(0, retry_after=500.0) == 60.0


@pytest.mark.asyncio
async def test_give_up_message_has_status_and_provider_text_but_no_key() -> None:
    sleeps = Sleeps()
    server = FakeServer(*[error(503, "The engine is currently overloaded") for _ in range(3)])
    _, exc = await collect_until_error(chat(server, sleeps, max_retries=2).stream(request()))
    assert isinstance(exc, ProviderError)
    assert exc.status == 503 and exc.retryable
    assert "HTTP 503" in exc.message
    assert "The engine is currently overloaded" in exc.message
    assert "gave up after 2 retries" in exc.message
    assert API_KEY not in exc.message and "Bearer" not in exc.message
    assert len(server.requests) == 3 and len(sleeps.delays) == 2
    assert all(r.headers["authorization"] == f"Bearer {API_KEY}" for r in server.requests)


@pytest.mark.asyncio
async def test_key_echoed_by_a_server_is_redacted() -> None:
    server = FakeServer(error(401, f"Incorrect API key provided: {API_KEY}"))
    _, exc = await collect_until_error(chat(server, Sleeps()).stream(request()))
    assert isinstance(exc, ProviderError) and exc.status == 401
    assert API_KEY not in exc.message and "Incorrect API key provided" in exc.message


@pytest.mark.asyncio
async def test_client_errors_are_not_retried() -> None:
    sleeps = Sleeps()
    server = FakeServer(error(400, "Invalid value for 'model'"))
    _, exc = await collect_until_error(chat(server, sleeps).stream(request()))
    assert isinstance(exc, ProviderError) and not exc.retryable
    assert exc.message.endswith("HTTP 400: Invalid value for 'model' (x)")
    assert sleeps.delays == []


@pytest.mark.asyncio
async def test_insufficient_quota_is_not_retried() -> None:
    sleeps = Sleeps()
    body = {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}
    server = FakeServer(json_response(body, 429))
    _, exc = await collect_until_error(chat(server, sleeps).stream(request()))
    assert isinstance(exc, ProviderError) and exc.status == 429 and not exc.retryable
    assert sleeps.delays == []


@pytest.mark.asyncio
async def test_connection_errors_are_retried() -> None:
    sleeps = Sleeps()
    server = FakeServer(
        httpx.ConnectError("[Errno 111] Connection refused"),
        httpx.ReadError("connection reset"),
        sse_response(OK_CHAT),
    )
    out = await collect(chat(server, sleeps).stream(request()))
    assert out[-1] == Finished("stop")
    assert len(sleeps.delays) == 2


@pytest.mark.asyncio
async def test_connection_errors_exhausted() -> None:
    sleeps = Sleeps()
    server = FakeServer(*[httpx.ConnectError("[Errno 111] Connection refused")] * 2)
    _, exc = await collect_until_error(chat(server, sleeps, max_retries=1).stream(request()))
    assert isinstance(exc, ProviderError)
    assert "could not connect" in exc.message and "Connection refused" in exc.message
    assert "localhost:8080" in exc.message and "gave up after 1 retry" in exc.message


@pytest.mark.asyncio
async def test_read_timeout_is_not_retried() -> None:
    sleeps = Sleeps()
    server = FakeServer(httpx.ReadTimeout("timed out"))
    _, exc = await collect_until_error(chat(server, sleeps).stream(request()))
    assert isinstance(exc, ProviderError) and "requestTimeout" in exc.message
    assert sleeps.delays == []


@pytest.mark.asyncio
async def test_zero_retries_configured() -> None:
    sleeps = Sleeps()
    server = FakeServer(error(500, "boom"))
    _, exc = await collect_until_error(chat(server, sleeps, max_retries=0).stream(request()))
    assert isinstance(exc, ProviderError) and "gave up" not in exc.message
    assert sleeps.delays == []


@pytest.mark.asyncio
async def test_overflow_is_not_retried_even_on_a_retryable_status() -> None:
    sleeps = Sleeps()
    server = FakeServer(error(500, "prompt exceeds the available context size"))
    _, exc = await collect_until_error(chat(server, sleeps).stream(request()))
    assert isinstance(exc, ProviderError) and exc.overflow and not exc.retryable
    assert sleeps.delays == []


@pytest.mark.asyncio
async def test_retries_on_the_responses_provider_too() -> None:
    sleeps = Sleeps()
    ok = (
        b'event: response.completed\ndata: {"type":"response.completed",'
        b'"response":{"status":"completed","output":[]}}\n\n'
    )
    server = FakeServer(error(502, "Bad gateway", {"retry-after": "1"}), sse_response(ok))
    provider = OpenAIResponsesProvider(
        identity(), server.client(), api_key=API_KEY, retry=policy(sleeps)
    )
    out = await collect(provider.stream(request()))
    assert out == [Finished("stop")] and sleeps.delays == [1.0]


OVERFLOWS = [
    pytest.param(
        400,
        {
            "error": {
                "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        id="openai-code",
    ),
    pytest.param(
        400,
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 9000,
                "n_ctx": 8192,
            }
        },
        id="llama.cpp",
    ),
    pytest.param(
        400,
        {
            "object": "error",
            "message": "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens.",
            "type": "BadRequestError",
            "code": 400,
        },
        id="vllm",
    ),
    pytest.param(
        400, {"error": "prompt too long; exceeded max context length by 20 tokens"}, id="ollama"
    ),
    pytest.param(
        400,
        {"error": {"message": "Input is too long: too many tokens for this model"}},
        id="too-many-tokens",
    ),
    pytest.param(
        400,
        {"error": {"message": "Your input exceeds the context window of this model."}},
        id="context-window",
    ),
    pytest.param(413, {"error": {"message": "Request Entity Too Large"}}, id="http-413"),
]


@pytest.mark.parametrize(("status", "body"), OVERFLOWS)
def test_overflow_shapes(status: int, body: dict[str, Any]) -> None:
    import json

    exc = error_from_response(status, json.dumps(body), httpx.Headers(), label="p")
    assert exc.overflow and not exc.retryable and exc.status == status


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (429, "Request too large for gpt-4o: Limit 30000, Requested 50000 tokens per min"),
        (500, "The server had an error while processing your request."),
        (400, "Invalid 'tools[0].name': string does not match pattern."),
    ],
)
def test_not_overflow(status: int, message: str) -> None:
    exc = error_from_response(
        status, f'{{"error":{{"message":"{message}"}}}}', httpx.Headers(), label="p"
    )
    assert not exc.overflow


@pytest.mark.asyncio
async def test_overflow_through_the_provider() -> None:
    server = FakeServer(json_response(OVERFLOWS[1].values[1], 400))
    _, exc = await collect_until_error(chat(server, Sleeps()).stream(request()))
    assert isinstance(exc, ProviderError) and exc.overflow


def test_error_bodies_in_other_dialects() -> None:
    html = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    exc = error_from_response(502, html, httpx.Headers(), label="p")
    assert exc.message == "p returned HTTP 502: 502 Bad Gateway" and exc.retryable
    exc = error_from_response(503, "", httpx.Headers(), label="p")
    assert exc.message == "p returned HTTP 503: Service Unavailable"
    exc = error_from_response(404, '{"detail": "Not Found"}', httpx.Headers(), label="p")
    assert exc.message == "p returned HTTP 404: Not Found"


def test_parse_retry_after() -> None:
    assert parse_retry_after(httpx.Headers({"retry-after": "7"})) == 7.0
    assert parse_retry_after(httpx.Headers({"retry-after": "1.5"})) == 1.5
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "20"})) == 0.02
    assert parse_retry_after(httpx.Headers({"retry-after": "-4"})) == 0.0
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers()) is None
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    delay = parse_retry_after(httpx.Headers({"retry-after": when}))
    assert delay is not None and 27 <= delay <= 30
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    assert parse_retry_after(httpx.Headers({"retry-after": past})) == 0.0


@pytest.mark.asyncio
async def test_retry_stream_only_before_the_first_item() -> None:
    attempts = 0

    async def attempt() -> AsyncIterator[int]:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise ProviderError("flaky", status=503, retryable=True)
        yield 1
        raise httpx.RemoteProtocolError("peer closed connection")

    sleeps = Sleeps()
    got: list[int] = []
    with pytest.raises(StreamBroken) as info:
        async for item in retry_stream(attempt, policy(sleeps), label="p"):
            got.append(item)
    assert got == [1] and attempts == 2 and len(sleeps.delays) == 1
    assert "the stream broke after partial output" in info.value.message
    assert not info.value.retryable


@pytest.mark.asyncio
async def test_retry_stream_closes_abandoned_attempts() -> None:
    closed: list[bool] = []

    async def attempt() -> AsyncIterator[int]:
        try:
            yield 1
            yield 2
        finally:
            closed.append(True)

    stream = retry_stream(attempt, RetryPolicy(), label="p")
    async for _ in stream:
        break
    await stream.aclose()
    assert closed == [True]


@pytest.mark.asyncio
async def test_retry_call() -> None:
    calls = 0

    async def call() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise httpx.ConnectError("refused")
        return "ok"

    sleeps = Sleeps()
    assert await retry_call(call, policy(sleeps, jitter=1.0), label="p") == "ok"
    assert sleeps.delays == [1.0, 2.0]
