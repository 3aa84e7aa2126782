"""Security through the real server: the workspace confines every file tool, keys stay in memory.

* Path escapes: the model asks the file tools (read, write, edit, glob, grep)
  and the plan tools for paths outside the workspace through `..`, absolute
  paths, symbolic links to a file and to a directory, a dangling link, and a
  plan file or plans directory swapped for a link. Nothing outside may be read
  (its marker never reaches the model or the client), written or created (the
  outside tree is byte-identical afterwards), or listed by glob/grep.
* Credentials: a key from the environment and one from `baton/auth/set`, used
  for a whole session (tools, a plan, a compaction, provider errors that echo
  the key, a command hook), appear in no file under the data directory or the
  workspace, no line of the server's log (at DEBUG), no notification or
  response, no request body sent to the model, and no hook input.
* Permissions: `reject`, a cancelled answer, a malformed answer, an error, and
  no answer at all all mean the command and the write never run.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, error, text, tool_call
from tests.harness import TEST_KEY, BatonClient
from tests.reliability.conftest import RecordFigures

# Outside files hold SECRET; the model's own arguments only ever hold SEARCH or PREFIX,
# so SECRET in an output means content from outside leaked (not an echoed argument).
SECRET = "OUTSIDE-SECRET-7f3a9c"
PREFIX = "OUTSIDE-SECRET"
SEARCH = "OUTSIDE-SECRET-[0-9a-f]+"
SUMMARY = "\n\n".join(f"## {name}\nkept" for name in SECTIONS)


def tree_digest(root: Path) -> dict[str, str]:
    """Every entry under `root` (links not followed) with a digest of its content or target."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


# --------------------------------------------------------------------------- path escapes


def listed_outside(workspace: Path, output: str) -> list[str]:
    """Paths in a glob/grep result that exist and resolve outside the workspace."""
    root = os.path.realpath(workspace)
    out = []
    for line in output.splitlines():
        for token in {line.strip(), line.split(":", 1)[0].strip()}:
            if not token:
                continue
            path = token if os.path.isabs(token) else os.path.join(root, token)
            if os.path.lexists(path):
                real = os.path.realpath(path)
                if real != root and not real.startswith(root + os.sep):
                    out.append(token)
    return out


def escape_calls(workspace: Path, outside: Path) -> list[tuple[str, dict[str, Any]]]:
    rel_out = os.path.relpath(outside, workspace)
    return [
        ("read", {"path": f"{rel_out}/secret.txt"}),
        ("read", {"path": str(outside / "secret.txt")}),
        ("read", {"path": "sub/../../" + rel_out + "/secret.txt"}),
        ("read", {"path": "inside.txt/../" + rel_out + "/secret.txt"}),
        ("read", {"path": "link_file"}),
        ("read", {"path": "link_dir/inner.txt"}),
        ("read", {"path": "sub/link_up/secret.txt"}),
        ("read", {"path": "/etc/passwd"}),
        ("read", {"path": "link_dir"}),
        ("write", {"path": f"{rel_out}/pwned.txt", "content": "pwned"}),
        ("write", {"path": str(outside / "pwned-abs.txt"), "content": "pwned"}),
        ("write", {"path": "link_file", "content": "pwned through a file link"}),
        ("write", {"path": "link_dir/pwned.txt", "content": "pwned through a dir link"}),
        ("write", {"path": "dangling", "content": "created through a dangling link"}),
        ("write", {"path": "sub/link_up/pwned.txt", "content": "pwned"}),
        ("edit", {"path": "link_file", "old_string": PREFIX, "new_string": "edited"}),
        ("edit", {"path": f"{rel_out}/secret.txt", "old_string": PREFIX, "new_string": "x"}),
        ("edit", {"path": "link_dir/inner.txt", "old_string": PREFIX, "new_string": "x"}),
        ("glob", {"pattern": "../*"}),
        ("glob", {"pattern": f"{rel_out}/*"}),
        ("glob", {"pattern": str(outside) + "/*"}),
        ("glob", {"pattern": "**/*"}),
        ("glob", {"pattern": "link_dir/*"}),
        ("glob", {"pattern": "**/inner.txt"}),
        ("grep", {"pattern": SEARCH}),
        ("grep", {"pattern": SEARCH, "path": ".."}),
        ("grep", {"pattern": SEARCH, "path": str(outside)}),
        ("grep", {"pattern": SEARCH, "path": "link_dir"}),
        ("grep", {"pattern": SEARCH, "path": "link_file"}),
        ("grep", {"pattern": SEARCH, "path": "sub/link_up"}),
        ("grep", {"pattern": SEARCH, "include": "../**"}),
    ]


