"""Bounded memory through the real server: a file of GiBs, most of it one line, costs no more.

The file is sparse (a few KiB on disk): some text, then a hole of 3 GiB inside
the second line, then a last line. `read`, `grep`, `edit` and an attachment of
it run through the real server, and the server's peak resident memory
(`VmHWM` in /proc/<pid>/status) barely moves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text, tool_call
from tests.reliability.conftest import RecordFigures

HOLE = 3 * 1024**3


def memory_kib(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {name: int(fields[name].split()[0]) for name in ("VmHWM", "VmRSS")}


@pytest.mark.asyncio
async def test_a_file_of_gibs_keeps_the_server_memory_flat(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, record_figures: RecordFigures
) -> None:
    huge = workspace / "huge.log"
    with huge.open("wb") as fh:
        fh.write(b"first line\n" + b"a" * 20_000)
        fh.seek(HOLE, 1)
        fh.write(b"\nlast line\n")
    (workspace / "small.txt").write_text("warm up\n")
    baton = await start_baton(settings={"permissions": {"write": "allow"}})
    sid = await baton.new_session()
    # One turn over a small file first, so the peak below is the server's own.
    llm.add(tool_call("read", {"path": "small.txt"}))
    llm.add(tool_call("grep", {"pattern": "warm"}))
    llm.add(text("warm"))
    await baton.prompt(sid, "warm up")
    before = memory_kib(baton.pid)

    llm.add(tool_call("read", {"path": "huge.log"}))
    llm.add(tool_call("read", {"path": "huge.log", "offset": 2, "limit": 1}))
    llm.add(tool_call("grep", {"pattern": "last line"}))
    llm.add(tool_call("edit", {"path": "huge.log", "old_string": "last", "new_string": "x"}))
    llm.add(text("done"))
    result = await baton.prompt(sid, "read the log")
    refused = await baton.error(
        "baton/session/prompt",
        {"sessionId": sid, "text": "see this", "context": [{"uri": huge.as_uri()}]},
    )
    assert "huge.log is larger than" in str(refused)
    after = memory_kib(baton.pid)
    growth_mib = (after["VmHWM"] - before["VmHWM"]) / 1024
    record_figures(
        "bounded memory",
        file_gib=round(huge.stat().st_size / 1024**3, 2),
        peak_before_mib=round(before["VmHWM"] / 1024),
        peak_after_mib=round(after["VmHWM"] / 1024),
        growth_mib=round(growth_mib, 1),
    )
    outputs = list(llm.model_requests[-1].tool_outputs().values())[-4:]
    assert result["stopReason"] == "end_turn"
    assert len(outputs) == 4
    first, second, grep, edit = outputs
    assert first.startswith("1\tfirst line\n2\taaaa")
    assert "line 2 goes on past" in first and "the rest of the file was not read" in first
    assert "line cut" in second
    assert grep.startswith("no matches") and "1 files over 2 MB were not searched" in grep
    assert "too large to change" in edit
    assert growth_mib < 64
