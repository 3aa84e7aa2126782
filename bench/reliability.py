"""Run Baton's reliability suites at full size and print their figures.

    python bench/reliability.py            # full: 200 kills, 10,000 fuzz messages, ...
    python bench/reliability.py --ci       # the subset `pytest` runs in CI
    python bench/reliability.py -k crash   # extra arguments go to pytest

The suites live in tests/reliability/ (docs/reliability.md says what each
proves); this is a shortcut for
`BATON_RELIABILITY_FULL=1 python -m pytest tests/reliability` that also keeps
the figures as JSON (build/reliability-figures.json) and prints them as a table.
A full run takes about half an hour on a 2-core machine.
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
    extra = [a for a in argv if a != "--ci"]
    out = REPO / "build" / "reliability-figures.json"
    out.parent.mkdir(exist_ok=True)
    out.unlink(missing_ok=True)
    env = {
        **os.environ,
        "BATON_RELIABILITY_FULL": "1" if full else "",
        "BATON_RELIABILITY_FIGURES": str(out),
    }
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    status = subprocess.call([*command, "tests/reliability", *extra], cwd=REPO, env=env)
    if out.exists():
        data = json.loads(out.read_text())
        print(
            f"\nReliability figures ({'full' if data['full'] else 'CI subset'}, seed {data['seed']})"
        )
        for suite, figures in data["suites"].items():
            print(f"\n{suite}")
            for name, value in figures.items():
                print(f"  {name:<34} {value}")
        print(f"\n(also in {out.relative_to(REPO)})")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
