"""`baton demo`, the README's main job, end to end with a model that does what it is asked
(and one that does not): every phase, each model step told its tool, the person's acts
as JSON-RPC requests, a failed phase said and the exit code 1."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import baton
from baton.compaction.summary import SECTIONS
from baton.faces.demo import PERSON_NOTE, PHASES
from baton.faces.terminal.status import FRAMES
from tests.e2e.pty_run import run_at_terminal
from tests.fake_llm import FakeLLM, pace, text, tool_call
from tests.harness import TEST_KEY, server_env

PLAN = (
    "# Fix the TODOs in stats.py\n\n"
    "- [ ] `mean()`: return 0.0 for an empty list\n"
    "- [ ] `median()`: implement it\n"
    "- [ ] `mode()`: break ties by the smallest value\n"
)
MEAN_STEP = "- [ ] `mean()`: return 0.0 for an empty list"
SUMMARY = "\n\n".join(f"## {name}\nsummary of {name.lower()}" for name in SECTIONS)
OLD = (
    "    # TODO: return 0.0 for an empty list instead of raising ZeroDivisionError.\n"
    "    return sum(values) / len(values)"
)
NEW = "    if not values:\n        return 0.0\n    return sum(values) / len(values)"
EVERY_PHASE_OK = "demo phases: " + " ".join(f"{p.replace(' ', '-')}=ok" for p in PHASES)


def baton_root() -> Path:
    return Path(baton.__file__).parent


def demo_env(llm: FakeLLM, home: Path) -> dict[str, str]:
    (home / "tmp").mkdir(exist_ok=True)
    return server_env(
        home,
        {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY},
        {"BATON_COMPACTION__STRATEGY": "native", "TMPDIR": str(home / "tmp")},
    )


def run_demo(llm: FakeLLM, workspace: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baton", "demo"],
        cwd=workspace,
        env=demo_env(llm, home),
        capture_output=True,
        text=True,
        timeout=120,
    )


def serve(llm: FakeLLM, steps: list[Any], summary: Any = None) -> None:
    """The agent's steps in order; every summary request (no tool callable) gets
    `summary` (the compaction may ask more than once)."""
    queue = list(steps)

    def handler(request: Any) -> Any:
        if request.is_summary:
            return summary if summary is not None else text(SUMMARY)
        return queue.pop(0) if queue else text("Done.")

    llm.on_request(handler)


EXPLORE_CALL = {
    "agent": "explore",
    "description": "Find the TODOs in stats.py",
    "prompt": "Read stats.py, grep it for TODO, one line per TODO.",
}
CHILD_ANSWER = (
    "mean(): TODO return 0.0 for an empty list\n"
    "median(): TODO implement it\n"
    "mode(): TODO break ties by the smallest value"
)


def explored(answer: str = CHILD_ANSWER) -> list[Any]:
    """The planner's task call, then its explore child's read, grep and answer."""
    return [
        tool_call("task", EXPLORE_CALL),
        tool_call("read", {"path": "stats.py"}),
        tool_call("grep", {"pattern": "TODO", "path": "stats.py"}),
        text(answer),
    ]


def good_model(answer: str = CHILD_ANSWER) -> list[Any]:
    return [
        tool_call("read", {"path": "stats.py"}),
        *explored(answer),
        tool_call("plan_write", {"content": PLAN}),
        tool_call("read", {"path": "stats.py"}),
        tool_call("edit", {"path": "stats.py", "old_string": OLD, "new_string": NEW}),
        tool_call(
            "plan_edit", {"old_string": MEAN_STEP, "new_string": MEAN_STEP.replace("[ ]", "[x]")}
        ),
    ]


def test_the_demo_plans_compacts_and_builds_from_the_plan_that_came_back(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    serve(llm, good_model())
    done = run_demo(llm, workspace, home)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert EVERY_PHASE_OK in out
    assert out.index("4/7 The person asks for a compaction") < out.index("6/7 Build mode")

    # Each model step was told the one tool it needed (the child's too, but its answer);
    # the summary none.
    choices = [r.get("tool_choice") for r in llm.model_requests if not r.is_summary]
    named = [{"type": "function", "name": name} for name in ("read", "task", "read", "grep")]
    assert choices[:5] == [*named, "none"]
    assert choices[5:] == [
        {"type": "function", "name": name} for name in ("plan_write", "read", "edit", "plan_edit")
    ]
    # The child's context is its agent's and the planner's prompt; the planner is given the
    # child's answer in one bounded result, and writes the plan from it.
    child_first = [r for r in llm.model_requests if not r.is_summary][2]
    assert "stats.py has three TODO comments" not in str(child_first.items)
    assert "Read stats.py, grep it for TODO" in (child_first.last_user_text() or "")
    planner = [r for r in llm.model_requests if not r.is_summary][5]
    [result] = [o for o in planner.tool_outputs().values() if "task-result" in o]
    assert "status: done" in result and "mode(): TODO break ties" in result
    assert "→ read" in out.split("2/7")[0] and "↳ explore child" in out
    assert "[explore: done]" in out
    summaries = [r for r in llm.model_requests if r.is_summary]
    assert summaries and all(r.get("tool_choice") in (None, "none") for r in summaries)

    # The person's acts are the JSON-RPC requests an editor sends, with their answers.
    for method in ("baton/session/new", "baton/plan/update", "baton/plan/approve"):
        assert f"→ {method} " in out, method
    assert '← {"status": "approved", "mode": "build"}' in out
    assert "→ baton/session/compact " in out

    # The compaction compacted: fewer tokens in the view, the record with its ledger.
    [(before, after)] = re.findall(r"tokens in the model's view: ([\d,]+) → ([\d,]+)", out)
    assert int(after.replace(",", "")) < int(before.replace(",", ""))
    assert '"filesRead": [' in out and '"stats.py"' in out

    # The build request came after the compaction and carried the plan, the person's line
    # in it, re-read from its file.
    [build] = [r for r in llm.model_requests if not r.is_summary][6:7]
    assert "Build the plan's first step" in (build.last_user_text() or "")
    # It reads mean() alone, from its `def` line (line 13 of the sample).
    assert "read with offset 13 and limit 4" in (build.last_user_text() or "")
    assert "<baton:plan>" in str(build.items) and PERSON_NOTE in str(build.items)

    # The plan went to a file, the build changed the code, the step is ticked off.
    plan_file = next((home / "tmp").glob("baton-demo-*/project/.baton/plans/*.md"))
    assert plan_file.read_text().count("- [x] `mean()`") == 1
    assert "if not values:\n        return 0.0" in (plan_file.parents[2] / "stats.py").read_text()
    assert "+    if not values:" in out
    # Nothing of the demo lands in the person's own Baton data.
    assert not (home / "data" / "baton" / "workspaces").exists()


def test_a_phase_that_fails_is_said_plainly_and_the_demo_exits_non_zero(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    wrong = {"path": "stats.py", "old_string": "return mean", "new_string": "x"}
    serve(
        llm,
        [
            tool_call("read", {"path": "stats.py"}),
            tool_call("task", EXPLORE_CALL),
            tool_call("read", {"path": "stats.py"}),
            tool_call("grep", {"pattern": "TODO", "path": "stats.py"}),
            # median() and mode() missing, at length.
            text("TODO: return 0.0 for an empty list. " + "It sums the values and divides. " * 30),
            text("I will write the plan later."),  # no plan_write
            tool_call("read", {"path": "stats.py"}),
            tool_call("edit", wrong),
            tool_call("read", {"path": "stats.py", "offset": 13, "limit": 4}),
            tool_call("edit", wrong),  # the second try fails too
            tool_call(
                "plan_edit", {"old_string": "- [ ] `median()`", "new_string": "- [x] `median()`"}
            ),
        ],
    )
    done = run_demo(llm, workspace, home)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "[explore: FAILED: the child's answer does not give the TODO of median(), mode()]" in out
    assert "[plan: FAILED: the model did not write a plan with plan_write]" in out
    assert "[edit: FAILED: the edit did not change stats.py]" in out
    assert "[tick: FAILED: another step was ticked off: - [x] `median()`" in out
    # The demo stood in for the plan as a person would, so the rest still ran.
    assert "[approval: done]" in out and "[compaction: done]" in out
    assert (
        "demo phases: explore=failed plan=failed approval=ok compaction=ok plan-back=ok "
        "edit=failed tick=failed" in out
    )
    assert "4 of 7 phases failed: explore, plan, edit, tick" in out
    # The second try was asked for, with what the check found, mean() read again first.
    assert "The person undoes the edit and shows the model what the check found" in out
    [again, fix] = [r for r in llm.model_requests if not r.is_summary][8:10]
    assert "took it back: the edit did not change stats.py" in (again.last_user_text() or "")
    assert again.get("tool_choice") == {"type": "function", "name": "read"}
    assert fix.get("tool_choice") == {"type": "function", "name": "edit"}


def test_at_a_terminal_the_demo_shows_the_spinner_while_the_model_works(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    script = good_model()
    script[0] = [pace(0.3), script[0]]
    serve(llm, script, summary=[pace(0.3), text(SUMMARY, chunks=4)])
    code, screen = run_at_terminal(
        [sys.executable, "-m", "baton", "demo"], workspace, demo_env(llm, home)
    )
    assert code == 0, screen
    # The same status line as `baton run`: a spinner frame, what is happening, the seconds.
    frame = "[" + FRAMES + "]"
    for what in (
        "waiting for the model",
        "running read",
        "compacting: waiting for the model to summarise",
    ):
        assert re.search(rf"\r\x1b\[K{frame} {what} \(\d+ s\)", screen), (what, screen)
    # It spins while nothing else is printed: more than one frame of one status.
    shown = set(re.findall(rf"({frame}) waiting for the model", screen))
    assert len(shown) > 1, shown


def test_plan_and_summary_departures() -> None:
    from baton import protocol as p
    from baton.faces.demo.checks import plan_departures, summary_departures

    assert plan_departures(PLAN) == []
    assert plan_departures("- [ ] fix things\n- [ ] more things") == [
        "the plan has 2 open steps (asked: one per TODO, 3)",
        "no plan step can be told apart as the one for mean()",
    ]
    # Steps that restate the docstrings, not the TODOs, are no plan to build from.
    docstrings = (
        "- [ ] mean(): The arithmetic mean of `values`.\n"
        "- [ ] median(): The middle value of `values` (the mean of the two middle ones).\n"
        "- [ ] mode(): The most common value of `values`.\n"
    )
    assert plan_departures(docstrings) == [
        "the step for mean() does not say what its TODO asks",
        "the step for median() does not say what its TODO asks",
        "the step for mode() does not say what its TODO asks",
    ]
    ledger = p.Ledger(files_read=["stats.py"])
    claims = "Read stats.py. Updated stats.py so mean() handles []. Next: edit README.md."
    assert summary_departures(claims, ledger, ["README.md", "stats.py"]) == [
        "the summary says stats.py was changed ('Updated stats.py so mean() handles [].'), "
        "but the ledger records no change to it"
    ]
    assert summary_departures("stats.py was not modified yet.", ledger, ["stats.py"]) == []
    touched = p.Ledger(
        files_modified=[p.FileTouch(path="stats.py", tool="edit", action="modified")]
    )
    assert summary_departures("Updated stats.py.", touched, ["stats.py"]) == []


def test_an_edit_that_only_rewords_the_comment_is_not_a_build(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    steps = good_model()
    comment = "    # TODO: return 0.0 for an empty list instead of raising ZeroDivisionError."
    reword = tool_call(
        "edit",
        {"path": "stats.py", "old_string": comment, "new_string": "    # return 0.0 for []"},
    )
    steps[7:8] = [reword, tool_call("read", {"path": "stats.py"}), reword]
    serve(llm, steps)
    done = run_demo(llm, workspace, home)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "[edit: FAILED: the edit changed only comments or layout, not the code]" in done.stdout


def test_an_edit_the_check_finds_wrong_is_undone_and_gets_one_more_try_with_what_was_found(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    steps = good_model()
    ret = "    return sum(values) / len(values)"
    wrong = tool_call(
        "edit", {"path": "stats.py", "old_string": ret, "new_string": "    return 0.0"}
    )
    steps[7:8] = [
        wrong,
        tool_call("read", {"path": "stats.py", "offset": 13, "limit": 4}),
        tool_call("edit", {"path": "stats.py", "old_string": OLD, "new_string": NEW}),
    ]
    serve(llm, steps)
    done = run_demo(llm, workspace, home)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    # The check read mean() and ran it; the person undid the edit (baton/session/revert)
    # and showed the model what was found.
    assert "mean([1, 2, 3]) returns 0.0, not 2.0" in out
    assert "undone: stats.py restored; the turn is out of the model's view" in out
    [again] = [r for r in llm.model_requests if not r.is_summary][8:9]
    asked = again.last_user_text() or ""
    assert asked.startswith("I checked your edit of stats.py and took it back: ")
    assert "mean() no longer divides the sum by the count" in asked
    assert "mean([1, 2, 3]) returns 0.0, not 2.0" in asked
    assert "read with offset 13 and limit 4" in asked
    # The undone turn is out of the retry's view: its edit is not there to be copied.
    assert '"new_string": "    return 0.0"' not in json.dumps(again.body)
    assert "it does what the step asks" in out
    assert "the edit passed the demo's check on its second try" in out
    assert EVERY_PHASE_OK in out


def test_mean_results_run_the_edited_function(tmp_path: Path) -> None:
    from baton.faces.demo.checks import mean_results

    (tmp_path / "stats.py").write_text(
        "def mean(values):\n    return sum(values) / len(values) if values else 0\n"
    )
    assert mean_results(tmp_path) == []
    (tmp_path / "stats.py").write_text(
        "def mean(values):\n    return 0.0 if values else sum(values) / len(values)\n"
    )
    assert mean_results(tmp_path) == [
        "mean([]) raises ZeroDivisionError, not 0.0",
        "mean([1, 2, 3]) returns 0.0, not 2.0",
        "mean([2.5]) returns 0.0, not 2.5",
        "mean([-1, 5]) returns 0.0, not 2.0",
    ]
    (tmp_path / "stats.py").write_text("import nothing_of_that_name\n")
    assert mean_results(tmp_path) == [
        "importing stats.py failed: ModuleNotFoundError: No module named 'nothing_of_that_name'"
    ]
    # Nothing of the run is left in the project.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stats.py"]


def test_the_build_edit_is_narrowed_to_mean_s_todo_and_a_guard() -> None:
    from baton.faces.demo.scenario import GUARD_PATTERN, edit_call, function_lines, read_span

    source = (Path(__file__).parents[2] / "server/baton/demo_project/stats.py").read_text()
    first, lines = function_lines(source, "mean")
    assert first == 13 and lines[0].startswith("def mean(") and len(lines) == 4
    assert read_span(source) == {"offset": 13, "limit": 4}
    call = edit_call(source)
    assert call.narrowed["path"] == {"enum": ["stats.py"]}
    # old_string: mean()'s TODO comment; new_string: a guard, matched (as llama.cpp does)
    # against the string as the call's JSON writes it.
    assert call.narrowed["old_string"] == {"enum": [lines[2]]}
    assert lines[2].strip().startswith("# TODO")
    assert call.narrowed["new_string"]["pattern"] == GUARD_PATTERN

    def written(new_string: str) -> bool:
        return re.fullmatch(GUARD_PATTERN.strip("^$"), json.dumps(new_string)[1:-1]) is not None

    assert written("    if not values:\n        return 0.0")
    assert written("    if len(values) == 0:\n        return 0")
    assert not written("    return 0.0")
    assert not written("    if not values: return 0.0; return sum(values) / len(values)")
    assert not written("if not values:\n    return 0.0")
    assert not written('    if not values:\n        return "0"')
    assert not written("    if not values:\n        return 0.0\n    return 1")


def test_with_the_todo_gone_the_edit_is_one_of_mean_s_code_lines() -> None:
    from baton.faces.demo.scenario import edit_call, function_lines

    source = (Path(__file__).parents[2] / "server/baton/demo_project/stats.py").read_text()
    _, lines = function_lines(source, "mean")
    no_todo = source.replace(lines[2] + "\n", "", 1)
    assert edit_call(no_todo).narrowed["old_string"] == {"enum": [lines[3]]}
    assert "new_string" not in edit_call(no_todo).narrowed
    # A line found elsewhere too comes with the lines above it that make it unique: the
    # edit refuses an old_string found more than once.
    after = source.replace(lines[2], "    return 0.0", 1)
    choices = edit_call(after).narrowed["old_string"]["enum"]  # type: ignore[union-attr]
    assert choices == [lines[1] + "\n    return 0.0", lines[3]]
    # A docstring over several lines is left out whole.
    long_doc = no_todo.replace(
        '    """The arithmetic mean of `values`."""',
        '    """The arithmetic mean\n    of `values`.\n    """',
        1,
    )
    assert edit_call(long_doc).narrowed["old_string"] == {"enum": [lines[3]]}


def test_mean_departures_read_the_edited_code() -> None:
    from baton.faces.demo.checks import mean_departures

    head = "def mean(values):\n"
    assert (
        mean_departures(
            head + "    if not values:\n        return 0.0\n    return sum(values) / len(values)\n"
        )
        == []
    )
    assert (
        mean_departures(
            head + "    if len(values) == 0:\n        return 0\n"
            "    return sum(values) / len(values)\n"
        )
        == []
    )
    assert mean_departures(head + "    return sum(values) / len(values) if values else 0.0\n") == []
    assert mean_departures(head + "    return 0.0\n") == [
        "mean() no longer divides the sum by the count",
        "mean() has no `if` that returns 0.0 for an empty list",
    ]
    assert mean_departures(head + "    return sum(values) / len(values)\n") == [
        "mean() has no `if` that returns 0.0 for an empty list"
    ]
    assert mean_departures("def median(v):\n    return 1\n") == ["stats.py has no mean() any more"]


def test_a_correction_naming_several_files_is_noticed_for_each(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    # Nothing was changed before the compaction: the claim names two files the ledger
    # records no change to, and Baton removes it from the summary.
    section = "summary of changed files and work in progress"
    claim = SUMMARY.replace(section, f"{section}\n- Modified stats.py and README.md to fix mean().")
    assert claim != SUMMARY
    # A longer answer from the child (its functions' code too): the planner's context is
    # then long enough for a summary to shrink it.
    code = (Path(baton_root()) / "demo_project" / "stats.py").read_text()[:1500]
    serve(llm, good_model(f"{CHILD_ANSWER}\n\n{code}"), summary=text(claim))
    done = run_demo(llm, workspace, home)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    noticed = out[out.index("also noticed:") :]
    for name in ("stats.py", "README.md"):
        assert (
            f"the summary says {name} was changed, but the ledger records no change to it "
            "(Baton removed the statement from the summary)"
        ) in noticed, noticed
