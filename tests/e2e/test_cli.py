"""`baton run` and `baton sessions`: Baton from a terminal, without an editor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import TEST_KEY, server_env


def baton(
    args: list[str], workspace: Path, home: Path, llm: FakeLLM, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, None)
    return subprocess.run(
        [sys.executable, "-m", "baton", *args],
        cwd=workspace,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_run_streams_the_answer_and_sessions_lists_it(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    llm.add(tool_call("read", {"path": "notes.txt"}))
    llm.add(text("The notes say ", "42."))
    done = baton(["run", "What do the notes say?"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The notes say 42."
    assert "→ read" in done.stderr and "[end_turn; session ses_" in done.stderr

    listed = baton(["sessions"], workspace, home, llm)
    assert "What do the notes say?" in listed.stdout
    session_id = listed.stdout.split()[0]

    llm.add(text("Still 42."))
    again = baton(["run", "--session", session_id, "And now?"], workspace, home, llm)
    assert again.stdout.strip() == "Still 42."
    assert "the answer is 42" in llm.model_requests[-1].input_text(), "the session continued"


def test_run_refuses_bash_without_a_terminal_or_flag(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    llm.add(tool_call("bash", {"command": "touch made-by-bash"}))
    llm.add(text("It was refused."))
    done = baton(["run", "make a file"], workspace, home, llm)
    assert done.returncode == 0
    assert not (workspace / "made-by-bash").exists()
    assert "refused" in done.stderr

    llm.add(tool_call("bash", {"command": "touch made-by-bash"}))
    llm.add(text("Done."))
    allowed = baton(["run", "--allow-bash", "make a file"], workspace, home, llm)
    assert allowed.returncode == 0
    assert (workspace / "made-by-bash").exists()


def test_run_reports_a_provider_failure(llm: FakeLLM, workspace: Path, home: Path) -> None:
    from tests.fake_llm import error

    for _ in range(6):
        llm.add(error(401, {"error": {"message": "Incorrect API key provided"}}))
    done = baton(["run", "hello"], workspace, home, llm)
    assert done.returncode == 1
    assert "401" in done.stderr and "Incorrect API key" in done.stderr
    assert TEST_KEY not in done.stderr + done.stdout


def test_schema_prints_json_schema(llm: FakeLLM, workspace: Path, home: Path) -> None:
    done = baton(["schema"], workspace, home, llm)
    assert done.returncode == 0
    assert '"baton/session/prompt"' in done.stdout
