"""What `baton run` prints of a `task` child: its steps indented under its `task` call.

The parent's `child` updates say when a child starts and ends (and which step of a
plan it builds); the child's own updates (`parent_id` set) are its tool calls, each
a line indented under the call that started it. stdout keeps only the parent's
answer: a child's words reach the person through the parent's result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from baton import protocol as p
from baton.delegation.words import STATUS_WORDS
from baton.terminal_escape import visible

# Indent of a child's lines under its `task` call, and of a child's failure under them.
INDENT = "    "


@dataclass
class ChildLines:
    """The children of one `baton run`, by session id, and the lines each has had."""

    known: dict[str, p.ChildUpdate] = field(default_factory=dict)
    # A child's tool calls by id: its name (the run's changed-files check counts them).
    calls: dict[str, str] = field(default_factory=dict)

    def changed(self, update: p.ChildUpdate) -> list[str]:
        """The lines a parent's `child` update adds: one when it starts, one when it ends."""
        before = self.known.get(update.child_id)
        self.known[update.child_id] = update
        who = f"{visible(update.agent)} child"
        step = f"step {update.step.index} of {update.step.total}: " if update.step else ""
        if before is None and update.status == "running":
            return [f"  ↳ {step}{who}: {visible(update.description)}"]
        if update.status != "running" and (before is None or before.status == "running"):
            ended = STATUS_WORDS[update.status]
            return [f"  ↳ {step}{who} {ended} ({update.tokens:,} tokens)"]
        return []

    def label(self, child_id: str) -> str | None:
        """ "the explore child (find the TODOs)", for a permission prompt a child asks."""
        update = self.known.get(child_id)
        if update is None:
            return None
        return f"the {visible(update.agent)} child ({visible(update.description)})"

    def status(self, child_id: str, tool: str) -> str:
        update = self.known.get(child_id)
        agent = visible(update.agent) if update else "child"
        return f"{agent} child: running {visible(tool)}"


def nest_children(rows: list[p.SessionInfo]) -> list[tuple[p.SessionInfo, bool]]:
    """`baton sessions`' order: the rows as listed, each child moved under its parent
    (oldest child first); (row, whether it is a child). A child whose parent is not
    listed stays where it was."""
    ids = {row.session_id for row in rows}
    children: dict[str, list[p.SessionInfo]] = {}
    for row in rows:
        if row.parent_id is not None and row.parent_id in ids:
            children.setdefault(row.parent_id, []).append(row)
    out: list[tuple[p.SessionInfo, bool]] = []
    for row in rows:
        if row.parent_id is not None and row.parent_id in ids:
            continue
        out.append((row, False))
        kids = sorted(children.get(row.session_id, []), key=lambda child: child.created_at)
        out.extend((child, True) for child in kids)
    return out
