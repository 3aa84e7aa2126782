"""Messages and checks shared by the tools that change things (write, edit, bash).

The session refuses non-read-only tools in plan mode before calling them; the
tools check again so that a caller that forgets (a hook, a test, a future face)
still cannot change the workspace while the person is only planning. The
wording tells the model what to do instead, since it is shown to the model
verbatim.
"""

from __future__ import annotations

from baton.tools.base import ToolContext, ToolFailure, ToolResult

_PLAN_MODE_HINTS = {
    "bash": "investigate with read, glob and grep, and record the commands to run in the plan "
    "with plan_edit",
}
_DEFAULT_HINT = "record the change in the plan with plan_edit"


def plan_mode_message(tool: str) -> str:
    """Why `tool` cannot run in plan mode and what the model should do instead."""
    return f"{tool} is not available in plan mode; {_PLAN_MODE_HINTS.get(tool, _DEFAULT_HINT)}"


def refuse_in_plan_mode(tool: str, ctx: ToolContext) -> None:
    """Raise ToolFailure when the session is in plan mode."""
    if ctx.mode == "plan":
        raise ToolFailure(plan_mode_message(tool))


def permission_denied(what: str) -> ToolResult:
    """The result of a permission the user (or the configuration) refused."""
    return ToolResult(
        output=(
            f"permission denied: {what} was not allowed, so nothing was changed. "
            "Do not retry the same action; ask the user how to proceed."
        ),
        is_error=True,
    )
