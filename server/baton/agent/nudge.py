"""Look before answering: one nudge in a turn for a model that answers without looking.

A small model asked "where is `chunked` defined?" often answers from memory, at
once and wrongly, though the instructions say to look first. So when a turn's
model step ends it without any tool call, and

- `agent.nudgeNoTool` is on (the default),
- no tool was called earlier in the turn and no nudge was sent in it,
- the turn answers the person's own prompt, which looks like a question about
  the code or an instruction to change it (`looks_like_code_question`: "where
  is `chunked` defined?", "add a docstring to `chunked`"),
- and the workspace has files to look at,

Baton appends one short note (`nudge_text`: `prompts.NUDGE_NO_TOOL`, or for an
instruction `prompts.NUDGE_NO_CHANGE`, naming what the prompt names in backticks, stored as a `context` message, so it is in the
history the model is sent from then on and in what `baton/session/load`
replays) and runs one more step, in which a tool call is required
(`tool_choice: "required"`; for llama.cpp, which does not enforce that for
every chat template, a JSON schema of the tools' calls): measured on the local
1.5B model, the words alone were ignored in 15 of 16 nudged tasks. After that
step the model is free again; the nudge is a hint, never a loop.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from baton.agent import prompts
from baton.agent.state import SessionState
from baton.config import Settings

# Words that open a question or a request to find something out.
ASKING = frozenset(
    {
        "where",
        "what",
        "whats",
        "how",
        "why",
        "which",
        "who",
        "when",
        "is",
        "are",
        "does",
        "do",
        "did",
        "can",
        "could",
        "should",
        "explain",
        "describe",
        "find",
        "locate",
        "show",
        "list",
        "summarize",
        "summarise",
        "tell",
        "plan",
        "review",
        "check",
        "read",
        "look",
    }
)
# Words that open an instruction to change the code: the model should look at what it
# changes (and then change it), not write new code from memory into its answer.
CHANGING = frozenset(
    {
        "add",
        "append",
        "insert",
        "change",
        "fix",
        "rename",
        "refactor",
        "implement",
        "write",
        "rewrite",
        "update",
        "remove",
        "delete",
        "replace",
        "move",
        "make",
        "create",
        "edit",
        "modify",
        "document",
        "convert",
        "improve",
        "optimize",
        "optimise",
        "simplify",
        "extract",
        "split",
        "merge",
        "clean",
        "annotate",
        "type",
        "tick",
    }
)
# Words a request may start with before its verb ("please add ...", "now fix ...").
LEAD_IN = frozenset({"please", "now", "then", "also", "and", "so", "ok", "okay", "pls"})
# Words that say the question is about the code.
CODE_WORDS = frozenset(
    {
        "code",
        "codebase",
        "source",
        "project",
        "repo",
        "repository",
        "workspace",
        "file",
        "files",
        "module",
        "modules",
        "package",
        "function",
        "functions",
        "class",
        "classes",
        "method",
        "methods",
        "variable",
        "constant",
        "defined",
        "define",
        "definition",
        "declared",
        "implemented",
        "implementation",
        "return",
        "returns",
        "argument",
        "arguments",
        "parameter",
        "parameters",
        "option",
        "options",
        "signature",
        "called",
        "calls",
        "import",
        "imports",
        "test",
        "tests",
        "bug",
        "error",
        "exception",
        "raise",
        "raises",
        "docstring",
        "docstrings",
        "comment",
        "comments",
        "readme",
    }
)
# Something that names code: `backticks`, a call `f(`, a path or file name, an identifier
# with an underscore or in camelCase, a keyword argument `strict=True`.
CODE_MARKER = re.compile(
    r"`[^`\n]+`"
    r"|\b\w+\("
    r"|\b[\w.-]+/[\w./-]+"
    r"|\b\w+\.(?:py|pyi|js|jsx|ts|tsx|rs|go|java|c|h|cc|cpp|hpp|rb|md|toml|json|ya?ml|cfg|ini|sh)\b"
    r"|\b[a-z]+_[a-z0-9_]+\b"
    r"|\b[a-z]+[A-Z]\w*\b"
    r"|\b\w+=\w+"
)
# Entries of the workspace that do not count as files to look at.
NOT_FILES = frozenset({".baton", ".git"})


def _opening_word(words: list[str]) -> str | None:
    """The prompt's first word after a lead-in such as "please"."""
    return next((word for word in words if word not in LEAD_IN), None)


def _about_code(text: str, words: list[str]) -> bool:
    return CODE_MARKER.search(text) is not None or not CODE_WORDS.isdisjoint(words)


def looks_like_change_request(text: str) -> bool:
    """Whether a prompt tells the agent to change the code: it opens with a verb such as
    "add", "fix", "rename", "document" (after "please", "now", ...) and names code or
    speaks of it."""
    words = re.findall(r"[a-z]+", text.lower())
    return _opening_word(words) in CHANGING and _about_code(text, words)


def looks_like_code_question(text: str) -> bool:
    """Whether a prompt asks about the code or tells the agent to change it: a question
    (a `?`, or it opens with a question word or a request such as "explain", "find",
    "plan") or an instruction (`looks_like_change_request`), naming code or speaking
    of it. Either way the answer needs a look at the workspace first."""
    words = re.findall(r"[a-z]+", text.lower())
    if not words:
        return False
    opening = _opening_word(words)
    asks = "?" in text or opening in ASKING or opening in CHANGING
    return asks and _about_code(text, words)


def workspace_has_files(workspace: Path) -> bool:
    """Whether there is anything to look at (Baton's own `.baton` and `.git` aside)."""
    try:
        with os.scandir(workspace) as entries:
            return any(entry.name not in NOT_FILES for entry in entries)
    except OSError:
        return False


def turn_prompt(state: SessionState) -> str | None:
    """The person's prompt the running turn answers, or None when the turn answers
    something else (a plan approval, feedback, the continue after a compaction)."""
    for message in reversed(state.messages):
        if message.role == "user":
            return message.text() if message.kind == "prompt" else None
    return None


_BACKTICKED = re.compile(r"`([^`\s]{1,60})`")


def nudge_text(prompt: str) -> str:
    """The nudge for a turn answering `prompt` (a question, or an instruction to change
    the code): what to search for, when it names it."""
    base = prompts.NUDGE_NO_CHANGE if looks_like_change_request(prompt) else prompts.NUDGE_NO_TOOL
    names = list(dict.fromkeys(_BACKTICKED.findall(prompt)))[:3]
    if not names:
        return base
    shown = ", ".join(f"`{name}`" for name in names)
    return base + "\n" + prompts.NUDGE_LOOK_FOR.format(names=shown)


def nudge_possible(prompt: str, workspace: Path, settings: Settings) -> bool:
    """Whether a turn answering the person's `prompt` gets the nudge if its model step
    answers without a tool call (what `baton run` needs to know before the answer)."""
    return (
        settings.agent.nudge_no_tool
        and looks_like_code_question(prompt)
        and workspace_has_files(workspace)
    )


def should_nudge(state: SessionState, workspace: Path, settings: Settings) -> bool:
    """Whether a model step that just ended the turn without any tool call gets the nudge
    (the caller checks that no tool was called and no nudge was sent in the turn)."""
    prompt = turn_prompt(state)
    return prompt is not None and nudge_possible(prompt, workspace, settings)
