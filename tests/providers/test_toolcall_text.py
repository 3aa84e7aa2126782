"""Tool calls written as text: recognised shapes, and the many things that are not calls."""

from __future__ import annotations

import itertools
import json

import pytest

from baton.providers.base import ToolCall
from baton.providers.toolcall_text import parse_text_tool_calls

NAMES = {"read", "bash", "plan_show", "edit"}


def parse(text: str) -> tuple[str, list[tuple[str, dict[str, object]]]]:
    counter = itertools.count(1)
    remaining, calls = parse_text_tool_calls(text, NAMES, new_call_id=lambda: f"t{next(counter)}")
    return remaining, [(c.name, json.loads(c.arguments)) for c in calls]


def test_qwen_fenced_json() -> None:
    text = 'Let me check.\n```json\n{"name": "read", "arguments": {"path": "a.py"}}\n```\n'
    assert parse(text) == ("Let me check.", [("read", {"path": "a.py"})])


def test_unlabelled_fence_and_parameters_key() -> None:
    text = '```\n{"name": "bash", "parameters": {"command": "ls -la"}}\n```'
    assert parse(text) == ("", [("bash", {"command": "ls -la"})])


def test_hermes_tags_several_calls_in_order() -> None:
    text = (
        "<tool_call>\n"
        '{"name": "read", "arguments": {"path": "a.py"}}\n'
        "</tool_call>\n"
        "<tool_call>\n"
        '{"name": "read", "arguments": {"path": "b.py"}}\n'
        "</tool_call>"
    )
    assert parse(text) == ("", [("read", {"path": "a.py"}), ("read", {"path": "b.py"})])


def test_hermes_tag_cut_off_before_closing() -> None:
    text = 'Sure.\n<tool_call>\n{"name": "plan_show", "arguments": {}}'
    assert parse(text) == ("Sure.", [("plan_show", {})])


def test_hermes_tag_with_fenced_body() -> None:
    text = '<tool_call>\n```json\n{"name": "read", "arguments": {"path": "x"}}\n```\n</tool_call>'
    assert parse(text) == ("", [("read", {"path": "x"})])


def test_bare_json_on_its_own_line() -> None:
    text = 'I will run the tests.\n{"name": "bash", "arguments": {"command": "pytest -q"}}'
    assert parse(text) == ("I will run the tests.", [("bash", {"command": "pytest -q"})])


def test_bare_multi_line_json() -> None:
    text = '{\n  "name": "edit",\n  "arguments": {\n    "path": "a.py",\n    "old_string": "}",\n    "new_string": "{"\n  }\n}\nDone.'
    assert parse(text) == (
        "Done.",
        [("edit", {"path": "a.py", "old_string": "}", "new_string": "{"})],
    )


def test_arguments_as_a_json_string_are_kept_as_written() -> None:
    text = '{"name": "read", "arguments": "{\\"path\\": \\"a.py\\"}"}'
    remaining, calls = parse_text_tool_calls(text, NAMES)
    assert remaining == ""
    assert [(c.name, c.arguments) for c in calls] == [("read", '{"path": "a.py"}')]


def test_list_of_calls_in_one_fence() -> None:
    text = (
        "```json\n"
        '[{"name": "read", "arguments": {"path": "a"}}, {"name": "read", "arguments": {"path": "b"}}]\n'
        "```"
    )
    assert parse(text) == ("", [("read", {"path": "a"}), ("read", {"path": "b"})])


def test_openai_wire_shape_written_as_text() -> None:
    text = '```json\n{"type": "function", "function": {"name": "read", "arguments": "{\\"path\\": \\"a\\"}"}}\n```'
    assert parse(text) == ("", [("read", {"path": "a"})])


def test_argument_less_call_in_a_fence_or_tag() -> None:
    assert parse('```json\n{"name": "plan_show"}\n```') == ("", [("plan_show", {})])
    assert parse('<tool_call>{"name": "plan_show"}</tool_call>') == ("", [("plan_show", {})])


def test_calls_get_fresh_ids() -> None:
    text = (
        '{"name": "read", "arguments": {"path": "a"}}\n{"name": "read", "arguments": {"path": "b"}}'
    )
    _, calls = parse_text_tool_calls(text, NAMES)
    assert len(calls) == 2
    assert all(isinstance(c, ToolCall) and c.call_id.startswith("call_") for c in calls)
    assert calls[0].call_id != calls[1].call_id


NOT_CALLS = [
    pytest.param("Just an answer, no tools needed.", id="prose"),
    pytest.param('```json\n{"name": "baton", "version": "0.1.0"}\n```', id="package-json"),
    pytest.param('```json\n{"name": "delete_everything", "arguments": {}}\n```', id="unknown-name"),
    pytest.param(
        'You could call it like {"name": "read", "arguments": {"path": "a.py"}} to read a file.',
        id="inline-example-in-prose",
    ),
    pytest.param(
        'The call {"name": "read", "arguments": {"path": "a.py"}}\nwould read it.',
        id="json-sharing-a-line-with-prose",
    ),
    pytest.param(
        '```python\nx = {"name": "read", "arguments": {"path": "a.py"}}\n```', id="python-block"
    ),
    pytest.param(
        '```python\nconfig = (\n{"name": "read", "arguments": {"path": "a.py"}}\n)\n```',
        id="dict-line-inside-python-block",
    ),
    pytest.param('{"name": "read"}', id="no-arguments"),
    pytest.param('{"name": "read", "arguments": ["a.py"]}', id="arguments-not-an-object"),
    pytest.param('{"name": "bash", "arguments": "ls -la"}', id="arguments-string-not-json"),
    pytest.param(
        '{"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}',
        id="tool-definition",
    ),
    pytest.param(
        '{"name": "read", "parameters": {"type": "object", "properties": {"path": {}}}}',
        id="schema-as-parameters",
    ),
    pytest.param('{"name": "read", "arguments": {"path": "a.py"}', id="unterminated-json"),
    pytest.param('{"name": "read", "arguments": {"path": "a.py"}, "why": "x"}', id="extra-key"),
    pytest.param("<tool_call>\nnot json at all\n</tool_call>", id="tag-without-json"),
    pytest.param('{"name": 5, "arguments": {}}', id="name-not-a-string"),
]


@pytest.mark.parametrize("text", NOT_CALLS)
def test_text_that_is_not_a_call_stays_exactly_as_written(text: str) -> None:
    assert parse_text_tool_calls(text, NAMES) == (text, [])


def test_nothing_is_parsed_without_offered_tools() -> None:
    text = '{"name": "read", "arguments": {"path": "a"}}'
    assert parse_text_tool_calls(text, []) == (text, [])


def test_call_beside_unrelated_code_block_leaves_the_block() -> None:
    text = (
        "Here is the config:\n"
        '```json\n{"debug": true}\n```\n'
        "Now reading the file.\n"
        '```json\n{"name": "read", "arguments": {"path": "cfg.json"}}\n```'
    )
    remaining, calls = parse(text)
    assert calls == [("read", {"path": "cfg.json"})]
    assert remaining == 'Here is the config:\n```json\n{"debug": true}\n```\nNow reading the file.'
