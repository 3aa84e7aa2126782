"""`baton run` reads stdin while the agent works (issue 50, point 6): with stdin a pipe,
each line is said to the agent at its next step, as the sidebar's queue does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.fake_llm import FakeLLM, stall, text, tool_call
from tests.harness import TEST_KEY, server_env


def test_a_line_on_stdin_reaches_the_model_at_the_next_step(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / "notes.txt").write_text("the answer is 42\n")
    llm.add(text("Reading. "), tool_call("read", {"path": "notes.txt"}), stall(30, after=1))
    llm.add(text("Les notes disent 42."))
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, None)
    run = subprocess.Popen(
        [sys.executable, "-m", "baton", "run", "what do the notes say?"],
        cwd=workspace,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        llm.wait_for_requests(1, timeout=30)
        assert run.stdin is not None
        run.stdin.write("Answer in French.\n")
        run.stdin.flush()
        # The line is queued while the first answer is held; then the answer goes on.
        import time

        time.sleep(1.0)
        llm.release()
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    assert len(llm.model_requests) == 2
    assert llm.model_requests[1].last_user_text() == "Answer in French."
    assert out.endswith("Les notes disent 42.\n")
