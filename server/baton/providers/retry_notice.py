"""Who hears of a model request's retries while they wait.

A retry's backoff can last tens of seconds (a rate limit's `Retry-After`); the
person should see each one, its reason and its countdown, not only "Working…".
The provider does not know which session it serves, so the turn that streams
sets a listener for its own task (a context variable: concurrent turns of other
sessions each hear only their own retries)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryNotice:
    attempt: int  # 1 for the first retry
    max_retries: int
    delay: float  # seconds before it starts
    reason: str
    status: int | None


Listener = Callable[[RetryNotice], None]
_listener: ContextVar[Listener | None] = ContextVar("baton_retry_listener", default=None)


@contextmanager
def retries_reported_to(listener: Listener) -> Iterator[None]:
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def announce(notice: RetryNotice) -> None:
    """Tell the listener of the current task, if any; a failing listener never stops a retry."""
    listener = _listener.get()
    if listener is None:
        return
    with suppress(Exception):  # the retry matters more than its report
        listener(notice)
