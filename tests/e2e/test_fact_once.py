"""Each fact once per request, through the real server: after a compaction whose summary
the model could not write (so Baton built it by code), and after one whose model summary
copied the person's words and a ledger line, no two of Baton's blocks in the next
request (the summary, the person's requests, the ledger, the plan) share a run of
`SHINGLE` words beyond Baton's own labels."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from baton.agent import requests_block as requests_block
from baton.agent.context import RECALL_LINE
from baton.compaction import ledger as ledger_text
from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.e2e.test_compaction import start_baton as start_baton  # pins native compaction
from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient

SHINGLE = 8
_WORD = re.compile(r"[a-z0-9_./-]+")
_BLOCK = re.compile(r"<baton:([a-z]+)>\n(.*?)\n</baton:\1>", re.S)
SETTINGS = {"permissions": {"bash": "allow", "write": "allow"}}
CONSTRAINT = "Never touch the vendor/ directory and keep the public API of orders.py unchanged."
VALUE = "The staging date is 2026-03-14 and the bucket is s3://acme-staging-eu for the export."
FAILING = (
    "echo 'Traceback (most recent call last):'\n"
    "echo '  File \"orders.py\", line 3, in total'\n"
    "echo 'TypeError: unsupported operand type(s) for +: NoneType and int'\n"
    "echo '1 failed, 4 passed in 0.12s'\nexit 1\n"
)


def shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


# Baton's own labels and hints may stand in several blocks; nothing else may.
LABELS = shingles(
    "\n".join(
        [
            ledger_text.HEADER,
            ledger_text.RECALL_HINT,
            ledger_text.FOLDED_HINT,
            requests_block.HEADER,
            requests_block.FOLD_NOTE,
            RECALL_LINE,
            *SECTIONS,
        ]
    )
)


def repeats(sent: str) -> dict[tuple[str, str], set[tuple[str, ...]]]:
    blocks = {name: body for name, body in _BLOCK.findall(sent)}
    assert {"summary", "requests", "ledger"} <= set(blocks), list(blocks)
    found = {}
    names = sorted(blocks)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            shared = (shingles(blocks[a]) & shingles(blocks[b])) - LABELS
            if shared:
                found[(a, b)] = shared
    return found


async def session(baton: BatonClient, llm: FakeLLM, workspace: Path) -> str:
    sid = await baton.new_session()
    (workspace / "app.toml").write_text('[server]\nport = 8431\nregion = "eu-west-1"\n')
    (workspace / "orders.py").write_text("def total(xs):\n    return sum(xs)\n" * 30)
    llm.add(tool_call("read", {"path": "app.toml"}))
    llm.add(tool_call("read", {"path": "orders.py"}))
    llm.add(text("Read the config and the module. " + "Considering the design. " * 40))
    await baton.prompt(sid, f"Fix the totals. {CONSTRAINT}")
    (workspace / "test_orders.sh").write_text(FAILING)
    llm.add(tool_call("bash", {"command": "sh test_orders.sh"}))
    llm.add(tool_call("bash", {"command": "sh check.sh"}))
    llm.add(tool_call("write", {"path": "check.sh", "content": "echo '5 passed'\n"}))
    llm.add(tool_call("bash", {"command": "sh check.sh"}))
    llm.add(text("The check passes now; the test still fails. " + "Reasoning. " * 40))
    await baton.prompt(sid, f"Run the tests. {VALUE}")
    llm.add(text("Noted. " + "More reasoning about the fix. " * 40))
    await baton.prompt(sid, "What is left?")
    llm.add(text("The failing test. " + "Details. " * 40))
    await baton.prompt(sid, "And then?")
    return sid


async def next_request(baton: BatonClient, llm: FakeLLM, sid: str) -> str:
    llm.add(text("ok"))
    await baton.prompt(sid, "go on")
    return llm.model_requests[-1].input_text()


@pytest.mark.asyncio
async def test_the_code_built_summary_repeats_no_other_block(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=SETTINGS)
    sid = await session(baton, llm, workspace)
    llm.add(text(""))  # no summary: Baton builds one
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True, record["notes"]
    assert any("built from the ledger" in n for n in record["notes"]), record["notes"]
    sent = await next_request(baton, llm, sid)
    assert sent.count(CONSTRAINT) == 1 and sent.count(VALUE) == 1
    # The ledger shows the failing command's output once, under the unresolved errors.
    assert sent.count("unsupported operand type(s) for +: NoneType and int") == 1
    assert repeats(sent) == {}


@pytest.mark.asyncio
async def test_a_model_summary_copying_the_person_and_the_ledger_is_said_once(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=SETTINGS)
    sid = await session(baton, llm, workspace)
    summary = "\n\n".join(
        [
            f"## {SECTIONS[0]}\n- The person said: {CONSTRAINT}\n- Fix the totals in orders.py.",
            f"## {SECTIONS[1]}\n- {VALUE}",
            f"## {SECTIONS[2]}\n- check.sh was rewritten to print the passing count.",
            f"## {SECTIONS[3]}\n- TypeError: unsupported operand type(s) for +: NoneType and int",
            f"## {SECTIONS[4]}\nFix total() in orders.py.",
        ]
    )
    llm.add(text(summary))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True, record["notes"]
    kept = record["summary"]
    assert CONSTRAINT not in kept and VALUE not in kept
    assert "check.sh was rewritten to print the passing count." in kept  # its own fact
    assert any("already shows" in n for n in record["notes"]), record["notes"]
    sent = await next_request(baton, llm, sid)
    assert repeats(sent) == {}


FOLDED_FACT = "The fallback region is ap-south-2 for the export job, as agreed with ops."


@pytest.mark.asyncio
async def test_a_summary_may_restate_what_the_requests_block_folded_away(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    """Once is once in the request: a message of the person's that the block counted away
    is not shown beside the summary, so the summary keeps a sentence restating it."""
    settings = {**SETTINGS, "compaction": {"requestsMaxTokens": 300, "keepRecentTokens": 200}}
    baton = await start_baton(settings=settings)
    sid = await baton.new_session()
    llm.add(text("Noted."))
    await baton.prompt(sid, f"Prepare the export. {CONSTRAINT}")
    llm.add(text("Noted."))
    await baton.prompt(sid, FOLDED_FACT)
    for n in range(40):
        llm.add(text(f"Part {n} reviewed. " + "Notes. " * 20))
        await baton.prompt(sid, f"Review part {n} of the export module with care.")
    summary = "\n\n".join(
        [
            f"## {SECTIONS[0]}\n- Prepare the export.",
            f"## {SECTIONS[1]}\n- {FOLDED_FACT}",
            f"## {SECTIONS[2]}\n- none",
            f"## {SECTIONS[3]}\n- none",
            f"## {SECTIONS[4]}\nReview the next part.",
        ]
    )
    llm.add(text(summary))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True, record["notes"]
    assert FOLDED_FACT in record["summary"], record["notes"]
    sent = await next_request(baton, llm, sid)
    requests = sent[sent.index("<baton:requests>") : sent.index("</baton:requests>")]
    assert "folded [requests:" in requests and FOLDED_FACT not in requests
    assert sent.count(FOLDED_FACT) == 1
    assert repeats(sent) == {}
