"""What a compaction is asked to do: its own module, because the session state holds
the requests that wait for a turn's next step (SessionState.pending_compactions)."""

from __future__ import annotations

from dataclasses import dataclass, field

from baton import protocol as p


@dataclass
class CompactRequest:
    trigger: p.Trigger
    instructions: str | None = None
    strategy: p.StrategySetting | None = None
    # Automatic compaction interrupted a turn that is still working.
    interrupted: bool = False
    # A fresh-context start (`FreshStrategy`): no summary, nothing but Baton's blocks.
    fresh: bool = False
    # Problems hooks met while this compaction ran; they go into the record's notes.
    notes: list[str] = field(default_factory=list)
