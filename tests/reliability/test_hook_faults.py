"""Hook faults: whatever a hook does, compaction completes every time and the failure is recorded.

Every kind of broken hook is installed at once, at every compaction hook point
(`pre_compact`, `compacting`, `compacted`) and around tools: command hooks
that crash, hang past their timeout, print garbage, print more than the 1 MB
limit, print invalid UTF-8, flood stderr, answer with the wrong shape or an
unknown field, never read their (large) input, or cannot start; Python
plugins that fail to import, raise, return garbage or block. Then the
session is compacted again and again, and after each compaction the suite
checks that the record is complete (the summary is there, the view moved),
that each failing `pre_compact` hook has `{hook, ran: false, error}` in the
record's `preCompact`, that each failing `compacting` hook left a note, and
that tool calls still ran.

2 compactions in CI; `BATON_RELIABILITY_FULL=1` runs 20 (and adds a plugin
that blocks past its 30-second limit in the first two).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text, tool_call
from tests.reliability.conftest import FULL, RecordFigures, size

COMPACTIONS = size(2, 20)
SUMMARY = "\n\n".join(f"## {name}\nkept: {name.lower()}" for name in SECTIONS)
PY = sys.executable


def py(name: str, code: str, timeout: float = 5) -> dict[str, Any]:
    return {"command": [PY, "-c", code], "timeout": timeout, "name": name}


# name → (command hook, what its error must say)
BROKEN: dict[str, tuple[dict[str, Any], str]] = {
    "crash": (py("crash", "import sys; sys.stdin.read(); raise SystemExit('boom')"), "exited"),
    "hang": (py("hang", "import time; time.sleep(60)", timeout=1), "timed out"),
    "garbage": (py("garbage", "import sys; sys.stdin.read(); print('<html>oops')"), "not JSON"),
    "huge": (
        py("huge", "import sys; sys.stdin.read(); sys.stdout.write('x' * 1_500_000)"),
        "more than",
    ),
    "bad_utf8": (
        py("bad_utf8", "import sys; sys.stdin.read(); sys.stdout.buffer.write(b'{\"a\\xff\": 1}')"),
        "",
    ),
    "array": (py("array", "import sys; sys.stdin.read(); print('[1, 2]')"), "not a JSON object"),
    "unknown_field": (
        py("unknown_field", "import sys; sys.stdin.read(); print('{\"shouldRunn\": true}')"),
        "invalid answer",
    ),
    "no_read": (py("no_read", "import time; time.sleep(30)", timeout=1), "timed out"),
    "missing": (
        {"command": ["/nonexistent/hook-binary"], "timeout": 5, "name": "missing"},
        "could not start",
    ),
}
# Works, but floods stderr on the way: not a failure.
NOISY = py(
    "noisy",
    "import sys; sys.stdin.read(); sys.stderr.write('e' * 5_000_000); print('{\"shouldRun\": false}')",
)

PLUGINS = {
    "p_import.py": "raise ImportError('a dependency is missing')\n",
    "p_raises.py": (
        "from baton.hooks import hookimpl\n\n"
        "@hookimpl\ndef baton_pre_compact(event):\n    raise RuntimeError('plugin bug')\n\n"
        "@hookimpl\ndef baton_compacting(event):\n    raise RuntimeError('plugin bug')\n\n"
        "@hookimpl\ndef baton_compacted(event):\n    raise RuntimeError('plugin bug')\n"
    ),
    "p_garbage.py": (
        "from baton.hooks import hookimpl\n\n"
        "@hookimpl\ndef baton_pre_compact(event):\n    return ['not', 'an', 'answer']\n\n"
        "@hookimpl\ndef baton_compacting(event):\n    return {'context': 5}\n"
    ),
}
# Blocks past the 30-second plugin limit, in the first two compactions only (each costs 30 s).
BLOCKING_PLUGIN = (
    "import asyncio, itertools\nfrom baton.hooks import hookimpl\n\n"
    "calls = itertools.count()\n\n"
    "@hookimpl\nasync def baton_pre_compact(event):\n"
    "    if next(calls) < 2:\n        await asyncio.sleep(3600)\n"
)
PLUGIN_ERRORS = {"p_raises": "plugin bug", "p_garbage": "not a JSON object"}


@pytest.mark.asyncio
@pytest.mark.timeout(size(180, 1800))
async def test_broken_hooks_never_stop_a_compaction(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, record_figures: RecordFigures
) -> None:
    plugins = workspace / ".baton" / "plugins"
    plugins.mkdir(parents=True)
    for name, source in PLUGINS.items():
        (plugins / name).write_text(source)
    if FULL:
        (plugins / "p_blocks.py").write_text(BLOCKING_PLUGIN)
    (workspace / "big.txt").write_text("a line of a large file\n" * 5000)  # a large hook input
    commands = [hook for hook, _ in BROKEN.values()] + [NOISY]
    hooks = {
        "preCompact": commands,
        "compacting": commands,
        "compacted": commands,
        "toolBefore": [BROKEN["garbage"][0], BROKEN["crash"][0]],
        "toolAfter": [BROKEN["crash"][0]],
    }
    baton = await start_baton(
        settings={
            "hooks": hooks,
            "permissions": {"write": "allow"},
            "compaction": {"strategy": "native"},
        }
    )
    sid = await baton.new_session()
    completed = recorded = tools_ran = 0
    failures: list[str] = []
    slowest = 0.0
    for n in range(COMPACTIONS):
        llm.reset()
        llm.add(tool_call("read", {"path": "big.txt"}))
        llm.add(tool_call("write", {"path": f"out-{n}.txt", "content": "written"}))
        llm.add(text(f"Turn {n} done."))
        result = await baton.prompt(sid, f"turn {n}")
        if result["stopReason"] != "end_turn":
            failures.append(f"turn {n} ended with {result}")
        if (workspace / f"out-{n}.txt").exists():
            tools_ran += 1
        llm.add(text(SUMMARY))
        started = time.monotonic()
        try:
            record = await baton.request("baton/session/compact", {"sessionId": sid})
        except Exception as exc:
            failures.append(f"compaction {n} failed: {exc!r}")
            continue
        slowest = max(slowest, time.monotonic() - started)
        if record.get("summary") != SUMMARY:
            failures.append(f"compaction {n}: summary {record.get('summary')!r}")
            continue
        completed += 1
        outcomes = {o["hook"]: o for o in record["preCompact"]}
        for name, (_, says) in BROKEN.items():
            outcome = outcomes.get(name)
            if outcome is None or outcome["ran"] or not outcome.get("error"):
                failures.append(f"compaction {n}: pre_compact {name} recorded as {outcome}")
            elif says not in outcome["error"]:
                failures.append(
                    f"compaction {n}: {name}'s error {outcome['error']!r} lacks {says!r}"
                )
            else:
                recorded += 1
        for name, says in PLUGIN_ERRORS.items():
            outcome = outcomes.get(name)
            if outcome is None or says not in (outcome.get("error") or ""):
                failures.append(f"compaction {n}: plugin {name} recorded as {outcome}")
            else:
                recorded += 1
        if FULL and n < 2:
            blocked = outcomes.get("p_blocks") or {}
            if "timed out after 30 s" not in (blocked.get("error") or ""):
                failures.append(f"compaction {n}: the blocking plugin recorded as {blocked}")
            else:
                recorded += 1
        if outcomes.get("noisy", {}).get("error"):
            failures.append(
                f"compaction {n}: the noisy but working hook failed: {outcomes['noisy']}"
            )
        notes = " ".join(record.get("notes") or [])
        for name in [*BROKEN, "p_raises"]:
            if f"compacting hook {name} failed" not in notes:
                failures.append(f"compaction {n}: no note for the compacting hook {name}")
        if baton.updates(sid, "compaction_failed"):
            failures.append(f"compaction {n}: a compaction_failed update was sent")
    # The plugin that could not import was skipped and the editor told.
    warned = any("p_import.py was skipped" in m.message for m in baton.lsp.messages)
    # Still usable afterwards.
    llm.reset()
    llm.add(text("still fine"))
    usable = (await baton.prompt(sid, "after all that"))["stopReason"] == "end_turn"
    record_figures(
        "hook-faults",
        broken_hooks=len(BROKEN) + len(PLUGIN_ERRORS) + 1 + int(FULL),
        compactions=COMPACTIONS,
        completed=completed,
        failures_recorded=recorded,
        tool_calls_run=f"{tools_ran}/{COMPACTIONS}",
        slowest_compaction_s=round(slowest, 1),
        import_failure_reported=warned,
        usable_after=usable,
    )
    assert not failures, "\n".join(failures[:30])
    assert completed == COMPACTIONS and tools_ran == COMPACTIONS
    assert warned and usable
