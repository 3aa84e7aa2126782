"""`baton demo`: a short headless session that shows what Baton is for.

In a temporary copy of a tiny project (`baton/demo_project`) it runs, through
the same core the editor uses:

1. plan mode: the agent reads the code and writes its plan to a file (`plan_write`);
2. the person approves the plan (`baton/plan/approve`), which switches to build mode;
3. a manual compaction (`baton/session/compact`) of the planning conversation,
   printed as its record;
4. the agent builds the first step from the plan that came back after the
   compaction (re-read from its file) and ticks it off;
5. what the model is sent next: the checkpoint, the ledger and the plan block.

No API key: the embedded local model (`baton model install`). With
`OPENAI_API_KEY` set: OpenAI. A small local model on a CPU is slow and not
reliable, so every turn has a step limit and a time limit, and when the
model does not do what a step needs (say, it never calls `plan_write`) the
demo says so plainly and stands in for it the way a person would in the
editor, so the rest can still be shown. It never waits forever.

The session's store lives in the temporary directory (XDG_DATA_HOME points
there), so the demo leaves nothing in the person's own Baton data except the
model it uses. The directory is kept so that the printed plan file and the
session can be looked at afterwards; `--clean` removes it.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from baton import protocol as p
from baton.errors import BatonError
from baton.session.events import ProgressReporter, ProgressScope
from baton.terminal_status import StatusLine, describe_progress

# Seconds. The whole demo, model download excluded, should fit in a few minutes on
# two CPU cores; each phase gets at most its share and what is left of the total.
TOTAL_BUDGET = 540.0
PLAN_TURN_BUDGET = 180.0
BUILD_TURN_BUDGET = 180.0
COMPACT_BUDGET = 300.0

PLAN_PROMPT = (
    "stats.py has two TODOs, one in mean() and one in median(). Read stats.py, then call "
    "plan_write with a markdown checklist of two steps, each line starting with `- [ ] `: "
    "step 1 for the TODO in mean(), step 2 for the TODO in median(). Then call plan_exit."
)
# Explicit, because the default model is small: the demo is about what Baton does
# with the plan and the context, not about how clever a 1.5B model is.
BUILD_EDIT = (
    "Do only the plan's step about mean() now. Call edit on stats.py with old_string "
    "`    return sum(values) / len(values)` and new_string "
    "`    if not values:\\n        return 0.0\\n    return sum(values) / len(values)`. "
)
# The step to tick is the line the model wrote for mean(), found in its plan; when no
# line can be told apart as that step, the model is asked to tick the step it just did.
BUILD_TICK = "Then tick that step off: call plan_edit with old_string `{step}` and new_string `{done}`. Then stop."
BUILD_TICK_UNNAMED = (
    "Then tick off the plan step you just did: call plan_edit with that step's line as "
    "old_string and the same line with `- [ ]` changed to `- [x]` as new_string. Then stop."
)
# Words that tell the plan line for mean()'s TODO apart (its name, or what the TODO says).
MEAN_WORDS = ("mean", "empty", "zerodivision", "0.0")
MEDIAN_WORDS = ("median", "middle", "notimplemented", "sort")
# Once a turn has done what the demo needs, the model gets this long to finish on its own
# (plan_exit, a last word) before the demo stops the turn and moves on.
PLAN_GRACE = 45.0
# In the build, once the file is edited the model still has to tick the step off: one more
# model step, which takes 30-90 s on a busy 2-core machine. The wait is the longest step
# seen so far in the demo times STEP_GRACE_FACTOR, and at least BUILD_GRACE.
BUILD_GRACE = 45.0
STEP_GRACE_FACTOR = 1.5
# Once edited and ticked off, the demo needs nothing more from the turn.
TICKED_GRACE = 3.0
# Past-tense claims of a change, and words that make a sentence not such a claim.
CHANGE_CLAIMS = ("modified", "edited", "changed", "updated", "fixed", "implemented", "rewrote")
NOT_A_CLAIM = ("not ", "no ", "n't", "none", "will ", "to be", "next", "pending", "todo", "plan")
# What `baton/session/compact` accepts as `instructions`: here, a summary short enough
# for a small model on a CPU to write in one go.
COMPACT_INSTRUCTIONS = "Keep it short: at most three brief bullet points per section."
FALLBACK_PLAN = """# Fix the TODOs in stats.py

