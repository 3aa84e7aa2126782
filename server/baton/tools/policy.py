"""Messages and checks shared by the tools that change things (write, edit, bash).

The session refuses non-read-only tools in plan mode before calling them; the
tools check again so that a caller that forgets (a hook, a test, a future face)
still cannot change the workspace while the person is only planning. The
wording tells the model what to do instead, since it is shown to the model
verbatim.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from platformdirs import user_config_path, user_data_path

from baton.tools import git_runs
from baton.tools.base import ToolContext, ToolFailure, ToolResult

# Folders whose files decide what Baton, git or an editor runs (config, hooks, plugins,
# tasks, launch configurations). A change there always asks, whatever the permission
# setting or an earlier "Always allow" says, so the model cannot raise its own rights.
# Matched at any depth: a nested checkout or a sub-folder opened later is the same risk.
PROTECTED_FOLDERS = (".baton", ".git", ".vscode", ".idea")

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


def baton_user_dirs() -> list[Path]:
    """Baton's own settings and the trust record: never changed without asking."""
    return [user_config_path("baton", appauthor=False), user_data_path("baton", appauthor=False)]


def protected_reason(workspace: Path, tool: str, input: dict[str, Any]) -> str | None:
    """Why a change by `tool` must ask even when allowed, or None when it need not.

    Applies to the tools that change one file by path (write, edit); bash cannot be
    checked this way (a command can write anywhere), which is why it asks by default.
    """
    path = input.get("path")
    if tool not in ("write", "edit") or not isinstance(path, str) or not path:
        return None
    return protected_path_reason(workspace, Path(path), input)


def _inside(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def protected_path_reason(
    workspace: Path, path: Path, input: dict[str, Any] | None = None
) -> str | None:
    """`path` (absolute or relative to `workspace`) as the literal name and its real path
    (a symlink to .git is .git) checked against the protected folders, and against what
    decides what git runs (`baton.tools.git_runs`; `input` is the write or edit, for
    package.json's hook keys)."""
    root = Path(os.path.realpath(workspace))
    literal = Path(os.path.normpath(workspace / path))
    real = Path(os.path.realpath(literal))
    for folder in baton_user_dirs():
        own = Path(os.path.realpath(folder))
        if real == own or own in real.parents:
            return (
                f"{path} is in Baton's own settings folder ({folder}); changes there always "
                "ask, even after Always allow"
            )
    if not (_inside(root, real) or _inside(Path(os.path.normpath(workspace)), literal)):
        # Only an additional directory the person allowed gets here (the sandbox refuses
        # the rest): a change outside the workspace is never taken for granted.
        return (
            f"{path} is outside the workspace, in an additional directory; changes there "
            "always ask, even after Always allow"
        )
    names: list[tuple[str, ...]] = []
    for candidate in (literal, real):
        try:
            parts = candidate.relative_to(root).parts
        except ValueError:
            try:
                parts = candidate.relative_to(workspace).parts
            except ValueError:
                continue
        names.append(parts)
        for part in parts:
            if part.casefold() in PROTECTED_FOLDERS:
                return (
                    f"{path} is inside {part}/, which decides what Baton, git or the editor "
                    "runs; changes there always ask, even after Always allow"
                )
    return git_runs.reason(workspace, path, names, real, input or {})
