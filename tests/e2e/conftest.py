"""End-to-end suite hooks: say plainly whether the real-model tests ran."""

from __future__ import annotations

import pytest
from _pytest.terminal import TerminalReporter


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    """One line at the end of every run that collected tests/e2e: real model used or why not.

    A skipped test is easy to miss in a long run; CI should show at a glance
    whether the suite exercised the real local model (`-m real_model`).
    """
    from tests.e2e.test_real_model import MODEL, WHY_NOT

    ran = [
        report
        for reports in terminalreporter.stats.values()
        for report in reports
        if isinstance(report, pytest.TestReport)
        and "test_real_model.py" in report.nodeid
        and report.when == "call"
    ]
    if MODEL is None:
        terminalreporter.write_line(f"real-model tests skipped: {WHY_NOT}")
    elif ran:
        outcomes = ", ".join(sorted({r.outcome for r in ran}))
        terminalreporter.write_line(f"real-model tests ran on {MODEL} ({outcomes})")
