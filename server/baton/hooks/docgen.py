"""Regenerates the generated parts of docs/plugins.md; the test suite fails when they drift.

Two kinds of region, between HTML comment markers:

* `<!-- include: docs/examples/x.py -->` … `<!-- /include -->`: the file,
  fenced. The examples are real files that the tests run, so what the page
  shows is what is tested.
* `<!-- schemas -->` … `<!-- /schemas -->`: a field table per hook input and
  answer, and the exact JSON Schema, generated from `baton.hooks.events`.

    python -m baton.hooks.docgen            # rewrite docs/plugins.md
    python -m baton.hooks.docgen --check    # exit 1 if it is out of date
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from baton.hooks.events import HOOKS

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "plugins.md"

_INCLUDE = re.compile(r"(<!-- include: (?P<path>\S+) -->\n)(?P<body>.*?)(<!-- /include -->)", re.S)
_SCHEMAS = re.compile(r"(<!-- schemas -->\n)(?P<body>.*?)(<!-- /schemas -->)", re.S)
# `baton schema` prints the protocol's JSON Schema; hook schemas refer to its definitions.
PROTOCOL_SCHEMA = "baton-protocol.schema.json"
_FENCES = {".py": "python", ".sh": "sh", ".toml": "toml", ".json": "json"}


def render(text: str, root: Path = REPO) -> str:
    """`text` with every generated region brought up to date."""

    def include(match: re.Match[str]) -> str:
        path = root / match["path"]
        body = path.read_text(encoding="utf-8")
        fence = _FENCES.get(path.suffix, "")
        return f"{match[1]}```{fence}\n{body.rstrip()}\n```\n{match[4]}"

    text = _INCLUDE.sub(include, text)
    return _SCHEMAS.sub(lambda m: f"{m[1]}{schema_section()}{m[3]}", text)


def json_schema() -> dict[str, Any]:
    """One JSON Schema document defining every hook input and answer."""
    models: list[type[BaseModel]] = []
    for kind in HOOKS.values():
        models.append(kind.event)
        if kind.answer is not None:
            models.append(kind.answer)
    _, schema = models_json_schema(
        [(m, "validation") for m in models],
        ref_template="#/$defs/{model}",
        title="Baton hooks",
    )
    # Protocol types (`Message`, `CompactionRecord`, …) are referenced, not copied: they are
    # defined by the protocol's own schema, and copying them would make this page drift
    # with every protocol change that has nothing to do with hooks.
    own = {model.__name__ for model in models}
    schema["$defs"] = {name: spec for name, spec in schema["$defs"].items() if name in own}
    schema = dict(_external_refs(schema, own))
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["x-hooks"] = {
        name: {"input": kind.event.__name__, "answer": kind.answer and kind.answer.__name__}
        for name, kind in HOOKS.items()
    }
    return schema


def _external_refs(value: Any, own: set[str]) -> Any:
    if isinstance(value, dict):
        out = {key: _external_refs(item, own) for key, item in value.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name not in own:
                out["$ref"] = PROTOCOL_SCHEMA + ref
        return out
    if isinstance(value, list):
        return [_external_refs(item, own) for item in value]
    return value


def schema_section() -> str:
    schema = json_schema()
    defs = schema["$defs"]
    out: list[str] = []
    for name, kind in HOOKS.items():
        out.append(f"### `{name}`\n")
        out.append(f"Plugin hook `{kind.spec}`; config key `[[hooks.{name}]]`.\n")
        out.append(f"**Input** (`{kind.event.__name__}`):\n")
        out.append(_table(defs[kind.event.__name__], defs))
        if kind.answer is None:
            out.append(
                "**Answer**: none. A command's output is ignored; only its exit status counts.\n"
            )
        else:
            out.append(f"**Answer** (`{kind.answer.__name__}`; unknown fields are an error):\n")
            out.append(_table(defs[kind.answer.__name__], defs))
    out.append("### JSON Schema\n")
    out.append(
        "Every input and answer above as one JSON Schema document. The protocol types they "
        f"use (`Message`, `CompactionRecord`, …) are references into `{PROTOCOL_SCHEMA}`, the "
        "protocol's schema that `baton schema` prints (see docs/protocol.md).\n"
    )
    out.append("<details><summary>hooks.schema.json</summary>\n")
    out.append("```json\n" + json.dumps(schema, indent=2) + "\n```\n")
    out.append("</details>\n")
    return "\n".join(out)


def _table(model: dict[str, Any], defs: dict[str, Any]) -> str:
    required = set(model.get("required", []))
    rows = ["| field | type | required | notes |", "| --- | --- | --- | --- |"]
    for field, spec in model.get("properties", {}).items():
        notes = spec.get("description", "").replace("|", "\\|")
        rows.append(
            f"| `{field}` | {_type(spec)} | {'yes' if field in required else 'no'} | {notes} |"
        )
    return "\n".join(rows) + "\n"


def _type(spec: dict[str, Any]) -> str:
    if "$ref" in spec:
        return f"`{spec['$ref'].rsplit('/', 1)[-1]}`"
    if "enum" in spec:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in spec["enum"])
    if "const" in spec:
        return f"`{json.dumps(spec['const'])}`"
    if "anyOf" in spec:
        options = [o for o in spec["anyOf"] if o.get("type") != "null"]
        nullable = len(options) < len(spec["anyOf"])
        text = " \\| ".join(_type(o) for o in options)
        return f"{text} \\| `null`" if nullable else text
    kind = spec.get("type")
    if kind == "array":
        return f"array of {_type(spec.get('items', {}))}"
    if kind == "object":
        return "object"
    return f"`{kind}`" if kind else "any"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m baton.hooks.docgen")
    parser.add_argument("--check", action="store_true", help="fail if docs/plugins.md is stale")
    args = parser.parse_args(argv)
    current = DOC.read_text(encoding="utf-8")
    fresh = render(current)
    if args.check:
        if fresh != current:
            print(f"{DOC} is out of date: run python -m baton.hooks.docgen", file=sys.stderr)
            return 1
        return 0
    if fresh != current:
        DOC.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
