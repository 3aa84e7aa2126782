"""What one compaction is asked and knows (read-only), and what a strategy returns.

Shared by the runner (`engine.py`), the strategies (`native.py`, `server.py`) and
the summary calls (`summarise.py`), so none of them imports another to know it.
The job is prepared before the strategy runs and never changes while it runs; a
strategy answers with a `Candidate` (its view, what made it, its notes), which
the runner checks and commits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from baton import protocol as p
from baton.agent.compact_request import CompactRequest
from baton.agent.context import BuiltContext
from baton.agent.events import ProgressReporter
from baton.agent.state import SessionState, View
from baton.config import Settings
from baton.providers.base import Progress, Provider, Usage


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
__all__ = [
    "Candidate",
    "Choice",
    "CompactRequest",
    "CompactionHooks",
    "CompactionJob",
    "NoHooks",
    "Strategy",
]

Builder = Callable[[View, "int | None"], BuiltContext]
# Records a summary request's usage with the session's model requests.
UsageRecorder = Callable[[Usage, Provider], None]
# Shows the local model loading or reading a summary's prompt (minutes on a CPU).
ProgressShower = Callable[[Progress], None]


def _no_usage(usage: Usage, provider: Provider) -> None:
    return None


def _no_progress(progress: Progress) -> None:
    return None


@dataclass(frozen=True)
class CompactionJob:
    """Everything one compaction knows while it runs (prepared by the runner; read-only)."""

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
    hook_context: tuple[str, ...] = ()
    prompt_override: str | None = None
    # What was noted before the strategy ran (the request's, the strategy choice's).
    notes: tuple[str, ...] = ()
    ledger_text: str = ""
    ledger: p.Ledger = field(default_factory=p.Ledger)
    # The head lines of the ledger entries this compaction folds (shown whole until now):
    # the summary request names them, so the summary can carry their gist.
    ledger_leaving: tuple[str, ...] = ()
    # The view a native compaction starts from instead of the session's current one
    # (the server feature: a native view of the local history behind a server chain);
    # `before` is then what the model would be sent with it.
    base_view: View | None = None
    # The most the view after may hold once the budgets are reached (`planning.ceiling`:
    # the last view that was at its budgets), or None.
    ceiling: int | None = None

    def build(self, view: View, before_seq: int | None = None) -> BuiltContext:
        return self.builder(view, before_seq)


@dataclass(frozen=True)
class Candidate:
    """A strategy's answer: the view it offers and how it came to be."""

    view: View
    # The strategy that made the view (a server strategy that fell back: "native").
    author: p.Strategy
    # What made it, for "never bigger"'s message ("a summary", "pruning").
    made_by: str = "a summary"
    notes: tuple[str, ...] = ()
    # Summary model calls made (the notes report them too).
    summary_calls: int = 0
    # The summary statements the ledger contradicted (`claims.py`), as data.
    corrections: tuple[p.ClaimCorrection, ...] = ()
    # What the view was measured against when not the job's `before`: the local history
    # a native compaction behind a server chain started from (the chain's own size is a
    # guess from encrypted bytes, so "never bigger" and the record use this).
    before: BuiltContext | None = None


class Strategy(Protocol):
    """How a compaction produces the new view (native summary, server artifact, fresh)."""

    name: p.Strategy

    async def run(self, job: CompactionJob) -> Candidate: ...


@dataclass(frozen=True)
class Choice:
    """A strategy chooser's answer: the strategy, what to note about the choice, and
    the view to compact from when it is not the session's (the runner then measures
    `before` over it)."""

    strategy: Strategy
    notes: tuple[str, ...] = ()
    base_view: View | None = None
