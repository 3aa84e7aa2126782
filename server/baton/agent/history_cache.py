"""The context builder's converted history, kept on a session between requests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from baton.providers.base import Item


@dataclass
class HistoryCache:
    """The converted history, reused from step to step.

    A message whose tool calls all have results can no longer change, so the
    longest prefix of such messages is converted once and only newer messages
    are converted again; the cache resets when the view changes (a compaction,
    an undo, a revert). This keeps a step's cost independent of the session's
    length.
    """

    signature: tuple[Any, ...]
    stable_count: int = 0
    items: list[Item] = field(default_factory=list)
    history_tokens: int = 0
    tool_output_tokens: int = 0
    # The `<baton:requests>` block of this view: ((signature, usable window), text).
    requests: tuple[tuple[Any, int], str | None] | None = None
