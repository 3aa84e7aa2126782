"""`.baton/.gitignore`: Baton's working files stay out of `git status`.

Plans go to `.baton/plans/` by default: per-session working files that a
person who never asked for them should not see as untracked noise. So when
Baton creates its plans directory inside `.baton/`, it writes a `.gitignore`
there that ignores the plans and itself, unless one exists already. It is
written once, with the directory: a person who deletes it (to keep plans in
git) does not get it back. `.baton/`'s other files are the person's own
(`config.toml`, `instructions.md`, `plugins/`) and are not ignored. A plans
directory elsewhere (`[plans] dir = "docs/plans"`, how a team keeps plans in
git) gets no ignore file: there the person chose to see them.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from baton.tools.base import ToolFailure
from baton.tools.fileio import atomic_write

STATE_DIR = ".baton"
GITIGNORE = """\
# Written by Baton: its plans are per-session working files, kept out of `git status`.
# To keep plans in git (a team reviewing them), delete this file, or set
#   [plans]
#   dir = "docs/plans"
# in .baton/config.toml. config.toml, instructions.md and plugins/ are not ignored.
/.gitignore
/{plans}/
"""


def ensure_gitignore(workspace: Path, plans_directory: Path) -> Path | None:
    """Write `.baton/.gitignore` for a plans directory Baton just created inside
    `.baton/`; returns its path, or None when there is nothing to do."""
    state = workspace.resolve() / STATE_DIR
    try:
        inside = plans_directory.relative_to(state)
    except ValueError:
        return None
    if not inside.parts:
        return None
    target = state / ".gitignore"
    if target.exists() or target.is_symlink():
        return None
    # A failure to write it costs only untracked noise: never the plan.
    with contextlib.suppress(ToolFailure, OSError):
        atomic_write(workspace, target, GITIGNORE.format(plans=inside.as_posix()).encode())
        return target
    return None