- [ ] `mean()`: return 0.0 for an empty list instead of raising ZeroDivisionError
- [ ] `median()`: implement it (sort a copy, take the middle value or the mean of the two middle ones)
"""
LOCAL_SETTINGS: dict[str, Any] = {
    # Bounds every response: a small model that starts repeating itself costs minutes.
    # Enough for the short summary COMPACT_INSTRUCTIONS asks for.
    "maxTokens": 480,
}


def _sample_project() -> dict[str, str]:
    root = resources.files("baton").joinpath("demo_project")
    return {
        entry.name: entry.read_text(encoding="utf-8")
        for entry in root.iterdir()
        if entry.is_file() and entry.name.endswith((".py", ".md"))
    }


class DemoChannel:
    """Prints what the agent does, briefly: tool calls and results, mode and plan changes.

    While the model works and nothing is printed (loading, reading the prompt, writing
    an answer or a summary) it shows the same status as `baton run`
    (`terminal_status`: a spinner at a terminal, an occasional plain line otherwise)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.status = StatusLine(out, live=_isatty(out))
        self.text: list[str] = []
        self.tool_calls: list[dict[str, Any]] = []
        # Model steps: when the current one began, and the longest one so far (seconds).
        self.step_began: float | None = None
        self.longest_step = 0.0

    def _say(self, line: str) -> None:
        self.status.clear()  # the spinner redraws itself on its next tick
        self.out.write(line + "\n")
        self.out.flush()

    def waiting(self, what: str = "waiting for the model") -> None:
        """The model has been asked: say so until it reports more."""
        self.status.show("waiting", what)

    def send_update(self, session_id: str, update: p.WireModel) -> None:
        data = update.wire()
        kind = data.get("kind")
        if kind == "agent_message_chunk":
            self.text.append(data["text"])
        elif kind == "model_progress":
            self.status.show(*describe_progress(data))
        elif kind == "tool_call":
            self.tool_calls.append(data)
            args = json.dumps(data.get("input", {}), ensure_ascii=False)
            self._say(f"    → {data['name']} {_clip(args, 160)}")
            self.status.show("tool", f"running {data['name']}")
        elif kind == "tool_call_update" and data.get("status") in ("completed", "failed"):
            mark = "✓" if data["status"] == "completed" else "✗"
            first = (str(data.get("output") or "").strip().splitlines() or [""])[0]
            self._say(f"      {mark} {_clip(first, 140)}")
            self.waiting()
        elif kind == "turn_ended":
            self.status.hide()
        elif kind == "usage" and self.step_began is not None:
            # A step ends with its usage report; the next one begins after its tools ran.
            now = time.monotonic()
            self.longest_step = max(self.longest_step, now - self.step_began)
            self.step_began = now
        elif kind == "mode":
            self._say(f"    [mode: {data['mode']}]")
        elif kind == "compaction_failed":
            self._say(f"    [compaction failed: {data['error']}]")

    def notify(self, method: str, params: p.WireModel) -> None:
        data = params.wire()
        if method == "baton/plan/didChange":
            self._say(
                f"    [plan v{data['version']} ({data['status']}, by {data['author']}): "
                f"{data['path']}]"
            )

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        self._say(f"      (no one to ask: {params.tool_call.name} refused)")
        return None

    def progress(self, title: str) -> ProgressScope:
        return self._progress(title)

    @asynccontextmanager
    async def _progress(self, title: str) -> AsyncIterator[ProgressReporter]:
        self._say(f"    [{title}]")

        def report(message: str, percentage: int | None = None) -> None:
            self._say(f"      {message}")

        yield report

    def take_text(self) -> str:
        text, self.text = "".join(self.text), []
        return text


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _open_steps(plan: str) -> list[str]:
    return [line.strip() for line in plan.splitlines() if line.strip().startswith("- [ ]")]


