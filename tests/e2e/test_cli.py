"""`baton run` and `baton sessions`: Baton from a terminal, without an editor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.fake_llm import FakeLLM, pace, prompt_progress, text, tool_call
from tests.harness import TEST_KEY, server_env


def baton(
    args: list[str],
    workspace: Path,
    home: Path,
    llm: FakeLLM,
    stdin: str = "",
    extra: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, extra)
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
    session_id = listed.stdout.splitlines()[1].split()[0]

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


def test_an_empty_prompt_is_refused_and_leaves_no_session(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    for prompt in ["", "   \n"]:
        done = baton(["run", prompt], workspace, home, llm)
        assert done.returncode == 2
        assert "the prompt is empty" in done.stderr
    listed = baton(["sessions"], workspace, home, llm)
    assert listed.stdout.startswith("no sessions in this directory yet"), listed.stdout
    assert llm.model_requests == []


def test_an_empty_session_id_is_an_error_not_a_new_session(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    done = baton(["run", "--session", "", "hello"], workspace, home, llm)
    assert done.returncode == 2
    assert "--session needs a session id" in done.stderr
    assert baton(["sessions"], workspace, home, llm).stdout.startswith("no sessions")


def test_a_session_of_another_directory_is_named_with_its_directory(
    llm: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    llm.add(text("Hi."))
    assert baton(["run", "hello"], workspace, home, llm).returncode == 0
    session_id = baton(["sessions"], workspace, home, llm).stdout.splitlines()[1].split()[0]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = baton(["run", "--session", session_id, "again"], elsewhere, home, llm)
    assert done.returncode == 1
    assert f"session not found: {session_id!r}" in done.stderr
    assert f"it belongs to {workspace}" in done.stderr and "per workspace" in done.stderr

    unknown = baton(["run", "--session", "ses_nope", "again"], elsewhere, home, llm)
    assert unknown.returncode == 1
    assert "sessions are per workspace" in unknown.stderr and "baton sessions" in unknown.stderr
    assert baton(["sessions"], elsewhere, home, llm).stdout.startswith("no sessions")


def test_help_lists_every_command_and_every_option_has_help(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    import argparse

    from baton.faces.cli.main import build_parser

    def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                return dict(action.choices)
        return {}

    def check(parser: argparse.ArgumentParser, prefix: list[str]) -> None:
        shown = baton([*prefix, "--help"], workspace, home, llm).stdout
        for name, sub in commands(parser).items():
            assert f"    {name} " in shown, f"baton {' '.join(prefix)} --help omits {name}"
            for action in sub._actions:
                if not isinstance(action, argparse._SubParsersAction):
                    assert action.help, f"baton {name} {action.option_strings or action.dest}"
            check(sub, [*prefix, name])

    check(build_parser(), [])
    assert "model" in commands(build_parser()) and "demo" in commands(build_parser())
    assert "plan: read only" in baton(["run", "--help"], workspace, home, llm).stdout


def test_echoed_markup_is_left_out_of_stdout_and_noted_once(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    llm.add(
        text(
            "The plan:\n<baton:pl",
            "an>\n- [ ] copy Baton's block\n</baton:plan>\nand <tool_response>{}</tool_response>",
            "done.<|im_end|>",
        )
    )
    done = baton(["run", "what is the plan?"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The plan:\n\nand done.\n"
    assert done.stderr.count("the model echoed markup") == 1
    assert "<baton:plan>, <tool_response>, <|im_end|>" in done.stderr


def test_plan_mode_without_a_plan_file_says_so(llm: FakeLLM, workspace: Path, home: Path) -> None:
    llm.add(text("1. Add the check. 2. Test it."))
    done = baton(["run", "--mode", "plan", "plan the strict check"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert "plan mode ended without a plan file" in done.stderr
    assert "did not call plan_write" in done.stderr

    llm.add(tool_call("plan_write", {"content": "# Plan\n\n- [ ] add the check\n"}))
    llm.add(text("Written."))
    written = baton(["run", "--mode", "plan", "plan it"], workspace, home, llm)
    assert "[plan v1:" in written.stderr
    assert "plan mode ended" not in written.stderr


# llama.cpp's progress chunks come over Chat Completions (the local provider's wire).
CHAT = {"BATON_PROVIDER": "openai-compatible", "BATON_MODEL": "gpt-fake"}


def test_prompt_reading_progress_is_shown_on_stderr(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    llm.add(prompt_progress(600, batch=256), text("Hello."))
    done = baton(["run", "hi"], workspace, home, llm, extra=CHAT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello.\n"
    # Without a TTY: one plain line per phase (at most every few seconds).
    assert "[reading the prompt: 0 / 600 tokens]" in done.stderr
    assert "[waiting for the model]" in done.stderr


def test_a_tty_gets_a_spinner_with_elapsed_time(llm: FakeLLM, workspace: Path, home: Path) -> None:
    import os
    import pty

    llm.add(prompt_progress(600, batch=256, cached=100), pace(0.15), text("Hello."))
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, CHAT)
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "baton", "run", "hi"],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
    ) as proc:
        os.close(follower)
        out = proc.stdout.read() if proc.stdout else b""
        proc.wait(timeout=60)
    err = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(leader)
    shown = err.decode("utf-8", "replace")
    assert out == b"Hello.\n"
    assert "\r\x1b[K⠋ waiting for the model (0 s)" in shown
    assert "reading the prompt: 356 / 600 tokens (100 from the cache) (0 s)" in shown
    assert "the model is answering (prompt of 600 tokens read) (0 s)" in shown
    assert shown.endswith("\r\x1b[K[end_turn; session " + shown.split("session ")[-1])


def test_sessions_has_a_header_and_shows_whole_titles(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    long_prompt = (
        "Add a docstring to every public function in the utils module that says what it"
        " returns and which exceptions it raises"
    )
    llm.add(text("Done."))
    assert baton(["run", long_prompt], workspace, home, llm).returncode == 0
    llm.add(text("Hi."))
    assert baton(["run", "hi"], workspace, home, llm).returncode == 0
    lines = baton(["sessions"], workspace, home, llm).stdout.splitlines()
    assert lines[0].split() == ["SESSION", "UPDATED", "MODE", "TITLE"]
    assert any(line.endswith(long_prompt) for line in lines[1:]), lines
    # The columns line up: every title starts where the header's TITLE does.
    column = lines[0].index("TITLE")
    assert sorted(line[column:] for line in lines[1:]) == sorted([long_prompt, "hi"])


def test_a_title_longer_than_the_limit_is_cut_at_a_word() -> None:
    from baton.store.model import TITLE_CHARS, title_from_prompt

    assert title_from_prompt("  fix\n the   bug ") == "fix the bug"
    long = " ".join(["word"] * 100)
    title = title_from_prompt(long)
    assert len(title) <= TITLE_CHARS and title.endswith("word…")
    assert title_from_prompt(" \n ") == "New session"


def test_acp_help_says_what_it_is_and_how_an_editor_starts_it(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    shown = baton(["acp", "--help"], workspace, home, llm).stdout
    assert "https://agentclientprotocol.com" in shown
    assert '"command": "baton", "args": ["acp"]' in shown
    assert "Zed" in shown and "JetBrains" in shown and "Neovim" in shown and "Emacs" in shown
    # Nothing that exists only in a checkout of the repository.
    assert "docs/" not in shown
    piped = subprocess.run(
        [sys.executable, "-m", "baton", "acp"],
        cwd=workspace,
        env=server_env(home, {}, None),
        stdin=subprocess.DEVNULL,
        stdout=(workspace / "out.txt").open("w"),
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    assert piped.returncode == 2
    assert "`baton acp --help` says how" in piped.stderr and "docs/" not in piped.stderr
    # /dev/null on stdin (epoll cannot watch it): the same one line, no asyncio traceback.
    null_in = subprocess.run(
        [sys.executable, "-m", "baton", "acp"],
        cwd=workspace,
        env=server_env(home, {}, None),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert null_in.returncode == 2
    assert "`baton acp --help` says how" in null_in.stderr
    assert "Traceback" not in null_in.stderr, null_in.stderr


def git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout


def test_batons_plans_are_not_untracked_noise_in_git_status(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    git(workspace, "init", "-q")
    (workspace / "app.py").write_text("print('hi')\n")
    git(workspace, "add", "app.py")

    def plan(prompt: str) -> None:
        llm.add(tool_call("plan_write", {"content": "# Plan\n\n- [ ] add the check\n"}))
        llm.add(text("Written."))
        done = baton(["run", "--mode", "plan", prompt], workspace, home, llm)
        assert "[plan v1:" in done.stderr, done.stderr

    plan("plan the check")
    assert len(list((workspace / ".baton" / "plans").glob("*.md"))) == 1
    assert git(workspace, "status", "--porcelain") == "A  app.py\n"
    ignore = (workspace / ".baton" / ".gitignore").read_text()
    assert "/plans/" in ignore and 'dir = "docs/plans"' in ignore

    # The person's own files under .baton/ are not ignored.
    (workspace / ".baton" / "instructions.md").write_text("Be brief.\n")
    assert "?? .baton/instructions.md" in git(workspace, "status", "--porcelain", "-uall")

    # Deleted (to keep plans in git), it is not written again.
    (workspace / ".baton" / ".gitignore").unlink()
    plan("plan another check")
    assert not (workspace / ".baton" / ".gitignore").exists()
    assert len(list((workspace / ".baton" / "plans").glob("*.md"))) == 2


def test_plans_kept_elsewhere_get_no_ignore_file(llm: FakeLLM, workspace: Path, home: Path) -> None:
    git(workspace, "init", "-q")
    (workspace / ".baton").mkdir()
    (workspace / ".baton" / "config.toml").write_text('[plans]\ndir = "docs/plans"\n')
    llm.add(tool_call("plan_write", {"content": "# Plan\n\n- [ ] add the check\n"}))
    llm.add(text("Written."))
    done = baton(["run", "--mode", "plan", "plan the check"], workspace, home, llm)
    assert "[plan v1: docs/plans/" in done.stderr, done.stderr
    assert not (workspace / ".baton" / ".gitignore").exists()
    assert "?? docs/" in git(workspace, "status", "--porcelain")


def test_run_expands_a_slash_command_of_the_workspace_and_of_the_person(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    command = workspace / ".claude" / "commands" / "haiku.md"
    command.parent.mkdir(parents=True)
    command.write_text("---\ndescription: A haiku\n---\nWrite a haiku on $1 in $2 words.\n")
    own = home / "config" / "baton" / "skills" / "tidy" / "SKILL.md"
    own.parent.mkdir(parents=True)
    own.write_text("---\nname: tidy\ndescription: Tidy up\n---\nTidy $ARGUMENTS with care.\n")
    assert baton(["trust"], workspace, home, llm).returncode == 0
    llm.add(text("Written."))
    done = baton(["run", "/haiku autumn fifty"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Written."
    assert llm.model_requests[-1].last_user_text() == "Write a haiku on autumn in fifty words."
    llm.add(text("Tidied."))
    done = baton(["run", "/tidy the docs"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert llm.model_requests[-1].last_user_text() == (
        '<baton:skill name="tidy">\nTidy the docs with care.\n</baton:skill>'
    )
    listed = baton(["sessions"], workspace, home, llm)
    assert "/haiku autumn fifty" in listed.stdout
