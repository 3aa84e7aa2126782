"""Every message `baton acp` sends, checked against the protocol's vendored JSON schema.

See tests/acp/schema/README.md for the files and the commit they come from.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path, PurePath
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA_DIR = Path(__file__).parent / "schema"
# Update kinds the stable schema lacks at the vendored commit: checked against the
# unstable file (compaction, plan operations) or Baton's transcription of the stable
# subagent sessions (`subagent_update`, and the `session` tool-call content).
SUBAGENT_KINDS = ("subagent_update",)
SUBAGENTS_FILE = "subagents.schema.json"


@cache
def _schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMA_DIR / name).read_text())
    return loaded


@cache
def _validator(file: str, definition: str) -> Draft202012Validator:
    defs = _schema(file)["$defs"]
    if definition not in defs:
        raise KeyError(f"{definition} is not in {file}")
    return Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{definition}"})


@cache
def _kinds(file: str) -> frozenset[str]:
    variants = _schema(file)["$defs"]["SessionUpdate"]["oneOf"]
    return frozenset(v["properties"]["sessionUpdate"]["const"] for v in variants)


@cache
def _definitions_by_method() -> dict[str, dict[str, str]]:
    """`method` -> {"request": def name, "response": def name} from the stable schema."""
    found: dict[str, dict[str, str]] = {}
    for name, definition in _schema("schema.json")["$defs"].items():
        method = definition.get("x-method")
        if method is None:
            continue
        role = "response" if name.endswith("Response") else "request"
        found.setdefault(method, {})[role] = name
    return found


def _errors(validator: Draft202012Validator, instance: Any) -> list[str]:
    return [
        f"{'/'.join(str(x) for x in error.absolute_path) or '(root)'}: {error.message[:300]}"
        for error in validator.iter_errors(instance)
    ]


def update_errors(params: Any) -> list[str]:
    """What is wrong with one `session/update` notification's params (empty: valid)."""
    kind = params.get("update", {}).get("sessionUpdate") if isinstance(params, dict) else None
    if kind in _kinds("schema.json"):
        params, links = _without_session_content(params)
        errors = _errors(_validator("schema.json", "SessionNotification"), params)
        for link in links:
            errors += _errors(_validator(SUBAGENTS_FILE, "SessionToolCallContent"), link)
        return errors
    if kind in _kinds("schema.unstable.json"):
        errors = _errors(_validator("schema.unstable.json", "SessionNotification"), params)
        return errors + _plan_path_errors(params["update"])
    if kind in SUBAGENT_KINDS:
        return _errors(_validator(SUBAGENTS_FILE, "SubagentNotification"), params)
    return [f"update kind {kind!r} is in no schema"]


def _without_session_content(params: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """A tool call's `session` content items (a link to a child's session, which the
    vendored schema predates) apart from the rest, each checked on its own."""
    update = params.get("update")
    content = update.get("content") if isinstance(update, dict) else None
    if not isinstance(content, list):
        return params, []
    links = [c for c in content if isinstance(c, dict) and c.get("type") == "session"]
    if not links:
        return params, []
    rest = [c for c in content if c not in links]
    return {**params, "update": {**update, "content": rest}}, links


def request_errors(method: str, params: Any) -> list[str]:
    """What is wrong with a request or notification the agent sent (the client's side)."""
    if method == "session/update":
        return update_errors(params)
    if method.startswith("_"):
        return []  # an extension: its shape is Baton's
    name = _definitions_by_method().get(method, {}).get("request")
    if name is None:
        return [f"method {method!r} is in no schema"]
    return _errors(_validator("schema.json", name), params)


def response_errors(method: str, result: Any) -> list[str]:
    """What is wrong with the agent's answer to a request of `method` (empty: valid)."""
    if method.startswith("_"):
        return []
    name = _definitions_by_method().get(method, {}).get("response")
    if name is None:
        return [f"no response of {method!r} is in the schema"]
    return _errors(_validator("schema.json", name), result)


def _plan_path_errors(update: dict[str, Any]) -> list[str]:
    """The stable Markdown plan's optional `path` (the vendored unstable file predates it;
    its PlanMarkdown allows extra fields): an absolute path when present."""
    plan = update.get("plan")
    if update.get("sessionUpdate") != "plan_update" or not isinstance(plan, dict):
        return []
    if "path" not in plan:
        return []
    path = plan["path"]
    if plan.get("type") != "markdown":
        return [f"plan/path: only a markdown plan has a path, not {plan.get('type')!r}"]
    if not isinstance(path, str) or not PurePath(path).is_absolute():
        return [f"plan/path: {path!r} is not an absolute path"]
    return []
