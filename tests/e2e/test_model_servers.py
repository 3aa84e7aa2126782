"""`baton model` finds an OpenAI-compatible server already running on 127.0.0.1 and says
how to use it (the fake model stands in for Ollama, LM Studio, llama.cpp or vLLM)."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
from pathlib import Path

from tests.fake_llm import FakeLLM, text
from tests.harness import server_env


def baton_model(args: list[str], workspace: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baton", "model", *args],
        cwd=workspace,
        env=server_env(home, None, None),
        capture_output=True,
        text=True,
        timeout=60,
    )


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_running_server_is_found_and_the_offered_settings_work(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    nothing = free_port()
    done = baton_model(["find", "--port", str(nothing), "--port", str(llm.port)], workspace, home)
    assert done.returncode == 0, done.stderr
    base = f"http://127.0.0.1:{llm.port}/v1"
    assert f"port {llm.port} at {base}: gpt-fake, gpt-fake-mini" in done.stdout
    assert f"port {nothing}" not in done.stdout
    [one_run] = [line.strip() for line in done.stdout.splitlines() if "baton run" in line]
    assert one_run.startswith(f"BATON_PROVIDER=openai-compatible BATON_BASE_URL={base}")
    assert 'provider = "openai-compatible"' in done.stdout and f'baseUrl = "{base}"' in done.stdout

    # The line it offers is one that works: a run on that server, with no key.
    settings = dict(word.split("=", 1) for word in shlex.split(one_run) if "=" in word)
    env = server_env(home, None, settings)
    llm.add(text("Served by the local server."))
    ran = subprocess.run(
        [sys.executable, "-m", "baton", "run", "hi"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "Served by the local server.\n"
    assert llm.model_requests[-1].get("model") == "gpt-fake"


def test_no_server_is_said_plainly(workspace: Path, home: Path) -> None:
    port = free_port()
    done = baton_model(["find", "--port", str(port)], workspace, home)
    assert done.returncode == 1
    assert f"no OpenAI-compatible server answers GET /v1/models on 127.0.0.1 ports {port}" in (
        done.stdout
    )


def test_the_usual_ports_are_named_for_their_servers() -> None:
    from baton.local.servers import KNOWN_PORTS, port_name

    assert dict(KNOWN_PORTS) == {
        11434: "Ollama",
        1234: "LM Studio",
        8080: "llama.cpp server",
        8000: "vLLM",
    }
    assert port_name(9999) == "port 9999"


def test_the_offered_line_runs_baton_and_nothing_else_whatever_the_model_id(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    # A server's answer chooses the model id; the line printed to paste must not run it.
    hostile = "qwen;touch rt-pasted;#"
    with FakeLLM(models=(hostile,)) as server:
        done = baton_model(["find", "--port", str(server.port)], workspace, home)
    assert done.returncode == 0, done.stderr
    [line] = [line.strip() for line in done.stdout.splitlines() if "baton run" in line]

    # Pasted into bash, with a `baton` on the PATH that records what it was given.
    bin_dir, pasted_in = tmp_path / "bin", tmp_path / "pasted-in"
    bin_dir.mkdir()
    pasted_in.mkdir()
    fake = bin_dir / "baton"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$BATON_MODEL" "$@" > ran-baton\n')
    fake.chmod(0o755)
    ran = subprocess.run(
        ["bash", "-c", line],
        cwd=pasted_in,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert ran.returncode == 0, ran.stderr
    assert not (pasted_in / "rt-pasted").exists()
    assert (pasted_in / "ran-baton").read_text() == f"{hostile}\nrun\n...\n"

    # The settings for good are valid TOML that names the same model.
    import tomllib

    toml = "\n".join(
        line.strip()
        for line in done.stdout.splitlines()
        if line.strip().startswith(("provider =", "baseUrl =", "model ="))
    )
    assert tomllib.loads(toml)["model"] == hostile


def test_an_anthropic_key_is_offered_as_claude_and_the_offered_run_works(
    workspace: Path, home: Path
) -> None:
    key = "sk-ant-find-0123456789abcdef"
    with FakeLLM(models=("claude-sonnet-4-6",), api_key=key) as claude:
        env = server_env(home, None, {"ANTHROPIC_API_KEY": key})
        done = subprocess.run(
            [sys.executable, "-m", "baton", "model", "find", "--port", str(free_port())],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "ANTHROPIC_API_KEY is set: Claude (claude-sonnet-4-6 by default)" in done.stdout
        assert key not in done.stdout + done.stderr
        [one_run] = [line.strip() for line in done.stdout.splitlines() if "baton run" in line]
        assert one_run.startswith("use it for one run: BATON_PROVIDER=anthropic baton run")

        claude.add(text("Claude here."))
        ran = subprocess.run(
            [sys.executable, "-m", "baton", "run", "hi"],
            cwd=workspace,
            env={**env, "BATON_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": claude.url},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout == "Claude here.\n"
        assert claude.model_requests[-1].route == "messages"
