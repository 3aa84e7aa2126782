"""Nothing committed is ever lost: SIGKILL the real server at random instants and check the store.

A seeded loop starts the server, drives two sessions at a time through turns
with tool calls (files, shell, `plan_write`, `plan_show`), manual compactions
(native and server strategy), plan edits through `baton/plan/update` and on
disk, and SIGKILLs the process at a random instant. After each kill, before
any server touches the store again, the suite opens the SQLite file itself:
it must pass `PRAGMA integrity_check`, every compaction row must have its
marker message and every marker its row, and each plan file must agree with
its latest version. Then it restarts the server and checks, through the
protocol, that everything the client had seen complete is there:

* a step is complete once its `usage` update, a `tool_call_update` or
  `turn_ended` arrived (all are sent after the commit): its text and its tool
  calls must be stored, and the user message that started the turn;
* a `tool_call_update` with `completed`/`failed`: that result, exactly;
* `compaction_finished` or a returned `baton/session/compact`: the record;
* `baton/plan/didChange` or a returned `baton/plan/update`: that version;
* the `compacted` flags `baton/session/load` reports match the latest active
  compaction read from the file;
* a plan file that differs from its latest version (a kill between the file
  write and the commit) is recorded as a `user` version on the next read.

20 kills in CI; `BATON_RELIABILITY_FULL=1` runs 200.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from baton.compaction.summary import SECTIONS
from baton.plan import frontmatter
from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, pace, text, tool_call
from tests.fake_llm.records import RecordedRequest
from tests.harness import BatonClient
from tests.reliability.conftest import SEED, RecordFigures, size
from tests.reliability.store_check import db_path, inspect_store

KILLS = size(20, 200)
SUMMARY = "\n\n".join(f"## {name}\nkept: {name.lower()}" for name in SECTIONS)
SETTINGS: dict[str, Any] = {
    "permissions": {"bash": "allow", "write": "allow"},
    # Small enough that long sessions also compact on their own now and then.
    "contextWindow": 24000,
}


# --------------------------------------------------------------------------- the model


class ScriptedModel:
    """Answers every model request: a few tool calls per turn, then a final text.

    The number of tool steps is derived from the user message, so a request
    that follows a tool output continues the same plan; summary requests (no
    tools offered) get a full sectioned summary.
    """

    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)
        self.count = 0

    def __call__(self, req: RecordedRequest) -> Any:
        self.count += 1
        n = self.count
        speed = pace(self.rnd.choice([0.0, 0.002, 0.01]))
        if req.is_summary:
            return [text(SUMMARY), speed]
        items = req.items
        last_user = max((i for i, it in enumerate(items) if it.get("role") == "user"), default=-1)
        steps = sum(1 for it in items[last_user + 1 :] if it.get("type") == "function_call")
        key = req.last_user_text() or ""
        if steps >= zlib.crc32(key.encode()) % 4:
            return [text(f"Final answer {n}: all done with {key[:30]!r}."), speed]
        return [text(f"Step {n}."), self._tool(n), speed]

    def _tool(self, n: int) -> Any:
        choice = self.rnd.choice(["read", "write", "bash", "glob", "grep", "plan", "plan", "show"])
        if choice == "read":
            return tool_call("read", {"path": "README.md"})
        if choice == "write":
            return tool_call("write", {"path": f"notes/n{n % 7}.txt", "content": f"note {n}\n"})
        if choice == "bash":
            return tool_call("bash", {"command": f"echo step-{n}"})
        if choice == "glob":
            return tool_call("glob", {"pattern": "**/*.txt"})
        if choice == "grep":
            return tool_call("grep", {"pattern": "note"})
        if choice == "plan":
            steps = "".join(f"- [ ] step {n}.{i}\n" for i in range(self.rnd.randint(1, 6)))
            return tool_call("plan_write", {"content": f"# Plan {n}\n\n{steps}"})
        return tool_call("plan_show", {})


# --------------------------------------------------------------------------- evidence


@dataclass
class Evidence:
    """What the client saw complete, by session; all of it must survive any kill."""

    texts: dict[str, set[str]] = field(default_factory=dict)
    user_texts: dict[str, set[str]] = field(default_factory=dict)
    calls: dict[str, set[str]] = field(default_factory=dict)
    results: dict[str, dict[str, tuple[str, str | None]]] = field(default_factory=dict)
    user_messages: dict[str, set[str]] = field(default_factory=dict)
    compactions: dict[str, set[str]] = field(default_factory=dict)
    plan_versions: dict[str, dict[int, str]] = field(default_factory=dict)

    def count(self) -> int:
        return sum(
            len(v)
            for group in (
                self.texts,
                self.user_texts,
                self.calls,
                self.results,
                self.user_messages,
                self.compactions,
                self.plan_versions,
            )
            for v in group.values()
        )


@dataclass
class Run:
    """One server's life: what the workload sent, in order with the notifications."""

    baton: BatonClient
    prompts: list[tuple[int, str, str]] = field(default_factory=list)  # (index, sid, text)
    records: list[tuple[str, str]] = field(default_factory=list)  # returned compactions
    plan_writes: list[tuple[str, int]] = field(default_factory=list)  # returned plan/update
    finished_prompts: list[tuple[str, str]] = field(default_factory=list)
    disk_edits: set[str] = field(default_factory=set)
    op_errors: int = 0


