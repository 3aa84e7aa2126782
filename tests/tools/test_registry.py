"""The registry: specs offered per mode, and every model mistake as an error result."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from baton.tools.base import ToolContext, ToolFailure, ToolInput, ToolResult
from baton.tools.registry import ToolRegistry, clean_schema, default_registry


class EmptyInput(ToolInput):
    pass


class _Fixed:
    input_model: ClassVar[type[ToolInput]] = EmptyInput
    read_only: ClassVar[bool] = True
    description: ClassVar[str] = "test tool"

    def __init__(self) -> None:
        self.calls = 0


class PingTool(_Fixed):
    name: ClassVar[str] = "ping"

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.calls += 1
        return ToolResult(output="pong")


class FailingTool(_Fixed):
    name: ClassVar[str] = "fails"

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        raise ToolFailure("could not do it; try X")


class BrokenTool(_Fixed):
    name: ClassVar[str] = "boom"

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        raise RuntimeError("kaboom")


class PlanOnlyTool(_Fixed):
    name: ClassVar[str] = "plan_exit"
    modes: ClassVar[tuple[str, ...]] = ("plan",)

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        return ToolResult(output="ok", end_turn=True)


def _registry() -> ToolRegistry:
    registry = default_registry()
    for tool in (PingTool(), FailingTool(), BrokenTool(), PlanOnlyTool()):
        registry.register(tool)
    return registry


def test_specs_order_and_mode_filter() -> None:
    registry = ToolRegistry()
    registry.register(PingTool())
    for tool in default_registry().names():
        found = default_registry().get(tool)
        assert found is not None
        registry.register(found)
    registry.register(PlanOnlyTool())
    build = [spec.name for spec in registry.specs("build")]
    assert build == ["read", "write", "edit", "glob", "grep", "bash", "ping", "recall", "webfetch"]
    plan = [spec.name for spec in registry.specs("plan")]
    assert plan == ["read", "glob", "grep", "ping", "recall", "webfetch", "plan_exit"]


def test_specs_schemas_are_clean() -> None:
    specs = {spec.name: spec for spec in default_registry().specs("build")}
    read = specs["read"].parameters
    assert "title" not in read
    assert all("title" not in prop for prop in read["properties"].values())
    assert read["required"] == ["path"]
    assert read["properties"]["offset"]["type"] == "integer"
    assert "anyOf" not in read["properties"]["offset"]
    # Not sent (tokens in every request); an unknown field is still refused by the input
    # model, naming the fields (test_invalid_arguments... below).
    assert "additionalProperties" not in read
    for spec in specs.values():
        assert spec.description and len(spec.description) < 600


def test_clean_schema_keeps_a_field_named_title() -> None:
    schema = {
        "title": "X",
        "type": "object",
        "properties": {"title": {"title": "Title", "type": "string"}},
    }
    assert clean_schema(schema) == {"type": "object", "properties": {"title": {"type": "string"}}}


def test_duplicate_registration_is_an_error() -> None:
    registry = default_registry()
    with pytest.raises(ValueError, match="already registered"):
        registry.register(PingTool())
        registry.register(PingTool())
    registry.register(PingTool(), replace=True)
    assert "ping" in registry


@pytest.mark.asyncio
async def test_runs_a_tool(workspace: Path, ctx: Any) -> None:
    (workspace / "f.txt").write_text("hi\n")
    result = await _registry().run("read", '{"path": "f.txt"}', ctx)
    assert result.output == "1\thi"
    assert result.facts[0].path == "f.txt"


@pytest.mark.asyncio
async def test_empty_arguments_mean_an_empty_object(ctx: Any) -> None:
    registry = _registry()
    assert (await registry.run("ping", "", ctx)).output == "pong"
    assert (await registry.run("ping", "{}", ctx)).output == "pong"


@pytest.mark.asyncio
async def test_invalid_json(ctx: Any) -> None:
    result = await _registry().run("read", '{"path": "f.txt"', ctx)
    assert result.is_error
    assert result.output.startswith("arguments are not valid JSON:")
    assert "send a JSON object" in result.output
    listed = await _registry().run("read", '["f.txt"]', ctx)
    assert listed.is_error and "must be a JSON object" in listed.output


@pytest.mark.asyncio
async def test_unknown_and_missing_fields_are_named(ctx: Any) -> None:
    registry = _registry()
    extra = await registry.run("read", '{"path": "f.txt", "lines": 5}', ctx)
    assert (
        extra.is_error and "lines" in extra.output and "invalid arguments for read" in extra.output
    )
    missing = await registry.run("read", "{}", ctx)
    assert missing.is_error and "path: Field required" in missing.output
    wrong = await registry.run("read", '{"path": "f", "offset": 0}', ctx)
    assert wrong.is_error and "offset" in wrong.output


@pytest.mark.asyncio
async def test_unknown_tool_lists_available(ctx: Any) -> None:
    result = await _registry().run("delete_everything", "{}", ctx)
    assert result.is_error
    assert result.output.startswith("unknown tool delete_everything; available: read, write")


@pytest.mark.asyncio
async def test_plan_mode_refuses_changing_tools(workspace: Path, make_ctx: Any, gate: Any) -> None:
    ctx = make_ctx(mode="plan")
    registry = _registry()
    write = await registry.run("write", '{"path": "f.txt", "content": "x"}', ctx)
    assert write.is_error and write.output.startswith("write is not available in plan mode")
    bash = await registry.run("bash", '{"command": "touch x"}', ctx)
    assert bash.is_error and "bash is not available in plan mode" in bash.output
    assert gate.calls == []
    assert not (workspace / "f.txt").exists()
    assert not (workspace / "x").exists()
    assert (await registry.run("plan_exit", "{}", ctx)).end_turn


@pytest.mark.asyncio
async def test_plan_only_tool_refused_in_build(ctx: Any) -> None:
    result = await _registry().run("plan_exit", "{}", ctx)
    assert result.is_error and "not available in build mode" in result.output


@pytest.mark.asyncio
async def test_tool_failure_and_internal_error(ctx: Any) -> None:
    registry = _registry()
    failed = await registry.run("fails", "{}", ctx)
    assert failed.is_error and failed.output == "could not do it; try X"
    broken = await registry.run("boom", "{}", ctx)
    assert broken.is_error
    assert broken.output == "internal error in tool boom: RuntimeError: kaboom"


@pytest.mark.asyncio
async def test_sandbox_error_becomes_a_result(ctx: Any) -> None:
    result = await _registry().run("read", '{"path": "../etc/passwd"}', ctx)
    assert result.is_error
    assert result.output.startswith("path escapes the workspace: ../etc/passwd")
