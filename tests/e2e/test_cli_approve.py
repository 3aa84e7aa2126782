"""`baton run --session ID --approve [--fresh]`: approving a plan from the terminal."""

from __future__ import annotations

import re
from pathlib import Path

from tests.e2e.test_cli import baton
from tests.fake_llm import FakeLLM, text, tool_call

PLAN = "# Greeting\n\n- [ ] Write hello.py\n- [ ] Run it\n"


def planned(llm: FakeLLM, workspace: Path, home: Path) -> str:
    """A session whose plan awaits approval; its id."""
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Weighed the options at length."), tool_call("plan_exit", {}))
    done = baton(["run", "--mode", "plan", "plan a greeting; keep it short"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    found = re.search(r"session (ses_\w+)", done.stderr)
    assert found, done.stderr
    return found.group(1)


def test_approve_fresh_builds_the_plan_in_a_fresh_context(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    sid = planned(llm, workspace, home)
    seen = len(llm.model_requests)
    llm.add(tool_call("plan_edit", {"old_string": "- [ ] Write", "new_string": "- [x] Write"}))
    llm.add(text("Wrote it."))
    done = baton(["run", "--session", sid, "--approve", "--fresh"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("Wrote it.")
    assert f"[end_turn; session {sid}]" in done.stderr
    assert "plan mode ended" not in done.stderr
    first = llm.model_requests[seen]
    sent = first.input_text()
    assert "keep it short" in sent and "<baton:plan>" in sent
    assert "Weighed the options" not in sent, "the planning conversation left the view"
    # The step to start from is in the plan block; the turn's message does not repeat it.
    assert "Continue from: Write hello.py" in sent
    assert first.last_user_text() == "The plan above is approved: build it."


def test_plain_approve_keeps_the_conversation(llm: FakeLLM, workspace: Path, home: Path) -> None:
    sid = planned(llm, workspace, home)
    llm.add(text("Building."))
    done = baton(["run", "--session", sid, "--approve"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert "Weighed the options" in llm.model_requests[-1].input_text()


def test_approve_flags_are_checked_before_anything_runs(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    fresh_alone = baton(["run", "--fresh", "hi"], workspace, home, llm)
    assert fresh_alone.returncode == 2 and "--fresh goes with --approve" in fresh_alone.stderr
    no_session = baton(["run", "--approve"], workspace, home, llm)
    assert no_session.returncode == 2 and "--approve needs --session" in no_session.stderr
    with_prompt = baton(["run", "--session", "ses_x", "--approve", "go"], workspace, home, llm)
    assert with_prompt.returncode == 2 and "takes no prompt" in with_prompt.stderr
    assert llm.model_requests == []
    # No plan to approve: a clear error, exit 1.
    llm.add(text("hello"))
    chat = baton(["run", "hello"], workspace, home, llm)
    sid = re.search(r"session (ses_\w+)", chat.stderr)
    assert sid is not None
    refused = baton(["run", "--session", sid.group(1), "--approve"], workspace, home, llm)
    assert refused.returncode == 1 and "no plan" in refused.stderr
