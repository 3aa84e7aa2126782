"""Hook specifications for Python plugins (pluggy, project name `baton`).

A plugin is a module or object with functions marked `@hookimpl` and named
after these specs. Each implementation may take any subset of the arguments
(`event`, `workspace`), may be `async def` or return an awaitable, and may
return the answer model, a dict of the same shape, or None (no answer).

Baton calls each implementation on its own, not through `pm.hook.<name>()`,
so that one failing plugin is recorded and skipped instead of aborting the
others, and so that every answer is attributed to the plugin that gave it.
Hook wrappers are therefore not supported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pluggy

from baton.hooks.events import (
    CompactedEvent,
    CompactingEvent,
    PreCompactEvent,
    ToolAfterEvent,
    ToolBeforeEvent,
)

PROJECT = "baton"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def baton_pre_compact(event: PreCompactEvent, workspace: Path) -> Any:
    """Before a compaction. Answer `PreCompactAnswer` (`{"shouldRun": true, "prompt": ...}`)
    to have the agent run one autonomous round with its full tool set first."""


@hookspec
def baton_compacting(event: CompactingEvent, workspace: Path) -> Any:
    """While the summary request is built. Answer `CompactingAnswer`: `context` lines are
    added to the summary instructions, `prompt` replaces them."""


@hookspec
def baton_compacted(event: CompactedEvent, workspace: Path) -> Any:
    """After the compaction record was committed. The answer is ignored."""


@hookspec
def baton_tool_before(event: ToolBeforeEvent, workspace: Path) -> Any:
    """Before a tool runs. Answer `ToolBeforeAnswer(deny="reason")` to stop it."""


@hookspec
def baton_tool_after(event: ToolAfterEvent, workspace: Path) -> Any:
    """After a tool ran, with its output. The answer is ignored."""
