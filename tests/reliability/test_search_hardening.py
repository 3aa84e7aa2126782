"""Search on ripgrep through the real server: no pattern stalls it, no race leaks outside text.

* A catastrophic-backtracking pattern (`(a+)+$` over "a"*34 + "!", hours for a
  backtracking engine holding the GIL) is answered at once, and the server
  answers `baton/session/list` meanwhile.
* While another process swaps a folder for a link to outside the workspace and
  back, grep after grep never shows the outside file's text.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text, tool_call
from tests.reliability.conftest import RecordFigures, size


@pytest.mark.asyncio
async def test_catastrophic_pattern_does_not_stall_the_server(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, record_figures: RecordFigures
) -> None:
    (workspace / "evil.txt").write_text("a" * 34 + "!\n")
    baton = await start_baton()
    sid = await baton.new_session(mode="plan")
    llm.add(tool_call("grep", {"pattern": "(a+)+$"}))
    llm.add(text("searched"))
    began = time.monotonic()
    prompt = asyncio.ensure_future(baton.prompt(sid, "search"))
    await baton.wait_update("tool_call", sid)
    listed = await asyncio.wait_for(baton.request("baton/session/list", {}), 5)
    assert any(s["sessionId"] == sid for s in listed["sessions"])
    result = await asyncio.wait_for(prompt, 20)
    took = time.monotonic() - began
    assert result["stopReason"] == "end_turn"
    [output] = llm.model_requests[-1].tool_outputs().values()
    assert output.startswith("no matches for (a+)+$")
    record_figures("search: catastrophic regex", seconds=round(took, 2))


@pytest.mark.asyncio
async def test_folder_swapped_for_a_link_never_leaks_through_grep(
    start_baton: StartBaton,
    llm: FakeLLM,
    workspace: Path,
    tmp_path: Path,
    record_figures: RecordFigures,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    real = workspace / "docs"
    real.mkdir()
    # Many files: the time between listing a file and reading it is what the race needs.
    for i in range(300):
        (outside / f"notes{i}.txt").write_text("needle OUTSIDE-TEXT\n")
        (real / f"notes{i}.txt").write_text("needle inside\n")
    parked = workspace / ".parked"
    greps = size(12, 200)
    stop = threading.Event()
    swaps = 0

    def swapper() -> None:
        nonlocal swaps
        while not stop.is_set():
            os.rename(real, parked)
            real.symlink_to(outside)
            time.sleep(0.002)
            real.unlink()
            os.rename(parked, real)
            time.sleep(0.002)
            swaps += 1

    # One turn makes every grep: the full run's 200 are more than the default maxSteps.
    baton = await start_baton(settings={"maxSteps": greps + 10})
    sid = await baton.new_session()
    for i in range(greps):
        # Each call differs: the turn stops a model repeating one call.
        llm.add(tool_call("grep", {"pattern": f"needle|absent{i}"}))
    llm.add(text("done"))
    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    try:
        result = await asyncio.wait_for(baton.prompt(sid, "search while it moves"), 60)
    finally:
        stop.set()
        thread.join()
    assert result["stopReason"] == "end_turn"
    outputs = list(llm.model_requests[-1].tool_outputs().values())
    assert len(outputs) == greps
    leaked = sum("OUTSIDE-TEXT" in o for o in outputs)
    found_inside = sum(":1: needle inside" in o for o in outputs)
    record_figures("search: swap race", greps=greps, swaps=swaps, leaked=leaked)
    assert leaked == 0
    assert swaps > 0 and found_inside > 0
