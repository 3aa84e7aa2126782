"""Whether a tool call may run: the configured policy, the session's grants, the dialog.

A policy of "deny" refuses unasked and "allow" allows unasked, except on a
protected path (.baton, .git, ...), which always asks and is never offered an
"Always allow". Otherwise the client is asked (`session/request_permission`)
with the options the grants offer; an autonomous round's request may time out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from baton import protocol as p
from baton.agent.events import ClientChannel
from baton.agent.grants import permission_category
from baton.agent.state import SessionState
from baton.config import Settings
from baton.tools.base import Allowed
from baton.tools.policy import protected_reason

log = logging.getLogger(__name__)

# The tools whose answer may carry the person's version of the file.
EDITABLE_TOOLS = frozenset({"write", "edit"})


class Asker(Protocol):
    """The turn a permission request is made in, as the dialog sees it (`Turn`)."""

    @property
    def permission_timeout(self) -> float | None:
        """How long the request may wait (an autonomous round); None: as long as it takes."""
        ...

    def stop_after_step(self, reason: str) -> None: ...


class PermissionDialog:
    def __init__(
        self, workspace: Path, settings: Callable[[], Settings], channel: ClientChannel
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self.channel = channel

    async def ask(
        self,
        state: SessionState,
        tool: str,
        tool_call_id: str,
        input: dict[str, Any],
        diff: str | None = None,
        *,
        turn: Asker | None = None,
    ) -> bool | Allowed:
        """True (or `Allowed`, carrying the person's version of a write/edit) when `tool`
        may run with `input` now."""
        category = permission_category(tool)
        policy = getattr(self.settings().permissions, category, "ask")
        if policy == "deny":
            return False
        reason = protected_reason(self.workspace, tool, input)
        # An "Always allow" holds in the mode it was given in (a child runs in its parent's).
        grants = state.grants.in_mode(state.row.mode)
        if reason is None and (policy == "allow" or grants.covers(self.workspace, tool, input)):
            return True
        options = [p.PermissionOption(option_id="allow_once", kind="allow_once", name="Allow once")]
        if reason is None:
            options.extend(grants.options(self.workspace, tool, input))
        options.append(
            p.PermissionOption(option_id="reject_once", kind="reject_once", name="Reject")
        )
        params = p.PermissionRequestParams(
            session_id=state.id,
            tool_call=p.PermissionToolCall(tool_call_id=tool_call_id, name=tool, input=input),
            options=options,
            diff=diff,
            reason=reason,
            # A `task` child's request names its parent and agent.
            parent_id=state.row.parent_id,
            agent=state.row.agent,
        )
        answer = await self._answer(params, turn)
        if answer is None or answer.outcome == "cancelled":
            return False
        assert isinstance(answer.outcome, p.SelectedOutcome)
        chosen = answer.outcome.option_id
        if chosen == "allow_once":
            allowed = True
        elif chosen not in {o.option_id for o in options if o.kind == "allow_always"}:
            # Not offered: an "always" answer to a protected path (a client that ignores
            # the options) counts as once; anything else is a rejection.
            allowed = chosen.startswith("allow_always")
        else:
            allowed = grants.grant(self.workspace, chosen, tool, input)
        return _with_edits(allowed, tool, answer.outcome.edited_content)

    async def _answer(
        self, params: p.PermissionRequestParams, turn: Asker | None
    ) -> p.PermissionResponse | None:
        timeout = turn.permission_timeout if turn is not None else None
        if timeout is None:
            return await self.channel.request_permission(params)
        try:
            return await asyncio.wait_for(self.channel.request_permission(params), timeout)
        except TimeoutError:
            assert turn is not None
            turn.stop_after_step(
                f"the permission request for {params.tool_call.name} was not answered"
                f" within {timeout:g} s"
            )
            return None


def _with_edits(allowed: bool, tool: str, edited: str | None) -> bool | Allowed:
    """The gate's answer: the person's edited version rides along with a yes to a write or
    edit; with a rejection, or for any other tool, it is ignored (nothing it says runs)."""
    if edited is None:
        return allowed
    if not allowed:
        log.info("permission answer for %s: editedContent given with a rejection, ignored", tool)
        return False
    if tool not in EDITABLE_TOOLS:
        log.warning("permission answer for %s: editedContent is only for write/edit, ignored", tool)
        return True
    return Allowed(edited_content=edited)
