"""The tools' descriptions for a small context window (the compact system prompt)."""

from __future__ import annotations

# Tool descriptions for a small window: tool name -> (description, {field: description}).
# A compact spec lists the tool's required fields and the optional ones named here; a
# tool not named here (an MCP server's) keeps its full description.
COMPACT_TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "read": ("Read a text file as numbered lines.", {"offset": "1-based.", "limit": ""}),
    "write": ("Create a file or replace its whole content.", {}),
    "edit": (
        "Replace old_string, exact text that occurs once in the file, with new_string. "
        "Read the file first.",
        {},
    ),
    "glob": ("Find files by path pattern, e.g. `**/*.py`.", {}),
    "grep": (
        "Regex search of file contents. Returns `path:line: text`.",
        {"path": "", "include": 'e.g. "*.py"'},
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
    "webfetch": ("Fetch a URL as markdown; asks the person.", {}),
    "question": (
        "Ask the person a question with 2-6 options.",
        {"options": "[{label, description?}]", "multiple": "", "allow_text": ""},
    ),
    "diagnostics": ("The editor's errors and warnings for a file, or all files.", {"path": ""}),
    "task": (
        "Run a child agent on `prompt` in a fresh context (it sees nothing else); get back "
        "one bounded result. Agents: explore, plan, build.",
        {"resume": "A child's session id, to continue it."},
    ),
}
