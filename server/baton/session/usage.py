"""What the provider reported of a session's model requests, summed (`baton/session/load`,
the exported transcript)."""

from __future__ import annotations

from baton import protocol as p
from baton.agent.state import SessionState


def usage_totals(state: SessionState) -> p.SessionUsage:
    """The provider's reported tokens summed over the session's model requests."""
    total = p.SessionUsage()
    for message in state.messages:
        usage = message.meta.get("usage")
        if not isinstance(usage, dict):
            continue
        total.requests += 1
        total.input_tokens += int(usage.get("input") or 0)
        total.cached_tokens += int(usage.get("cached") or 0)
        total.output_tokens += int(usage.get("output") or 0)
    return total
