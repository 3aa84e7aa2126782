"""MCP tool names, schemas and results, without a server."""

from __future__ import annotations

import base64

from mcp import types

from baton.mcp_servers.manager import MAX_NAME, _input_model, tool_name
from baton.mcp_servers.results import EMPTY, render_result
from baton.tools.registry import spec_of


def test_tool_names_are_prefixed_safe_and_unique() -> None:
    assert tool_name("github", "create_issue", taken=set()) == "github__create_issue"
    assert tool_name("fs", "read.file/v2", taken=set()) == "fs__read_file_v2"
    long = tool_name("srv", "x" * 100, taken=set())
    assert len(long) == MAX_NAME and long.startswith("srv__xxx")
    first = tool_name("fs", "a.b", taken=set())
    second = tool_name("fs", "a/b", taken={first})
    assert first == "fs__a_b" and second != first and second.startswith("fs__a_b_")


def test_the_server_schema_is_offered_and_any_arguments_pass() -> None:
    schema = {
        "type": "object",
        "title": "args",
        "properties": {"q": {"type": "string", "title": "Q"}},
        "required": ["q"],
    }
    model = _input_model(schema)
    args = model.model_validate({"q": "x", "limit": 3})
    assert args.model_dump() == {"q": "x", "limit": 3}

    class Fake:
        name = "srv__search"
        description = "Search."
        input_model = model
        read_only = True

    spec = spec_of(Fake())  # type: ignore[arg-type]
    assert spec.parameters == {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
    }
    assert _input_model({})().model_json_schema() == {"type": "object", "properties": {}}


def test_results_become_text_and_images_are_described() -> None:
    png = base64.b64encode(b"\x89PNG" + b"0" * 66).decode()
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="found 2"),
            types.ImageContent(type="image", data=png, mime_type="image/png"),
            types.ResourceLink(type="resource_link", uri="file:///a.txt", name="a.txt"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="file:///b.txt", text="bee"),
            ),
        ]
    )
    output, is_error = render_result(result)
    assert not is_error
    assert output.splitlines() == [
        "found 2",
        "[image: image/png, 70 bytes; not shown to the model]",
        "[resource link: file:///a.txt (a.txt)]",
        "[resource file:///b.txt]",
        "bee",
    ]
    structured = types.CallToolResult(content=[], structured_content={"n": 1})
    assert render_result(structured) == ('{\n  "n": 1\n}', False)
    failed = types.CallToolResult(
        content=[types.TextContent(type="text", text="no")], is_error=True
    )
    assert render_result(failed) == ("no", True)
    assert render_result(types.CallToolResult(content=[])) == (EMPTY, False)
