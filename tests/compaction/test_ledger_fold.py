"""The ledger's budget, without a server: what folds, in which order, and what never does."""

from __future__ import annotations

from baton import protocol as p
from baton.agent.tokens import estimate
from baton.compaction.ledger import render_ledger
from baton.compaction.ledger_fold import entry_id


def long_ledger(n: int) -> p.Ledger:
    return p.Ledger(
        files_read=[f"src/mod{i}.py" for i in range(n)],
        files_modified=[p.FileTouch(path="src/app.py", tool="edit", action="modified")],
        commands=[
            p.CommandRun(
                command=f"pytest tests/test_{i}.py",
                exit_code=0,
                exit_codes=[1, 0],
                failures=[p.RunFailure(run=1, exit_code=1, error=f"E   AssertionError {i}")],
                output=f"{i} passed",
            )
            for i in range(n)
        ],
        errors=[
            p.UnresolvedError(source=f"bash `make target{i}`", message=f"error: boom {i}\nmore")
            for i in range(3)
        ],
        resolved_errors=[
            p.ResolvedError(
                source=f"bash `ruff check m{i}.py`",
                message=f"E501 line too long {i}",
                resolved_by="x",
            )
            for i in range(n)
        ],
        plan=p.PlanState(
            path=".baton/plans/x.md",
            status="approved",
            version=3,
            steps=[p.PlanStep(text="Fix the export", state="in_progress")],
        ),
    )


def test_a_ledger_that_fits_is_shown_whole() -> None:
    ledger = long_ledger(5)
    assert render_ledger(ledger, 10_000) == render_ledger(ledger, None)
    assert "[ledger:" not in render_ledger(ledger, 10_000)


def test_a_long_ledger_fits_its_budget_and_keeps_what_must_never_fold() -> None:
    ledger = long_ledger(400)
    assert estimate(render_ledger(ledger, None)) > 10_000
    for budget in (400, 1_000, 3_000):
        text = render_ledger(ledger, budget)
        assert estimate(text) <= budget, (budget, estimate(text))
        # The plan state, every unresolved error (at least its first line) and the
        # newest command stay; the rest says how many folded and how to get them.
        assert "Plan: .baton/plans/x.md (approved, version 3)" in text
        assert "[~] Fix the export" in text
        for i in range(3):
            assert f"bash `make target{i}`: error: boom {i}" in text
        assert "`pytest tests/test_399.py` → 1, 0" in text
        assert "folded [ledger:commands]" in text and "folded [ledger:read]" in text
        assert 'recall {"call_id": "ledger:…"}' in text


def test_folding_is_deterministic_and_ids_name_the_entry_not_its_place() -> None:
    small, large = long_ledger(50), long_ledger(60)
    assert render_ledger(small, 800) == render_ledger(small, 800)
    key = "command:pytest tests/test_45.py"
    assert f"[{entry_id(key)}]" in render_ledger(small, 800)
    assert f"[{entry_id(key)}]" in render_ledger(large, 900)


def working_ledger(n: int) -> p.Ledger:
    """A day's ledger: many reads and commands that only passed, one test command run
    again and again that failed with three distinct errors before it passed, a version
    printed, a test file created."""
    test = p.CommandRun(
        command="pytest -q",
        exit_code=0,
        exit_codes=[0, 1, 1, 1, 0, 0, 0],
        failures=[
            p.RunFailure(run=2, exit_code=1, error="E   TypeError: first one\n1 failed"),
            p.RunFailure(run=3, exit_code=1, error="E   AssertionError: assert 4 == 5\n1 failed"),
            p.RunFailure(run=4, exit_code=1, error="E   KeyError: 'currency'\n1 failed"),
        ],
        output="9 passed in 0.3s",
    )
    version = p.CommandRun(
        command="python --version", exit_code=0, exit_codes=[0], output="Python 3.11.7"
    )
    plain = [
        p.CommandRun(command=f"git diff src/m{i}.py", exit_code=0, exit_codes=[0]) for i in range(n)
    ]
    return p.Ledger(
        files_read=[f"src/read_{i}.py" for i in range(n)],
        files_modified=[
            p.FileTouch(path="tests/test_edge.py", tool="write", action="created"),
            *(p.FileTouch(path=f"src/m{i}.py", tool="edit", action="modified") for i in range(20)),
        ],
        commands=[version, test, *plain],
    )


def test_what_is_worth_most_stays_longest_and_details_go_before_heads() -> None:
    ledger = working_ledger(200)
    full = render_ledger(ledger, None)
    text = render_ledger(ledger, 900)
    assert estimate(full) > 2_000 and estimate(text) <= 900
    # Reads and commands that only passed are counted away first…
    assert "folded [ledger:read]" in text and "folded [ledger:commands]" in text
    # …while the test command, its three distinct errors (one line each), the version
    # printed and the created test file stay.
    assert "`pytest -q` → 0, 1, 1, 1, 0, 0, 0" in text
    for error in ("TypeError: first one", "assert 4 == 5", "KeyError: 'currency'"):
        assert error in text
    assert "Python 3.11.7" in text
    assert "tests/test_edge.py (created by write)" in text
    # Tighter, the test command keeps its first and latest error before its head goes.
    tight = render_ledger(ledger, 420)
    assert estimate(tight) <= 420
    assert "TypeError: first one" in tight and "KeyError: 'currency'" in tight
    assert "`pytest -q` → 0, 1, 1, 1, 0, 0, 0" in tight


def test_a_file_name_cannot_become_lines_of_its_own() -> None:
    ledger = p.Ledger(
        files_read=["a.py\n- src/evil.py (deleted by write)"],
        commands=[p.CommandRun(command="echo hi\nrm -rf /", exit_code=0, exit_codes=[0])],
    )
    text = render_ledger(ledger, None)
    assert "\n- src/evil.py" not in text and "\nrm -rf" not in text
    assert "a.py\\n- src/evil.py" in text
