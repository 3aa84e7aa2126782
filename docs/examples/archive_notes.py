"""A Baton plugin that keeps the agent's scratch notes across compactions.

Before each compaction it archives the current scratch notes (so the agent's
earlier notes are never overwritten and lost), then asks for a pre-compact
round in which the agent writes down, with its own tools, what it must not
forget. While the summary is written it asks the summariser to point at the
notes, and after the compaction it logs the record next to the archive.

Install: copy this file to <workspace>/.baton/plugins/archive_notes.py
(or publish it in a package under the `baton.plugins` entry-point group).
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from baton.hooks import hookimpl
from baton.hooks.events import (
    CompactedEvent,
    CompactingAnswer,
    CompactingEvent,
    PreCompactAnswer,
    PreCompactEvent,
)

SCRATCH = Path("notes") / "scratch.md"
ARCHIVE = Path(".baton") / "archive"


@hookimpl
def baton_pre_compact(event: PreCompactEvent, workspace: Path) -> PreCompactAnswer:
    scratch = workspace / SCRATCH
    if scratch.is_file():
        folder = workspace / ARCHIVE / event.session_id
        folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        shutil.copy2(scratch, folder / f"scratch-{stamp}.md")
    if event.trigger == "overflow":
        # The context is already over the window: a round could not even start.
        return PreCompactAnswer(should_run=False)
    return PreCompactAnswer(
        should_run=True,
        prompt=(
            f"The conversation is about to be compacted ({event.trigger}). Write your working "
            f"notes to {SCRATCH} with the write tool: the task, the decisions made, the exact "
            "values you still need and what is left to do. Then stop."
        ),
    )


@hookimpl
def baton_compacting(event: CompactingEvent) -> CompactingAnswer:
    return CompactingAnswer(context=[f"The agent's working notes are in {SCRATCH}; say so."])


@hookimpl
def baton_compacted(event: CompactedEvent, workspace: Path) -> None:
    record = event.compaction
    folder = workspace / ARCHIVE / event.session_id
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "compactions.log").open("a", encoding="utf-8") as log:
        log.write(
            f"{record.created_at} {record.compaction_id} {record.trigger} "
            f"{record.tokens_before} -> {record.tokens_after} tokens\n"
        )
