"""How often `baton demo` shows each of its phases on the model it runs on.

    flock /tmp/baton-model.lock python bench/demo_runs.py [--runs 5] [--out runs.json]

Runs `baton demo --clean` (this checkout's, on the default local model unless
OPENAI_API_KEY is set) `--runs` times, one after another, and reads each run's
closing `demo phases: plan=ok approval=ok ...` line. Prints, per run, the
phases that failed and the wall time, then per phase how many runs it
succeeded in (the issue's target: every phase in at least 4 of 5 runs) and the
median and longest run. A run that ends without the line (a crash, a timeout)
counts as every phase failed. Minutes per run on a 2-core CPU: by hand, under
the model lock, never in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "server"))

from baton.faces.demo import PHASES  # noqa: E402

LINE = re.compile(r"^demo phases: (.*)$", re.MULTILINE)
RUN_TIMEOUT = 1500.0  # seconds; the demo's own budget is 1200


def parse_phases(stdout: str) -> dict[str, bool] | None:
    """Phase -> succeeded, from the demo's closing line; None without one."""
    found = LINE.findall(stdout)
    if not found:
        return None
    pairs = dict(item.split("=", 1) for item in found[-1].split())
    return {phase: pairs.get(phase.replace(" ", "-")) == "ok" for phase in PHASES}


def run_once(index: int, log_dir: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "server")}
    log = log_dir / f"run{index}.log"
    began = time.monotonic()
    # Written as it goes, so a run can be watched (`tail -f`).
    with log.open("w", encoding="utf-8") as out:
        try:
            code = subprocess.run(
                [sys.executable, "-m", "baton", "demo", "--clean"],
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=RUN_TIMEOUT,
            ).returncode
        except subprocess.TimeoutExpired:
            code = -1
    seconds = time.monotonic() - began
    phases = parse_phases(log.read_text(encoding="utf-8")) or dict.fromkeys(PHASES, False)
    failed = [phase for phase, ok in phases.items() if not ok]
    print(
        f"run {index}: exit {code}, {seconds:.0f} s, "
        + ("every phase" if not failed else "failed: " + ", ".join(failed)),
        flush=True,
    )
    return {"run": index, "exit": code, "seconds": round(seconds, 1), "phases": phases}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, help="write the runs as JSON here")
    parser.add_argument(
        "--logs", type=Path, default=Path("/tmp/baton-demo-runs"), help="each run's output"
    )
    args = parser.parse_args()
    args.logs.mkdir(parents=True, exist_ok=True)
    runs = [run_once(i + 1, args.logs) for i in range(args.runs)]
    print(f"\nper phase, runs that succeeded (of {len(runs)}):")
    for phase in PHASES:
        ok = sum(1 for r in runs if r["phases"][phase])  # type: ignore[index]
        print(f"  {phase:<11} {ok}/{len(runs)}")
    every = sum(1 for r in runs if all(r["phases"].values()))  # type: ignore[attr-defined]
    seconds = [float(r["seconds"]) for r in runs]  # type: ignore[arg-type]
    print(f"  all phases  {every}/{len(runs)}")
    print(
        f"wall time per run: median {statistics.median(seconds):.0f} s, longest {max(seconds):.0f} s"
    )
    print(f"logs: {args.logs}")
    if args.out:
        args.out.write_text(json.dumps(runs, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
