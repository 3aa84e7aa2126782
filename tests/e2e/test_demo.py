"""`baton demo`, the README's main job, end to end with a model that does what it is asked."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from baton.compaction.summary import SECTIONS
from baton.terminal_status import FRAMES
from tests.e2e.pty_run import run_at_terminal
from tests.fake_llm import FakeLLM, pace, text, tool_call
from tests.harness import TEST_KEY, server_env

PLAN = (
    "# Fix the TODOs in stats.py\n\n"
    "- [ ] `mean()`: return 0.0 for an empty list\n"
    "- [ ] `median()`: implement it\n"
)
MEAN_STEP = "- [ ] `mean()`: return 0.0 for an empty list"


def test_the_demo_plans_compacts_and_builds_from_the_plan_that_came_back(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    llm.script(
        [
            tool_call("read", {"path": "stats.py"}),
            tool_call("plan_write", {"content": PLAN}),
            tool_call("plan_exit", {}),
            tool_call(
                "edit",
                {
                    "path": "stats.py",
                    "old_string": "    return sum(values) / len(values)",
                    "new_string": "    if not values:\n        return 0.0\n"
                    "    return sum(values) / len(values)",
                },
            ),
            tool_call(
                "plan_edit",
                {"old_string": MEAN_STEP, "new_string": MEAN_STEP.replace("[ ]", "[x]")},
            ),
            text("Done: mean() returns 0.0 for an empty list."),
        ]
    )
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, None)
    env["TMPDIR"] = str(home / "tmp")
    (home / "tmp").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "baton", "demo"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fell short" not in out
    for heading in ("1/5 Plan mode", "2/5 The person approves", "3/5 Manual compaction"):
        assert heading in out
    assert out.index("3/5 Manual compaction") < out.index("4/5 Build mode, after the compaction")

    # The plan went to a file, the build changed the code, the step is ticked off.
    plan_file = Path(re.findall(r"plan file:\s+(\S+\.md)", out)[-1])
    assert plan_file.read_text().count("- [x] `mean()`") == 1
    project = plan_file.parents[2]
    assert "if not values:\n        return 0.0" in (project / "stats.py").read_text()
    assert "+    if not values:" in out

    # The build request came after the compaction and carried the plan, re-read from its file.
    build = llm.model_requests[3]
    assert build.last_user_text() is not None and "Call edit on stats.py" in build.last_user_text()
    assert "<baton:plan>" in str(build.items) and "`median()`: implement it" in str(build.items)
    assert '"trigger": "manual"' in out and "the plan block in the next request" in out
    # The closing lines say what the prompt cache saved, from the provider's own counts.
    [(requests, sent, cached, evaluated)] = re.findall(
        r"model requests: (\d+); prompt tokens: ([\d,]+) sent, ([\d,]+) from the cache, "
        r"([\d,]+) evaluated",
        out,
    )
    sent_n, cached_n, evaluated_n = (int(v.replace(",", "")) for v in (sent, cached, evaluated))
    assert int(requests) >= len(llm.model_requests) - 1
    assert sent_n > cached_n > 0 and evaluated_n == sent_n - cached_n
    # Nothing of the demo lands in the person's own Baton data.
    assert not (home / "data" / "baton" / "workspaces").exists()


SWAPPED_PLAN = (
    "# Fix the TODOs\n\n"
    "- [ ] implement median(): sort a copy and take the middle value\n"
    "- [ ] return 0.0 for an empty list in the first function\n"
)
UNNAMED_STEP = "- [ ] return 0.0 for an empty list in the first function"
# A summary with every section, one of which claims a change the ledger does not have.
# One claim the ledger contradicts (a summary repeating one line in every section would be
# rejected as a loop).
SUMMARY = "\n\n".join(
    f"## {name}\n" + ("I modified stats.py to fix mean()." if i == 2 else "none")
    for i, name in enumerate(SECTIONS)
)


def test_the_demo_names_the_step_the_model_wrote_and_lists_each_departure(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    llm.script(
        [
            tool_call("plan_write", {"content": SWAPPED_PLAN}),  # no read first
            text("The plan is written."),  # and no plan_exit
            text(SUMMARY),
            tool_call(
                "edit",
                {
                    "path": "stats.py",
                    "old_string": "    return sum(values) / len(values)",
                    "new_string": "    if not values:\n        return 0.0\n"
                    "    return sum(values) / len(values)",
                },
            ),
            text("Edited."),  # and no plan_edit
        ]
    )
    env = server_env(
        home,
        {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY},
        {"BATON_COMPACTION__STRATEGY": "native", "TMPDIR": str(home / "tmp")},
    )
    (home / "tmp").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "baton", "demo"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    # The build prompt names the line the model wrote for mean(), though it never says "mean".
    [build] = [
        r.last_user_text() or ""
        for r in llm.model_requests
        if "Call edit on stats.py" in (r.last_user_text() or "")
    ][:1]
    assert f"old_string `{UNNAMED_STEP}`" in build
    departures = out[out.index("where the model fell short") :]
    for expected in [
        "did not call read",
        "did not call plan_exit",
        "lists the median() step before the mean() step",
        "the summary says stats.py was changed",
        "did not call plan_edit",
        "did not tick a step off",
    ]:
        assert expected in departures, expected
    assert "did not call plan_write" not in departures and "did not call edit" not in departures


def test_plan_and_summary_departures() -> None:
    from baton import protocol as p
    from baton.demo import plan_departures, summary_departures

    assert plan_departures(PLAN) == []
    assert plan_departures("- [ ] fix things\n- [ ] more things\n- [ ] and more") == [
        "the plan has 3 open steps (asked: 2)",
        "no plan step can be told apart as the one for mean()",
        "no plan step can be told apart as the one for median()",
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


def test_at_a_terminal_the_demo_shows_the_spinner_while_the_model_works(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    llm.script(
        [
            [pace(0.3), tool_call("read", {"path": "stats.py"})],
            tool_call("plan_write", {"content": PLAN}),
            tool_call("plan_exit", {}),
            [pace(0.3), text(SUMMARY, chunks=4)],
            tool_call("edit", {"path": "stats.py", "old_string": "x", "new_string": "y"}),
            text("Done."),
        ]
    )
    env = server_env(
        home,
        {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY},
        {"BATON_COMPACTION__STRATEGY": "native", "TMPDIR": str(home / "tmp")},
    )
    (home / "tmp").mkdir()
    _, screen = run_at_terminal([sys.executable, "-m", "baton", "demo"], workspace, env)
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