def phases_at_kill(run: Run) -> set[str]:
    """What was in flight when the server died: a stream, a tool, a compaction."""
    streaming: set[str] = set()
    tools: set[str] = set()
    compacting: set[str] = set()
    for method, params in run.baton.notifications:
        if method != "baton/session/update":
            continue
        sid, update = params["sessionId"], params["update"]
        kind = update["kind"]
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            streaming.add(sid)
        elif kind in ("usage", "turn_ended"):
            streaming.discard(sid)
        elif kind == "tool_call_update":
            streaming.discard(sid)
            if update["status"] == "in_progress":
                tools.add(update["toolCallId"])
            else:
                tools.discard(update["toolCallId"])
        elif kind == "compaction_started":
            compacting.add(sid)
        elif kind in ("compaction_finished", "compaction_failed"):
            compacting.discard(sid)
    out = set()
    if streaming:
        out.add("stream")
    if tools:
        out.add("tool")
    if compacting:
        out.add("compaction")
    return out


def collect(run: Run, evidence: Evidence) -> None:
    """Turn the notifications and results of a killed run into evidence."""
    pending_text: dict[str, list[str]] = {}
    pending_calls: dict[str, set[str]] = {}
    prompts = sorted(run.prompts)

    def current_prompt(sid: str, index: int) -> str | None:
        found = None
        for at, psid, text_ in prompts:
            if at <= index and psid == sid:
                found = text_
        return found

    def committed(sid: str, index: int) -> None:
        chunk = "".join(pending_text.pop(sid, []))
        if chunk:
            evidence.texts.setdefault(sid, set()).add(chunk)
        evidence.calls.setdefault(sid, set()).update(pending_calls.pop(sid, set()))
        prompt = current_prompt(sid, index)
        if prompt is not None:
            evidence.user_texts.setdefault(sid, set()).add(prompt)

    for index, (method, params) in enumerate(run.baton.notifications):
        if method == "baton/plan/didChange":
            versions = evidence.plan_versions.setdefault(params["sessionId"], {})
            versions[params["version"]] = params["author"]
            continue
        if method != "baton/session/update":
            continue
        sid, update = params["sessionId"], params["update"]
        kind = update["kind"]
        if kind == "agent_message_chunk":
            pending_text.setdefault(sid, []).append(update["text"])
        elif kind == "tool_call":
            pending_calls.setdefault(sid, set()).add(update["toolCallId"])
        elif kind in ("usage", "turn_ended"):
            committed(sid, index)
        elif kind == "tool_call_update":
            committed(sid, index)
            if update["status"] in ("completed", "failed"):
                evidence.results.setdefault(sid, {})[update["toolCallId"]] = (
                    update["status"],
                    update.get("output"),
                )
        elif kind == "compaction_finished":
            # "nothing to compact" answers are record-shaped but never stored.
            if update["compaction"].get("committed", True):
                cid = update["compaction"]["compactionId"]
                evidence.compactions.setdefault(sid, set()).add(cid)
            pending_text.pop(sid, None)
        elif kind == "user_message":
            evidence.user_messages.setdefault(sid, set()).add(update["messageId"])
        elif kind == "compaction_started":
            pending_text.pop(sid, None)  # a summary is not a step of the session
    for sid, cid in run.records:
        evidence.compactions.setdefault(sid, set()).add(cid)
    for sid, version in run.plan_writes:
        evidence.plan_versions.setdefault(sid, {})[version] = "user"
    for sid, text_ in run.finished_prompts:
        evidence.user_texts.setdefault(sid, set()).add(text_)


# --------------------------------------------------------------------------- workload


