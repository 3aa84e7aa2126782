"""Shared helpers for provider tests: scripted HTTP answers through `httpx.MockTransport`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import httpx

from baton.providers.base import ProviderIdentity, Route, StreamEvent
from baton.providers.retry import RetryPolicy

API_KEY = "sk-test-SECRET-0123456789abcdef"
OPENAI_BASE = "https://api.openai.com/v1"

Answer = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def identity(
    provider: str = "openai",
    model: str = "gpt-5.1",
    base_url: str = OPENAI_BASE,
    auth_kind: str = "api_key",
) -> ProviderIdentity:
    return ProviderIdentity(provider, model, Route(base_url, auth_kind))  # type: ignore[arg-type]


def responses_sse(events: Iterable[dict[str, Any]]) -> bytes:
    """A Responses API event stream: `event:` names plus JSON data, as OpenAI sends it."""
    out = []
    for seq, event in enumerate(events):
        event = {**event, "sequence_number": seq}
        out.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
    return "".join(out).encode()


def chat_sse(chunks: Iterable[dict[str, Any]], *, done: bool = True) -> bytes:
    out = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def sse_response(body: bytes, status: int = 200) -> httpx.Response:
    return httpx.Response(status, headers={"content-type": "text/event-stream"}, content=body)


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.Response(status, json=data, headers=headers or {})


class BrokenStream(httpx.AsyncByteStream):
    """Sends `first`, then fails the way a dropped connection does."""

    def __init__(self, first: bytes, exc: Exception) -> None:
        self.first = first
        self.exc = exc

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        raise self.exc


class HangingStream(httpx.AsyncByteStream):
    """Sends `first`, then waits forever; records when httpx closes it."""

    def __init__(self, first: bytes) -> None:
        self.first = first
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.first
        await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed = True


def broken_sse_response(first: bytes, exc: Exception | None = None) -> httpx.Response:
    return httpx.Response(
        200,
        headers={"content-type": "text/event-stream"},
        stream=BrokenStream(first, exc or httpx.ReadError("connection reset by peer")),
    )


class FakeServer:
    """Answers requests from a script, in order, and records what was sent."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, httpx.Response):
            return answer
        return answer(request)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self))

    def body(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)


class Sleeps:
    """An injectable sleep that records delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def policy(sleeps: Sleeps, max_retries: int = 4, jitter: float = 0.5) -> RetryPolicy:
    return RetryPolicy(max_retries=max_retries, sleep=sleeps, jitter=lambda: jitter)


async def collect(stream: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in stream]


async def collect_until_error(
    stream: AsyncIterator[StreamEvent],
) -> tuple[list[StreamEvent], BaseException | None]:
    events: list[StreamEvent] = []
    try:
        async for event in stream:
            events.append(event)
    except Exception as exc:
        return events, exc
    return events, None
