"""The plan block's seam: what the context builder asks of the plan feature.

The plan feature (`baton.plan`) implements `PlanSource`; the agent loop only needs the
block's text and the version it shows (`PlanBlock`, in the view), so it depends on this protocol, not on the plan
feature.
"""

from __future__ import annotations

from typing import Protocol

from baton.agent.state import PlanBlock, SessionState, View


class PlanSource(Protocol):
    """What the plan feature contributes to the model's view (the context builder's
    seam; PlanContext below)."""

    def block(self, state: SessionState, view: View | None = None) -> PlanBlock | None:
        """The plan block (current text re-read from disk), or None when there is no plan.
        Shown after a compaction's checkpoint (of `view`, else the session's), as it was
        at the first request built."""
        ...
