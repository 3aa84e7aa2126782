"""The ledger's text as the model reads it, where the context builder needs to edit it."""

from __future__ import annotations

# The ledger's plan line starts with this (compaction/ledger.py writes it).
PLAN_LINE = "Plan: "


def without_plan_line(text: str) -> str:
    """A rendered ledger without its plan line, for a request whose plan block follows it
    (the block names the plan's path, status and version and holds every step's state)."""
    return "\n".join(line for line in text.split("\n") if not line.startswith(PLAN_LINE))
