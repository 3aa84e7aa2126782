"""Play a rendered reply over raw ASGI, with the faults a real network produces.

Starlette's ``StreamingResponse`` cannot drop a connection mid-body, so the fake speaks
ASGI directly: returning without the final ``more_body=False`` message makes uvicorn
close the socket, which the client sees as an incomplete chunked read — exactly what
a proxy cutting the stream looks like. Every wait here is interruptible (client
disconnect, ``llm.release()``, server shutdown) so a stalled test never hangs teardown.
"""

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .script import Reply

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


@dataclass(frozen=True)
class Hold:
    """A stall: stop sending for ``seconds``."""

    seconds: float


class Cut:
    """Drop the connection here."""


CUT = Cut()
Frame = bytes | Hold | Cut


@dataclass
class Signals:
    """Events owned by the server loop; ``release`` is replaced after each ``llm.release()``."""

    closing: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def fire_release(self) -> None:
        self.release.set()
        self.release = asyncio.Event()


async def wait_any(events: list[asyncio.Event], timeout: float) -> None:
    """Sleep up to ``timeout`` seconds, waking early when any event is set."""
    if timeout <= 0:
        return
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


def plan_stream(frames: list[bytes], reply: Reply, malformed: str) -> list[Frame]:
    """Weave the reply's faults into the event frames. ``after``/``cut_after`` count
    events of the real stream; positions past the end mean "after the last event"."""
    total = len(frames)
    planned: list[Frame] = []
    for position in range(total + 1):
        if reply.stall is not None and min(reply.stall.after, total) == position:
            planned.append(Hold(reply.stall.seconds))
        if reply.malformed is not None and min(reply.malformed.after, total) == position:
            planned.append((reply.malformed.payload or malformed).encode())
            if reply.malformed.cut:
                planned.append(CUT)
                return planned
        if reply.cut_after is not None and min(reply.cut_after, total) == position:
            planned.append(CUT)
            return planned
        if position < total:
            planned.append(frames[position])
    return planned


def plan_body(body: bytes, reply: Reply) -> list[Frame]:
    """Faults on a non-streaming answer: a stall before the body, half a body then a cut,
    or a body that is not JSON."""
    planned: list[Frame] = []
    if reply.stall is not None:
        planned.append(Hold(reply.stall.seconds))
    if reply.malformed is not None:
        body = (
            reply.malformed.payload or body[: max(1, len(body) // 2)].decode(errors="ignore")
        ).encode()
    if reply.cut_after is not None:
        return [*planned, body[: len(body) // 2], CUT]
    return [*planned, body]


def encode_headers(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


async def play(
    send: Send,
    receive: Receive,
    *,
    status: int,
    headers: Mapping[str, str],
    frames: list[Frame],
    signals: Signals,
    pace: float = 0.0,
) -> None:
    """Send the status line, then each frame; stop early on a cut, disconnect or shutdown."""
    await send(
        {"type": "http.response.start", "status": status, "headers": encode_headers(headers)}
    )
    gone = asyncio.Event()

    async def watch_disconnect() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    watcher = asyncio.ensure_future(watch_disconnect())
    try:
        for frame in frames:
            if gone.is_set() or signals.closing.is_set() or isinstance(frame, Cut):
                return  # returning without more_body=False makes uvicorn drop the socket
            if isinstance(frame, Hold):
                await wait_any([gone, signals.closing, signals.release], frame.seconds)
                continue
            await send({"type": "http.response.body", "body": frame, "more_body": True})
            if pace:
                await wait_any([gone, signals.closing], pace)
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        watcher.cancel()


async def send_json(
    send: Send, status: int, payload: Any, headers: Mapping[str, str] | None = None
) -> None:
    """A complete, fault-free JSON (or text, when ``payload`` is a str) response."""
    if isinstance(payload, str):
        body, kind = payload.encode(), "text/plain; charset=utf-8"
    else:
        body, kind = json.dumps(payload).encode(), "application/json"
    all_headers = {
        "content-type": kind,
        "content-length": str(len(body)),
        **{k.lower(): v for k, v in (headers or {}).items()},
    }
    await send(
        {"type": "http.response.start", "status": status, "headers": encode_headers(all_headers)}
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


class _IntentionalCutFilter(logging.Filter):
    """uvicorn logs an error for every response left incomplete; here that is the point."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "returned without completing response" not in record.getMessage()


def quiet_uvicorn_cuts() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _IntentionalCutFilter) for f in logger.filters):
        logger.addFilter(_IntentionalCutFilter())
