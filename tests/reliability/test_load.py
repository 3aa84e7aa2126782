"""Load: 20 sessions running turns at once in one server, and 1,000 `baton/session/list` calls.

Every session's prompts carry its own token; the fake model answers with the
token of the request's latest user message and reads the session's own file,
so any mix-up between sessions shows as a foreign token: in the session's
streamed updates, in its tool calls and outputs, in its stored history, or in
what the model was sent for it. Meanwhile four clients call
`baton/session/list` 1,000 times in all; their latencies give the p50/p99
figures (after one warm-up turn: the first turn of a server loads the
provider). No request may fail.

CI runs 3 turns per session; `BATON_RELIABILITY_FULL=1` runs 10.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, pace, text, tool_call
from tests.fake_llm.records import RecordedRequest
from tests.harness import BatonClient
from tests.reliability.conftest import RecordFigures, size

SESSIONS = 20
TURNS = size(3, 10)
LIST_CALLS = 1000
LIST_CLIENTS = 4
TOKEN = re.compile(r"TOKEN-S\d+")


def token_of(sid_index: int) -> str:
    return f"TOKEN-S{sid_index:02d}"


def model(req: RecordedRequest) -> Any:
    """Answer in the requesting session's own words: its token, its file."""
    prompt = req.last_user_text() or ""
    found = TOKEN.search(prompt)
    token = found.group(0) if found else "TOKEN-NONE"
    items = req.items
    last_user = max((i for i, it in enumerate(items) if it.get("role") == "user"), default=-1)
    if not any(it.get("type") == "function_call" for it in items[last_user + 1 :]):
        return [text(f"Reading {token}."), tool_call("read", {"path": f"{token}.txt"}), pace(0.002)]
    return [text(f"Answer for {token}: the file says {token}."), pace(0.002)]


def foreign(texts: list[str], own: str) -> list[str]:
    return sorted({t for s in texts for t in TOKEN.findall(s) if t != own})


@pytest.mark.asyncio
@pytest.mark.timeout(size(240, 900))
async def test_twenty_sessions_and_a_thousand_lists_at_once(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, record_figures: RecordFigures
) -> None:
    for i in range(SESSIONS):
        (workspace / f"{token_of(i)}.txt").write_text(f"{token_of(i)} owns this file\n")
    llm.on_request(model)
    baton: BatonClient = await start_baton()
    sids = [await baton.new_session(title=f"load {i}") for i in range(SESSIONS)]
    # Warm up (the first turn loads the provider and its HTTP client, once per server),
    # so the figures are those of a server in use; session 0 starts with one more turn.
    await baton.prompt(sids[0], f"warm-up for {token_of(0)}")
    errors: list[str] = []
    latencies: list[float] = []
    turn_times: list[float] = []

    async def session(i: int) -> None:
        for t in range(TURNS):
            started = time.monotonic()
            try:
                result = await baton.prompt(sids[i], f"turn {t} for {token_of(i)}")
                if result["stopReason"] != "end_turn":
                    errors.append(f"session {i} turn {t}: {result}")
            except Exception as exc:
                errors.append(f"session {i} turn {t}: {exc!r}")
            turn_times.append(time.monotonic() - started)

    async def lister(calls: int) -> None:
        for _ in range(calls):
            started = time.perf_counter()
            try:
                listed = await baton.request("baton/session/list", {})
                if len(listed["sessions"]) != SESSIONS:
                    errors.append(f"list returned {len(listed['sessions'])} sessions")
            except Exception as exc:
                errors.append(f"list: {exc!r}")
            latencies.append(time.perf_counter() - started)

    started = time.monotonic()
    await asyncio.gather(
        *(session(i) for i in range(SESSIONS)),
        *(lister(LIST_CALLS // LIST_CLIENTS) for _ in range(LIST_CLIENTS)),
    )
    elapsed = time.monotonic() - started

    leaks: list[str] = []
    for i, sid in enumerate(sids):
        own = token_of(i)
        updates = baton.updates(sid)
        streamed = [u.get("text", "") for u in updates] + [
            str(u.get("input", "")) + str(u.get("output", "")) for u in updates
        ]
        if bad := foreign(streamed, own):
            leaks.append(f"session {i} was sent updates of {bad}")
        loaded = await baton.load(sid)
        stored = [str(part) for m in loaded["messages"] for part in m["parts"]]
        if bad := foreign(stored, own):
            leaks.append(f"session {i}'s history holds {bad}")
        replies = [u for u in updates if u["kind"] == "turn_ended"]
        if len(replies) != TURNS + (i == 0):
            errors.append(f"session {i}: {len(replies)} turns ended, expected {TURNS}")
    for req in llm.model_requests:
        prompt = TOKEN.search(req.last_user_text() or "")
        if prompt and (bad := foreign([req.input_text()], prompt.group(0))):
            leaks.append(f"the model was sent {bad} in a request for {prompt.group(0)}")

    ordered = sorted(latencies)
    p99 = ordered[int(0.99 * (len(ordered) - 1))]
    record_figures(
        "load",
        sessions=SESSIONS,
        turns=SESSIONS * TURNS,
        model_requests=len(llm.model_requests),
        list_calls=len(latencies),
        errors=len(errors),
        leaks=len(leaks),
        list_p50_ms=round(statistics.median(ordered) * 1000, 1),
        list_p99_ms=round(p99 * 1000, 1),
        list_max_ms=round(ordered[-1] * 1000, 1),
        turn_p50_s=round(statistics.median(turn_times), 2),
        wall_s=round(elapsed, 1),
    )
    assert not errors, "\n".join(errors[:20])
    assert not leaks, "\n".join(leaks[:20])
