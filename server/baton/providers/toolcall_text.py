"""Tool calls that a model wrote as text instead of structured `tool_calls`.

Small local models often know the tools but not the server's call syntax:
Qwen2.5-Coder writes fenced JSON `{"name": ..., "arguments": {...}}`
(docs/local-model.md, "How it works"), Hermes-style templates write
`<tool_call>{...}</tool_call>`, others a bare JSON object on its own line.
This module recognises those three shapes and nothing looser, because a false
positive runs a tool the model never meant to run. An object is a call only
when

* its name is one of the tools offered in this request,
* it has `arguments` (or `parameters`) that are an object, or a string holding
  a JSON object (or, inside a fence or a tag only, no arguments at all:
  `{"name": "plan_exit"}`), and no keys beyond `name`, `arguments`/`parameters`,
  `id`, `type` (so a printed tool definition, with its `description`, is not a call),
* it stands in a `<tool_call>` tag, a fenced block (```json or unlabelled), or
  alone on its own line(s). JSON inside a sentence is an example, not a call.

Everything else stays text, untouched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from baton.ids import new_id
from baton.providers.base import ToolCall

_HERMES = re.compile(r"<tool_call>(?P<body>.*?)(?:</tool_call>|\Z)", re.DOTALL)
_FENCE = re.compile(
    r"```[ \t]*(?P<lang>[\w+-]*)[ \t]*\n(?P<body>.*?)(?:\n[ \t]*```|\s*\Z)", re.DOTALL
)
FENCE_LANGS = frozenset({"", "json", "json5", "jsonc", "tool_call", "tool", "tool_code"})
_LINE_START_BRACE = re.compile(r"^[ \t]*\{", re.MULTILINE)
_ALLOWED_KEYS = frozenset({"name", "arguments", "parameters", "id", "type"})
_decoder = json.JSONDecoder()


def _new_call_id() -> str:
    return new_id("call")


@dataclass
class _Found:
    start: int
    end: int
    calls: list[tuple[str, str]]  # (name, arguments JSON)


def _arguments(obj: dict[str, Any], *, bare_name: bool) -> str | None:
    key = "arguments" if "arguments" in obj else "parameters"
    if key not in obj:
        # Small models write calls of argument-less tools (plan_exit, plan_done) as
        # just {"name": ...}. Taken as a call only inside a fence or a tag.
        return "{}" if bare_name and set(obj) <= {"name", "id", "type"} else None
    args = obj[key]
    if args is None:
        return "{}"
    if isinstance(args, str):
        try:
            decoded = json.loads(args)
        except ValueError:
            return None
        return args if isinstance(decoded, dict) else None
    if not isinstance(args, dict):
        return None
    if key == "parameters" and args.get("type") == "object" and "properties" in args:
        return None  # a JSON Schema: the model is describing a tool, not calling it
    return json.dumps(args, ensure_ascii=False)


def _as_call(
    obj: Any, names: Collection[str], *, bare_name: bool = False
) -> tuple[str, str] | None:
    if not isinstance(obj, dict):
        return None
    if (
        "name" not in obj
        and isinstance(obj.get("function"), dict)
        and set(obj)
        <= {
            "function",
            "id",
            "type",
        }
    ):
        obj = obj["function"]  # the OpenAI wire shape written out as text
    if not set(obj) <= _ALLOWED_KEYS:
        return None
    name = obj.get("name")
    if not isinstance(name, str) or name not in names:
        return None
    arguments = _arguments(obj, bare_name=bare_name)
    return None if arguments is None else (name, arguments)


def _json_values(text: str) -> list[Any] | None:
    """Every JSON value in `text`, which must hold nothing else but whitespace."""
    values: list[Any] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos == end:
            return values or None
        try:
            value, pos = _decoder.raw_decode(text, pos)
        except ValueError:
            return None
        values.append(value)


def _calls_in(body: str, names: Collection[str]) -> list[tuple[str, str]] | None:
    """The calls `body` consists of (objects, or lists of objects), or None if anything else.

    `body` is the inside of a fence or a `<tool_call>` tag: there a bare
    `{"name": ...}` is a call of a tool that takes no arguments.
    """
    values = _json_values(body)
    if values is None:
        return None
    calls: list[tuple[str, str]] = []
    for value in values:
        for obj in value if isinstance(value, list) else [value]:
            call = _as_call(obj, names, bare_name=True)
            if call is None:
                return None
            calls.append(call)
    return calls or None


def _overlaps(found: list[_Found], start: int, end: int) -> bool:
    return any(start < f.end and f.start < end for f in found)


def _find(text: str, names: Collection[str]) -> list[_Found]:
    found: list[_Found] = []
    for m in _HERMES.finditer(text):
        body = m.group("body").strip()
        fenced = _FENCE.fullmatch(body)
        calls = _calls_in(fenced.group("body") if fenced else body, names)
        if calls:
            found.append(_Found(m.start(), m.end(), calls))
    # Code blocks that are not calls (a Python dict, a config file) are never searched further.
    blocks: list[_Found] = []
    for m in _FENCE.finditer(text):
        if _overlaps(found, m.start(), m.end()):
            continue
        calls = None
        if m.group("lang").lower() in FENCE_LANGS:
            calls = _calls_in(m.group("body"), names)
        if calls:
            found.append(_Found(m.start(), m.end(), calls))
        else:
            blocks.append(_Found(m.start(), m.end(), []))
    for m in _LINE_START_BRACE.finditer(text):
        start = m.end() - 1
        if _overlaps(found, m.start(), start + 1) or _overlaps(blocks, m.start(), start + 1):
            continue
        try:
            value, end = _decoder.raw_decode(text, start)
        except ValueError:
            continue
        rest_of_line = text[end:].split("\n", 1)[0]
        if rest_of_line.strip() or _overlaps(found, start, end):
            continue  # prose follows on the same line: an inline example
        call = _as_call(value, names)
        if call:
            found.append(_Found(m.start(), end, [call]))
    found.sort(key=lambda f: f.start)
    return found


def parse_text_tool_calls(
    text: str,
    tool_names: Collection[str],
    *,
    new_call_id: Callable[[], str] = _new_call_id,
) -> tuple[str, list[ToolCall]]:
    """(text without the calls, the calls in order) for calls to `tool_names` written as text.

    When nothing is recognised the text comes back unchanged and the list is empty.
    """
    if not tool_names or not text:
        return text, []
    found = _find(text, tool_names)
    if not found:
        return text, []
    pieces: list[str] = []
    calls: list[ToolCall] = []
    pos = 0
    for f in found:
        pieces.append(text[pos : f.start])
        pos = f.end
        for name, arguments in f.calls:
            calls.append(ToolCall(call_id=new_call_id(), name=name, arguments=arguments))
    pieces.append(text[pos:])
    remaining = re.sub(r"\n{3,}", "\n\n", "".join(pieces)).strip()
    return remaining, calls
