"""`baton run`'s permission prompt shows what would run, all of it, with nothing hidden.

Each test runs the real CLI with a pseudo-terminal as stdin (so it asks) and
the scripted model, and reads what the person was shown on stderr.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import TEST_KEY, server_env


def run_at_a_terminal(
    workspace: Path, home: Path, llm: FakeLLM, answers: bytes
) -> tuple[int, str, str]:
    """`baton run` at a terminal, typing `answers`; (exit code, stdout, stderr)."""
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, None)
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "baton", "run", "do it"],
            cwd=workspace,
            env=env,
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.write(controller, answers)
        out, err = proc.communicate(timeout=90)
    finally:
        os.close(controller)
        os.close(terminal)
    return proc.returncode, out.decode(), err.decode()


PADDED = "echo ok" + " " * 520 + "; touch X"


def test_a_command_padded_past_any_width_is_shown_whole(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    llm.add(tool_call("bash", {"command": PADDED}))
    llm.add(text("Refused."))
    code, _, err = run_at_a_terminal(workspace, home, llm, b"n\n")
    assert code == 0, err
    assert "command: echo ok[… 520 spaces …]; touch X" in err
    assert not (workspace / "X").exists()

    llm.add(tool_call("bash", {"command": PADDED}))
    llm.add(text("Done."))
    code, _, err = run_at_a_terminal(workspace, home, llm, b"y\n")
    assert code == 0, err
    assert "; touch X" in err
    assert (workspace / "X").exists(), "what was shown and allowed ran"


def test_control_characters_in_a_command_are_made_visible_and_lines_wrap(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    # \r would return to the line's start and overwrite the shown command; ESC [2K
    # would erase it; U+202E would reverse what follows.
    command = "echo safe\r\x1b[2Krm -rf ~/important \u202e\nprintf '%s' " + "z" * 250
    llm.add(tool_call("bash", {"command": command}))
    llm.add(text("Refused."))
    code, _, err = run_at_a_terminal(workspace, home, llm, b"\n")
    assert code == 0, err
    assert "\x1b" not in err and "\r" not in err and "\u202e" not in err
    assert "│ echo safe\\r\\x1b[2Krm -rf ~/important \\u202e" in err
    assert "│ printf '%s' zzz" in err
    # 250 z's do not fit in the 100 columns used without a terminal: they wrap.
    wrapped = [line for line in err.splitlines() if line.startswith("  ┆ ")]
    assert wrapped and all(len(line) <= 100 for line in wrapped)
    assert "".join(err.split("│ printf '%s' ")[1].split("\n  ┆ ")).startswith("z" * 250)


def test_a_diff_with_escape_bytes_is_printed_escaped(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / "colours.txt").write_bytes(b"plain\n\x1b[31mred\x1b[0m\n\x1b]52;c;ZXZpbA==\x07\n")
    llm.add(tool_call("write", {"path": "colours.txt", "content": "plain\n\x1b[2Jgone\n"}))
    llm.add(text("Refused."))
    code, _, err = run_at_a_terminal(workspace, home, llm, b"n\n")
    assert code == 0, err
    assert "\x1b" not in err and "\x07" not in err
    assert "-\\x1b[31mred\\x1b[0m" in err
    assert "-\\x1b]52;c;ZXZpbA==\\x07" in err
    assert "+\\x1b[2Jgone" in err
    assert "content: (15 characters, shown in the diff below)" in err
    assert (workspace / "colours.txt").read_bytes().startswith(b"plain\n\x1b[31m"), "unchanged"


def test_a_huge_command_cannot_be_allowed_before_it_is_all_seen(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    lines = [f"echo line {i}" for i in range(400)] + ["touch hidden-tail"]
    command = "\n".join(lines)
    llm.add(tool_call("bash", {"command": command}))
    llm.add(text("Refused."))
    # "y" without viewing is not taken; end of input (^D) then refuses.
    code, _, err = run_at_a_terminal(workspace, home, llm, b"y\n\x04")
    assert code == 0, err
    assert "more lines not shown" in err and "answer v to see everything" in err
    assert "[v]iew all / [N]o" in err and "[y]es" not in err
    assert "not allowed: part of the request is not shown yet" in err
    assert "touch hidden-tail" not in err
    assert not (workspace / "hidden-tail").exists()

    llm.add(tool_call("bash", {"command": command}))
    llm.add(text("Done."))
    code, _, err = run_at_a_terminal(workspace, home, llm, b"v\ny\n")
    assert code == 0, err
    assert "│ touch hidden-tail" in err
    assert "[y]es / [a]lways / [N]o" in err
    assert (workspace / "hidden-tail").exists()


def test_always_can_be_this_command_only(llm: FakeLLM, workspace: Path, home: Path) -> None:
    """The narrower "always" answers are offered by number: `1` allows this exact command
    for the session, so it runs again unasked, and another command is asked again."""
    llm.add(tool_call("bash", {"command": "echo one >> ran.txt"}))
    llm.add(tool_call("bash", {"command": "echo one >> ran.txt"}))
    llm.add(tool_call("bash", {"command": "touch other"}))
    llm.add(text("Done."))
    code, _, err = run_at_a_terminal(workspace, home, llm, b"1\nn\n")
    assert code == 0, err
    assert "  1  Always allow `echo one >> ran.txt` in this session" in err
    assert "Allow bash? [y]es / [a]lways / [N]o, or 1: " in err
    assert err.count("Allow bash?") == 2, err
    assert (workspace / "ran.txt").read_text() == "one\none\n"
    assert not (workspace / "other").exists()


QUESTION = {
    "question": "Which store?",
    "options": [{"label": "SQLite", "description": "one file"}, {"label": "Postgres"}],
}


def test_a_question_is_asked_at_the_terminal(llm: FakeLLM, workspace: Path, home: Path) -> None:
    """`baton run` at a terminal offers `question`, shows it and its options, and the
    chosen option is the tool's result (issue 49)."""
    llm.add(tool_call("question", QUESTION, call_id="call_q"))
    llm.add(text("Postgres."))
    code, _, err = run_at_a_terminal(workspace, home, llm, b"9\n2\n")
    assert code == 0, err
    assert "? Which store?" in err
    assert "  1  SQLite — one file" in err
    assert "not an answer" in err
    assert "question" in llm.model_requests[0].tool_names
    assert llm.model_requests[1].tool_outputs()["call_q"] == "The person chose: Postgres"


def test_without_a_terminal_question_is_not_offered(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, None)
    llm.add(text("Nothing to ask."))
    done = subprocess.run(
        [sys.executable, "-m", "baton", "run", "do it"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    names = llm.model_requests[0].tool_names
    assert "question" not in names and "webfetch" in names
