"""The channel every face's updates go through, so that a `task` child's progress says so.

Whatever part of the core sends an update for a child session (its turn, its
compaction, a note), the face receives it with the child's parent, and the parent's
stream hears of the child's current tool as a `child` update. The faces' own channels
decide how to show a child's own progress (`send_update(..., parent_id=...)`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from baton import protocol as p
from baton.agent.events import ClientChannel, ProgressScope
from baton.labels import label

log = logging.getLogger(__name__)


@dataclass
class LiveChild:
    """A child that runs now, as its parent's stream shows it."""

    call_id: str
    parent_id: str
    child_id: str
    agent: str
    description: str
    status: p.ChildStatus = "running"
    current_tool: str | None = None
    # The child's tokens in all its calls (its row and card show them) ...
    tokens: int = 0
    # ... of which spent before this call (its budget counts this call only).
    tokens_before: int = 0
    step: p.ChildStep | None = None
    # Set when the child's token budget ended it (then its status is `max_steps`).
    budget_spent: bool = False

    def update(self) -> p.ChildUpdate:
        return p.ChildUpdate(
            call_id=self.call_id,
            child_id=self.child_id,
            # The model's (or a plan's) words, shown as a label on every face.
            agent=label(self.agent),
            description=label(self.description),
            status=self.status,
            current_tool=self.current_tool,
            tokens=self.tokens,
            step=self.step,
        )


class DelegationChannel:
    """Wraps a face's channel: labels each child's updates with its parent, and tells the
    parent's stream of each running child's current tool and tokens."""

    def __init__(self, inner: ClientChannel, parent_of: Callable[[str], str | None]) -> None:
        self.inner = inner
        self._parent_of = parent_of
        self._parents: dict[str, str | None] = {}
        self.live: dict[str, LiveChild] = {}

    def parent(self, session_id: str) -> str | None:
        if session_id in self.live:
            return self.live[session_id].parent_id
        if session_id not in self._parents:
            # A session's parent never changes once it exists: asked of the store once.
            try:
                self._parents[session_id] = self._parent_of(session_id)
            except Exception:
                # The update still goes out, unlabelled; asked again next time.
                log.warning(
                    "could not read the parent of session %s from the store",
                    session_id,
                    exc_info=True,
                )
                return None
        return self._parents[session_id]

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        parent = parent_id or self.parent(session_id)
        self.inner.send_update(session_id, update, parent_id=parent)
        child = self.live.get(session_id)
        if child is None:
            return
        if isinstance(update, p.ToolCallStarted) and update.name != child.current_tool:
            child.current_tool = update.name
            self.tell_parent(child)
        elif isinstance(update, p.UsageUpdate):
            child.tokens += (update.input_tokens or 0) + (update.output_tokens or 0)

    def tell_parent(self, child: LiveChild) -> None:
        parent = self.parent(child.parent_id)
        self.inner.send_update(child.parent_id, child.update(), parent_id=parent)

    def notify(self, method: str, params: p.WireModel) -> None:
        self.inner.notify(method, params)

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        return await self.inner.request_permission(params)

    def progress(self, title: str) -> ProgressScope:
        return self.inner.progress(title)
