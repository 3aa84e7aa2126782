"""Summaries that use the cache and keep their work, through the real server.

* The summary request is the session's cached prefix: its instructions, tools and
  every item before the summary request are what the session's last request sent
  (the fake's prefix tracking serves them from its cache), at the first compaction
  and at an anchored second one; the call that asks for the rest of a cut answer
  repeats the first call whole.
* A summary stopped by `compaction.summaryTimeout` keeps the sections it finished;
  only the others are built by code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.e2e.test_compaction import FULL_SUMMARY, history_with_tools
from tests.e2e.test_compaction import start_baton as start_baton  # pins native compaction
from tests.e2e.test_compaction_contract import summary_requests
from tests.fake_llm import FakeLLM, incomplete, stall, text
from tests.fake_llm.prefix import shared
from tests.fake_llm.records import RecordedRequest
from tests.harness import BatonClient

ALLOW = {"permissions": {"bash": "allow"}}
FINISHED = (
    f"## {SECTIONS[0]}\nList missing-dir after reading notes.txt.\n\n"
    f"## {SECTIONS[1]}\nnotes.txt holds 200 alpha lines; missing-dir does not exist.\n\n"
)
UNFINISHED = f"## {SECTIONS[2]}\nNothing chan"


def assert_prefix_of(turn: RecordedRequest, summary: RecordedRequest) -> None:
    """Everything `summary` sends before its last item is what `turn` sent first."""
    assert summary.instructions == turn.instructions
    assert summary.items[:-1] == turn.items[: len(summary.items) - 1]
    # What the provider's cache serves: all of it but the appended summary request.
    common = shared(turn.segments, summary.segments)
    appended = len(summary.segments.items) - len(turn.segments.items[: common.items])
    assert common.instructions == len(summary.segments.instructions)
    assert common.items >= len(summary.segments.items) - appended
    assert summary.cached_tokens > 0


async def more_work(baton: BatonClient, llm: FakeLLM, sid: str, n: int) -> None:
    for k in range(n):
        llm.add(text(f"Answer {k}. " + "Reasoning about the listing. " * 30))
        await baton.prompt(sid, f"question {k}")


@pytest.mark.asyncio
async def test_every_summary_request_is_the_sessions_cached_prefix(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW)
    sid = await history_with_tools(baton, llm, workspace)
    await more_work(baton, llm, sid, 2)
    turn = llm.model_requests[-1]
    llm.add(text(FINISHED + UNFINISHED), incomplete())
    llm.add(text(FULL_SUMMARY.split("\n\n", 2)[2]))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True, record["notes"]
    first, rest = summary_requests(llm)
    assert_prefix_of(turn, first)
    # Asking for the rest repeats the first call whole, then its answer so far.
    assert rest.instructions == first.instructions and rest.tools == first.tools
    assert rest.items[: len(first.items)] == first.items
    assert shared(first.segments, rest.segments).chars == first.segments.chars

    # The second compaction is anchored on the first summary: its request is again the
    # prefix of the session's last request (the summary block, requests, ledger, …).
    await more_work(baton, llm, sid, 4)
    turn = llm.model_requests[-1]
    llm.add(text(FULL_SUMMARY))
    second = await baton.request("baton/session/compact", {"sessionId": sid})
    assert second["committed"] is True, second["notes"]
    anchored = summary_requests(llm)[-1]
    assert "<baton:summary>" in anchored.input_text()
    assert_prefix_of(turn, anchored)
    assert anchored.cached_tokens >= 0.8 * (anchored.tokens - len(anchored.last_user_text()) / 4)


@pytest.mark.asyncio
async def test_a_timed_out_summary_keeps_its_finished_sections(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(
        settings={**ALLOW, "compaction": {"summaryTimeout": 1.5}},
    )
    sid = await history_with_tools(baton, llm, workspace)
    # Two finished sections and half of the third stream, then the model stalls past
    # the timeout.
    llm.add(text(FINISHED, UNFINISHED), stall(30, after=7))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    llm.release()
    assert record["committed"] is True, record["notes"]
    summary = record["summary"]
    notes = " | ".join(record["notes"])
    assert "ran past compaction.summaryTimeout" in notes, notes
    assert "List missing-dir after reading notes.txt." in summary
    assert "notes.txt holds 200 alpha lines; missing-dir does not exist." in summary
    assert "Nothing chan" not in summary  # the unfinished section is built by code
    for name in SECTIONS:
        assert summary.count(f"## {name}") == 1
    assert (
        f"kept the sections the stopped summary had finished ({SECTIONS[0]}, {SECTIONS[1]})"
        in notes
    )
    assert len(summary_requests(llm)) == 1  # past the timeout nothing more is asked
