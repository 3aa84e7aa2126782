"""The tools' descriptions for a small context window (the compact system prompt)."""

from __future__ import annotations

# Tool descriptions for a small window: tool name -> (description, {field: description}).
# A compact spec lists the tool's required fields and the optional ones named here; a
# tool not named here (an MCP server's) keeps its full description.
COMPACT_TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "read": (
        "Read a text file as numbered lines. Long files: use offset and limit.",
        {"offset": "First line to read (1-based).", "limit": "How many lines."},
    ),
    "write": ("Create a file or replace its whole content.", {}),
    "edit": (
        "Replace old_string, exact text that occurs once in the file, with new_string. "
        "Read the file first.",
        {},
    ),
    "glob": ("Find files by path pattern, e.g. `**/*.py`.", {}),
    "grep": (
        "Search file contents with a regular expression. Returns `path:line: text`.",
        {
            "path": "File or directory to search (default: all).",
            "include": 'Only files named like this, e.g. "*.py".',
        },
    ),
    "bash": ("Run a shell command in the workspace.", {}),
    "recall": (
        "Get back text that compaction hid: by the call_id its note names, or by query.",
        {"call_id": "", "query": ""},
    ),
    "plan_write": ("Write the whole plan: a goal, then steps as `- [ ] ...` lines.", {}),
    "plan_edit": ("Replace exact text in the plan, e.g. tick a step: `- [ ]` -> `- [x]`.", {}),
    "plan_show": ("Show the plan to the person.", {}),
    "plan_exit": ("Submit the plan for approval; your turn ends.", {}),
    "plan_done": ("Mark the plan complete once every step is done.", {}),
    "task": (
        "Run a child agent on `prompt` in a fresh context (it sees nothing else); get back "
        "one bounded result. Agents: explore, plan, build.",
        {"resume": "A child's session id, to continue it."},
    ),
}
