"""`baton demo` on Claude: with only ANTHROPIC_API_KEY set, every phase runs through the
Messages API (the fake), each step's required tool named in `tool_choice`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.e2e.test_demo import EVERY_PHASE_OK, good_model, serve
from tests.fake_llm import FakeLLM
from tests.harness import server_env

KEY = "sk-ant-demo-0123456789abcdef"


def test_the_demo_runs_on_claude_when_only_an_anthropic_key_is_set(
    workspace: Path, home: Path
) -> None:
    (home / "tmp").mkdir(exist_ok=True)
    with FakeLLM(models=("claude-sonnet-4-6",), api_key=KEY) as claude:
        serve(claude, good_model())
        env = server_env(
            home,
            {"ANTHROPIC_BASE_URL": claude.url, "ANTHROPIC_API_KEY": KEY},
            {"TMPDIR": str(home / "tmp")},
        )
        done = subprocess.run(
            [sys.executable, "-m", "baton", "demo"],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Claude (ANTHROPIC_API_KEY is set)" in done.stdout
        assert EVERY_PHASE_OK in done.stdout
        requests = claude.requests
        assert requests and all(r.route == "messages" for r in requests)
        assert [r.rejected for r in requests if r.status != 200] == []
        forced = [r["tool_choice"] for r in requests if r.get("tool_choice")]
        assert {"type": "tool", "name": "plan_write"} in forced
        # The person's compaction ran on Claude's server.
        assert any(r.get("compaction") == {"type": "summarize"} for r in requests)
