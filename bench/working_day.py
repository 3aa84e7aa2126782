"""The whole working day through one real `baton serve` (and its restarts), with figures.

    python bench/working_day.py          # the whole day: 8 hours, ~2,700 tool calls
    python bench/working_day.py --ci     # the short day the suite runs
    python bench/working_day.py --tracemalloc   # also: where the server's memory grows
    python bench/working_day.py --tracemalloc --frames 1   # the same, by line only: faster
    python bench/working_day.py --allocators   # untraced: the allocators' own figures

Runs tests/reliability/test_working_day.py (its docstring says what the day does
and what it checks) at full size, keeps the figures as JSON
(build/working-day-figures.json) and prints them: requests answered (late, cut by
a kill), messages lost across restarts, compactions and the view and ledger tokens
after each, facts in view / one `recall` away / lost, children, RSS at start,
after each hour and at the end, and the p50/p99 time between two model requests of
a turn per hour. It fails (exit status 1) when a check of the test fails, among
them: a view after a compaction over the room once the budgets are reached, or
larger than the view before it; the last hour's step overhead p50 over twice the
first's. With --tracemalloc the server traces its allocations (bench/memory_probe)
and the figures say where its memory grew in the last process.
docs/reliability.md has the figures of a run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    full = "--ci" not in argv
    out = REPO / "build" / "working-day-figures.json"
    out.parent.mkdir(exist_ok=True)
    out.unlink(missing_ok=True)
    env = {
        **os.environ,
        "BATON_RELIABILITY_FULL": "1" if full else "",
        "BATON_RELIABILITY_FIGURES": str(out),
    }
    if "--allocators" in argv:
        argv = [*argv, "--tracemalloc", "--frames", "0"]
    if "--tracemalloc" in argv:
        # The server traces its allocations (bench/memory_probe): slower, for finding growth.
        probe = REPO / "build" / "tracemalloc"
        probe.mkdir(parents=True, exist_ok=True)
        for old in probe.glob("*.snap"):
            old.unlink()
        env["BATON_DAY_TRACEMALLOC"] = str(probe)
        if "--frames" in argv:
            # Fewer frames per allocation: where by file and line only, and much faster.
            env["BATON_TRACEMALLOC_FRAMES"] = argv[argv.index("--frames") + 1]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    status = subprocess.call([*command, "tests/reliability/test_working_day.py"], cwd=REPO, env=env)
    if out.exists():
        data = json.loads(out.read_text())
        figures = data["suites"].get("working day", {})
        print(f"\nWorking day ({'whole day' if data['full'] else 'short day'})")
        for name, value in figures.items():
            if name == "view_tokens_after":
                print("  view tokens after each compaction, per session:")
                for session, values in value.items():
                    print(f"    {session}: {values}")
                    print(
                        f"      {len(values)} compactions; first {values[0]}, smallest "
                        f"{min(values)}, largest {max(values)}, last {values[-1]}"
                    )
            elif name.startswith("memory_growth"):
                print(f"  {name}:")
                for line in value:
                    print(f"    {line}")
            elif name == "rss_kib":
                print("  server RSS (MiB): " + ", ".join(f"{w} {k / 1024:.1f}" for w, k in value))
            else:
                print(f"  {name:<24} {value}")
        print(f"\n(also in {out.relative_to(REPO)})")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
