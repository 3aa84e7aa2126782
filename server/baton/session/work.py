"""One piece of work on a session, as `SessionActivity.admit` takes it (activity.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

# "turn": any turn; "steps": a step-by-step build; "compaction": a manual compaction, a
# fresh-context start, or compactions asked while other work ran.
WorkKind = Literal["turn", "steps", "compaction"]


@dataclass(frozen=True)
class Work:
    """One piece of work to admit on a session."""

    kind: WorkKind
    # Why the lease is held (shown to another process that finds the session busy).
    purpose: str
    # Makes the coroutine the work's task runs; called once `prepare` has succeeded.
    run: Callable[[], Awaitable[Any]]
    # Runs under the lease before the task starts; raising refuses the work.
    prepare: Callable[[], None] | None = None
    # Called with the task when it has ended, first of the end callbacks.
    ended: Callable[[asyncio.Task[Any]], None] | None = None
    # Called with the task's result when it ended well, before the session can be given
    # to anything else (a fresh approval's build turn).
    then: Callable[[Any], None] | None = None
    # Called when the work, offered as a follow-up, could not be admitted.
    refused: Callable[[BaseException], None] | None = None
