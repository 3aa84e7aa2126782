"""The demo's seven phases, in order, through the same core the editor uses: the person's
acts as JSON-RPC requests (`person.py`), the agent's as turns (`runner.py`), each
phase checked (`checks.py`) and its outcome said."""

from __future__ import annotations

import asyncio
import difflib
from typing import TYPE_CHECKING

from baton import protocol as p
from baton.faces.demo.checks import (
    MEAN_CASES,
    clip,
    corrected_departures,
    edit_departures,
    explore_departures,
    plan_departures,
    summary_departures,
    task_result,
)
from baton.faces.demo.person import MethodCaller, RpcError
from baton.faces.demo.runner import DemoRun, indent
from baton.faces.demo.scenario import (
    BUILD_PROMPT,
    COMPACT_BUDGET,
    COMPACT_INSTRUCTIONS,
    EXPLORE_PROMPT,
    EXPLORE_TOOLS,
    FALLBACK_PLAN,
    FIX_PROMPT,
    KEPT,
    MEAN_WORDS,
    OTHER_WORDS,
    PERSON_NOTE,
    PLAN_PROMPT,
    PLAN_TOOLS,
    TICK_PROMPT,
    TICK_TOOLS,
    UNDONE,
    edit_call,
    open_steps,
    read_call,
    read_span,
    sample_project,
    step_matching,
)

if TYPE_CHECKING:
    from baton.app import App


