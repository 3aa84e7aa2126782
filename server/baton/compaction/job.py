"""What one compaction is asked and knows while it runs; the strategies' interface.

Shared by the runner (`engine.py`), the strategies (`native.py`, `server.py`) and
the summary calls (`summarise.py`), so none of them imports another to know it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from baton import protocol as p
from baton.compaction.compact_request import CompactRequest
from baton.config import Settings
from baton.context import BuiltContext
from baton.providers.base import Progress, Provider, Usage
from baton.session.events import ProgressReporter
from baton.session.state import SessionState, View


class CompactionHooks(Protocol):
    """The seams the hooks feature fills; with no hooks each is a no-op."""

    async def pre_compact(
        self, state: SessionState, request: CompactRequest
    ) -> list[p.PreCompactOutcome]: ...

    async def compacting(
        self, state: SessionState, request: CompactRequest
    ) -> tuple[list[str], str | None]: ...

    async def compacted(self, state: SessionState, record: p.CompactionRecord) -> None: ...


class NoHooks:
    async def pre_compact(
        self, state: SessionState, request: CompactRequest
    ) -> list[p.PreCompactOutcome]:
        return []

    async def compacting(
        self, state: SessionState, request: CompactRequest
    ) -> tuple[list[str], str | None]:
        return [], None

    async def compacted(self, state: SessionState, record: p.CompactionRecord) -> None:
        return None


# What the model would be sent with a view (only the messages before a seq, when given).
__all__ = ["CompactRequest", "CompactionHooks", "CompactionJob", "NoHooks", "Strategy"]

Builder = Callable[[View, "int | None"], BuiltContext]
# Records a summary request's usage with the session's model requests.
UsageRecorder = Callable[[Usage, Provider], None]
# Shows the local model loading or reading a summary's prompt (minutes on a CPU).
ProgressShower = Callable[[Progress], None]


def _no_usage(usage: Usage, provider: Provider) -> None:
    return None


def _no_progress(progress: Progress) -> None:
    return None


@dataclass
class CompactionJob:
    """Everything one compaction knows while it runs."""

    state: SessionState
    request: CompactRequest
    settings: Settings
    provider: Provider
    before: BuiltContext
    report: ProgressReporter
    builder: Builder
    # The provider summaries are asked of (`compaction.model`, else the session's).
    summary_provider: Provider | None = None
    record_usage: UsageRecorder = _no_usage
    show_progress: ProgressShower = _no_progress
    hook_context: list[str] = field(default_factory=list)
    prompt_override: str | None = None
    notes: list[str] = field(default_factory=list)
    ledger_text: str = ""
    ledger: p.Ledger = field(default_factory=p.Ledger)
    # Summary model calls made so far (the record's notes report them).
    summary_calls: int = 0
    # What made the candidate view, for "never bigger"'s message ("a summary", "pruning").
    made_by: str = "a summary"
    # The view a native compaction starts from instead of the session's current one
    # (the server feature: a native view of the local history behind a server chain).
    base_view: View | None = None

    def build(self, view: View, before_seq: int | None = None) -> BuiltContext:
        return self.builder(view, before_seq)


class Strategy(Protocol):
    """How a compaction produces the new view (native summary, server artifact, fresh)."""

    name: p.Strategy

    async def run(self, job: CompactionJob) -> View: ...
