"""docs/plugins.md: its examples are the tested files and its schemas are the models'."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

from baton.config import Settings
from baton.hooks import docgen
from baton.hooks.events import HOOKS


def test_generated_sections_are_up_to_date() -> None:
    current = docgen.DOC.read_text(encoding="utf-8")
    assert docgen.render(current) == current, (
        "docs/plugins.md is stale: run `python -m baton.hooks.docgen`"
    )


def test_check_mode_fails_on_drift(tmp_path: object) -> None:
    text = docgen.DOC.read_text(encoding="utf-8")
    stale = text.replace("| `shouldRun` |", "| `should_run` |", 1)
    assert stale != text
    assert docgen.render(stale) == text
    ok = subprocess.run([sys.executable, "-m", "baton.hooks.docgen", "--check"], check=False)
    assert ok.returncode == 0


def test_every_example_file_is_included() -> None:
    text = docgen.DOC.read_text(encoding="utf-8")
    included = set(re.findall(r"<!-- include: (\S+) -->", text))
    files = {
        str(path.relative_to(docgen.REPO))
        for path in (docgen.REPO / "docs" / "examples").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert files == included


def test_the_schema_covers_every_hook_and_is_in_the_page() -> None:
    schema = docgen.json_schema()
    assert set(schema["x-hooks"]) == set(HOOKS)
    for kind in HOOKS.values():
        assert kind.event.__name__ in schema["$defs"]
        assert f"### `{kind.name}`" in docgen.DOC.read_text(encoding="utf-8")
    assert schema["$defs"]["PreCompactAnswer"]["required"] == ["shouldRun"]
    page = docgen.DOC.read_text(encoding="utf-8")
    assert json.dumps(schema, indent=2) in page


def test_the_config_example_is_valid_configuration() -> None:
    data = tomllib.loads((docgen.REPO / "docs" / "examples" / "config.toml").read_text())
    settings = Settings.model_validate(data)
    assert settings.hooks.pre_compact[0].command[-1] == ".baton/hooks/checkpoint.py"
    assert settings.hooks.tool_before[0].name == "guard"


def test_protocol_references_resolve_in_the_protocol_schema() -> None:
    from baton.protocol import json_schema as protocol_schema

    defs = protocol_schema()["$defs"]
    refs = re.findall(
        re.escape(docgen.PROTOCOL_SCHEMA) + r"#/\$defs/(\w+)", json.dumps(docgen.json_schema())
    )
    assert refs and set(refs) <= set(defs)
