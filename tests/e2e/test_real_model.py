"""The real local model through the real server process: no fake LLM, no key.

Selected with `-m real_model`; skipped, saying why, when xllamacpp or the model
file is missing (`baton model install`, or BATON_TEST_REAL_MODEL=/path/to.gguf).
The model is small and its wording varies, so these tests assert on structure
only: that a tool was called and its result recorded, that a plan file was
written, that a compaction record exists and that the plan is in the next
request. Prompts and token limits are kept small: on two CPU cores every
model step costs tens of seconds.
"""

from __future__ import annotations

import importlib.util
import os
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from baton.local.model_files import DEFAULT_MODEL, looks_installed, model_path
from tests.conftest import StartBaton


def _find_model() -> tuple[Path | None, str]:
    # Resolved at import, before the `home` fixture points XDG_DATA_HOME at a temp dir.
    override = os.environ.get("BATON_TEST_REAL_MODEL")
    if override:
        path = Path(override).expanduser()
        return (
            (path, "")
            if path.is_file()
            else (None, f"BATON_TEST_REAL_MODEL={override} is not a file")
        )
    path = model_path(DEFAULT_MODEL)
    if looks_installed(path, DEFAULT_MODEL):
        return path, ""
    return None, (
        f"the local model is not installed at {path}: run `baton model install` "
        "(or set BATON_TEST_REAL_MODEL to a GGUF file)"
    )


MODEL, WHY_NOT = _find_model()
if importlib.util.find_spec("xllamacpp") is None:
    MODEL, WHY_NOT = None, "xllamacpp is not installed: pip install -e '.[local]'"

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(MODEL is None, reason=WHY_NOT),
    pytest.mark.timeout(900),
]


def _settings(**extra: Any) -> dict[str, Any]:
    return {
        "provider": "local",
        "local": {"modelPath": str(MODEL), "contextSize": 4096, "maxTokens": 160},
        "maxSteps": 3,
        "compaction": {"auto": False},
        **extra,
    }


def _tool_calls(loaded: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for message in loaded["messages"]
        for part in message["parts"]
        if part["type"] == "tool_call"
    ]


@pytest.mark.asyncio
async def test_the_model_calls_a_tool_and_gets_its_result(
    start_baton: StartBaton, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("The secret word is: marmalade\n", encoding="utf-8")
    baton = await start_baton(settings=_settings(), api_key=None)
    sid = await baton.new_session()
    result = await baton.prompt(sid, "Read the file notes.txt and tell me the secret word in it.")
    assert result["stopReason"] in ("end_turn", "max_steps"), result

    started = baton.updates(sid, "tool_call")
    reads = [u for u in started if u["name"] == "read"]
    assert reads, f"the model called no read tool: {started}"
    assert reads[0]["input"].get("path", "").endswith("notes.txt")
    finished = [
        u
        for u in baton.updates(sid, "tool_call_update")
        if u["toolCallId"] == reads[0]["toolCallId"] and u["status"] == "completed"
    ]
    assert finished, "the read call never completed"

    stored = {c["toolCallId"]: c for c in _tool_calls(await baton.load(sid))}
    call = stored[reads[0]["toolCallId"]]
    assert call["status"] == "completed" and "marmalade" in call["output"]
    assert baton.updates(sid, "usage"), "the local model reported no token usage"


PLAN_PROMPT = (
    "Read stats.py. Then call plan_write with a markdown checklist of three steps "
    "(lines starting with `- [ ] `) to fix its three TODOs. Then call plan_exit."
)
# The demo's sample (about 90 lines, 2,800 tokens of session once read and planned): a
# session big enough that the compaction has something to take out of the view. The
# two-function file this test had left the compaction nothing to compact.
STATS = (resources.files("baton") / "demo_project" / "stats.py").read_text(encoding="utf-8")


@pytest.mark.asyncio
async def test_plan_written_to_a_file_survives_a_compaction(
    start_baton: StartBaton, workspace: Path
) -> None:
    (workspace / "stats.py").write_text(STATS, encoding="utf-8")
    baton = await start_baton(settings=_settings(maxSteps=4), api_key=None)
    sid = await baton.new_session(mode="plan")
    result = await baton.prompt(sid, PLAN_PROMPT)
    assert result["stopReason"] in ("end_turn", "max_steps"), result

    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    names = [u["name"] for u in baton.updates(sid, "tool_call")]
    assert plan is not None, f"the model wrote no plan (tool calls: {names})"
    plan_file = workspace / plan["path"]
    assert plan_file.is_file() and plan["content"].strip()
    assert any(m == "baton/plan/didChange" for m, _ in baton.notifications)

    approved = await baton.request("baton/plan/approve", {"sessionId": sid})
    assert approved == {"status": "approved", "mode": "build"}

    record = await baton.request(
        "baton/session/compact",
        {"sessionId": sid, "instructions": "At most two short bullet points per section."},
    )
    assert record["trigger"] == "manual" and record["strategy"] == "native"
    assert record["compactionId"], record.get("notes")
    assert record["tokensAfter"] < record["tokensBefore"], record
    assert record["ledger"]["plan"]["path"] == plan["path"]
    assert record["ledger"]["plan"]["status"] == "approved"
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert [c["compactionId"] for c in listed["compactions"]] == [record["compactionId"]]

    # The plan is back in what the model is sent next, re-read from its file.
    context = await baton.request("baton/session/context", {"sessionId": sid})
    kinds = {item["kind"]: item["tokens"] for item in context["items"]}
    assert kinds.get("plan", 0) > 0, context
    assert kinds.get("checkpoint", 0) > 0 or kinds.get("ledger", 0) > 0, context
