"""The demo's frame: what it prints and how it runs one of the agent's turns, the
phases' outcomes and the closing summary (bench/demo_runs.py reads its last lines)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from baton import protocol as p
from baton.errors import BatonError
from baton.faces.demo.channel import DemoChannel
from baton.faces.demo.checks import clip
from baton.faces.demo.scenario import PHASES, TOTAL_BUDGET, TURN_BUDGET, describe_call
from baton.providers.base import StepChoice

if TYPE_CHECKING:
    from baton.agent.state import SessionState
    from baton.app import App


def indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.rstrip().splitlines())


class DemoRun:
    def __init__(self, out: TextIO, root: Path, settings: dict[str, Any], label: str) -> None:
        self.out = out
        self.root = root
        self.project = root / "project"
        self.settings = settings
        self.label = label
        self.channel = DemoChannel(out)
        self.started = time.monotonic()
        self.sid: str | None = None
        # Phase -> None when it succeeded, else why not (in PHASES order).
        self.outcomes: dict[str, str | None] = {}
        self.notes: list[str] = []

    def say(self, line: str = "") -> None:
        self.channel.status.clear()
        self.out.write(line + "\n")
        self.out.flush()

    def heading(self, text: str) -> None:
        self.say()
        self.say(f"== {text}  [{time.monotonic() - self.started:.0f} s]")

    def outcome(self, phase: str, failure: str | None) -> None:
        """Record a phase's result and say it."""
        self.outcomes[phase] = failure
        if failure is None:
            self.say(f"  [{phase}: done]")
        else:
            self.say(f"  [{phase}: FAILED: {failure}]")

    def left(self, budget: float) -> float:
        return max(5.0, min(budget, TOTAL_BUDGET - (time.monotonic() - self.started)))

    async def turn(
        self, app: App, session_id: str, text: str, tools: Sequence[StepChoice]
    ) -> tuple[str, list[str]]:
        """Run one prompt whose steps must call `tools`, one each, then stop; returns the
        stop reason and the tools called. "timeout" when the budget ran out."""
        self.say(indent(f"> {text}", "  "))
        names = [describe_call(t) for t in tools]
        self.say(f"    (each model step is told its tool: {', '.join(names)})")
        state = app.sessions.state(session_id)
        started = time.monotonic()
        try:
            task = app.sessions.start_turn(state, text, max_steps=len(tools), require_tools=tools)
        except BatonError as exc:
            self.say(f"    [could not start the turn: {exc.message}]")
            return "error", []
        self.channel.step_began = started
        self.channel.waiting()
        reason = ""
        done, _ = await asyncio.wait({task}, timeout=self.left(TURN_BUDGET))
        if not done:
            reason = "timeout"
            app.sessions.cancel(session_id)
            await asyncio.gather(task, return_exceptions=True)
        self.channel.step_began = None
        self.channel.status.hide()
        if not reason:
            try:
                result = task.result()
                reason = str(result.stop_reason)
                if result.error:
                    self.say(f"    [error: {result.error}]")
            except BatonError as exc:
                self.say(f"    [error: {exc.message}]")
                reason = "error"
        answer = self.channel.take_text().strip()
        called = self.channel.take_calls()
        if answer and not called:
            self.say(f"    model: {clip(answer, 300)}")
        note = " (out of time for this step)" if reason == "timeout" else ""
        self.say(f"    [turn ended: {reason}, {time.monotonic() - started:.0f} s]{note}")
        return reason, called

    async def warm_up(self, app: App, state: SessionState) -> None:
        """Load the local model before the first turn, so its load time is shown apart."""
        try:
            provider = app.sessions.provider_for(state, app.sessions.settings())
        except BatonError as exc:
            self.say(f"  [provider: {exc.message}]")
            return
        start = getattr(provider, "start", None)
        if start is None:
            return
        self.say("  loading the local model…")
        began = time.monotonic()
        self.channel.status.show("loading", "loading the model")
        try:
            await start()
        except BatonError as exc:
            self.say(f"  [the local model did not load: {exc.message}]")
            return
        finally:
            self.channel.status.hide()
        self.say(f"  loaded in {time.monotonic() - began:.1f} s")

    def show_record(self, record: p.CompactionRecord) -> None:
        data = record.wire()
        summary = data.pop("summary", None)
        self.say(
            f"  tokens in the model's view: {record.tokens_before:,} → {record.tokens_after:,}"
            f" ({record.strategy}, {record.trigger})"
        )
        self.say("  the compaction record (as baton/session/compactions returns it):")
        self.say(indent(json.dumps(data, indent=2, ensure_ascii=False)))
        if summary:
            lines = summary.strip().splitlines()
            shown = "\n".join(lines[:14]) + ("\n…" if len(lines) > 14 else "")
            self.say("  summary written by the model (first lines):")
            self.say(indent(shown, "    | "))

    def show_context(self, app: App, sid: str) -> None:
        info = app.sessions.context_info(sid)
        self.say(
            f"  baton/session/context: {info.tokens} tokens of {info.context_window} "
            f"(compaction threshold {info.threshold})"
        )
        for item in info.items:
            self.say(f"    {item.kind:<14} {item.tokens:>6} tokens")
        plan = app.plans.get(sid)
        if plan is not None:
            # The block above stays as sent (requests only append); later changes reach
            # the model as plan_edit results. The file has them all.
            self.say(f"  the plan file now (v{plan.version}, {plan.status}):")
            self.say(indent(plan.content, "    | "))

    def finish(self) -> int:
        self.heading("Done")
        if self.sid is not None:
            self.say(f"  session {self.sid}; the project and its plan file are in {self.project}")
        if self.notes:
            self.say("  also noticed:")
            for note in self.notes:
                self.say(f"    - {note}")
        failed = [phase for phase in PHASES if self.outcomes.get(phase, "not reached")]
        for phase in PHASES:
            why = self.outcomes.get(phase, "not reached")
            self.say(f"  {phase:<11} {'done' if why is None else 'FAILED: ' + why}")
        self.say(f"  wall time: {time.monotonic() - self.started:.0f} s")
        # One line for bench/demo_runs.py.
        self.say(
            "demo phases: "
            + " ".join(
                f"{phase.replace(' ', '-')}={'ok' if self.outcomes.get(phase, 'x') is None else 'failed'}"
                for phase in PHASES
            )
        )
        if failed:
            self.say(
                f"baton demo: {len(failed)} of {len(PHASES)} phases failed: {', '.join(failed)}"
            )
            return 1
        return 0
