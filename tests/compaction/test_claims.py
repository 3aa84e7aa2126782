"""The claim check (compaction/claims.py): what it corrects, and what it leaves alone."""

from __future__ import annotations

from baton import protocol as p
from baton.compaction.claims import check_summary

ERROR = "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'"


def ledger() -> p.Ledger:
    return p.Ledger(
        files_modified=[p.FileTouch(path="src/calc.py", tool="edit", action="modified")],
        commands=[
            p.CommandRun(
                command="pytest -q",
                exit_code=0,
                exit_codes=[1, 0],
                failures=[p.RunFailure(run=1, exit_code=1, error=f"E       {ERROR} / 1 failed")],
            )
        ],
        resolved_errors=[
            p.ResolvedError(source="bash `pytest -q`", message=ERROR, resolved_by="`pytest -q` → 0")
        ],
    )


def corrected(summary: str) -> list[str]:
    return [c.line for c in check_summary(summary, ledger())[1]]


def test_quoted_output_is_not_taken_for_a_command() -> None:
    assert corrected(f"- The first run failed with `{ERROR}`") == []
    assert corrected("- It failed with `ModuleNotFoundError: No module named 'x'`") == []
    assert corrected("- The `add` function failed on `None` inputs") == []


def test_a_command_that_never_ran_is_still_corrected() -> None:
    assert corrected("- `npm run build` passed") == ["- `npm run build` passed"]


def test_failing_now_is_corrected_when_the_latest_run_passed() -> None:
    assert corrected("- `pytest -q` is still failing") == ["- `pytest -q` is still failing"]
    assert corrected("- The tests fail because of the rounding") == [
        "- The tests fail because of the rounding"
    ]
    # What happened, in the past, is true.
    assert corrected("- `pytest -q` failed at first, then passed after the fix") == []
    assert corrected("- The tests failed before the fix to src/calc.py") == []


def test_a_cause_the_summary_ruled_out_is_corrected_where_it_is_given_as_the_cause() -> None:
    summary = (
        "## Tool results, rejected hypotheses and incomplete work\n"
        "- A stale `__pycache__` was ruled out: clearing it changed nothing.\n"
        "## Next action\n"
        "- Fix the failure caused by `__pycache__` in src/calc.py"
    )
    text, found = check_summary(summary, ledger())
    assert [c.line for c in found] == ["- Fix the failure caused by `__pycache__` in src/calc.py"]
    assert "ruled out: clearing it changed nothing" in text  # the rejection itself stays


def test_a_cause_the_agent_ruled_out_in_its_own_words_is_corrected() -> None:
    said = ["Cleared it and the same failure came back, so the cache is ruled out as the cause."]
    wrong = "- The tests failed because of a stale cache"
    text, found = check_summary(
        f"## Exact facts\n{wrong}\n- The cache was cleared", ledger(), said=said
    )
    assert [c.line for c in found] == [wrong]
    assert "- The cache was cleared" in text  # a line that gives no cause stays
    # Nothing ruled out: nothing to correct.
    assert check_summary(wrong, ledger())[1] == []


def files_ledger() -> p.Ledger:
    return p.Ledger(
        files_read=["config/app.yaml", ".env"],
        files_modified=[
            p.FileTouch(path="src/orders.js", tool="edit", action="modified"),
            p.FileTouch(path="tests/orders.test.js", tool="edit", action="modified"),
        ],
        commands=[
            p.CommandRun(
                command="sh status.sh", exit_code=0, exit_codes=[0], output="modified: .env"
            )
        ],
    )


def corrected_files(summary: str) -> list[str]:
    return [c.line for c in check_summary(summary, files_ledger())[1]]


def test_a_dotfile_said_to_be_changed_is_a_file_claim() -> None:
    # A bench summary said this of a .env the session only read; `.env` was not a file name.
    for line in ["- `.env` has been modified", "- The .env file was modified to set the timeout"]:
        assert corrected_files(line) == [line]
    _, found = check_summary("- `config/app.yaml` and `.env` were changed", files_ledger())
    assert "no change to config/app.yaml, .env" in found[0].reason


def test_a_true_change_is_kept_whole_names_and_leading_dots_included() -> None:
    assert corrected_files("- tests/orders.test.js was updated") == []  # not `orders.test`
    assert corrected_files("- ./src/orders.js was modified, e.g. the guard") == []
    assert corrected_files("- Updated the call to app.use() in the router") == []
    assert (
        check_summary(
            "- `.env` was edited",
            p.Ledger(files_modified=[p.FileTouch(path=".env", tool="edit", action="modified")]),
        )[1]
        == []
    )
    # `.env` is not `env` nor `src/env`.
    env = p.Ledger(files_modified=[p.FileTouch(path="src/env", tool="edit", action="modified")])
    assert [c.line for c in check_summary("- .env was modified", env)[1]] == ["- .env was modified"]


def test_quoted_output_naming_a_file_is_not_a_change_claim() -> None:
    assert corrected_files("- `sh status.sh` printed `modified: .env`") == []
    # Unquoted, the same words are the summary's own claim.
    assert corrected_files("- .env was modified, as the status check showed") != []


def test_only_the_contradicted_sentence_of_a_line_is_taken_out() -> None:
    summary = (
        "## Changed files and work in progress\n"
        "- The tests still fail. The retries use tenacity with 3 attempts. "
        "The first run failed with `TypeError`, e.g. on `None` inputs."
    )
    text, found = check_summary(summary, ledger())
    assert [c.line for c in found] == ["- The tests still fail."]
    lines = text.splitlines()
    # The true sentences stay on the line, under its bullet; the correction follows it.
    assert lines[1] == (
        "- The retries use tenacity with 3 attempts. "
        "The first run failed with `TypeError`, e.g. on `None` inputs."
    )
    assert lines[2].startswith("- [Baton] Removed a summary statement the ledger contradicts:")
    assert "`pytest -q` → 1, 0" in lines[2]


def test_the_failing_tests_as_the_task_are_not_a_claim_that_they_fail() -> None:
    # The goal stays true once the tests pass: a summary keeps its task.
    for goal in (
        "- The goal is to fix the failing tests.",
        "- Task: make the failing test in tests/test_calc.py pass.",
        "- We are debugging why the tests fail on `None` inputs.",
    ):
        text, found = check_summary(goal, ledger())
        assert (text, found) == (goal, []), goal
    # Said of the tests now, it is still a claim the ledger contradicts.
    _, found = check_summary("- The tests fail after the fix.", ledger())
    assert [c.line for c in found] == ["- The tests fail after the fix."]


def test_a_stop_inside_backticks_or_after_an_abbreviation_does_not_split() -> None:
    from baton.compaction.claims import sentences

    assert sentences("- Ran `python -c 'import os. Sys'` and it worked. Then stopped.") == [
        "- Ran `python -c 'import os. Sys'` and it worked.",
        "Then stopped.",
    ]
    assert sentences("See e.g. Foo and src/calc.py. Done") == [
        "See e.g. Foo and src/calc.py.",
        "Done",
    ]


def test_a_file_claim_names_each_file_as_data() -> None:
    _, found = check_summary("- Modified stats.py and README.md to fix mean().", ledger())
    [correction] = found
    assert correction.files == ("stats.py", "README.md")
    wire = correction.wire()
    assert wire.files == ["stats.py", "README.md"] and wire.reason == correction.reason
