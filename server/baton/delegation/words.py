"""How a child's status reads to the person, in every face that prints it."""

from __future__ import annotations

from baton import protocol as p

STATUS_WORDS: dict[p.ChildStatus, str] = {
    "running": "running",
    "done": "done",
    "failed": "failed",
    "cancelled": "cancelled",
    "max_steps": "stopped at its step limit",
}
