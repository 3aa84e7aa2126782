"""A real ACP client drives `baton acp`: acpx (a headless ACP client from npm, pinned in
tests/acp/client/setup-acpx.sh), as a person would from a terminal.

acpx and the node it needs are installed from npm into a cache outside the clone on
first use; without npm (offline) these tests are skipped and say so. acpx prints every
JSON-RPC message of the connection with `--format json`: each the agent sent is checked
against the protocol's vendored schema (tests/acp/schema_check.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp import schema_check
from tests.e2e.test_cli_delegation import script_child
from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import TEST_KEY, server_env

SETUP = Path(__file__).parent / "client" / "setup-acpx.sh"
# Read before any test's throwaway HOME: the cache is shared between runs.
CACHE = os.environ.get("BATON_CI_CACHE") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "baton-ci"
)
# Methods the client serves (the agent calls them); the others are the agent's.
CLIENT_METHODS = ("session/update", "session/request_permission", "fs/", "terminal/")
# acpx's exit code when a permission was denied (its docs/exit-codes.md).
PERMISSION_DENIED = 5
SUMMARY = "## Goal\nthe PELICAN notes\n\n## Next action\ncarry on with the build notes\n"


@pytest.fixture(scope="module")
def acpx_command() -> str:
    env = {**os.environ, "BATON_CI_CACHE": CACHE}
    setup = subprocess.run(
        ["bash", str(SETUP)], env=env, capture_output=True, text=True, timeout=900
    )
    if setup.returncode != 0:
        reachable = subprocess.run(
            ["npm", "view", "acpx", "version"], capture_output=True, text=True, timeout=60
        )
        if reachable.returncode != 0:
            pytest.skip(f"npm is unreachable, acpx cannot be installed: {reachable.stderr[-300:]}")
        raise AssertionError(f"setup-acpx.sh failed:\n{setup.stderr[-3000:]}")
    return setup.stdout.strip().splitlines()[-1]


class Acpx:
    """acpx against `baton acp` in one workspace, with its own throwaway HOME."""

    def __init__(self, command: str, workspace: Path, home: Path, llm: FakeLLM) -> None:
        self.command, self.workspace = command, workspace
        self.env = server_env(
            home,
            {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY},
            {"BATON_COMPACTION__STRATEGY": "native"},
        )
        self.messages: list[dict[str, Any]] = []
        self.schema_errors: list[str] = []

    def run(
        self, *args: str, policy: str = "--approve-all", exit_code: int = 0
    ) -> list[dict[str, Any]]:
        agent = f"{sys.executable} -m baton acp"
        done = subprocess.run(
            [
                self.command,
                "--agent",
                agent,
                "--cwd",
                str(self.workspace),
                "--format",
                "json",
                policy,
                # The background session owner exits soon after the last command.
                "--ttl",
                "3",
                *args,
            ],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == exit_code, (
            f"acpx {args}: {done.returncode}\n{done.stderr[-3000:]}"
        )
        messages = []
        for line in done.stdout.splitlines():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
                messages.append(message)
        self._check(messages)
        self.messages.extend(messages)
        return messages

    def _check(self, messages: list[dict[str, Any]]) -> None:
        """What the agent sent, against the schema; answers matched to the client's
        requests by id (both sides number from 0: an id both have pending is skipped)."""
        pending: dict[Any, list[tuple[str, bool]]] = {}
        for message in messages:
            method = message.get("method")
            if method is not None:
                from_agent = method.startswith(CLIENT_METHODS)
                if from_agent:
                    self.schema_errors += [
                        f"{method}: {e}"
                        for e in schema_check.request_errors(method, message.get("params"))
                    ]
                if "id" in message:
                    pending.setdefault(message["id"], []).append((method, from_agent))
                continue
            waiting = pending.pop(message.get("id"), [])
            if len(waiting) == 1 and not waiting[0][1] and "result" in message:
                self.schema_errors += [
                    f"answer to {waiting[0][0]}: {e}"
                    for e in schema_check.response_errors(waiting[0][0], message["result"])
                ]

    def updates(self, kind: str) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.messages
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == kind
        ]

    def said(self) -> str:
        return "".join(u["content"]["text"] for u in self.updates("agent_message_chunk"))

    def sent(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("method") == method]


@pytest.fixture
def acpx(acpx_command: str, workspace: Path, home: Path, llm: FakeLLM) -> Acpx:
    return Acpx(acpx_command, workspace, home, llm)


def test_a_one_shot_prompt_reads_and_edits_with_permission(
    acpx: Acpx, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("print('helo')\n")
    llm.add(tool_call("read", {"path": "app.py"}))
    llm.add(tool_call("edit", {"path": "app.py", "old_string": "helo", "new_string": "hello"}))
    llm.add(text("Fixed the typo."))
    acpx.run("exec", "fix the typo in app.py")
    assert (workspace / "app.py").read_text() == "print('hello')\n"
    reads = [u for u in acpx.updates("tool_call") if u["kind"] == "read"]
    assert reads and reads[0]["title"] == "Read app.py"
    [asked] = acpx.sent("session/request_permission")
    diff = asked["params"]["toolCall"]["content"][0]
    assert (diff["type"], diff["oldText"], diff["newText"]) == (
        "diff",
        "print('helo')\n",
        "print('hello')\n",
    )
    [answer] = [
        m
        for m in acpx.messages
        if m.get("id") == asked["id"] and "outcome" in (m.get("result") or {})
    ]
    assert answer["result"]["outcome"]["outcome"] == "selected"
    assert acpx.said().endswith("Fixed the typo.")
    # Refused by the person: the file stays as it is.
    llm.add(tool_call("edit", {"path": "app.py", "old_string": "hello", "new_string": "bye"}))
    llm.add(text("Left it."))
    # acpx's exit code for a denied permission.
    acpx.run("exec", "change it again", policy="--deny-all", exit_code=PERMISSION_DENIED)
    assert (workspace / "app.py").read_text() == "print('hello')\n"
    assert acpx.schema_errors == []


def test_a_session_with_a_mode_switch_a_plan_a_child_and_a_compaction(
    acpx: Acpx, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "app.py").write_text("# TODO: one\n")
    acpx.run("sessions", "new")
    acpx.run("set-mode", "plan")
    # In plan mode a write outside the plan is refused; the plan is written.
    llm.add(tool_call("write", {"path": "notes.txt", "content": "x\n"}))
    llm.add(tool_call("plan_write", {"content": "# Greeting\n\n- [ ] one\n- [ ] two\n"}))
    llm.add(text("Planned."))
    acpx.run("prompt", "plan a greeting")
    assert not (workspace / "notes.txt").exists()
    [plan] = acpx.updates("plan")
    assert [(e["content"], e["status"]) for e in plan["entries"]] == [
        ("one", "pending"),
        ("two", "pending"),
    ]
    # The session was resumed by each later command (session/resume, no replay).
    assert acpx.sent("session/resume")

    acpx.run("set-mode", "build")
    script_child(llm)
    acpx.run("prompt", "look for TODOs with a child")
    child_texts = [
        block["content"]["text"]
        for u in acpx.updates("tool_call_update")
        for block in u.get("content") or []
        if block.get("type") == "content"
        and block["content"]["text"].startswith("explore child: find the TODOs")
    ]
    assert child_texts[0].splitlines()[1].startswith("running")
    assert child_texts[-1].splitlines()[1].startswith("done · ")
    assert "The child found one TODO." in acpx.said()

    detail = " ".join(f"note {n} about the build." for n in range(120))
    llm.add(text("Another answer. " + detail))
    acpx.run("prompt", "tell me more")
    llm.add(text(SUMMARY))
    acpx.run("prompt", "/compact keep the PELICAN notes")
    assert "keep the PELICAN notes" in llm.model_requests[-1].input_text()
    assert "conversation compacted (manual, native)" in acpx.said()
    acpx.run("sessions", "close")
    assert acpx.schema_errors == []
