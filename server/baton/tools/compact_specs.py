"""The tools' descriptions for a small context window (the compact system prompt)."""

from __future__ import annotations

# Tool descriptions for a small window: tool name -> (description, {field: description}).
# A compact spec lists the tool's required fields and the optional ones named here; a
# tool not named here (an MCP server's) keeps its full description.
COMPACT_TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "read": ("Read a text file as numbered lines.", {"offset": "1-based.", "limit": ""}),
    "write": ("Create or overwrite a file.", {}),
    "edit": ("Replace old_string (exact, once in the file) with new_string.", {}),
    "glob": ("Find files by pattern, e.g. `**/*.py`.", {}),
    "grep": ("Regex search of file contents: `path:line: text`.", {"path": ""}),
    "bash": ("Run a shell command in the workspace.", {}),
    "recall": ("Get back hidden text by call_id or query.", {"call_id": "", "query": ""}),
    "plan_write": ("Write the plan: a goal, then `- [ ]` steps.", {}),
    "plan_edit": ("Replace exact text in the plan, e.g. tick a step.", {}),
    "plan_show": ("Show the plan to the person.", {}),
    "plan_exit": ("Submit the plan; your turn ends.", {}),
    "plan_done": ("Mark the plan done.", {}),
    "webfetch": ("Fetch a URL as markdown.", {}),
    "question": ("Ask the person a question with 2-6 options.", {"options": "[{label}]"}),
    "diagnostics": ("The editor's problems for a file, or all.", {"path": ""}),
    "task": ("Run a child agent on `prompt` (all it sees). Agents: explore, plan, build.", {}),
}
