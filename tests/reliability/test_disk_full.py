"""A full disk: every write is refused with a clear error, nothing changes, and the
session carries on when space comes back.

The server process's file-size limit (RLIMIT_FSIZE) is lowered to one byte while
it runs, so every write it makes to any file fails as it would on a full disk
(Python ignores SIGXFSZ; the write gets EFBIG and SQLite reports an I/O error).
Raising the limit again is the disk getting space back.
"""

from __future__ import annotations

import asyncio
import resource
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, pace, text, tool_call
from tests.harness import BatonClient, stop_client

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="sets another process's rlimit (Linux prlimit)"
)

STORAGE_ERROR = -32010


@contextmanager
def disk_full(baton: BatonClient) -> Iterator[None]:
    resource.prlimit(baton.pid, resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))
    try:
        yield
    finally:
        unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
        resource.prlimit(baton.pid, resource.RLIMIT_FSIZE, unlimited)


def _snapshot(loaded: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (
            m["id"],
            m["role"],
            tuple((p["type"], p.get("status"), p.get("text"), p.get("output")) for p in m["parts"]),
        )
        for m in loaded["messages"]
    ]


@pytest.mark.asyncio
async def test_requests_that_write_are_refused_and_change_nothing(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton()
    sid = await baton.new_session(title="Before the disk filled")
    llm.add(text("first answer"))
    assert (await baton.prompt(sid, "hello"))["stopReason"] == "end_turn"
    before_list = await baton.request("baton/session/list", {})
    before = await baton.load(sid)

    with disk_full(baton):
        for method, params in [
            ("baton/session/new", {}),
            ("baton/session/prompt", {"sessionId": sid, "text": "more"}),
            ("baton/session/setMode", {"sessionId": sid, "mode": "plan"}),
            ("baton/session/rename", {"sessionId": sid, "title": "renamed"}),
            ("baton/session/compact", {"sessionId": sid}),
            ("baton/plan/update", {"sessionId": sid, "content": "# Plan\n", "baseVersion": 0}),
        ]:
            error = await baton.error(method, params)
            assert error.code in (STORAGE_ERROR, -32007), (method, error)
            assert "could not" in str(error) or "cannot" in str(error), (method, error)
        # Reading still works while the disk is full.
        assert await baton.request("baton/session/list", {}) == before_list
        assert _snapshot(await baton.load(sid)) == _snapshot(before)

    assert await baton.request("baton/session/list", {}) == before_list
    loaded = await baton.load(sid)
    assert _snapshot(loaded) == _snapshot(before) and loaded["mode"] == "build"
    assert await baton.request("baton/session/compactions", {"sessionId": sid}) == {
        "compactions": []
    }
    assert await baton.request("baton/plan/get", {"sessionId": sid}) is None
    # Space is back: the session goes on.
    llm.add(text("second answer"))
    assert (await baton.prompt(sid, "again"))["stopReason"] == "end_turn"


@pytest.mark.asyncio
async def test_a_turn_that_cannot_commit_ends_with_the_reason_and_memory_matches_disk(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    settings = {"permissions": {"bash": "allow"}}
    baton = await start_baton(settings=settings)
    sid = await baton.new_session()
    llm.add(tool_call("bash", {"command": "sleep 1; echo done"}))
    llm.add(text(*[f"w{i} " for i in range(50)]), pace(0.02))
    prompt = asyncio.ensure_future(baton.prompt(sid, "run it"))
    await baton.wait_update("tool_call_update", sid)
    with disk_full(baton):
        result = await asyncio.wait_for(prompt, 20)
    assert result["stopReason"] == "error"
    assert "the store could not commit" in result["error"]
    assert [u["stopReason"] for u in baton.updates(sid, "turn_ended")] == ["error"]

    # What the running server holds is what the store holds: the result that could
    # not be committed is not in either.
    live = _snapshot(await baton.load(sid))
    await stop_client(baton)
    baton = await start_baton(settings=settings)
    assert _snapshot(await baton.load(sid)) == live
    [call] = [p for m in (await baton.load(sid))["messages"] for p in m["parts"] if p.get("name")]
    assert call["status"] == "failed" and "done" not in call["output"]

    # And the model is told the same after the restart as it would have been before.
    llm.add(text("carrying on"))
    assert (await baton.prompt(sid, "go on"))["stopReason"] == "end_turn"
    outputs = llm.model_requests[-1].tool_outputs()
    assert list(outputs.values()) == [call["output"]]
