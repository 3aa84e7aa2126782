"""Baton's own slash commands, the same names in every face.

Each face runs them on its own operations (ACP: `baton.faces.acp.commands`; the sidebar:
the methods behind its buttons); a skill or command file of the same name never
replaces one of them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    hint: str | None  # the argument's hint, None for a command without one


BUILTINS = (
    Command("compact", "Compact the conversation now", "what the summary should focus on"),
    Command("plan", "Switch to plan mode (optionally with a request to plan)", "what to plan"),
    Command(
        "approve",
        "Approve the plan, switch to build mode and start building",
        "`fresh`: build in a fresh context (the plan, the ledger and your requests only);"
        " `steps`: each step in a fresh child session, in order",
    ),
    Command("review", "Show the plan with line numbers, to annotate with /changes", None),
    Command(
        "changes",
        "Request changes to the plan, line by line",
        "`7: comment`, `5-6 replace: text`, `9 delete`; other lines: overall feedback",
    ),
    Command("undo", "Take back the last prompt and the file changes it made", None),
    Command("context", "Show what fills the model's context window", None),
    Command("new", "Start a new session", None),
)
BUILTIN_NAMES = frozenset(c.name for c in BUILTINS)
