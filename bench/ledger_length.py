"""The ledger and the view as a session grows: 100, 500 and 1,000 tool calls, and after
1, 3 and 10 compactions of one long session.

    python bench/ledger_length.py [--seed 7] [--window 32768] [--calls 1000]

One synthetic session (in process, the real app and store; the summariser is
scripted: it keeps each fact it is shown with probability 0.5) does turns of
three tool calls each: a file read, a file edit, a test command that fails one
time in three and passes on the next run. Every 100 tool calls Baton compacts
it by hand. After each compaction the bench measures the ledger block and the
whole view as Baton counts them, and whether every ledger fact (each file read
and changed, each command's exit-code trail) is in the view or one `recall`
away (by a search, or by the `[ledger:…]` id of a folded entry). Printed: the
figures at 100, 500 and 1,000 tool calls, which are also the 1st, 5th and 10th
compaction, and at the 3rd.

Targets: the ledger never over its cap (a quarter of the window, at most
`compaction.ledgerMaxTokens`), at least its floor (`compaction.ledgerShare`, 10%)
when it has that much to show; the view not growing from one compaction to the next;
every fact in view or one `recall` away. Set BATON_SERVER to another checkout's
`server/` to measure its code with the same session (the before figures).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(
    0, os.environ.get("BATON_SERVER") or str(Path(__file__).resolve().parent.parent / "server")
)
sys.path.insert(1, str(Path(__file__).resolve().parent))

# Baton is imported before fidelity.py (which puts this checkout's server/ first), so
# BATON_SERVER's code is the one measured.
from baton import protocol as p
from baton.agent.events import NullChannel
from baton.compaction.engine import CompactRequest
from baton.store.model import StoredPart, StoredText, StoredToolCall, ToolResultRecord
from baton.tools.base import Fact
from fidelity import IDENTITY, DroppingSummariser, StaticProviders, folded_records


def add_turn(app, state, rng: random.Random, n: int, failing: set[str]) -> list[str]:  # type: ignore[no-untyped-def]
    """One turn of three calls; the ledger facts it adds (what must stay reachable)."""
    store = app.sessions.store
    state.add(store.append_message(state.id, "user", "prompt", [StoredText(f"Work on part {n}.")]))
    read_path = f"src/pkg{n % 40}/module_{n}.py"
    edit_path = f"src/pkg{n % 40}/changed_{n}.py"
    # A command that failed runs again (and passes); a new one fails one time in three.
    retry = sorted(failing)[0] if failing else None
    command = retry or f"pytest tests/test_part_{n}.py -q"
    code = 0 if retry else rng.choice([0, 0, 1])
    if code:
        failing.add(command)
    else:
        failing.discard(command)
    output = (
        f"tests/test_part_{n}.py::test_total FAILED\nE   AssertionError: assert {n} == {n + 1}\n"
        f"1 failed, {n % 7 + 2} passed in 0.{n % 9}s\n[exit code {code}]"
        if code
        else f"{n % 7 + 3} passed in 0.{n % 9}s"
    )
    calls = [
        ("read", {"path": read_path}, "".join(f"{i}\tline {i} of part {n}\n" for i in range(20)),
         [Fact("read", path=read_path)], "completed"),
        ("edit", {"path": edit_path, "old_string": "a", "new_string": "b"}, f"edited {edit_path}",
         [Fact("modified", path=edit_path, action="modified")], "completed"),
        ("bash", {"command": command}, output, [Fact("command", command=command, exit_code=code)],
         "failed" if code else "completed"),
    ]  # fmt: skip
    parts: list[StoredPart] = [StoredText(f"Looking at part {n}. " * 6)]
    results = []
    for index, (name, args, out, facts, status) in enumerate(calls):
        call_id = f"call_{n}_{index}"
        parts.append(StoredToolCall(call_id, name, input=args, arguments=json.dumps(args)))
        results.append(ToolResultRecord(call_id, status, out, facts))  # type: ignore[arg-type]
    state.add(store.append_message(state.id, "assistant", "step", parts, results=results))
    return [read_path, edit_path]


def reachable(app, sid: str, text: str, facts: list[str]) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """(facts in the view, facts in the view or one `recall` away)."""
    from baton.compaction.recall import RecallSource

    recall = RecallSource(app.sessions)
    in_view = [f for f in facts if f in text]
    folded = folded_records(recall, sid, text)
    found = 0
    for fact in facts:
        if (
            fact in text
            or fact in folded
            or "no line" not in recall.recall(sid, call_id=None, query=fact)
        ):
            found += 1
        elif os.environ.get("BENCH_DEBUG"):
            print("not reachable:", fact, file=sys.stderr)
    return len(in_view), found


async def run(seed: int, window: int, total_calls: int) -> list[dict[str, float]]:
    from baton.app import build_app

    rng = random.Random(seed)
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="baton-ledger-") as tmp:
        home = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(home / "data")
        os.environ["XDG_CONFIG_HOME"] = str(home / "config")
        ws = home / "ws"
        ws.mkdir()
        settings = {"contextWindow": window, "compaction": {"strategy": "native", "auto": False}}
        app = build_app(ws, NullChannel(), environ={}, client_settings=settings)
        summariser = DroppingSummariser(rng, [])
        app.sessions.models.providers = StaticProviders(summariser)  # type: ignore[assignment]
        sid = app.sessions.new_session(p.SessionNewParams(title="ledger length")).session_id
        state = app.sessions.state(sid)
        facts: list[str] = []
        failing: set[str] = set()
        n = calls = 0
        while calls < total_calls:
            facts += add_turn(app, state, rng, n, failing)
            n += 1
            calls += 3
            if calls % 100 >= 3 and calls < total_calls:
                continue
            summariser.facts = facts
            record = await app.compaction.engine.compact(state, CompactRequest("manual"))
            after = app.sessions.build_context(state, app.sessions.settings(), IDENTITY)
            text = "\n".join(
                getattr(item, "text", "") or getattr(item, "output", "") or ""
                for item in after.request.items
            )
            trails = [
                f"`{c.command}` → " + ", ".join(str(x) for x in (c.exit_codes or [c.exit_code]))
                for c in record.ledger.commands
                if len(c.exit_codes or [c.exit_code]) <= 8
            ]
            in_view, found = reachable(app, sid, text, facts + trails)

            sizes = {x.kind: x.tokens for x in after.parts}
            rows.append(
                {
                    "calls": calls,
                    "compaction": len(rows) + 1,
                    "committed": float(record.committed),
                    "ledger": sizes.get("ledger", 0),
                    "requests": sizes.get("requests", 0),
                    "summary": sizes.get("checkpoint", 0),
                    "view": after.tokens,
                    "facts": len(facts + trails),
                    "in_view": in_view,
                    "reachable": found,
                }
            )
        await app.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--window", type=int, default=32_768)
    parser.add_argument("--calls", type=int, default=1_000)
    args = parser.parse_args()
    rows = asyncio.run(run(args.seed, args.window, args.calls))
    print(
        f"window {args.window:,}; the ledger's floor 10% = {args.window // 10:,} tokens, its cap"
        f" {min(8_000, args.window // 4):,}; between them, the room the view leaves"
    )
    print(
        "tool calls  compaction  ledger (% of window)  view    of which: requests  summary"
        "  facts in view  in view or 1 recall"
    )
    for row in rows:
        print(
            f"{row['calls']:>10,}  {row['compaction']:>10.0f}  "
            f"{row['ledger']:>6,.0f} ({100 * row['ledger'] / args.window:4.1f}%)"
            f"  {row['view']:>12,.0f}  {row['requests']:>16,.0f}  {row['summary']:>7,.0f}"
            f"  {row['in_view']:>6.0f}/{row['facts']:<6.0f}"
            f"  {row['reachable']:>6.0f}/{row['facts']:<6.0f}"
        )


if __name__ == "__main__":
    main()
