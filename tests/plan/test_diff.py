"""The changed lines a plan edit is shown as (baton.plan.diff, baton.plan.view.edit_text)."""

from __future__ import annotations

from baton.plan.diff import changed_lines, numbered
from baton.plan.view import edit_text

PLAN = "".join(f"- [ ] step {n}\n" for n in range(1, 21))


def test_one_changed_line_is_shown_with_one_line_of_context_numbered() -> None:
    after = PLAN.replace("- [ ] step 7\n", "- [x] step 7\n")
    assert changed_lines(PLAN, after) == (
        " 6| - [ ] step 6\n-7| - [ ] step 7\n+7| - [x] step 7\n 8| - [ ] step 8"
    )


def test_added_and_removed_lines_number_the_new_text_and_hunks_are_separated() -> None:
    after = PLAN.replace("- [ ] step 2\n", "- [ ] step 2\n- [ ] step 2b\n")
    after = after.replace("- [ ] step 15\n", "")
    diff = changed_lines(PLAN, after)
    assert diff.split("\n") == [
        " 2| - [ ] step 2",
        "+3| - [ ] step 2b",
        " 4| - [ ] step 3",
        "…",
        " 15| - [ ] step 14",
        "-15| - [ ] step 15",
        " 16| - [ ] step 16",
    ]
    assert changed_lines(PLAN, PLAN) == ""


def test_edit_text_acknowledges_with_version_changes_and_next_step_never_the_plan() -> None:
    after = PLAN.replace("- [ ] step 1\n", "- [x] step 1\n")
    text = edit_text(4, "draft", PLAN, after)
    assert text.startswith("Plan v4 (draft). Changed lines:\n-1| - [ ] step 1\n+1| - [x] step 1")
    assert text.endswith("Next open step: step 2")
    assert "step 10" not in text
    done = "".join(line.replace("[ ]", "[x]") + "\n" for line in PLAN.splitlines())
    assert edit_text(5, "approved", PLAN, done).endswith("No open step left.")


def test_numbered() -> None:
    assert numbered("a\nb\n") == "1| a\n2| b"