def _step_matching(plan: str, words: tuple[str, ...], others: tuple[str, ...]) -> str | None:
    """The one open step the model wrote about `words` and not about `others`, else None.

    None when no line, or more than one, can be told apart: naming the wrong line
    would have the model tick off a step it did not do."""
    found = [
        line
        for line in _open_steps(plan)
        if any(w in line.lower() for w in words) and not any(o in line.lower() for o in others)
    ]
    return found[0] if len(found) == 1 else None


def plan_departures(plan: str) -> list[str]:
    """How the model's plan departs from what it was asked: two steps, mean() first."""
    out: list[str] = []
    steps = _open_steps(plan)
    if len(steps) != 2:
        out.append(f"the plan has {len(steps)} open steps (asked: 2)")
    mean = _step_matching(plan, MEAN_WORDS, MEDIAN_WORDS)
    median = _step_matching(plan, MEDIAN_WORDS, MEAN_WORDS)
    if mean is None:
        out.append("no plan step can be told apart as the one for mean()")
    if median is None:
        out.append("no plan step can be told apart as the one for median()")
    if mean and median and steps.index(mean) > steps.index(median):
        out.append("the plan lists the median() step before the mean() step (asked: mean first)")
    return out


def summary_departures(summary: str | None, ledger: p.Ledger, files: list[str]) -> list[str]:
    """Sentences of the summary saying a file was changed that the ledger says was not.

    The ledger is built from the tools' own records; a summary is the model's prose."""
    if not summary:
        return []
    modified = {touch.path for touch in ledger.files_modified}
    claimed: set[str] = set()  # one departure per file
    out: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n", summary):
        lowered = sentence.lower()
        if not any(c in lowered for c in CHANGE_CLAIMS) or any(n in lowered for n in NOT_A_CLAIM):
            continue
        for name in files:
            if name in claimed or name.lower() not in lowered:
                continue
            if not any(m.endswith(name) for m in modified):
                claimed.add(name)
                out.append(
                    f"the summary says {name} was changed ({_clip(sentence, 80)!r}), "
                    "but the ledger records no change to it"
                )
    return out


def corrected_departures(notes: list[str]) -> list[str]:
    """File-change claims the compaction removed from the summary because the ledger
    contradicted them (its notes say which): still a departure of the model's."""
    out: list[str] = []
    for note in notes:
        if "summary statement(s) the ledger contradicts" not in note:
            continue
        for name in re.findall(r"the ledger records no change to ([^ (;]+)", note):
            out.append(
                f"the summary says {name} was changed, but the ledger records no change to it "
                "(Baton removed the statement from the summary)"
            )
    return out


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.rstrip().splitlines())


