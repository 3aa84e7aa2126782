"""One store, many processes: two `baton serve` on one workspace (two editor windows).

Both real server processes open the same SQLite store. A session one of them is
working on (a turn, a compaction, a revert, a delete) is busy in the other
(`-32002`, naming the process) before anything is written; a process builds its
request on what the other committed (no stale history); and a session's turns
are never interleaved in the store. A killed process's lease is taken over at
once on the same host, and a lease of a process elsewhere when it expires.

The race section prompts one session from both processes at the same instant,
round after round: each round exactly one turn runs, the other is refused, and
the store holds user, assistant, user, assistant, ... with every request
carrying the whole history before it.
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, stall, text
from tests.harness import BatonClient
from tests.reliability.conftest import RecordFigures, size
from tests.reliability.store_check import db_path

BUSY = -32002
ROUNDS = size(12, 60)


def roles_in_store(workspace: Path, session_id: str) -> list[str]:
    conn = sqlite3.connect(str(db_path(workspace)))
    try:
        rows = conn.execute(
            "SELECT role FROM messages WHERE session_id = ? AND kind IN ('prompt', 'step')"
            " ORDER BY seq",
            (session_id,),
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def leases(workspace: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(str(db_path(workspace)))
    try:
        return conn.execute("SELECT session_id, pid, host FROM session_leases").fetchall()
    finally:
        conn.close()


async def hold_turn(llm: FakeLLM, baton: BatonClient, sid: str, text_: str) -> asyncio.Task[Any]:
    """Start a turn whose model answer stalls until `llm.release()`."""
    llm.add(text("held", " answer", " for A"), stall(60, after=5))
    task = asyncio.ensure_future(baton.prompt(sid, text_))
    await baton.wait_update("agent_message_chunk", sid)
    return task


@pytest.mark.asyncio
async def test_a_session_worked_on_in_one_process_is_busy_in_the_other(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    a = await start_baton()
    b = await start_baton()
    sid = await a.new_session(title="shared")
    await a.request(
        "baton/plan/update", {"sessionId": sid, "content": "# Plan\n- [ ] one\n", "baseVersion": 0}
    )
    # B knows the session before A's turn (its state is cached and must not go stale).
    assert (await b.load(sid))["messages"] == []

    running = await hold_turn(llm, a, sid, "first question from A")
    for method, params in [
        ("baton/session/prompt", {"sessionId": sid, "text": "B at the same time"}),
        ("baton/session/compact", {"sessionId": sid}),
        ("baton/session/delete", {"sessionId": sid}),
        ("baton/plan/approve", {"sessionId": sid, "start": True}),
        ("baton/plan/requestChanges", {"sessionId": sid, "feedback": "shorter"}),
    ]:
        error = await b.error(method, params)
        assert error.code == BUSY, (method, error)
        assert "another Baton process" in error.message and f"pid {a.pid}" in error.message
    first = (await b.load(sid))["messages"][0]
    error = await b.error("baton/session/revert", {"sessionId": sid, "messageId": first["id"]})
    assert error.code == BUSY
    # Reading is never refused: B sees what A committed so far; the refused approval
    # changed nothing (the plan is still a draft, the session still in build mode).
    assert [m["role"] for m in (await b.load(sid))["messages"] if m["role"] != "system"] == ["user"]
    assert (await b.request("baton/plan/get", {"sessionId": sid}))["status"] == "draft"

    llm.release()
    assert (await asyncio.wait_for(running, 20))["stopReason"] == "end_turn"
    assert leases(workspace) == []

    # B's request carries A's turn: it reloaded what A committed before building it.
    llm.add(text("answer for B"))
    assert (await b.prompt(sid, "second question from B"))["stopReason"] == "end_turn"
    sent = llm.model_requests[-1]
    assert sent.texts("user")[-2:] == ["first question from A", "second question from B"]
    assert "held answer for A" in sent.texts("assistant")

    # And A's next request carries B's turn.
    llm.add(text("answer for A again"))
    assert (await a.prompt(sid, "third, from A"))["stopReason"] == "end_turn"
    assert llm.model_requests[-1].texts("user")[-3:] == [
        "first question from A",
        "second question from B",
        "third, from A",
    ]
    assert roles_in_store(workspace, sid) == ["user", "assistant"] * 3
    loaded_a, loaded_b = await a.load(sid), await b.load(sid)
    assert [m["id"] for m in loaded_a["messages"]] == [m["id"] for m in loaded_b["messages"]]


@pytest.mark.asyncio
async def test_a_killed_process_lease_does_not_block(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    a = await start_baton()
    b = await start_baton()
    sid = await a.new_session()
    await hold_turn(llm, a, sid, "A is killed during this turn")
    assert [(s, pid) for s, pid, _ in leases(workspace)] == [(sid, a.pid)]
    a.kill()
    await a.wait_exit()  # gone, so its pid is dead on this host
    llm.release()

    # The holder's pid is dead on this host: the lease is taken over at once.
    llm.add(text("B carries on"))
    started = time.monotonic()
    assert (await b.prompt(sid, "B after A died"))["stopReason"] == "end_turn"
    assert time.monotonic() - started < 10
    assert llm.model_requests[-1].texts("user")[-2:] == [
        "A is killed during this turn",
        "B after A died",
    ]
    assert leases(workspace) == []

    # A lease of a process on another host blocks while it is fresh, not once expired.
    conn = sqlite3.connect(str(db_path(workspace)))
    try:
        with conn:
            conn.execute(
                "INSERT INTO session_leases VALUES (?, 'elsewhere/1/x', 'elsewhere', 1,"
                " 'turn', ?, ?)",
                (sid, time.time(), time.time() + 60),
            )
        error = await b.error("baton/session/prompt", {"sessionId": sid, "text": "blocked"})
        assert error.code == BUSY and "pid 1 on elsewhere" in error.message
        with conn:
            conn.execute("UPDATE session_leases SET expires_at = ?", (time.time() - 1,))
    finally:
        conn.close()
    llm.add(text("taken over"))
    assert (await b.prompt(sid, "after it expired"))["stopReason"] == "end_turn"
    assert leases(workspace) == []


@pytest.mark.asyncio
async def test_racing_prompts_never_interleave(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, record_figures: RecordFigures
) -> None:
    a = await start_baton()
    b = await start_baton()
    sid = await a.new_session()
    await b.load(sid)
    llm.on_request(lambda req: text(f"answer to {req.last_user_text()}"))
    refused = completed = stale = 0
    waits: list[float] = []
    for n in range(ROUNDS):

        async def send(client: BatonClient, who: str, n: int = n) -> str:
            try:
                await client.prompt(sid, f"round {n} from {who}")
            except JsonRpcException as exc:
                assert exc.code == BUSY, exc
                return "busy"
            return "done"

        started = time.monotonic()
        outcomes = await asyncio.gather(send(a, "A"), send(b, "B"))
        waits.append(time.monotonic() - started)
        assert sorted(outcomes) in (["busy", "done"], ["done", "done"]), outcomes
        refused += outcomes.count("busy")
        completed += outcomes.count("done")
    # Every request carried every turn committed before it, in order: the history of
    # each is the previous one's plus that turn's answer and the new question.
    previous: list[str] = []
    for request in llm.model_requests:
        users = request.texts("user")
        answers = request.texts("assistant")
        if users[:-1] != previous or answers != [f"answer to {u}" for u in users[:-1]]:
            stale += 1
        previous = users
    stored_users = len(previous)
    roles = roles_in_store(workspace, sid)
    interleaved = sum(1 for x, y in itertools.pairwise(roles) if x == y)
    assert roles == ["user", "assistant"] * completed
    assert stale == 0 and interleaved == 0
    assert stored_users == completed
    record_figures(
        "shared store",
        rounds=ROUNDS,
        turns=completed,
        busy_refusals=refused,
        interleaved=interleaved,
        stale_requests=stale,
        round_s_max=max(waits),
    )
