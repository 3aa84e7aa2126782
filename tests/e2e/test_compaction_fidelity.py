"""Through the real server: what the person said and what the tools printed
survive compaction, whatever the summary keeps."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.e2e.test_compaction import (
    FACTLESS_SUMMARY,
    history_with_tools,
    is_summary_request,
)
from tests.e2e.test_compaction import start_baton as start_baton  # pins native compaction
from tests.e2e.test_compaction_contract import summary_requests
from tests.fake_llm import FakeLLM, incomplete, text, tool_call
from tests.harness import BatonClient

ALLOW = {"permissions": {"bash": "allow"}}
CONSTRAINT = "Never touch the vendor/ directory."
VALUE = "The staging date is 2026-03-14 and the bucket is s3://acme-staging-eu."


async def work(baton: BatonClient, llm: FakeLLM, sid: str, workspace: Path, n: int) -> None:
    """One turn that reads a large file: history worth compacting."""
    name = f"data{n}.txt"
    (workspace / name).write_text(f"row {n}\n" * 400)
    llm.add(tool_call("read", {"path": name}))
    llm.add(text(f"Read {name}."))
    await baton.prompt(sid, f"read {name}")


async def run_check_three_times(
    baton: BatonClient, llm: FakeLLM, sid: str, check: Path, scripts: list[str]
) -> None:
    """Three turns, each running `sh check.sh` with the next script, then long prose."""
    turns = [("run the check", "It fails. ", "Looking into it. ")]
    turns += [("again", "Another failure. ", "Still looking. ")]
    turns += [("once more", "Fixed. ", "Explaining the fix. ")]
    for script, (prompt, said, filler) in zip(scripts, turns, strict=True):
        check.write_text(script)
        llm.add(tool_call("bash", {"command": "sh check.sh"}))
        llm.add(text(said + filler * 60))
        await baton.prompt(sid, prompt)


async def compact_and_send(
    baton: BatonClient, llm: FakeLLM, sid: str
) -> tuple[dict[str, Any], str, str]:
    """A manual compaction with a factless summary, then one more turn: the record, what
    that turn sent and the ledger block in it."""
    llm.add(text(FACTLESS_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True, record["notes"]
    llm.add(text("ok"))
    await baton.prompt(sid, "what now?")
    sent = llm.model_requests[-1].input_text()
    return record, sent, sent[sent.index("<baton:ledger>") : sent.index("</baton:ledger>")]


@pytest.mark.asyncio
async def test_a_constraint_and_a_value_survive_two_compactions_verbatim(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW)
    sid = await baton.new_session()
    pasted = "log line " + "x" * 60 + "\n"
    llm.add(text("Noted."))
    await baton.prompt(sid, f"{CONSTRAINT} {VALUE}")
    llm.add(text("Got the log."))
    await baton.prompt(sid, "Here is the log:\n" + pasted * 80 + "END OF LOG")
    for n in range(3):
        await work(baton, llm, sid, workspace, n)

    # The summaries drop every fact: the person's words must come from Baton's block.
    llm.add(text(FACTLESS_SUMMARY))
    first = await baton.request("baton/session/compact", {"sessionId": sid})
    assert first["committed"] is True, first["notes"]
    for n in range(3, 6):
        await work(baton, llm, sid, workspace, n)
    llm.add(text(FACTLESS_SUMMARY))
    second = await baton.request("baton/session/compact", {"sessionId": sid})
    assert second["committed"] is True, second["notes"]
    assert second["tokensAfter"] < second["tokensBefore"]

    llm.add(text("ok"))
    await baton.prompt(sid, "go on")
    request = llm.model_requests[-1]
    assert not is_summary_request(request)
    sent = request.input_text()
    assert sent.count(CONSTRAINT) == 1 and sent.count(VALUE) == 1
    assert "read data0.txt" in sent  # every compacted request, in order
    assert sent.index("read data0.txt") < sent.index("read data3.txt")
    # Order: summary checkpoint, then the requests block, then the ledger.
    assert sent.index("<baton:summary>") < sent.index("<baton:requests>")
    assert sent.index("</baton:requests>") < sent.index("<baton:ledger>")
    # The pasted log is cut to its head and end, the rest one recall away.
    assert "END OF LOG" in sent and sent.count(pasted.strip()) < 20
    loaded = await baton.load(sid)
    log_id = next(m["id"] for m in loaded["messages"] if "Here is the log" in str(m["parts"]))
    assert f'`recall {{"call_id": "{log_id}"}}`' in sent

    llm.add(tool_call("recall", {"call_id": log_id}))
    llm.add(text("done"))
    await baton.prompt(sid, "get the whole log back")
    [output] = [
        o
        for o in llm.model_requests[-1].tool_outputs().values()
        if o.startswith(f"[recall: exact text of the person's message {log_id}")
    ]
    assert output.count(pasted.strip()) == 80


PLAN = """# Export