class Demo:
    def __init__(self, out: TextIO, root: Path, settings: dict[str, Any], label: str) -> None:
        self.out = out
        self.root = root
        self.project = root / "project"
        self.settings = settings
        self.label = label
        self.channel = DemoChannel(out)
        self.started = time.monotonic()
        self.problems: list[str] = []

    def say(self, line: str = "") -> None:
        self.channel.status.clear()
        self.out.write(line + "\n")
        self.out.flush()

    def heading(self, text: str) -> None:
        self.say()
        self.say(f"== {text}  [{time.monotonic() - self.started:.0f} s]")

    def left(self, budget: float) -> float:
        return max(5.0, min(budget, TOTAL_BUDGET - (time.monotonic() - self.started)))

    async def turn(
        self,
        app: Any,
        session_id: str,
        text: str,
        budget: float,
        *,
        stop_when: Sequence[tuple[Callable[[], bool], Callable[[], float]]] = (),
        expected: tuple[str, ...] = (),
    ) -> str:
        """Run one prompt within `budget` seconds; returns the stop reason.

        "timeout" when the budget ran out; "stopped" when one of `stop_when`'s
        conditions had been true for its grace (seconds, asked when it became
        true) and the model was still going. Tools of `expected` the model did
        not call are noted as departures.
        """
        self.say(_indent(f"> {text}", "  "))
        state = app.sessions.state(session_id)
        started = time.monotonic()
        try:
            task = app.sessions.start_turn(state, text)
        except BatonError as exc:
            self.say(f"    [could not start the turn: {exc.message}]")
            return "error"
        self.channel.step_began = started
        self.channel.waiting()
        deadline = started + self.left(budget)
        limits: dict[int, float] = {}  # condition index -> when the turn may be stopped
        reason = ""
        while not task.done():
            now = time.monotonic()
            for index, (condition, grace) in enumerate(stop_when):
                if index not in limits and condition():
                    limits[index] = now + grace()
            limit = min([deadline, *limits.values()])
            if now >= limit:
                reason = "timeout" if limit == deadline and not limits else "stopped"
                app.sessions.cancel(session_id)
                await asyncio.gather(task, return_exceptions=True)
                break
            await asyncio.wait({task}, timeout=min(1.0, limit - now))
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
        text = self.channel.take_text().strip()
        if text and not self.channel.tool_calls:
            # No tool call at all: show what the model wrote instead.
            self.say(f"    model: {_clip(text, 300)}")
        called = [call["name"] for call in self.channel.tool_calls]
        self.channel.tool_calls.clear()
        for name in expected:
            if name not in called:
                self.problems.append(f"the model did not call {name} when asked to")
        note = {
            "stopped": " (the demo had what it needed and stopped the turn)",
            "timeout": " (out of time for this step)",
        }.get(reason, "")
        self.say(f"    [turn ended: {reason}, {time.monotonic() - started:.0f} s]{note}")
        return reason

    async def run(self) -> int:
        from baton.app import build_app

        self.project.mkdir(parents=True)
        originals = _sample_project()
        for name, content in originals.items():
            (self.project / name).write_text(content, encoding="utf-8")
        self.say(f"Baton demo: {self.label}")
        self.say(f"project: {self.project} (a copy of baton/demo_project)")

        app = build_app(self.project, self.channel, client_settings=self.settings)
        try:
            return await self._run(app, originals)
        finally:
            await app.close()

    async def _run(self, app: Any, originals: dict[str, str]) -> int:
        sessions = app.sessions
        plans = app.plans
        sid = sessions.new_session(p.SessionNewParams(mode="plan", title="Baton demo")).session_id
        state = sessions.state(sid)
        await self._warm_up(app, state)

        # 1. Plan mode: the plan goes to a file.
        self.heading("1/5 Plan mode: the agent writes its plan to a file")
        await self.turn(
            app,
            sid,
            PLAN_PROMPT,
            PLAN_TURN_BUDGET,
            stop_when=[(lambda: plans.get(sid) is not None, lambda: PLAN_GRACE)],
            expected=("read", "plan_write", "plan_exit"),
        )
        plan = plans.get(sid)
        if plan is not None:
            self.problems.extend(plan_departures(plan.content))
        else:
            self.problems.append("the model did not write a plan with plan_write")
            self.say(
                "  The model did not call plan_write. Small local models often miss a tool "
                "call;\n  the demo writes the plan the way a person would in the editor, and "
                "goes on."
            )
            plans.update(p.PlanUpdateParams(session_id=sid, content=FALLBACK_PLAN, base_version=0))
            plan = plans.get(sid)
        assert plan is not None
        plan_file = self.project / plan.path
        self.say(f"  plan file: {plan_file}")
        self.say(f"  status {plan.status}, version {plan.version}:")
        self.say(_indent(plan.content))

        # 2. Approval switches to build mode.
        self.heading("2/5 The person approves the plan")
        approved = await plans.approve(p.PlanApproveParams(session_id=sid))
        self.say(f"  status {approved.status}, mode {approved.mode}")

        # 3. A manual compaction: the planning conversation leaves the model's view.
        self.heading("3/5 Manual compaction of the planning conversation")
        record = await self._compact(app, sid)
        if record is None:
            return self._finish(app, sid, plan_file, ok=False)
        self._show_record(record)
        # A claim the ledger contradicts is removed before anything is committed (the
        # notes say so); one in a committed summary would be reported from its text.
        claims = summary_departures(record.summary, record.ledger, sorted(originals))
        self.problems.extend(claims or corrected_departures(record.notes))

        # 4. One step is built, from the plan the compaction left in view.
        self.heading("4/5 Build mode, after the compaction: the agent builds the first step")
        stats = self.project / "stats.py"

        def built() -> bool:
            return stats.read_text(encoding="utf-8") != originals.get("stats.py")

        def ticked() -> list[str]:
            current = plans.get(sid)
            lines = current.content.splitlines() if current is not None else []
            return [line for line in lines if "[x]" in line.lower()]

        def step_grace() -> float:
            return max(BUILD_GRACE, STEP_GRACE_FACTOR * self.channel.longest_step)

        step = _step_matching(plan.content, MEAN_WORDS, MEDIAN_WORDS)
        if step is not None:
            tick = BUILD_TICK.format(step=step, done=step.replace("[ ]", "[x]", 1))
        else:
            tick = BUILD_TICK_UNNAMED
        await self.turn(
            app,
            sid,
            BUILD_EDIT + tick,
            BUILD_TURN_BUDGET,
            stop_when=[
                (lambda: built() and bool(ticked()), lambda: TICKED_GRACE),
                (built, step_grace),
            ],
            expected=("edit", "plan_edit"),
        )
        self._show_changes(originals)
        plan = plans.get(sid)
        assert plan is not None
        ticked_now = ticked()
        if step is not None and ticked_now and step[5:].strip() not in ticked_now[0]:
            self.problems.append(f"the model ticked off another step: {_clip(ticked_now[0], 80)}")
        if ticked_now:
            self.say(f"  plan v{plan.version}: ticked off: {_clip(ticked_now[0], 100)}")
        else:
            self.problems.append("the model did not tick a step off in the plan")
            self.say(
                f"  plan v{plan.version}: no step ticked off yet (the model did not plan_edit)"
            )

        # 5. The plan stays in front of the model.
        self.heading("5/5 What the model is sent next")
        self._show_next_request(app, sid)
        return self._finish(app, sid, plan_file, ok=True)

    async def _warm_up(self, app: Any, state: Any) -> None:
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

    def _show_changes(self, originals: dict[str, str]) -> None:
        changed = False
        for name, before in sorted(originals.items()):
            path = self.project / name
            after = path.read_text(encoding="utf-8") if path.exists() else ""
            if after == before:
                continue
            changed = True
            diff = difflib.unified_diff(
                before.splitlines(), after.splitlines(), f"a/{name}", f"b/{name}", lineterm=""
            )
            self.say(_indent("\n".join(diff)))
        if not changed:
            self.problems.append("the model changed no file in build mode")
            self.say("  no file changed (the model did not make an edit in time)")

    async def _compact(self, app: Any, sid: str) -> p.CompactionRecord | None:
        self.say(f"  instructions: {COMPACT_INSTRUCTIONS}")
        task = asyncio.ensure_future(app.compaction.compact(sid, instructions=COMPACT_INSTRUCTIONS))
        self.channel.waiting("compacting: waiting for the model to summarise")
        try:
            record: p.CompactionRecord = await asyncio.wait_for(task, self.left(COMPACT_BUDGET))
            return record
        except TimeoutError:
            self.problems.append("the compaction did not finish in time")
            self.say("  the compaction did not finish in time; stopping here")
        except BatonError as exc:
            self.problems.append(f"the compaction failed: {exc.message}")
            self.say(f"  the compaction failed: {exc.message}")
        finally:
            self.channel.status.hide()
        return None

    def _show_record(self, record: p.CompactionRecord) -> None:
        data = record.wire()
        summary = data.pop("summary", None)
        self.say("  compaction record (baton/session/compactions):")
        self.say(_indent(json.dumps(data, indent=2, ensure_ascii=False)))
        if summary:
            lines = summary.strip().splitlines()
            shown = "\n".join(lines[:14]) + ("\n…" if len(lines) > 14 else "")
            self.say("  summary written by the model (first lines):")
            self.say(_indent(shown, "    | "))

    def _show_next_request(self, app: Any, sid: str) -> None:
        sessions = app.sessions
        info = sessions.context_info(sid)
        self.say(
            f"  baton/session/context: {info.tokens} tokens of {info.context_window} "
            f"(compaction threshold {info.threshold})"
        )
        for item in info.items:
            self.say(f"    {item.kind:<14} {item.tokens:>6} tokens")
        state = sessions.state(sid)
        settings = sessions.settings()
        built = sessions.build_context(state, settings, sessions.identity_for(state, settings))
        blocks = [i for i in built.request.items if getattr(i, "name", None) == "plan"]
        if blocks:
            self.say("  the plan block in the next request, re-read from the plan file:")
            self.say(_indent(blocks[0].text, "    | "))
        else:
            self.problems.append("no plan block in the next request")
            self.say("  no plan block in the next request (unexpected)")

    def _finish(self, app: Any, sid: str, plan_file: Path, *, ok: bool) -> int:
        self.heading("Done")
        self.say(f"  plan file:  {plan_file}")
        records = app.compaction.compactions(sid).compactions
        if records:
            self.say(f"  compaction: {records[-1].compaction_id} (session {sid})")
        if self.problems:
            self.say("  where the model fell short (the demo stood in or went on):")
            for problem in self.problems:
                self.say(f"    - {problem}")
        totals = app.sessions.requests.totals(sid)
        if totals.requests:
            # What the prompt cache saved: evaluated tokens are what the model had to read.
            self.say(
                f"  model requests: {totals.requests}; prompt tokens: {totals.input_tokens:,} "
                f"sent, {totals.cached_tokens:,} from the cache, "
                f"{totals.input_tokens - totals.cached_tokens:,} evaluated"
            )
        self.say(f"  wall time: {time.monotonic() - self.started:.0f} s")
        return 0 if ok else 1


