"""Reliability suites: a fast subset in every `pytest` run, the full runs on demand.

`BATON_RELIABILITY_FULL=1` switches every suite to its full size (200 kills,
10,000 fuzz messages, ...); without it each runs a subset sized so the whole
CI stays within its budget. `BATON_RELIABILITY_SEED` changes the seed (the
default is fixed so a CI failure reproduces).

Each suite records its figures with `record_figures`; they are printed at the
end of the run (the terminal summary shows even with `-q`) and, when
`BATON_RELIABILITY_FIGURES` names a file, written there as JSON so
`docs/reliability.md` can be refreshed from a real run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FULL = os.environ.get("BATON_RELIABILITY_FULL", "") not in ("", "0", "false", "no")
SEED = int(os.environ.get("BATON_RELIABILITY_SEED", "20250909"))

_FIGURES: dict[str, dict[str, Any]] = {}


def size(ci: int, full: int) -> int:
    """The number of iterations for this run: `full` with BATON_RELIABILITY_FULL, else `ci`."""
    return full if FULL else ci


RecordFigures = Callable[..., None]


@pytest.fixture
def record_figures() -> RecordFigures:
    """`record_figures("crash", kills=20, losses=0)`: figures shown at the end of the run."""

    def record(suite: str, **figures: Any) -> None:
        _FIGURES.setdefault(suite, {}).update(figures)

    return record


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _FIGURES:
        return
    terminalreporter.section(f"reliability figures ({'full' if FULL else 'CI subset'})")
    for suite, figures in _FIGURES.items():
        shown = ", ".join(f"{name}={_fmt(value)}" for name, value in figures.items())
        terminalreporter.write_line(f"{suite}: {shown}")
    target = os.environ.get("BATON_RELIABILITY_FIGURES")
    if target:
        Path(target).write_text(
            json.dumps({"full": FULL, "seed": SEED, "suites": _FIGURES}, indent=2) + "\n",
            encoding="utf-8",
        )


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