class Demo(DemoRun):
    async def run(self) -> int:
        from baton.app import build_app

        self.project.mkdir(parents=True)
        originals = sample_project()
        for name, content in originals.items():
            (self.project / name).write_text(content, encoding="utf-8")
        self.say(f"Baton demo: {self.label}")
        self.say(f"project: {self.project} (a copy of baton/demo_project)")

        app = build_app(self.project, self.channel, client_settings=self.settings)
        try:
            await self._run(app, MethodCaller(app, self.say), originals)
        finally:
            await app.close()
        return self.finish()

    async def _run(self, app: App, rpc: MethodCaller, originals: dict[str, str]) -> None:
        new = await rpc.request("baton/session/new", {"mode": "plan", "title": "Baton demo"})
        sid = p.SessionNewResult.model_validate(new).session_id
        await self.warm_up(app, app.sessions.state(sid))
        self.sid = sid

        self.heading("1/7 Plan mode: the agent reads the code, an explore child finds the TODOs")
        _, called = await self.turn(app, sid, EXPLORE_PROMPT, EXPLORE_TOOLS)
        self._explored(app, sid, called)

        self.heading("2/7 The agent writes the plan to a file, from the child's result")
        await self.turn(app, sid, PLAN_PROMPT, PLAN_TOOLS)
        plan = await self._plan(rpc, sid, called)

        self.heading("3/7 The person edits the plan and approves it")
        await self._approve(rpc, sid, plan)

        self.heading("4/7 The person asks for a compaction")
        await self._compact(rpc, sid)

        self.heading("5/7 The plan back in front of the model")
        step = self._plan_back(app, sid)

        self.heading("6/7 Build mode, after the compaction: the agent builds the first step")
        await self._build(app, rpc, sid, step, originals)

        self.heading("What the model is sent next")
        self.show_context(app, sid)

    async def _get_plan(self, rpc: MethodCaller, sid: str) -> p.PlanInfo | None:
        found = await rpc.request("baton/plan/get", {"sessionId": sid})
        return None if found is None else p.PlanInfo.model_validate(found)

    def _explored(self, app: App, sid: str, called: list[str]) -> None:
        """Say what the explore child did and what came back of it (the `task` result, all
        the planner holds of the child's work)."""
        failure: str | None = None
        children = app.sessions.store.children_of(sid)
        result = task_result(app.sessions.state(sid).messages)
        if "task" not in called or not children:
            failure = "the model did not start an explore child"
        elif result is None:
            failure = "the task call has no result"
        else:
            child = app.sessions.state(children[-1].id)
            self.say(f"  child session {child.id} ({children[-1].agent}), its own context:")
            first = next((m for m in child.messages if m.role == "user"), None)
            if first is not None:
                self.say(indent(clip(first.text(), 400), "    | "))
            self.say("  what came back to the planner (the task result):")
            self.say(indent(result, "    | "))
            failure = explore_departures(result)
        self.outcome("explore", failure)

    async def _plan(self, rpc: MethodCaller, sid: str, called: list[str]) -> p.PlanInfo:
        plan = await self._get_plan(rpc, sid)
        failure: str | None = None
        if plan is None:
            failure = "the model did not write a plan with plan_write"
            self.say(
                "  The demo writes the plan the way a person would in the editor, and goes on."
            )
            await rpc.request(
                "baton/plan/update",
                {"sessionId": sid, "content": FALLBACK_PLAN, "baseVersion": 0},
            )
            plan = await self._get_plan(rpc, sid)
            if plan is None:
                raise RpcError("baton/plan/get", "the plan just written is not there")
        else:
            failure = "; ".join(plan_departures(plan.content)) or None
        if "task" not in called:
            self.notes.append("the model wrote the plan without an explore child's result")
        self.say(f"  plan file: {self.project / plan.path}")
        self.say(f"  status {plan.status}, version {plan.version}:")
        self.say(indent(plan.content))
        self.outcome("plan", failure)
        return plan

    async def _approve(self, rpc: MethodCaller, sid: str, plan: p.PlanInfo) -> None:
        content = plan.content
        if self.outcomes.get("plan") is not None and plan_departures(content):
            # As a person would, the demo rewrites a plan it cannot build from.
            self.say("  The plan does not say which step is mean()'s: the person rewrites it.")
            content = FALLBACK_PLAN
        lines = content.rstrip("\n").splitlines()
        # Under the title: the person's own line.
        at = 1 if lines and lines[0].startswith("#") else 0
        edited = "\n".join([*lines[:at], "", PERSON_NOTE, *lines[at:]]) + "\n"
        failure: str | None = None
        try:
            await rpc.request(
                "baton/plan/update",
                {"sessionId": sid, "content": edited, "baseVersion": plan.version},
            )
            answer = await rpc.request("baton/plan/approve", {"sessionId": sid})
            approved = p.PlanApproveResult.model_validate(answer)
            if (approved.status, approved.mode) != ("approved", "build"):
                failure = f"approve answered {answer}"
        except RpcError as exc:
            failure = exc.message
        self.outcome("approval", failure)

    async def _compact(self, rpc: MethodCaller, sid: str) -> None:
        self.say(f"  instructions: {COMPACT_INSTRUCTIONS}")
        self.channel.waiting("compacting: waiting for the model to summarise")
        failure: str | None = None
        record: p.CompactionRecord | None = None
        try:
            answer = await asyncio.wait_for(
                rpc.request(
                    "baton/session/compact",
                    {"sessionId": sid, "instructions": COMPACT_INSTRUCTIONS},
                ),
                self.left(COMPACT_BUDGET),
            )
            record = p.CompactionRecord.model_validate(answer)
        except TimeoutError:
            failure = "the compaction did not finish in time"
        except RpcError as exc:
            failure = f"the compaction failed: {exc.message}"
        finally:
            self.channel.status.hide()
        if record is not None:
            self.show_record(record)
            if not record.compaction_id:
                failure = "nothing was compacted: " + "; ".join(record.notes)
            elif record.tokens_after >= record.tokens_before:
                failure = f"the view did not shrink ({record.tokens_before} tokens before)"
            claims = summary_departures(record.summary, record.ledger, ["stats.py", "README.md"])
            self.notes.extend(claims or corrected_departures(record.corrections))
        self.outcome("compaction", failure)

    def _plan_back(self, app: App, sid: str) -> str | None:
        """Show the plan block of the next request; returns the step for mean()."""
        plan = app.plans.get(sid)
        block = self._plan_block(app, sid)
        failure: str | None = None
        if block is None:
            failure = "no plan block in the next request"
        elif plan is None or PERSON_NOTE not in block:
            failure = "the plan block is not the current plan (the person's line is missing)"
        if block is not None:
            self.say("  the plan block in the next request, re-read from the plan file:")
            self.say(indent(block, "    | "))
        self.outcome("plan back", failure)
        return step_matching(plan.content, MEAN_WORDS, OTHER_WORDS) if plan else None

    def _plan_block(self, app: App, sid: str) -> str | None:
        sessions = app.sessions
        state = sessions.state(sid)
        settings = sessions.settings()
        built = sessions.build_context(state, settings, sessions.identity_for(state, settings))
        blocks = [i for i in built.request.items if getattr(i, "name", None) == "plan"]
        return str(getattr(blocks[0], "text", "")) if blocks else None

    async def _build(
        self, app: App, rpc: MethodCaller, sid: str, step: str | None, originals: dict[str, str]
    ) -> None:
        stats = self.project / "stats.py"
        original = originals["stats.py"]
        plan = app.plans.get(sid)
        if step is None:
            step = next(iter(open_steps(plan.content if plan else "")), "- [ ] mean()")
        prompt = BUILD_PROMPT.format(**read_span(stats.read_text(encoding="utf-8")))
        await self.turn(
            app, sid, prompt, (read_call(), edit_call(stats.read_text(encoding="utf-8")))
        )
        found = self._check_edit(original)
        if found:
            self.say("  The person undoes the edit and shows the model what the check found:")
            undone = await self._undo_turn(rpc, app, sid)
            now = stats.read_text(encoding="utf-8")
            fix = FIX_PROMPT.format(
                checked=UNDONE if undone else KEPT, found="; ".join(found), **read_span(now)
            )
            await self.turn(app, sid, fix, (read_call(), edit_call(now)))
            found = self._check_edit(original)
            if not found:
                self.notes.append(
                    "the edit passed the demo's check on its second try, after the person "
                    "undid the first and showed the model what it missed"
                )
        tick = TICK_PROMPT.format(step=step, done=step.replace("[ ]", "[x]", 1))
        await self.turn(app, sid, tick, TICK_TOOLS)
        after = stats.read_text(encoding="utf-8")
        if after == original:
            self.say("  no file changed")
        else:
            diff = difflib.unified_diff(
                original.splitlines(), after.splitlines(), "a/stats.py", "b/stats.py", lineterm=""
            )
            self.say(indent("\n".join(diff)))
        self.outcome("edit", "; ".join(found) or None)

        plan = app.plans.get(sid)
        content = plan.content if plan else ""
        ticked = [line.strip() for line in content.splitlines() if "[x]" in line.lower()]
        tick_failure: str | None = None
        if not ticked:
            tick_failure = "no step ticked off in the plan"
        elif step[5:].strip() not in ticked[0]:
            tick_failure = f"another step was ticked off: {clip(ticked[0], 80)}"
        elif plan is not None:
            self.say(f"  plan v{plan.version}: ticked off: {clip(ticked[0], 100)}")
        self.outcome("tick", tick_failure)

    async def _undo_turn(self, rpc: MethodCaller, app: App, sid: str) -> bool:
        """Take back the last turn as the person would in the editor (`baton/session/revert`
        from its prompt): its file changes undone, the turn out of the model's view. False
        when it could not be."""
        prompts = [m for m in app.sessions.state(sid).messages if m.kind == "prompt"]
        if not prompts:
            return False
        try:
            answer = await rpc.request(
                "baton/session/revert", {"sessionId": sid, "messageId": prompts[-1].id}
            )
        except RpcError as exc:
            self.say(f"  [could not undo the edit: {exc.message}]")
            return False
        # A conflict is refused (an RpcError above): without `force`, nothing is restored.
        reverted = p.RevertResult.model_validate(answer)
        files = ", ".join(f"{f.path} {f.action}" for f in reverted.files) or "no file changed"
        self.say(f"  undone: {files}; the turn is out of the model's view")
        return True

    def _check_edit(self, original: str) -> list[str]:
        """Check the edit as a person reviewing it would (`edit_departures`: read mean(),
        run it on MEAN_CASES) and say what was found."""
        cases = ", ".join(
            "[" + ", ".join(f"{v:g}" for v in values) + "]" for values, _ in MEAN_CASES
        )
        after = (self.project / "stats.py").read_text(encoding="utf-8")
        found = edit_departures(original, after, self.project)
        verdict = "; ".join(found) if found else "it does what the step asks"
        self.say(f"  The demo checks the edit (reads mean(), runs it on {cases}): {verdict}")
        return found
