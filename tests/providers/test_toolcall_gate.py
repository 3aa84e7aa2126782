"""The live side of text tool calls: calls are held back and dropped, everything else is shown."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from baton.providers.toolcall_gate import MAX_HELD_CHARS, ToolCallTextGate
from baton.providers.toolcall_text import parse_text_tool_calls

NAMES = {"read", "bash", "plan_show", "edit"}

FENCED_CALL = '```json\n{"name": "read", "arguments": {"path": "a.py"}}\n```\n'
TAGGED_CALL = '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>\n'
BARE_CALL = '{"name": "plan_show", "arguments": {}}\n'
MULTILINE_CALL = '{\n  "name": "edit",\n  "arguments": {"path": "a.py", "old_string": "}", "new_string": "{"}\n}\n'


def shown(pieces: list[str]) -> str:
    gate = ToolCallTextGate(NAMES)
    return "".join(gate.feed(p) for p in pieces) + gate.flush()


def cut(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


# Lines that are never calls: prose, code in other languages, JSON that is not a call.
NOT_CALLS = [
    "Here is what I found.\n",
    "The config lives in `config.toml`.\n",
    "```python\ndef f():\n    return {'name': 'read'}\n```\n",
    "```ts\nconst x = {\n  a: 1,\n};\n```\n",
    '```json\n{"name": "baton", "version": "1.0"}\n```\n',
    '{"name": "unknown_tool", "arguments": {}}\n',
    '{"name": "read", "arguments": {"path": "a"}} is how a call looks.\n',
    "{ int x = 1; }\n",
    "{foo} is a placeholder\n",
    "<tool_call>not json</tool_call>\n",
    "  indented line\n",
    "``inline`` code and a ` backtick\n",
    "<b>bold</b>\n",
    "\n",
    "{}\n",
]
CALLS = [FENCED_CALL, TAGGED_CALL, BARE_CALL, MULTILINE_CALL]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(NOT_CALLS), min_size=1, max_size=8),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_text_that_holds_no_call_is_shown_whole_however_it_is_cut(
    lines: list[str], cuts: list[int]
) -> None:
    text = "".join(lines)
    assert parse_text_tool_calls(text, NAMES)[1] == []
    assert shown(cut(text, cuts)) == text


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(NOT_CALLS + CALLS), min_size=1, max_size=8),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=12),
)
def test_calls_never_show_and_the_rest_does(lines: list[str], cuts: list[int]) -> None:
    text = "".join(lines)
    expected = "".join(line for line in lines if line not in CALLS)
    assert shown(cut(text, cuts)) == expected


def test_prose_before_a_call_shows_at_once_and_the_call_never_does() -> None:
    gate = ToolCallTextGate(NAMES)
    assert gate.feed("I'll read it first.\n") == "I'll read it first.\n"
    assert gate.feed(FENCED_CALL[:30]) == ""
    assert gate.feed(FENCED_CALL[30:]) == ""
    assert gate.feed("Then I'll summarise.") == "Then I'll summarise."
    assert gate.flush() == ""


def test_code_in_other_languages_streams_line_by_line() -> None:
    gate = ToolCallTextGate(NAMES)
    assert gate.feed("```python\n") == "```python\n"
    assert gate.feed("x = {\n") == "x = {\n"
    assert gate.feed("  'a': 1}\n```\n") == "  'a': 1}\n```\n"


def test_a_brace_that_cannot_start_a_call_is_released_at_once() -> None:
    gate = ToolCallTextGate(NAMES)
    assert gate.feed("{ i") == "{ i"
    assert gate.feed("nt x; }") == "nt x; }"


def test_an_unfinished_call_at_the_end_is_still_a_call() -> None:
    gate = ToolCallTextGate(NAMES)
    assert gate.feed('Sure.\n<tool_call>\n{"name": "plan_show", "arguments": {}}') == "Sure.\n"
    assert gate.flush() == ""


def test_a_json_block_that_is_not_a_call_appears_when_it_closes() -> None:
    gate = ToolCallTextGate(NAMES)
    block = '```json\n{"name": "baton"}\n'
    assert gate.feed(block) == ""
    assert gate.feed("```\n") == block + "```\n"


def test_a_very_long_block_is_shown_rather_than_held_forever() -> None:
    gate = ToolCallTextGate(NAMES)
    opened = '```json\n{"name": "read", "arguments": {"path": "'
    out = gate.feed(opened) + gate.feed("x" * (MAX_HELD_CHARS + 10))
    assert out.startswith(opened) and len(out) == len(opened) + MAX_HELD_CHARS + 10


def test_without_tool_names_nothing_is_a_call() -> None:
    gate = ToolCallTextGate(set())
    assert gate.feed(BARE_CALL) + gate.flush() == BARE_CALL
