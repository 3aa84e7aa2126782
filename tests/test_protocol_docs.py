"""docs/protocol.md must name every method, notification and field that protocol.py defines,
and the JSON Schema export must cover every model on the wire."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

from baton import protocol as p

REPO = Path(__file__).resolve().parent.parent
DOC = (REPO / "docs" / "protocol.md").read_text()


def _field_names(model: type[BaseModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def test_every_method_and_its_params_are_documented() -> None:
    missing = []
    for name, spec in p.METHODS.items():
        if f"`{name}`" not in DOC:
            missing.append(name)
        for field in _field_names(spec.params):
            if field not in DOC:
                missing.append(f"{name}.{field}")
    assert missing == []


def test_every_notification_and_update_kind_is_documented() -> None:
    names = [*p.NOTIFICATIONS, *p.CLIENT_NOTIFICATIONS, *p.SERVER_REQUESTS]
    assert [n for n in names if f"`{n}`" not in DOC] == []
    kinds = [
        m.model_fields["kind"].default
        for m in p.Update.__args__[0].__args__  # type: ignore[attr-defined]
    ]
    assert [k for k in kinds if f"`{k}`" not in DOC] == []


def test_server_request_params_and_answers_are_documented() -> None:
    # The permission answer's outcome (`optionId`, `editedContent`) as well as the request.
    models = [m for pair in p.SERVER_REQUESTS.values() for m in pair] + [p.SelectedOutcome]
    missing = [f"{m.__name__}.{f}" for m in models for f in _field_names(m) if f not in DOC]
    assert missing == []


def test_record_and_ledger_fields_are_documented() -> None:
    for model in (p.CompactionRecord, p.Ledger, p.Message, p.ContextResult):
        assert [f for f in _field_names(model) if f not in DOC] == [], model.__name__


def test_schema_command_exports_every_method() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "baton", "schema"], capture_output=True, text=True, check=True
    ).stdout
    schema = json.loads(out)
    assert set(schema["x-methods"]) == set(p.METHODS)
    for name, spec in schema["x-methods"].items():
        assert spec["params"] in schema["$defs"], name
    assert schema["x-baton-protocol-version"] == p.PROTOCOL_VERSION
