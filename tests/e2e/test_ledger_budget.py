"""The ledger stays within its budget whatever the session's length, through the real
server: a session of 1,000 tool calls (files read, commands that pass, failures a later
run fixes, one that stays failing) is compacted; its ledger block fits
`compaction.ledgerMaxTokens`, keeps the unresolved error and the newest entries in full,
and every entry it folded comes back, whole, from `recall` with the id it names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from baton.agent.tokens import estimate
from tests.conftest import StartBaton
from tests.e2e.test_compaction import start_baton as start_baton  # pins native compaction
from tests.e2e.test_compaction_fidelity import compact_and_send
from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient

LEDGER_MAX = 2_000
SETTINGS = {
    "permissions": {"bash": "allow", "write": "allow"},
    "compaction": {"auto": False, "ledgerMaxTokens": LEDGER_MAX},
    "contextWindow": 2_000_000,
    "maxSteps": 10_000,
}
CONSTRAINT = "Never touch the vendor/ directory."
CALLS_PER_REPLY = 25
_ID = re.compile(r"\[(ledger:[0-9a-z-]+)\]")


def session_calls(workspace: Path, total: int) -> list[tuple[str, dict[str, Any]]]:
    """`total` tool calls: a file read, a passing command, and every tenth time a
    failing check, the fix and the check again; one failure left unresolved at the end."""
    calls: list[tuple[str, dict[str, Any]]] = []
    n = 0
    while len(calls) < total - 1:
        if n % 10 == 9:
            calls.append(("bash", {"command": f"cat flag{n}.txt"}))
            calls.append(("write", {"path": f"flag{n}.txt", "content": "ok\n"}))
            calls.append(("bash", {"command": f"cat flag{n}.txt"}))
        else:
            (workspace / f"src{n}.txt").write_text(f"module {n}\n")
            calls.append(("read", {"path": f"src{n}.txt"}))
            calls.append(("bash", {"command": f"echo build-{n} version 1.{n}.0"}))
        n += 1
    calls = calls[: total - 1]
    calls.append(("bash", {"command": "cat missing-config.toml"}))
    return calls


async def run_calls(
    baton: BatonClient, llm: FakeLLM, sid: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    replies = [calls[i : i + CALLS_PER_REPLY] for i in range(0, len(calls), CALLS_PER_REPLY)]
    for reply in replies:
        llm.add(*(tool_call(name, args) for name, args in reply))
    llm.add(text("Done with the batch."))
    result = await baton.prompt(sid, f"Work through the modules. {CONSTRAINT}")
    assert result["stopReason"] == "end_turn", result


async def recall_all(baton: BatonClient, llm: FakeLLM, sid: str, ids: list[str]) -> list[str]:
    """Every page of every id's record, by `recall`, as the model would ask for them."""
    pages: dict[str, list[str]] = {i: [] for i in ids}
    asks = [(i, 0) for i in ids]
    while asks:
        llm.add(*(tool_call("recall", {"call_id": i, "offset": o}) for i, o in asks))
        llm.add(text("recalled"))
        await baton.prompt(sid, "get the folded entries back")
        outputs = list(llm.model_requests[-1].tool_outputs().values())[-len(asks) :]
        next_asks = []
        for (i, _), output in zip(asks, outputs, strict=True):
            assert output.startswith(f"[recall: full ledger record {i}"), output[:300]
            pages[i].append(output.split("\n", 1)[1])
            more = re.search(r"more with offset (\d+)\]", output.split("\n", 1)[0])
            if more:
                next_asks.append((i, int(more.group(1))))
        asks = next_asks
    return ["".join(p) for p in pages.values()]


@pytest.mark.asyncio
async def test_a_1000_call_session_keeps_its_ledger_in_budget_and_every_fold_recallable(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=SETTINGS)
    sid = await baton.new_session()
    calls = session_calls(workspace, 1_000)
    await run_calls(baton, llm, sid, calls)
    assert (
        sum(
            1
            for m in (await baton.load(sid))["messages"]
            for p in m["parts"]
            if p["type"] == "tool_call"
        )
        == 1_000
    )

    record, sent, block = await compact_and_send(baton, llm, sid)

    # Within its budget, and still the session's facts: the person's constraint (in the
    # requests block), the unresolved error in full, the newest entries in full.
    assert estimate(block) <= LEDGER_MAX, estimate(block)
    assert sent.count(CONSTRAINT) == 1
    assert "Unresolved errors" in block and "cat missing-config.toml" in block
    assert "No such file or directory" in block
    newest_echo = [a["command"] for n, a in calls if n == "bash" and "echo" in a["command"]][-1]
    assert f"`{newest_echo}` → 0" in block and "printed:" in block
    assert 'recall {"call_id": "ledger:' in block  # it says how to get what folded

    ledger = record["ledger"]
    ids = sorted(set(_ID.findall(block)))
    assert {"ledger:read", "ledger:commands"} <= set(ids), ids
    records = dict(zip(ids, await recall_all(baton, llm, sid, ids), strict=True))
    recalled = "\n".join(records.values())
    # Every file read, every command and every resolved error the ledger holds is in
    # the block or in what recall returned, with its exit codes and what it printed.
    for path in ledger["filesRead"]:
        assert path in block or f"- {path}\n" in recalled + "\n", path
    for run in ledger["commands"]:
        codes = ", ".join(str(c) for c in run["exitCodes"])
        line = f"- `{run['command']}` → {codes}"
        assert line in block or line in recalled, line
        if run.get("output"):
            assert f"printed: {run['output']}" in block + recalled, run["command"]
    for done in ledger["resolvedErrors"]:
        # A command's error stands once, under its command's runs; others under
        # "Resolved errors" with their source.
        first = done["message"].split("\n")[0].split(" / ")[0]
        assert done["source"] in block + recalled or first in block + recalled, done
    assert len(ledger["resolvedErrors"]) >= 45
    # A folded entry's own record names the calls it came from, each one recall away.
    one = next(i for i in ids if i not in ("ledger:read", "ledger:commands", "ledger:resolved"))
    assert re.search(r"From the calls .*call_\w+ \(", records[one]), records[one]