def make_layout(tmp_path: Path, workspace: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text(f"{SECRET} in a file\n")
    (outside / "dir" / "inner.txt").write_text(f"{SECRET} in a directory\n")
    (workspace / "inside.txt").write_text("an ordinary file\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "inside2.txt").write_text("another\n")
    (workspace / "link_file").symlink_to(outside / "secret.txt")
    (workspace / "link_dir").symlink_to(outside / "dir")
    (workspace / "dangling").symlink_to(outside / "created.txt")
    (workspace / "sub" / "link_up").symlink_to(outside)
    return outside


@pytest.mark.asyncio
async def test_no_file_tool_reads_or_writes_outside_the_workspace(
    start_baton: StartBaton,
    llm: FakeLLM,
    workspace: Path,
    tmp_path: Path,
    record_figures: RecordFigures,
) -> None:
    outside = make_layout(tmp_path, workspace)
    before = tree_digest(outside)
    calls = escape_calls(workspace, outside)
    baton = await start_baton(settings={"permissions": {"write": "allow", "bash": "deny"}})
    sid = await baton.new_session()
    for name, args in calls:
        llm.add(tool_call(name, args))
    llm.add(text("Tried them all."))
    result = await baton.prompt(sid, "try every path")
    assert result["stopReason"] == "end_turn"

    # The plan file and the plans directory swapped for links.
    llm.add(tool_call("plan_write", {"content": "# Plan\n\n- [ ] one\n"}))
    llm.add(text("planned"))
    await baton.prompt(sid, "plan")
    plan = await baton.request("baton/plan/get", {"sessionId": sid})
    plan_file = workspace / plan["path"]
    plan_file.unlink()
    plan_file.symlink_to(outside / "secret.txt")
    plan_attempts: list[str] = []
    with contextlib.suppress(Exception):
        got = await baton.request("baton/plan/get", {"sessionId": sid})
        plan_attempts.append(json.dumps(got))
    llm.add(tool_call("plan_write", {"content": "# Plan\n\npwned through the plan link\n"}))
    llm.add(tool_call("plan_edit", {"old_string": PREFIX, "new_string": "x"}))
    llm.add(text("done"))
    await baton.prompt(sid, "write the plan again")
    plans_dir = plan_file.parent
    for entry in plans_dir.iterdir():
        entry.unlink()
    plans_dir.rmdir()
    plans_dir.symlink_to(outside / "dir")
    other = await baton.new_session()
    llm.add(tool_call("plan_write", {"content": "# New plan\n\nthrough a linked directory\n"}))
    llm.add(text("done"))
    await baton.prompt(other, "plan here")
    with contextlib.suppress(Exception):
        plan_attempts.append(
            json.dumps(await baton.request("baton/plan/get", {"sessionId": other}))
        )

    outputs = [out for req in llm.model_requests for out in req.tool_outputs().values()]
    seen_by_client = json.dumps(baton.notifications) + "".join(plan_attempts)
    escapes = []
    if any(SECRET in out for out in outputs):
        escapes.append("an outside file's content reached the model")
    if SECRET in seen_by_client:
        escapes.append("an outside file's content reached the client")
    for req in llm.model_requests:
        for call in req.function_calls():
            if call["name"] in ("glob", "grep"):
                output = req.tool_outputs().get(call["call_id"], "")
                for path in listed_outside(workspace, output):
                    escapes.append(f"{call['name']} {call['arguments']} listed {path}")
    after = tree_digest(outside)
    if after != before:
        changed = sorted(set(after.items()) ^ set(before.items()))
        escapes.append(f"the outside tree changed: {changed}")
    refused = sum(1 for u in baton.updates(sid, "tool_call_update") if u["status"] == "failed")
    record_figures(
        "security: paths",
        attempts=len(calls) + 5,
        refused_by_tools=refused,
        escapes=len(escapes),
    )
    assert not escapes, "\n".join(escapes)


# --------------------------------------------------------------------------- credentials

AUTH_KEY = "sk-authset-9d8c7b6a5f4e3d2c1b0a"
HOOK_DUMP = "hook-input-{n}.json"


def dump_hook(tmp_path: Path) -> Path:
    """A command hook that saves its stdin (outside the data dir, to grep later)."""
    script = tmp_path / "dump_hook.py"
    script.write_text(
        "import pathlib, sys, time\n"
        f"out = pathlib.Path({str(tmp_path)!r}) / ('hook-' + str(time.time_ns()) + '.json')\n"
        "out.write_text(sys.stdin.read())\n"
        "print('{}')\n"
    )
    return script


@pytest.mark.asyncio
async def test_api_keys_appear_in_no_file_log_notification_or_hook_input(
    start_baton: StartBaton,
    llm: FakeLLM,
    workspace: Path,
    home: Path,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    record_figures: RecordFigures,
) -> None:
    hook = dump_hook(tmp_path)
    hooks: dict[str, Any] = {
        kind: [{"command": [sys.executable, str(hook)], "timeout": 10}]
        for kind in ("pre_compact", "compacting", "compacted", "tool_before", "tool_after")
    }
    baton = await start_baton(
        settings={
            "permissions": {"bash": "allow", "write": "allow"},
            "hooks": hooks,
            "maxRetries": 1,
        },
        env={"BATON_LOG_LEVEL": "DEBUG"},
    )
    responses: list[Any] = []
    bodies: list[bytes] = []  # every request body the model server received
    sid = await baton.new_session(title="keys")
    # Tools, including one that tries to print the key from its environment.
    llm.add(tool_call("bash", {"command": "echo key=$OPENAI_API_KEY; env | grep -i key || true"}))
    llm.add(tool_call("write", {"path": "notes.txt", "content": "notes"}))
    llm.add(tool_call("plan_write", {"content": "# Plan\n\n- [ ] keep keys safe\n"}))
    llm.add(text("Done."))
    responses.append(await baton.prompt(sid, "work"))
    # A provider that echoes the key in its error body.
    llm.add(error(401, {"error": {"message": f"Incorrect API key provided: {TEST_KEY}"}}))
    responses.append(
        str(await baton.error("baton/session/prompt", {"sessionId": sid, "text": "x"}))
    )
    bodies += [req.raw or b"" for req in llm.requests]
    llm.reset()
    # The key from the client, used from now on.
    responses.append(
        await baton.request("baton/auth/set", {"provider": "openai", "apiKey": AUTH_KEY})
    )
    llm.add(text("With the new key."))
    responses.append(await baton.prompt(sid, "again"))
    assert llm.model_requests[-1].api_key == AUTH_KEY, "the key from baton/auth/set is used"
    for _ in range(2):
        llm.add(error(500, f"upstream said: Authorization: Bearer {AUTH_KEY}"))
    responses.append(
        str(await baton.error("baton/session/prompt", {"sessionId": sid, "text": "y"}))
    )
    bodies += [req.raw or b"" for req in llm.requests]
    llm.reset()
    llm.add(text(SUMMARY))
    responses.append(await baton.request("baton/session/compact", {"sessionId": sid}))
    for method in ("baton/session/load", "baton/session/compactions", "baton/plan/get"):
        responses.append(await baton.request(method, {"sessionId": sid}))
    responses.append(await baton.request("baton/session/context", {"sessionId": sid}))
    await baton.lsp.shutdown_session()
    await baton.stderr_forwarded()
    log = capfd.readouterr().err
    bodies += [req.raw or b"" for req in llm.requests]

    keys = {"env": TEST_KEY, "auth/set": AUTH_KEY}
    leaks: list[str] = []
    files = 0
    for root in (home, workspace):
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                files += 1
                data = path.read_bytes()
                for label, key in keys.items():
                    if key.encode() in data:
                        leaks.append(f"{label} key in {path}")
    hook_inputs = sorted(tmp_path.glob("hook-*.json"))
    for path in hook_inputs:
        for label, key in keys.items():
            if key in path.read_text():
                leaks.append(f"{label} key in a hook input ({path.name})")
    for label, key in keys.items():
        if key in log:
            line = next(line for line in log.splitlines() if key in line)
            leaks.append(f"{label} key in the server log: {line[:200]}")
        shown = json.dumps(baton.notifications) + str(baton.lsp.messages)
        if key in shown + str(baton.lsp.log_messages):
            leaks.append(f"{label} key in a notification")
        if key in json.dumps(responses, default=str):
            leaks.append(f"{label} key in a response or error")
        if any(key.encode() in body for body in bodies):
            leaks.append(f"{label} key in a request body sent to the model")
    record_figures(
        "security: keys",
        files_grepped=files,
        log_lines=len(log.splitlines()),
        notifications=len(baton.notifications),
        hook_inputs=len(hook_inputs),
        model_requests=len(bodies),
        leaks=len(leaks),
    )
    assert hook_inputs, "the command hooks ran"
    assert log.strip(), "the server's log was captured"
    assert not leaks, "\n".join(leaks)


# --------------------------------------------------------------------------- permissions


def answers(asked: asyncio.Event) -> list[tuple[str, Any]]:
    async def never(_: dict[str, Any]) -> Any:
        asked.set()
        await asyncio.sleep(3600)

    def fails(_: dict[str, Any]) -> Any:
        raise RuntimeError("the editor crashed while asking")

    return [
        ("reject", lambda _: {"outcome": {"optionId": "reject_once"}}),
        ("cancelled", lambda _: {"outcome": "cancelled"}),
        ("unknown option", lambda _: {"outcome": {"optionId": "allow_everything"}}),
        ("malformed", lambda _: {"allow": True}),
        ("null", lambda _: None),
        ("error", fails),
        ("no answer", never),
    ]


@pytest.mark.asyncio
@pytest.mark.timeout(120)
async def test_only_an_allow_answer_lets_a_command_or_write_run(
    baton: BatonClient, llm: FakeLLM, workspace: Path, record_figures: RecordFigures
) -> None:
    ran = 0
    asked = asyncio.Event()
    cases = answers(asked)
    for n, (label, policy) in enumerate(cases):
        baton.permission_policy = policy
        llm.reset()
        sid = await baton.new_session(title=label)
        llm.add(tool_call("bash", {"command": f"touch ran-{n}"}))
        llm.add(tool_call("write", {"path": f"written-{n}.txt", "content": "x"}))
        llm.add(text("ok"))
        prompt = asyncio.ensure_future(baton.prompt(sid, f"run {label}"))
        if label == "no answer":
            await asyncio.wait_for(asked.wait(), 30)
            assert not prompt.done(), "without an answer the tool waits"
            assert not (workspace / f"ran-{n}").exists()
            baton.notify("baton/session/cancel", {"sessionId": sid})
            result = await asyncio.wait_for(prompt, 10)
            assert result["stopReason"] == "cancelled"
        else:
            result = await asyncio.wait_for(prompt, 30)
            assert result["stopReason"] == "end_turn", (label, result)
        # The turn has ended, so every tool call it made has run or been refused.
        if (workspace / f"ran-{n}").exists() or (workspace / f"written-{n}.txt").exists():
            ran += 1
    # And the control: an allow answer does run both.
    baton.permission_policy = lambda _: {"outcome": {"optionId": "allow_once"}}
    llm.reset()
    sid = await baton.new_session(title="allow")
    llm.add(tool_call("bash", {"command": "touch ran-allowed"}))
    llm.add(tool_call("write", {"path": "written-allowed.txt", "content": "x"}))
    llm.add(text("ok"))
    assert (await baton.prompt(sid, "run allowed"))["stopReason"] == "end_turn"
    record_figures("security: permissions", answers_tried=len(cases), ran_without_allow=ran)
    assert ran == 0
    assert (workspace / "ran-allowed").exists() and (workspace / "written-allowed.txt").exists()