class Workload:
    def __init__(self, rnd: random.Random, workspace: Path) -> None:
        self.rnd = rnd
        self.workspace = workspace
        self.sessions: list[str] = []
        self.lanes: dict[int, list[str]] = {0: [], 1: []}  # a session belongs to one lane
        self.n = 0

    async def worker(self, run: Run, lane: int) -> None:
        """Random operations on this lane's sessions until the server is killed."""
        baton = run.baton
        while not baton.dead:
            mine = self.lanes[lane]
            if not mine or self.rnd.random() < 0.08:
                sid = await baton.new_session(mode=self.rnd.choice(["build", "build", "plan"]))
                self.sessions.append(sid)
                mine.append(sid)
            sid = self.rnd.choice(mine[-3:])
            op = self.rnd.choices(
                ["prompt", "compact", "plan_update", "disk_edit"], weights=[6, 2, 1, 1]
            )[0]
            self.n += 1
            try:
                if op == "prompt":
                    text_ = f"prompt {self.n} in lane {lane}"
                    run.prompts.append((len(baton.notifications), sid, text_))
                    await baton.prompt(sid, text_)
                    run.finished_prompts.append((sid, text_))
                elif op == "compact":
                    strategy = self.rnd.choice(["native", "native", "auto"])
                    record = await baton.request(
                        "baton/session/compact", {"sessionId": sid, "strategy": strategy}
                    )
                    if record.get("committed", True):
                        run.records.append((sid, record["compactionId"]))
                elif op == "plan_update":
                    plan = await baton.request("baton/plan/get", {"sessionId": sid})
                    if plan is not None:
                        result = await baton.request(
                            "baton/plan/update",
                            {
                                "sessionId": sid,
                                "content": plan["content"]
                                + f"- [ ] added by the person {self.n}\n",
                                "baseVersion": plan["version"],
                            },
                        )
                        run.plan_writes.append((sid, result["version"]))
                else:
                    plan = await baton.request("baton/plan/get", {"sessionId": sid})
                    if plan is not None:
                        path = self.workspace / plan["path"]
                        meta, content = frontmatter.split(path.read_text(encoding="utf-8"))
                        edited = content + f"- [ ] typed in the editor {self.n}\n"
                        path.write_text(
                            frontmatter.render(
                                edited, status=meta.get("status", "draft"), session_id=sid
                            ),
                            encoding="utf-8",
                        )
                        run.disk_edits.add(sid)
            except JsonRpcException as exc:
                run.op_errors += 1  # e.g. a plan changed under a plan/update: not a loss
                if op == "prompt" and exc.code in (-32001, -32002, -32602):
                    # Refused before anything was stored: its text is not evidence.
                    run.prompts = [p for p in run.prompts if p[2] != text_]
            except (ConnectionError, asyncio.CancelledError):
                return


# --------------------------------------------------------------------------- checks


@dataclass
class Figures:
    kills: int = 0
    messages_checked: int = 0
    losses: int = 0
    store_problems: int = 0
    view_mismatches: int = 0
    plan_diffs_recorded: int = 0
    plan_diffs_from_kills: int = 0
    op_errors: int = 0
    phases: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def lose(self, what: str) -> None:
        """Count a loss once, however many later checks find it missing again."""
        if what in self.problems:
            return
        self.losses += 1
        self.problems.append(what)


