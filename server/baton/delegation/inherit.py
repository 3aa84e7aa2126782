"""What a `task` child takes from its parent: one rule for mode, grants and tools.

- **Mode.** A child runs in its parent's mode, set each time it runs (a resumed child
  takes the mode its parent is in now). A plan-mode session's children are in plan
  mode: what plan mode refuses the parent (`bash`, `write`, `edit`) is refused them,
  with plan mode's reason (a session offers the same tool list in every mode, so the
  prompt cache holds; the refusal is at the call). A parent that enters plan mode while a child runs holds that
  child to plan mode from its next call (`refusal`).
- **Grants.** A child shares its parent's "Always allow" answers, as they stand for
  the mode it runs in (`SessionGrants.in_mode`): an answer the person gave in build
  mode does not carry into a child that runs in plan mode, nor the other way round.
- **Directories.** A child reads (and, where the person trusted them, writes) the
  additional directories its parent may, never more.
- **Tools.** A child may run its agent's tools that its mode allows, never `task`
  (depth 1): the intersection, never more than either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.agent.state import SessionState
from baton.errors import BatonError
from baton.tools.policy import plan_mode_message

if TYPE_CHECKING:
    from baton.session.service import SessionService


def inherit(sessions: SessionService, parent: SessionState, child: SessionState) -> None:
    """Give `child` what it may take from `parent` before it runs: its mode and grants."""
    _follow(sessions, parent, child)
    child.grants = parent.grants
    child.read_roots = parent.read_roots
    child.write_roots = parent.write_roots


def refusal(sessions: SessionService, child: SessionState, tool: str) -> str | None:
    """Why `tool` may not run in `child` now (None: it may). A parent that entered plan
    mode while its child ran takes the child with it: from its next call the child is
    in plan mode, and a tool plan mode refuses is not run."""
    parent_id = child.row.parent_id
    if parent_id is None:
        return None
    try:
        parent = sessions.state(parent_id)
    except BatonError:
        return None  # the parent is gone (deleted): nothing to follow
    if parent.row.mode != "plan" or child.row.mode == "plan":
        return None
    _follow(sessions, parent, child)
    if tool in sessions.tools.names("plan"):
        return None
    return f"[not run: the parent session is in plan mode; {plan_mode_message(tool)}]"


def _follow(sessions: SessionService, parent: SessionState, child: SessionState) -> None:
    mode = parent.row.mode
    if child.row.mode != mode:
        sessions.store.update_session(child.id, mode=mode)
        child.row.mode = mode