def _configure() -> tuple[dict[str, Any], str] | str:
    """Client settings and a label for the provider, or an error message naming the fix."""
    settings: dict[str, Any] = {
        "maxSteps": 4,
        "permissions": {"write": "allow", "bash": "deny"},
        # Only the manual compaction, so the demo shows one clear record.
        "compaction": {"auto": False},
    }
    if os.environ.get("OPENAI_API_KEY"):
        settings["provider"] = "openai"
        return settings, "OpenAI (OPENAI_API_KEY is set)"
    from baton.config import LocalSettings
    from baton.errors import ConfigError
    from baton.local.engine import require_xllamacpp, resolve_model_path
    from baton.local.model_files import DEFAULT_MODEL

    try:
        require_xllamacpp()
        model = resolve_model_path(LocalSettings())
    except ConfigError as exc:
        return exc.message
    settings["provider"] = "local"
    settings["local"] = {**LOCAL_SETTINGS, "modelPath": str(model)}
    return settings, f"local model {DEFAULT_MODEL.title}, embedded llama.cpp, no API key"


def main(*, clean: bool = False, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    configured = _configure()
    if isinstance(configured, str):
        print(f"baton demo: {configured}", file=sys.stderr)
        return 1
    settings, label = configured
    root = Path(tempfile.mkdtemp(prefix="baton-demo-"))
    # The demo's store goes with its project; the model path was resolved above.
    os.environ["XDG_DATA_HOME"] = str(root / "data")
    demo = Demo(out, root, settings, label)
    try:
        return asyncio.run(demo.run())
    except KeyboardInterrupt:
        print("baton demo: interrupted", file=sys.stderr)
        return 130
    finally:
        if clean:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(
                f"the demo's project and store are kept in {root} (remove it when done)", file=out
            )
