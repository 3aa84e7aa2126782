"""The tool registry: what the model is offered, and the one place tool calls are run.

`run` never raises for anything the model did wrong (bad JSON, unknown tool or
field, a tool refused in plan mode, a `ToolFailure`) nor for a bug in a tool:
each becomes an error `ToolResult` whose text tells the model what to do next,
so a turn always goes on. Only `asyncio.CancelledError` (the turn was
cancelled) propagates.

A tool may declare `modes: ClassVar[tuple[str, ...]]` (`ModalTool`; e.g.
`("plan",)` for plan_exit) to run only in those modes; without it, read-only tools run in
every mode and the others in build mode only. A session offers every tool in
every mode (the tool list is part of the provider's cached prefix) and a call
the mode forbids gets an error saying why.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

from pydantic import ValidationError

from baton.errors import BatonError
from baton.providers.base import ToolSpec
from baton.tools.base import ModalTool, Tool, ToolContext, ToolFailure, ToolResult, truncate
from baton.tools.compact_specs import COMPACT_TOOLS
from baton.tools.files import EditTool, ReadTool, WriteTool
from baton.tools.policy import plan_mode_message
from baton.tools.recall import RecallTool
from baton.tools.search import GlobTool, GrepTool
from baton.tools.shell import BashTool
from baton.tools.webfetch import WebFetchTool

log = logging.getLogger(__name__)

Mode = Literal["build", "plan"]

# The order tools are offered in; registered tools not named here follow, in
# registration order. A stable order keeps provider prompt caches warm.
CORE_ORDER = ("read", "write", "edit", "glob", "grep", "bash")
# A last net for tools that do not bound their own output (theirs may run a
# little over max_output_chars with their notes, hence the margin).
_OUTPUT_MARGIN = 2_000


class ToolRegistry:
    """Tool instances by name."""

    def __init__(self, tools: list[Tool] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        self._specs: dict[tuple[Mode | None, bool, tuple[str, ...]], list[ToolSpec]] = {}
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool, *, replace: bool = False) -> None:
        """Add a tool; a second tool with the same name is an error unless `replace`."""
        if tool.name in self._tools and not replace:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._specs.clear()
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        """Remove a tool (an MCP server's tool that is gone); unknown names are ignored."""
        if self._tools.pop(name, None) is not None:
            self._specs.clear()

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def names(self, mode: Mode | None = None) -> list[str]:
        """Tool names in offer order; with `mode`, only those available in it."""
        order = {name: i for i, name in enumerate(CORE_ORDER)}
        ranked = sorted(
            enumerate(self._tools),
            key=lambda item: (order.get(item[1], len(CORE_ORDER)), item[0]),
        )
        return [name for _, name in ranked if mode is None or available(self._tools[name], mode)]

    def specs(self, mode: Mode | None = None, *, compact: bool = False) -> list[ToolSpec]:
        """What the model is offered, in a stable order: every tool (the session offers
        the same list in every mode, so a mode switch keeps the provider's prompt cache),
        or with `mode` only those available in it. `compact`: the short descriptions of
        `COMPACT_TOOLS`, for a small window.

        Built once per tool set, mode and form: every model step asks for them.
        """
        key = (mode, compact, tuple(self._tools))
        cached = self._specs.get(key)
        if cached is None:
            make = compact_spec_of if compact else spec_of
            cached = [make(self._tools[name]) for name in self.names(mode)]
            self._specs[key] = cached
        return list(cached)

    async def run(self, name: str, raw_args: str, ctx: ToolContext) -> ToolResult:
        """Parse, validate and run one tool call; every failure becomes an error result."""
        tool = self._tools.get(name)
        if tool is None:
            available_names = ", ".join(self.names(ctx.mode)) or "none"
            return _error(f"unknown tool {name}; available: {available_names}")
        if not available(tool, ctx.mode):
            if ctx.mode == "plan":
                return _error(plan_mode_message(name))
            return _error(f"{name} is not available in {ctx.mode} mode")

        try:
            parsed = json.loads(raw_args) if raw_args.strip() else {}
        except ValueError as exc:
            return _error(f"arguments are not valid JSON: {exc}; send a JSON object")
        if not isinstance(parsed, dict):
            return _error(
                f"arguments must be a JSON object, not {type(parsed).__name__}; send a JSON object"
            )
        try:
            args = tool.input_model.model_validate(parsed)
        except ValidationError as exc:
            return _error(_describe_validation(name, tool, exc))

        try:
            result = await tool.run(args, ctx)
        except ToolFailure as exc:
            return _error(str(exc))
        except BatonError as exc:
            # A service a tool calls (the plan service) refused: its message is written
            # for the caller, so the model reads it as the tool's answer.
            return _error(exc.message)
        except Exception as exc:
            log.exception("tool %s failed", name)
            return _error(f"internal error in tool {name}: {type(exc).__name__}: {exc}")
        limit = ctx.settings.tools.max_output_chars + _OUTPUT_MARGIN
        result.output = truncate(result.output, limit)
        return result


def available(tool: Tool, mode: Mode) -> bool:
    """Whether `tool` is offered (and may run) in `mode`."""
    if isinstance(tool, ModalTool):
        return mode in tool.modes
    return tool.read_only or mode == "build"


def spec_of(tool: Tool) -> ToolSpec:
    parameters = clean_schema(tool.input_model.model_json_schema())
    # `additionalProperties: false` costs ~8 tokens a tool in every request and says
    # nothing a model needs: the input model still refuses an unknown field, naming the
    # fields (as with the compact specs).
    parameters.pop("additionalProperties", None)
    return ToolSpec(name=tool.name, description=tool.description, parameters=offered(parameters))


# Checked by the input model on every call, and said in its error when broken: not worth
# their tokens in every request (a model rarely comes near them).
_UNSENT_KEYWORDS = frozenset(
    {
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "default",
        "additionalProperties",
    }
)


def offered(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the model is offered it: nested models inlined (a `$ref` costs more
    than the object it names) and bounds left to the input model's check."""
    definitions = schema.get("$defs", {})

    def walk(node: Any, in_properties: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if in_properties:
            return {key: walk(value) for key, value in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = definitions.get(ref.removeprefix("#/$defs/"))
            if isinstance(target, dict):
                return walk({**target, **{k: v for k, v in node.items() if k != "$ref"}})
        return {
            key: walk(value, in_properties=key == "properties")
            for key, value in node.items()
            if key != "$defs" and key not in _UNSENT_KEYWORDS
        }

    out: dict[str, Any] = walk(schema)
    return out


def compact_spec_of(tool: Tool) -> ToolSpec:
    """The tool as a small window can afford it: its `COMPACT_TOOLS` description,
    its required fields and the optional ones that wording names, each with at most a
    short description, and no bounds or `additionalProperties` (the input model still
    checks every call). A tool without compact wording keeps its full spec."""
    wording = COMPACT_TOOLS.get(tool.name)
    if wording is None:
        return spec_of(tool)
    description, fields = wording
    full = clean_schema(tool.input_model.model_json_schema())
    required = [name for name in full.get("required", []) if isinstance(name, str)]
    properties: dict[str, Any] = {}
    for name, schema in full.get("properties", {}).items():
        if name not in required and name not in fields:
            continue
        short: dict[str, Any] = {"type": schema["type"]} if "type" in schema else dict(schema)
        short.pop("description", None)
        if fields.get(name):
            short["description"] = fields[name]
        properties[name] = short
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return ToolSpec(name=tool.name, description=description, parameters=parameters)


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema as models read it best: no titles, optional fields as plain types.

    Pydantic writes `anyOf: [{type: X}, {type: null}], default: null` for an
    optional field; models (small local ones especially) handle `{type: X}`
    better, and leaving the field out of `required` already says it is optional.
    """
    cleaned: dict[str, Any] = _clean(schema)
    return cleaned


def _clean(node: Any, in_properties: bool = False) -> Any:
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    if in_properties:
        # Keys are field names (a field may be called "title"); clean their schemas.
        return {key: _clean(value) for key, value in node.items()}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        out[key] = _clean(value, in_properties=key in ("properties", "$defs", "definitions"))
    variants = out.get("anyOf")
    if isinstance(variants, list) and out.get("default", ...) is None:
        non_null = [v for v in variants if v != {"type": "null"}]
        if len(non_null) == 1 and len(variants) == 2 and isinstance(non_null[0], dict):
            del out["anyOf"]
            del out["default"]
            out = {**non_null[0], **out}
    return out


def _describe_validation(name: str, tool: Tool, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        field = ".".join(str(part) for part in err["loc"]) or "arguments"
        problems.append(f"{field}: {err['msg']}")
    fields = ", ".join(tool.input_model.model_fields) or "none"
    return f"invalid arguments for {name}: {'; '.join(problems)} (fields: {fields})"


def _error(message: str) -> ToolResult:
    return ToolResult(output=message, is_error=True)


def default_registry() -> ToolRegistry:
    """The six workspace tools, `recall` and `webfetch`; plan, MCP and the tools a client
    offers (`question`, `diagnostics`) are registered later."""
    return ToolRegistry(
        [
            ReadTool(),
            WriteTool(),
            EditTool(),
            GlobTool(),
            GrepTool(),
            BashTool(),
            RecallTool(),
            WebFetchTool(),
        ]
    )