async def verify(
    baton: BatonClient,
    evidence: Evidence,
    sessions: list[str],
    compacted: dict[str, set[str]],
    plan_diffs: dict[str, str],
    figures: Figures,
) -> None:
    """Through the restarted server: every piece of evidence is there, the view is whole."""
    for sid in sessions:
        loaded = await baton.load(sid)
        messages = loaded["messages"]
        figures.messages_checked += len(messages)
        texts: set[str] = set()
        calls: dict[str, dict[str, Any]] = {}
        for message in messages:
            for part in message["parts"]:
                if part["type"] == "text":
                    texts.add(part["text"])
                elif part["type"] == "tool_call":
                    calls[part["toolCallId"]] = part
        ids = {m["id"] for m in messages}
        for chunk in evidence.texts.get(sid, set()):
            if chunk not in texts:
                figures.lose(f"{sid}: streamed text of a committed step is missing: {chunk[:60]!r}")
        for prompt in evidence.user_texts.get(sid, set()):
            if prompt not in texts:
                figures.lose(f"{sid}: user message {prompt!r} is missing")
        for call_id in evidence.calls.get(sid, set()):
            if call_id not in calls:
                figures.lose(f"{sid}: tool call {call_id} of a committed step is missing")
        for call_id, (status, output) in evidence.results.get(sid, {}).items():
            part = calls.get(call_id)
            if part is None or part["status"] != status or part.get("output") != output:
                figures.lose(f"{sid}: result of {call_id} ({status}) is missing or different")
        for message_id in evidence.user_messages.get(sid, set()):
            if message_id not in ids:
                figures.lose(f"{sid}: message {message_id} is missing")
        listed = await baton.request("baton/session/compactions", {"sessionId": sid})
        stored = {c["compactionId"] for c in listed["compactions"]}
        for cid in evidence.compactions.get(sid, set()) - stored:
            figures.lose(f"{sid}: compaction {cid} is missing")
        shown = {m["id"] for m in messages if m["compacted"]}
        if shown != compacted.get(sid, set()):
            figures.view_mismatches += 1
            figures.problems.append(
                f"{sid}: load marks {len(shown)} compacted, the active compaction "
                f"{len(compacted.get(sid, set()))}"
            )
        plan = await baton.request("baton/plan/get", {"sessionId": sid})
        history = await baton.request("baton/plan/history", {"sessionId": sid})
        versions = {v["version"]: v["author"] for v in history["versions"]}
        for version, author in evidence.plan_versions.get(sid, {}).items():
            if versions.get(version) != author:
                figures.lose(f"{sid}: plan version {version} by {author} is missing")
        if sid in plan_diffs:
            if plan is None or plan["content"] != plan_diffs[sid]:
                figures.lose(f"{sid}: the plan file's content was not taken up on read")
            elif versions[max(versions)] != "user":
                figures.lose(f"{sid}: the plan file's difference was not recorded as a user edit")
            else:
                figures.plan_diffs_recorded += 1


# --------------------------------------------------------------------------- the loop


@pytest.mark.asyncio
@pytest.mark.timeout(size(600, 5400))
async def test_sigkill_at_random_instants_loses_nothing_committed(
    start_baton: StartBaton,
    llm: FakeLLM,
    workspace: Path,
    record_figures: RecordFigures,
) -> None:
    rnd = random.Random(SEED)
    (workspace / "README.md").write_text("A project with notes.\n")
    llm.on_request(ScriptedModel(SEED))
    workload = Workload(rnd, workspace)
    evidence = Evidence()
    figures = Figures()
    store = db_path(workspace)
    baton = await start_baton(settings=SETTINGS)
    try:
        for _ in range(KILLS):
            run = Run(baton)
            lanes = [asyncio.ensure_future(workload.worker(run, lane)) for lane in (0, 1)]
            await asyncio.sleep(rnd.uniform(0.05, 1.5))
            baton.kill()
            figures.kills += 1
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.gather(*lanes, return_exceptions=True), 10)
            await asyncio.to_thread(_wait_dead, baton)
            collect(run, evidence)
            figures.op_errors += run.op_errors
            for phase in phases_at_kill(run) or {"between steps"}:
                figures.phases[phase] = figures.phases.get(phase, 0) + 1

            report = inspect_store(store, workspace)
            figures.store_problems += len(report.problems)
            figures.problems.extend(report.problems[:5])
            figures.plan_diffs_from_kills += len(set(report.plan_diffs) - run.disk_edits)

            baton = await start_baton(settings=SETTINGS)
            await verify(
                baton, evidence, workload.sessions, report.compacted, report.plan_diffs, figures
            )
    finally:
        record_figures(
            "crash",
            kills=figures.kills,
            messages_checked=figures.messages_checked,
            evidence_items=evidence.count(),
            losses=figures.losses,
            store_problems=figures.store_problems,
            view_mismatches=figures.view_mismatches,
            plan_file_diffs_recorded_as_user=figures.plan_diffs_recorded,
            of_which_from_kills=figures.plan_diffs_from_kills,
            in_flight_at_kill=dict(sorted(figures.phases.items())),
            sessions=len(workload.sessions),
            refused_operations=figures.op_errors,
        )
    assert not figures.problems, "\n".join(figures.problems[:30])
    assert figures.losses == 0


def _wait_dead(baton: BatonClient) -> None:
    """The killed process is gone (its store file handles closed) before we read the store."""
    for _ in range(200):
        try:
            os.kill(baton.pid, 0)
        except ProcessLookupError:
            return
        # A zombie until its parent reaps it: check its state.
        try:
            with open(f"/proc/{baton.pid}/stat") as stat:
                if stat.read().split()[2] == "Z":
                    return
        except OSError:
            return
        time.sleep(0.01)
