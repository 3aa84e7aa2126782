"""Claude's prompt cache with Baton's breakpoints, against the same session without them.

    python bench/anthropic_cache.py [--ttl 5m|1h] [--input 3.0] [--output 15.0]

Baton's real core runs in this process (build_app: sessions, plans, delegation,
compaction) with `provider = "anthropic"` against the fake Messages API of the tests
(tests/fake_llm, a real HTTP server on 127.0.0.1). The fake keeps a prompt cache the
way the API describes it: an entry is written at each `cache_control` breakpoint and
read by a later request whose breakpoint is at, or up to twenty blocks after, the
same prefix; it reports `cache_read_input_tokens`, `cache_creation_input_tokens` and
`input_tokens` (tokens are characters / 4 of each block's JSON, tools and system
included; no minimum cacheable length).

One session: plan mode (a read, the plan written, three `plan_edit`s over three
prompts, `plan_exit`), approval with the build started, build steps (a write, a
command, ticks), an `explore` child, a manual compaction (on the server: Claude's
on-demand compaction), then more build steps. It runs twice: with Baton's
breakpoints, and with none (every input token at the full price). Apart, a plan
approved with `fresh: true`: what its first build request reads.

Printed per request: phase, input tokens, read from cache, written to cache, and the
cached share; then the cost of the input at Anthropic's multipliers (cache reads 0.1x
the input price, writes 1.25x for the 5-minute TTL or 2x for the hour) for both runs.
Then two checks of the replay rules: a 20-step tool loop with thinking on replays
every signature unchanged (the fake refuses any other), and a model switch after a
server compaction sends no compaction block to the new model.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))

from tests.fake_llm import FakeLLM, reasoning, text, tool_call  # noqa: E402
from tests.fake_llm.messages_api import flatten  # noqa: E402
from tests.fake_llm.records import RecordedRequest  # noqa: E402

from baton import protocol as p  # noqa: E402
from baton.agent.events import NullChannel  # noqa: E402
from baton.app import App, build_app  # noqa: E402
from baton.providers.anthropic_cache import CacheMarks  # noqa: E402

PLAN = "# Resumable sessions\n\nGoal: a session survives a restart.\n\n" + "".join(
    f"- [ ] Step {n}: change src/store.py part {n} and test it\n" for n in range(12)
)
WRITE_MULTIPLIER = {"5m": 1.25, "1h": 2.0}
READ_MULTIPLIER = 0.1
TARGET_SHARE = 0.9


def app_for(llm: FakeLLM, ws: Path, settings: dict[str, Any]) -> App:
    return build_app(
        ws,
        NullChannel(),
        environ={"ANTHROPIC_API_KEY": "sk-ant-bench", "ANTHROPIC_BASE_URL": llm.url},
        client_settings={"permissions": {"write": "allow", "bash": "allow"}, **settings},
    )


async def wait_idle(app: App, sid: str) -> None:
    while app.sessions.state(sid).busy:
        await asyncio.sleep(0.01)


def workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "README.md").write_text("Sessions should survive a restart.\n" * 20)
    (ws / "src" / "store.py").write_text(
        "".join(f"def part_{n}(x):\n    return x + {n}\n\n" for n in range(60))
    )
    return ws


async def session(app: App, llm: FakeLLM) -> dict[int, str]:
    """The scripted session; returns the phase of each model request by index."""
    phases: dict[int, str] = {}

    def mark(phase: str) -> None:
        for request in llm.requests:
            phases.setdefault(request.index, phase)

    sid = app.sessions.new_session(p.SessionNewParams(mode="plan", title="Bench")).session_id
    llm.add(tool_call("read", {"path": "src/store.py"}))
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Drafted the plan."))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="Plan resumable sessions."))
    for n in range(3):
        llm.add(
            tool_call(
                "plan_edit",
                {"old_string": f"part {n} and test it", "new_string": f"part {n}, tested"},
            )
        )
        llm.add(text(f"Revision {n + 1}."))
        await app.sessions.prompt(p.PromptParams(session_id=sid, text=f"Tighten step {n}."))
    llm.add(tool_call("plan_exit", {}))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="Submit it."))
    mark("plan")

    llm.add(tool_call("write", {"path": "src/resume.py", "content": "def resume(): ...\n"}))
    llm.add(tool_call("bash", {"command": "true"}))
    llm.add(tool_call("plan_edit", {"old_string": "- [ ] Step 0", "new_string": "- [x] Step 0"}))
    llm.add(text("Step 0 done."))
    await app.plans.approve(p.PlanApproveParams(session_id=sid, start=True))
    await wait_idle(app, sid)
    mark("build")

    llm.add(
        tool_call(
            "task",
            {"agent": "explore", "description": "find callers", "prompt": "Who calls part_3?"},
        )
    )
    llm.add(tool_call("grep", {"pattern": "part_3"}))
    llm.add(text("Only the tests call part_3."))
    llm.add(text("The child says only the tests call it."))
    await app.sessions.prompt(p.PromptParams(session_id=sid, text="Check who calls part_3."))
    mark("child")

    await app.compaction.compact(sid)
    mark("compaction")
    for n in (1, 2):
        llm.add(
            tool_call(
                "plan_edit", {"old_string": f"- [ ] Step {n}", "new_string": f"- [x] Step {n}"}
            )
        )
        llm.add(text(f"Step {n} done."))
        await app.sessions.prompt(p.PromptParams(session_id=sid, text=f"Do step {n}."))
    mark("after compaction")
    return phases


@dataclass
class Row:
    index: int
    phase: str
    total: int
    read: int
    written: int

    @property
    def share(self) -> float:
        return self.read / self.total if self.total else 0.0


async def run(breakpoints: bool) -> list[Row]:
    saved = CacheMarks.place
    if not breakpoints:
        CacheMarks.place = lambda self, body, ttl: 0  # type: ignore[method-assign]
    try:
        with FakeLLM() as llm, tempfile.TemporaryDirectory(prefix="baton-claude-") as tmp:
            root = Path(tmp)
            for name in ("DATA", "CONFIG", "CACHE", "STATE"):
                os.environ[f"XDG_{name}_HOME"] = str(root / name.lower())
            app = app_for(llm, workspace(root), {"anthropic": {"cacheTtl": ARGS.ttl}})
            try:
                phases = await session(app, llm)
            finally:
                await app.close()
            refused = [r.rejected for r in llm.requests if r.status != 200]
            assert not refused, refused
            return [row(r, phases.get(r.index, "?")) for r in llm.requests if r.route == "messages"]
    finally:
        CacheMarks.place = saved  # type: ignore[method-assign]


def row(request: RecordedRequest, phase: str) -> Row:
    usage = request.anthropic_usage
    read = usage["cache_read_input_tokens"]
    written = usage["cache_creation_input_tokens"]
    total = usage["input_tokens"] + read + written
    kind = "compaction call" if request.kind == "compact" else phase
    return Row(request.index, kind, total, read, written)


def cost(rows: list[Row], ttl: str, price: float) -> float:
    dollars = 0.0
    for r in rows:
        uncached = r.total - r.read - r.written
        dollars += uncached + r.read * READ_MULTIPLIER + r.written * WRITE_MULTIPLIER[ttl]
    return dollars * price / 1e6


async def thinking_loop(steps: int = 20) -> tuple[int, int, int]:
    """(signatures the fake handed out, signatures the last request carried unchanged,
    requests refused)."""
    with FakeLLM() as llm, tempfile.TemporaryDirectory(prefix="baton-claude-") as tmp:
        root = Path(tmp)
        for name in ("DATA", "CONFIG", "CACHE", "STATE"):
            os.environ[f"XDG_{name}_HOME"] = str(root / name.lower())
        ws = workspace(root)
        for n in range(steps):
            (ws / f"f{n}.txt").write_text(f"file {n}\n")
        app = app_for(llm, ws, {"anthropic": {"thinkingBudget": 2048}, "maxSteps": steps + 5})
        try:
            sid = app.sessions.new_session(p.SessionNewParams()).session_id
            for n in range(steps):
                llm.add(
                    reasoning(f"step {n}: read the next file"),
                    tool_call("read", {"path": f"f{n}.txt"}),
                )
            llm.add(reasoning("all read"), text("Read every file."))
            await app.sessions.prompt(p.PromptParams(session_id=sid, text="Read f0..f19."))
        finally:
            await app.close()
        issued = dict(llm.anthropic.signatures)
        last = llm.requests[-1]
        unchanged = sum(
            1 for b in last.blocks("thinking") if issued.get(b["signature"]) == b["thinking"]
        )
        refused = sum(1 for r in llm.requests if r.status != 200)
        return len(issued) - 1, unchanged, refused  # the final answer's thinking is not sent back


async def switch_after_compaction() -> tuple[int, int, str]:
    """(compaction blocks sent to the first model after its compaction, to the new model,
    the new model)."""
    with FakeLLM() as llm, tempfile.TemporaryDirectory(prefix="baton-claude-") as tmp:
        root = Path(tmp)
        for name in ("DATA", "CONFIG", "CACHE", "STATE"):
            os.environ[f"XDG_{name}_HOME"] = str(root / name.lower())
        app = app_for(llm, workspace(root), {})
        try:
            sid = app.sessions.new_session(p.SessionNewParams()).session_id
            llm.add(tool_call("read", {"path": "README.md"}))
            llm.add(text("Read it."))
            await app.sessions.prompt(p.PromptParams(session_id=sid, text="read the readme"))
            await app.compaction.compact(sid)
            llm.add(text("Same model."))
            await app.sessions.prompt(p.PromptParams(session_id=sid, text="again"))
            same = len(llm.requests[-1].blocks("compaction"))
            app.sessions.set_model(p.SetModelParams(session_id=sid, model="claude-haiku-4-5"))
            llm.add(text("New model."))
            await app.sessions.prompt(p.PromptParams(session_id=sid, text="after the switch"))
        finally:
            await app.close()
        last = llm.requests[-1]
        return same, len(last.blocks("compaction")), str(last.model)


async def fresh_approval() -> tuple[Row, int]:
    """The first build request after a fresh-context approval, and the tokens of its
    tools and instructions."""
    with FakeLLM() as llm, tempfile.TemporaryDirectory(prefix="baton-claude-") as tmp:
        root = Path(tmp)
        for name in ("DATA", "CONFIG", "CACHE", "STATE"):
            os.environ[f"XDG_{name}_HOME"] = str(root / name.lower())
        app = app_for(llm, workspace(root), {})
        try:
            sid = app.sessions.new_session(p.SessionNewParams(mode="plan")).session_id
            llm.add(tool_call("read", {"path": "src/store.py"}))
            llm.add(tool_call("plan_write", {"content": PLAN}), tool_call("plan_exit", {}))
            await app.sessions.prompt(p.PromptParams(session_id=sid, text="Plan it."))
            llm.add(text("Building."))
            await app.plans.approve(p.PlanApproveParams(session_id=sid, start=True, fresh=True))
            await wait_idle(app, sid)
        finally:
            await app.close()
        first_build = llm.requests[-1]
        flat = flatten(first_build.body)
        return row(first_build, "fresh build"), math.ceil(flat.chars[flat.first_message - 1] / 4)


def print_rows(title: str, rows: list[Row]) -> None:
    print(f"\n{title}")
    print(f"  {'#':>3} {'phase':<17} {'input':>7} {'read':>7} {'written':>8} {'cached':>7}")
    for r in rows:
        print(
            f"  {r.index:>3} {r.phase:<17} {r.total:>7} {r.read:>7} {r.written:>8} {r.share:>7.1%}"
        )


async def main() -> int:
    with_marks = await run(breakpoints=True)
    without = await run(breakpoints=False)
    print_rows("With Baton's breakpoints", with_marks)
    print_rows("Without breakpoints", without)
    after_first = with_marks[1:]
    read = sum(r.read for r in after_first)
    total = sum(r.total for r in after_first)
    turns = [r for r in after_first if r.phase in ("plan", "build")]
    print(
        f"\nTTL {ARGS.ttl}; input ${ARGS.input}/M, reads x{READ_MULTIPLIER}, writes x{WRITE_MULTIPLIER[ARGS.ttl]}"
    )
    print(f"  cached share after the first request: {read / total:.1%} (target {TARGET_SHARE:.0%})")
    print(
        f"  plan and build requests: {sum(r.read for r in turns) / sum(r.total for r in turns):.1%};"
        f" lowest single request {min(r.share for r in turns):.1%}"
    )
    approval = next(r for r in with_marks if r.phase == "build")
    print(f"  first request after approval: {approval.share:.1%}")
    child = [r for r in with_marks if r.phase == "child"]
    print(
        "  child phase (parent, child first, child, parent): "
        + ", ".join(f"{r.share:.0%}" for r in child)
    )
    after = [r for r in with_marks if r.phase == "after compaction"]
    print(f"  first request after the compaction: {after[0].share:.1%}")
    fresh, stable = await fresh_approval()
    print(
        f"  first request after a fresh-context approval: {fresh.share:.1%} "
        f"({fresh.read} read of {fresh.total}; tools and instructions are {stable})"
    )
    marked = cost(with_marks, ARGS.ttl, ARGS.input)
    plain = cost(without, ARGS.ttl, ARGS.input)
    print(
        f"  input cost: ${marked:.4f} with breakpoints, ${plain:.4f} without: {marked / plain:.2f}x"
    )

    issued, unchanged, refused = await thinking_loop()
    print(
        f"\nThinking tool loop of 20 steps: {unchanged}/{issued} signatures replayed unchanged, {refused} requests refused"
    )
    same, new, model = await switch_after_compaction()
    print(
        f"Model switch after a server compaction: {same} block(s) to the same model, {new} to {model}"
    )
    ok = (
        read / total >= TARGET_SHARE
        and unchanged == issued == 20
        and refused == 0
        and new == 0
        and same == 1
    )
    print("\nall targets met" if ok else "\nTARGETS MISSED")
    return 0 if ok else 1


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ttl", choices=("5m", "1h"), default="5m")
    parser.add_argument(
        "--input", type=float, default=3.0, help="input price, $ per million tokens"
    )
    return parser.parse_args()


if __name__ == "__main__":
    ARGS = parse()
    sys.exit(asyncio.run(main()))
