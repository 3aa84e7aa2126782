"""Retries with exponential backoff and full jitter, and the line they never cross.

A model request is retried only while nothing has reached the caller: once a
text delta has been shown to the person, a second attempt would show a
different answer after it. So a stream that fails after its first event raises
`StreamBroken` (a non-retryable `ProviderError`); the agent loop keeps the
partial output it already received and reports the error.

Which failures are worth retrying (429/5xx/529, connection errors) is decided
in `http_errors`; a server's `Retry-After`/`retry-after-ms` wins over the
computed backoff. Sleeping goes through `RetryPolicy.sleep` so tests don't wait.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import httpx

from baton.errors import ProviderError
from baton.providers.http_errors import MAX_RETRY_AFTER, transport_error
from baton.providers.retry_notice import RetryNotice, announce

log = logging.getLogger(__name__)

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


class StreamBroken(ProviderError):
    """The stream failed after events had reached the caller.

    What the caller received (text deltas, finished items) is partial output of
    an answer that will not be completed; it is not retried.
    """

    partial = True


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = MAX_RETRY_AFTER
    sleep: Sleep = field(default=asyncio.sleep, repr=False)
    jitter: Callable[[], float] = field(default=random.random, repr=False)

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds before retry number `retry` (0-based): the server's wish, else full jitter."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        return self.jitter() * min(self.max_delay, self.base_delay * (2.0**retry))


def _as_provider_error(exc: ProviderError | httpx.TransportError, label: str) -> ProviderError:
    return exc if isinstance(exc, ProviderError) else transport_error(exc, label=label)


def _gave_up(err: ProviderError, retries: int) -> ProviderError:
    if retries == 0:
        return err
    plural = "retry" if retries == 1 else "retries"
    return ProviderError(
        f"{err.message} (gave up after {retries} {plural})",
        status=err.status,
        retryable=err.retryable,
        overflow=err.overflow,
        retry_after=err.retry_after,
        cause=err.cause,
    )


def _retry_delay(
    exc: ProviderError | httpx.TransportError,
    err: ProviderError,
    retries: int,
    policy: RetryPolicy,
) -> float:
    """Seconds before the next attempt after `exc` (as `err`), or raise: the error
    itself, or with how many retries were given up on, when it is not retried."""
    if not err.retryable or retries >= policy.max_retries:
        final = _gave_up(err, retries)
        if final is exc:
            raise exc
        raise final from exc
    return policy.delay(retries, err.retry_after)


async def _back_off(err: ProviderError, retries: int, delay: float, policy: RetryPolicy) -> None:
    log.warning("%s; retry %d/%d in %.1f s", err.message, retries, policy.max_retries, delay)
    announce(RetryNotice(retries, policy.max_retries, delay, err.message, err.status))
    await policy.sleep(delay)


async def retry_stream(
    attempt: Callable[[], AsyncIterator[T]], policy: RetryPolicy, *, label: str
) -> AsyncGenerator[T, None]:
    """Yield what `attempt()` yields, starting it afresh after a retryable failure.

    Retries happen only before the first item was yielded; a failure after that
    raises `StreamBroken`.
    """
    retries = 0
    while True:
        delivered = False
        stream = attempt()
        try:
            async for item in stream:
                delivered = True
                yield item
            return
        except (ProviderError, httpx.TransportError) as exc:
            err = _as_provider_error(exc, label)
            if delivered:
                raise StreamBroken(
                    f"the stream broke after partial output: {err.message}",
                    status=err.status,
                    overflow=err.overflow,
                    # An error the server reported keeps its cause; a stream that just
                    # stopped is a dropped connection.
                    cause=err.cause
                    if err.cause not in ("other", "timeout", "unreachable")
                    else "connection_dropped",
                ) from exc
            delay = _retry_delay(exc, err, retries, policy)
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        retries += 1
        await _back_off(err, retries, delay, policy)


async def retry_call(call: Callable[[], Awaitable[T]], policy: RetryPolicy, *, label: str) -> T:
    """`await call()`, retrying retryable failures with backoff."""
    retries = 0
    while True:
        try:
            return await call()
        except (ProviderError, httpx.TransportError) as exc:
            err = _as_provider_error(exc, label)
            delay = _retry_delay(exc, err, retries, policy)
        retries += 1
        await _back_off(err, retries, delay, policy)
