"""What Baton must do whatever a model answers: the real-model tests' assertions.

A small local model may call the tool it was asked to, another tool, or none; write the
plan or not; summarise in fewer tokens than the history or in more. Each check here
asserts Baton's side of every one of those outcomes (what streamed is what was stored, a
plan exists exactly when the model or the person wrote one, a compaction that gains
nothing changes nothing, the plan is in the next request after a compaction), so the
tests hold for any answer. How often the model does the right thing is a bench figure
(bench/local_agent.py, bench/demo_runs.py), not a test.

`tests/e2e/test_real_model.py` runs them on the real model; `test_real_model_checks.py`
runs them on scripted answers, good and bad, so they are known to hold for both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException

from tests.harness import BatonClient

TERMINAL = ("completed", "failed")

TOOL_PROMPT = "Read the file notes.txt and tell me the secret word in it."
SECRET = "marmalade"

PLAN_PROMPT = (
    "Read stats.py. Then call plan_write with a markdown checklist of three steps "
    "(lines starting with `- [ ] `) to fix its three TODOs. Then call plan_exit."
)
# Written by the person (`baton/plan/update`) when the model wrote no plan, so the
# compaction half of the check runs on every answer.
PERSON_PLAN = "# Fix the TODOs\n\n- [ ] first TODO\n- [ ] second TODO\n- [ ] third TODO\n"


def tool_calls(loaded: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for message in loaded["messages"]
        for part in message["parts"]
        if part["type"] == "tool_call"
    ]


def _last_status(baton: BatonClient, sid: str, call_id: str) -> str | None:
    statuses = [
        u["status"]
        for u in baton.updates(sid, "tool_call_update")
        if u["toolCallId"] == call_id and u.get("status")
    ]
    return statuses[-1] if statuses else None


async def check_turn_recorded_as_streamed(
    baton: BatonClient, sid: str, result: dict[str, Any]
) -> None:
    """One turn on a small workspace: it ends, every call it started finished, and the
    stored session holds the same calls with the same outcome (a read of notes.txt with
    the file's text); the provider's usage reached the client."""
    assert result["stopReason"] in ("end_turn", "max_steps"), result
    started = baton.updates(sid, "tool_call")
    stored = {c["toolCallId"]: c for c in tool_calls(await baton.load(sid))}
    assert sorted(stored) == sorted(u["toolCallId"] for u in started), (started, stored)
    for update in started:
        call = stored[update["toolCallId"]]
        live = _last_status(baton, sid, update["toolCallId"])
        assert live in TERMINAL, f"{update['name']} never finished: {live}"
        assert call["status"] == live, (call, live)
        asked = str((update.get("input") or {}).get("path", ""))
        if update["name"] == "read" and live == "completed" and asked.endswith("notes.txt"):
            assert SECRET in call["output"], call
    assert baton.updates(sid, "usage"), "the model's token usage never reached the client"


async def _compact(baton: BatonClient, params: dict[str, Any]) -> dict[str, Any] | str:
    """The record, or the error's message when the server refused (a clear error)."""
    try:
        record: dict[str, Any] = await baton.request("baton/session/compact", params)
    except JsonRpcException as exc:
        return str(exc)
    return record


async def check_plan_survives_compaction(
    baton: BatonClient, workspace: Path, sid: str, result: dict[str, Any]
) -> dict[str, Any] | str:
    """A plan-mode turn, then approval and two compactions. Whatever the model did:
    - the turn ended (an error only with its message: a model may read past the window);
    - a plan exists exactly when a plan_write completed, its file holds what `plan/get`
      says; otherwise the person writes one and it is there;
    - a native compaction either commits a smaller view or says why not and changes
      nothing (a summary longer than the history gains nothing), or refuses clearly;
    - a fresh-context compaction (no model call) always commits, its ledger names the
      approved plan, and the plan, re-read from its file, is in the next request.
    Returns what the native compaction answered."""
    assert result["stopReason"] in ("end_turn", "max_steps", "error"), result
    if result["stopReason"] == "error":
        assert result.get("error"), result
    wrote = [
        u
        for u in baton.updates(sid, "tool_call")
        if u["name"] == "plan_write" and _last_status(baton, sid, u["toolCallId"]) == "completed"
    ]
    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    if wrote:
        assert plan is not None, "a plan_write completed but the session has no plan"
    if plan is None:
        await baton.request(
            "baton/plan/update", {"sessionId": sid, "content": PERSON_PLAN, "baseVersion": 0}
        )
        plan = await baton.request("baton/plan/get", {"sessionId": sid})
        assert plan is not None and plan["content"] == PERSON_PLAN, plan
    plan_file = workspace / plan["path"]
    assert plan_file.is_file(), plan
    assert plan["content"].strip() in plan_file.read_text(encoding="utf-8")
    assert any(m == "baton/plan/didChange" for m, _ in baton.notifications)

    approved = await baton.request("baton/plan/approve", {"sessionId": sid})
    assert approved == {"status": "approved", "mode": "build"}

    context_before = await baton.request("baton/session/context", {"sessionId": sid})
    native = await _compact(
        baton,
        {
            "sessionId": sid,
            "strategy": "native",
            "instructions": "At most two short bullet points per section.",
        },
    )
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    if isinstance(native, str):
        assert "compact" in native or "context window" in native, native
        assert listed["compactions"] == []
    elif native["committed"]:
        assert native["compactionId"] and native["strategy"] == "native", native
        assert native["tokensAfter"] < native["tokensBefore"], native
        assert native["ledger"]["plan"]["path"] == plan["path"]
        assert [c["compactionId"] for c in listed["compactions"]] == [native["compactionId"]]
    else:
        assert native["compactionId"] == "" and native["notes"], native
        assert native["notes"][0].startswith("nothing to compact"), native["notes"]
        assert native["tokensAfter"] == native["tokensBefore"], native
        assert listed["compactions"] == []
        unchanged = await baton.request("baton/session/context", {"sessionId": sid})
        assert unchanged["items"] == context_before["items"]
    earlier = [c["compactionId"] for c in listed["compactions"]]

    fresh = await _compact(baton, {"sessionId": sid, "fresh": True})
    assert isinstance(fresh, dict), fresh
    assert fresh["committed"] and fresh["strategy"] == "fresh", fresh
    assert fresh["trigger"] == "manual" and fresh["compactionId"], fresh
    assert fresh["ledger"]["plan"]["path"] == plan["path"]
    assert fresh["ledger"]["plan"]["status"] == "approved"
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert [c["compactionId"] for c in listed["compactions"]] == [*earlier, fresh["compactionId"]]

    context = await baton.request("baton/session/context", {"sessionId": sid})
    kinds = {item["kind"]: item["tokens"] for item in context["items"]}
    assert kinds.get("plan", 0) > 0, context
    assert kinds.get("ledger", 0) > 0 or kinds.get("checkpoint", 0) > 0, context
    return native
