"""How the core talks back to whoever drives it (the LSP face, the CLI, tests).

The core never imports pygls: it calls a `ClientChannel`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol, TypeAlias

from baton import protocol as p


class ProgressReporter(Protocol):
    def __call__(self, message: str, percentage: int | None = None) -> None: ...


# Used as `async with channel.progress(title) as report: report("phase", 40)`.
ProgressScope: TypeAlias = AbstractAsyncContextManager[ProgressReporter]


class ClientChannel(Protocol):
    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        """A `baton/session/update` notification; `parent_id` when `session_id` is a
        `task` child (its own progress)."""
        ...

    def notify(self, method: str, params: p.WireModel) -> None:
        """Any other server → client notification (plan didChange/show)."""
        ...

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        """Ask the person; None when the client cannot or did not answer."""
        ...

    def progress(self, title: str) -> ProgressScope:
        """Work-done progress for long operations (compaction), when the client supports it."""
        ...


class NullChannel:
    """Drops everything and answers no permission request (nothing runs that needs one)."""

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        pass

    def notify(self, method: str, params: p.WireModel) -> None:
        pass

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        return None

    def progress(self, title: str) -> ProgressScope:
        return _no_progress()


@asynccontextmanager
async def _no_progress() -> AsyncIterator[ProgressReporter]:
    def report(message: str, percentage: int | None = None) -> None:
        pass

    yield report


def no_progress() -> ProgressScope:
    return _no_progress()