Goal: export the report as CSV.

- [ ] Add the exporter in src/export.py
- [ ] Write tests
"""


@pytest.mark.asyncio
async def test_a_fresh_start_makes_no_summary_call_and_keeps_requests_ledger_and_plan(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW)
    sid = await baton.new_session(mode="plan", title="Export")
    (workspace / "report.py").write_text("def report():\n    return 'planning detail'\n" * 50)
    llm.add(tool_call("read", {"path": "report.py"}))
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Planned: the exporter goes next to the report. Discussed at length."))
    await baton.prompt(sid, f"Plan a CSV export. {CONSTRAINT}")
    seen = len(llm.model_requests)

    record = await baton.request("baton/session/compact", {"sessionId": sid, "fresh": True})
    assert len(llm.model_requests) == seen, "a fresh start makes no model call"
    assert record["committed"] is True and record["strategy"] == "fresh"
    assert record.get("summary") is None
    assert re.match(r"fresh start: \d+ message\(s\) left the view", record["notes"][0])
    assert baton.updates(sid, "compaction_started")[-1]["strategy"] == "fresh"

    llm.add(text("building"))
    await baton.prompt(sid, "now build it")
    sent = llm.model_requests[-1].input_text()
    assert "<baton:summary>" not in sent
    assert CONSTRAINT in sent and "<baton:requests>" in sent  # the person's words
    assert "Files read: report.py" in sent  # the ledger
    assert "<baton:plan>" in sent and "Add the exporter in src/export.py" in sent
    # The planning conversation left the view: one recall away.
    assert "planning detail" not in sent and "Discussed at length" not in sent
    llm.add(tool_call("recall", {"query": "Discussed at length"}))
    llm.add(text("found"))
    await baton.prompt(sid, "what did you say while planning?")
    outputs = llm.model_requests[-1].tool_outputs().values()
    assert any("Discussed at length" in o for o in outputs)

    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    assert [c["strategy"] for c in listed["compactions"]] == ["fresh"]


@pytest.mark.asyncio
async def test_the_ledger_keeps_every_failure_short_outputs_and_config_values(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW)
    sid = await baton.new_session()
    (workspace / "app.toml").write_text(
        '[server]\nport = 8431\nregion = "eu-west-1"\n# a comment\n[db]\nname = "orders"\n'
    )
    llm.add(tool_call("read", {"path": "app.toml"}))
    llm.add(tool_call("bash", {"command": "echo 'serde v1.0.197'"}))
    scripts = [
        "echo 'Traceback (most recent call last):'\necho '  File \"app.py\", line 3, in <module>'\n"
        "echo \"TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'\"\nexit 1\n",
        "echo 'KeyError: missing key DATABASE_URL' >&2\nexit 2\n",
        "echo 'all good'\n",
    ]
    await run_check_three_times(baton, llm, sid, workspace / "check.sh", scripts)

    record, sent, ledger = await compact_and_send(baton, llm, sid)
    [run] = [c for c in record["ledger"]["commands"] if c["command"] == "sh check.sh"]
    assert run["exitCodes"] == [1, 2, 0]
    assert [f["run"] for f in run["failures"]] == [1, 2]
    assert run["failures"][0]["error"].endswith("'NoneType' and 'int'")
    assert "KeyError: missing key DATABASE_URL" in run["failures"][1]["error"]
    # Both failures of the command, each with its message (not cut at the message's end).
    assert "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'" in ledger
    assert "KeyError: missing key DATABASE_URL" in ledger
    assert "printed: serde v1.0.197" in ledger
    assert '- app.toml: [server] port = 8431; [server] region = "eu-west-1"; [db] name' in ledger
    assert "Looking into it" not in sent  # the summarised part left the view


CUT_SUMMARY = (
    "## Goals, constraints, preferences and open questions\nList missing-dir.\n\n"
    "## Exact facts\nnotes.txt holds alpha lines.\n\n"
    "## Changed files and work in progress\nNothing chan"
)
REST = (
    "## Changed files and work in progress\nnone\n\n"
    "## Tool results, rejected hypotheses and incomplete work\nThe listing failed.\n\n"
    "## Next action\nCreate missing-dir, then list it."
)


@pytest.mark.asyncio
async def test_a_summary_cut_at_its_cap_is_completed_by_asking_for_what_is_missing(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW)
    sid = await history_with_tools(baton, llm, workspace)
    llm.add(text(CUT_SUMMARY), incomplete())
    llm.add(text(REST))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    first, second = summary_requests(llm)
    # The second call continues the first: its answer so far (without the unfinished
    # section), then the ask for exactly the sections still missing, within half the cap.
    asked = second.last_user_text()
    assert "## Changed files and work in progress" in asked and "## Next action" in asked
    assert "## Exact facts" not in asked
    assert (
        second["max_output_tokens" if "max_output_tokens" in second else "max_tokens"]
        <= (first["max_output_tokens" if "max_output_tokens" in first else "max_tokens"])
    )
    summary = record["summary"]
    assert "Nothing chan" not in summary  # the cut line is gone
    assert "Create missing-dir, then list it." in summary
    assert "notes.txt holds alpha lines." in summary
    for name in SECTIONS:
        assert summary.count(f"## {name}") == 1
    assert any("stopped at max_output_tokens" in n and "completed" in n for n in record["notes"])


@pytest.mark.asyncio
async def test_a_summary_cut_twice_keeps_its_finished_sections_and_builds_the_rest(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW)
    sid = await history_with_tools(baton, llm, workspace)
    llm.add(text(CUT_SUMMARY), incomplete())
    llm.add(text("## Changed files and work in progress\nno"), incomplete())
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert len(summary_requests(llm)) == 2
    assert record["committed"] is True
    summary = record["summary"]
    # The sections the model finished stay; the cut ones are built by code.
    assert "List missing-dir." in summary and "notes.txt holds alpha lines." in summary
    assert "Nothing chan" not in summary
    assert "Continue the person's latest request" in summary  # built by code
    for name in SECTIONS:
        assert summary.count(f"## {name}") == 1
    notes = " | ".join(record["notes"])
    assert "was cut too: the model's unfinished sections were not accepted" in notes
    assert "kept the sections the stopped summary had finished" in notes


@pytest.mark.asyncio
async def test_the_escalation_updates_the_previous_summary_with_what_it_must_drop(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW)
    sid = await baton.new_session()
    for n in range(8):
        llm.add(text(f"answer {n} " + "reasoning about the design " * 40))
        await baton.prompt(sid, f"question {n}")
    # Level 1's summary is long (within its bound): the view misses the target, so the
    # engine keeps fewer messages and summarises again.
    long_summary = "\n\n".join(
        f"## {name}\n"
        + "\n".join(f"- level one fact {k} of {i}: value {k * 37 + i}" for k in range(12))
        for i, name in enumerate(SECTIONS)
    )
    llm.add(text(long_summary))
    llm.add(text(FACTLESS_SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert any("escalated to level 2" in n for n in record["notes"]), record["notes"]
    first, second = summary_requests(llm)
    assert "answer 0 " in first.input_text()
    sent = second.input_text()
    # The second request reads the first summary as its anchor, and only the messages
    # between the two cuts: never the whole session again.
    assert "<baton:summary>" in sent and "level one fact 11 of 4: value 411" in sent
    assert "answer 0 " not in sent
    assert "update it" in second.last_user_text()


@pytest.mark.asyncio
async def test_claims_quoted_output_is_left_alone_and_a_stale_failure_is_corrected(
    start_baton: StartBaton, llm: FakeLLM
) -> None:
    baton = await start_baton(settings=ALLOW)
    sid = await baton.new_session()
    llm.add(tool_call("bash", {"command": "cat flag.txt"}))
    llm.add(tool_call("bash", {"command": "echo ok > flag.txt"}))
    llm.add(tool_call("bash", {"command": "cat flag.txt"}))
    llm.add(text("Fixed. " + "Explaining the fix at length. " * 40))
    await baton.prompt(sid, "make cat flag.txt pass")
    quoted = "- The first run failed with `cat: flag.txt: No such file or directory`"
    stale = "- `cat flag.txt` is still failing"
    summary = FACTLESS_SUMMARY.replace(
        "## Tool results, rejected hypotheses and incomplete work\nnone",
        f"## Tool results, rejected hypotheses and incomplete work\n{quoted}\n{stale}",
    )
    llm.add(text(summary))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert quoted in record["summary"]  # quoted output is not a command that never ran
    assert stale not in record["summary"]
    assert "`cat flag.txt` passes now: its latest run exited 0 (runs: 1, 0)" in record["summary"]
    assert any(n.startswith("corrected 1 summary statement(s)") for n in record["notes"])


@pytest.mark.asyncio
async def test_claims_a_read_dotfile_said_changed_is_removed_a_true_change_kept(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"permissions": {"bash": "allow", "write": "allow"}})
    sid = await baton.new_session()
    (workspace / ".env").write_text("API_TIMEOUT=42\n")
    (workspace / "config").mkdir()
    (workspace / "config" / "app.yaml").write_text("server:\n  port: 8431\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "orders.test.js").write_text("expect(total([])).toBe(1);\n")
    (workspace / "status.sh").write_text("echo 'modified: .env'\n")
    llm.add(tool_call("read", {"path": ".env"}))
    llm.add(tool_call("read", {"path": "config/app.yaml"}))
    llm.add(
        tool_call(
            "edit",
            {"path": "src/orders.test.js", "old_string": "toBe(1)", "new_string": "toBe(0)"},
        )
    )
    llm.add(tool_call("bash", {"command": "sh status.sh"}))
    llm.add(text("Done. " + "Explaining the change at length. " * 40))
    await baton.prompt(sid, "fix the expected total")
    false_dotfile = "- `.env` has been modified"
    false_config = "- config/app.yaml was changed"
    true_change = "- src/orders.test.js was updated to expect 0"
    quoted = "- `sh status.sh` printed `modified: .env`"
    summary = FACTLESS_SUMMARY.replace(
        "## Changed files and work in progress\nnone",
        "## Changed files and work in progress\n"
        + "\n".join([false_dotfile, false_config, true_change, quoted]),
    )
    llm.add(text(summary))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True, record["notes"]
    kept = record["summary"]
    assert false_dotfile not in kept and false_config not in kept
    assert "the ledger records no change to .env (files changed: src/orders.test.js)" in kept
    assert true_change in kept  # a true statement is not a correction
    assert quoted in kept  # what a tool printed is not the summary's claim
    notes = " | ".join(record["notes"])
    assert "corrected 2 summary statement(s)" in notes
    assert f"(removed: {false_dotfile!r})" in notes


@pytest.mark.asyncio
async def test_the_ledger_keeps_both_sides_of_a_failed_comparison(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=ALLOW)
    sid = await baton.new_session()
    # jest's failed expectation, then cargo's failed assert_eq, then a pass.
    scripts = [
        "printf ' FAIL  tests/orders.test.js\\n    expect(received).toBe(expected)\\n\\n'\n"
        "printf '    Expected: 50\\n    Received: 49\\n\\n'\n"
        "printf 'Tests:       1 failed, 5 passed, 6 total\\nTime:        0.84 s\\n'\nexit 1\n",
        "printf 'test tests::total_of_empty ... FAILED\\n'\n"
        "printf \"thread 'tests::total_of_empty' panicked at src/orders.rs:40:9:\\n\"\n"
        "printf 'assertion `left == right` failed\\n  left: 61\\n right: 62\\n\\n'\n"
        "printf 'test result: FAILED. 5 passed; 1 failed; 0 ignored\\n'\nexit 101\n",
        "echo '6 passed'\n",
    ]
    await run_check_three_times(baton, llm, sid, workspace / "check.sh", scripts)

    _, sent, ledger = await compact_and_send(baton, llm, sid)
    assert "Expected: 50 / Received: 49" in ledger
    assert "left: 61 / right: 62" in ledger
    assert "Looking into it" not in sent  # the outputs themselves left the view


@pytest.mark.asyncio
async def test_a_summary_restating_the_request_is_committed_without_the_echo(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    """The demo's 1.5B model wrote 'Exact facts: The conversation above, up to this
    message, is being compacted…' into its summary: Baton's own words, not a fact."""
    baton = await start_baton(settings=ALLOW)
    sid = await baton.new_session()
    await work(baton, llm, sid, workspace, 1)
    await work(baton, llm, sid, workspace, 2)
    echo = "Exact facts: The conversation above, up to this message, is being compacted."
    fact = "- The report totals are rounded to 2 decimals."
    summary = FACTLESS_SUMMARY.replace("## Exact facts\nnone", f"## Exact facts\n{echo}\n{fact}")
    llm.add(text(summary))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True, record["notes"]
    assert "is being compacted" not in record["summary"]
    assert fact in record["summary"]
    notes = " | ".join(record["notes"])
    assert "dropped 1 summary sentence(s) restating Baton's summary request" in notes
    llm.add(text("ok"))
    await baton.prompt(sid, "go on")
    sent = llm.model_requests[-1].input_text()
    block = sent.split("<baton:summary>", 1)[1].split("</baton:summary>", 1)[0]
    assert fact in block and "is being compacted" not in block
