"""`baton run` says what happened: an instruction that changed no file says so, an
instruction is nudged to look first like a question, and an answer from memory that
the nudge sets aside is never printed (stdout holds the final answer)."""

from __future__ import annotations

import sys
from pathlib import Path

from baton.agent import prompts
from tests.e2e.pty_run import run_at_terminal
from tests.e2e.test_cli import baton
from tests.fake_llm import FakeLLM, pace, text, tool_call
from tests.harness import TEST_KEY, server_env

UTIL = "def chunked(items, n):\n    return [items[i : i + n] for i in range(0, len(items), n)]\n"
INSTRUCTION = "Add a docstring to `chunked` in util.py"
NO_CHANGE = "[no file was changed: the model did not call edit or write;"


def _code(workspace: Path) -> None:
    (workspace / "util.py").write_text(UTIL)


def test_an_instruction_answered_from_memory_is_nudged_and_its_answer_set_aside(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    _code(workspace)
    llm.add(text('def parse(x):\n    """Parse x."""\n    return x\n'))  # invented, unrelated
    llm.add(tool_call("read", {"path": "util.py"}))
    llm.add(text("util.py has chunked; I did not change it."))
    done = baton(["run", "--allow-write", INSTRUCTION], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    # The nudge for an instruction, and its step had to call a tool.
    nudge = prompts.NUDGE_NO_CHANGE + "\n[Start by searching for `chunked` with `grep`.]"
    assert llm.model_requests[1].texts("user")[-1] == nudge
    assert [r.get("tool_choice") for r in llm.model_requests] == [None, "required", None]
    # Only the answer after looking reaches stdout; the invented code does not.
    assert done.stdout == "util.py has chunked; I did not change it.\n"
    assert "that answer was set aside" in done.stderr
    assert NO_CHANGE in done.stderr
    assert (workspace / "util.py").read_text() == UTIL


def test_a_question_answered_from_memory_then_contradicted_prints_one_answer(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    _code(workspace)
    llm.add(text("`chunked` is defined in ", "helpers/chunks.py, line 12."))
    llm.add(tool_call("grep", {"pattern": "def chunked"}))
    llm.add(text("It is in util.py, line 1."))
    done = baton(["run", "Where is `chunked` defined?"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is in util.py, line 1.\n"
    assert "helpers/chunks.py" not in done.stdout + done.stderr
    # A question that changes nothing is not told it changed nothing.
    assert "no file was changed" not in done.stderr


def test_text_before_the_first_tool_call_is_printed_and_an_edit_gets_no_note(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    _code(workspace)
    llm.add(text("Let me look. "), tool_call("read", {"path": "util.py"}))
    llm.add(
        tool_call(
            "edit",
            {
                "path": "util.py",
                "old_string": "def chunked(items, n):\n",
                "new_string": 'def chunked(items, n):\n    """Split items into lists of n."""\n',
            },
        )
    )
    llm.add(text("Added it."))
    done = baton(["run", "--allow-write", INSTRUCTION], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Let me look. \nAdded it.\n"
    assert '"""Split items into lists of n."""' in (workspace / "util.py").read_text()
    assert "no file was changed" not in done.stderr and "set aside" not in done.stderr


def test_a_refused_edit_is_named_as_why_nothing_changed(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    _code(workspace)
    llm.add(tool_call("edit", {"path": "util.py", "old_string": "def ", "new_string": "def  "}))
    llm.add(text("I tried."))
    done = baton(["run", INSTRUCTION], workspace, home, llm)  # no --allow-write, no terminal
    assert "[no file was changed: the model's edit or write failed or was refused" in done.stderr
    assert (workspace / "util.py").read_text() == UTIL


def test_at_a_terminal_the_no_change_line_shows_and_the_spinner_runs_while_held(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    _code(workspace)
    llm.add(pace(0.15), text("def", " parse(x):", " return x"))
    llm.add(pace(0.15), tool_call("read", {"path": "util.py"}))
    llm.add(text("Nothing to change."))
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, None)
    code, screen = run_at_terminal(
        [sys.executable, "-m", "baton", "run", INSTRUCTION], workspace, env
    )
    assert code == 0, screen
    assert NO_CHANGE in screen
    assert "Nothing to change." in screen and "parse(x)" not in screen
    # While the first answer was held back, the spinner said the model was at work.
    assert "\r\x1b[K⠋ waiting for the model" in screen


def test_a_failed_turn_is_titled_by_its_cause(llm: FakeLLM, workspace: Path, home: Path) -> None:
    from tests.fake_llm import rate_limit

    llm.add(rate_limit(0))
    llm.add(rate_limit(0))
    done = baton(["run", "hello"], workspace, home, llm, extra={"BATON_MAX_RETRIES": "1"})
    assert done.returncode == 1
    title = (
        "baton: The model server is rate-limiting requests. Baton retried 1 time."
        " Wait a moment, then retry.\n"
    )
    assert title in done.stderr
    # The provider's own words follow, for whoever needs the detail.
    assert "returned HTTP 429" in done.stderr.split(title, 1)[1]
