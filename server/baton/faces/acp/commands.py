"""Slash commands an ACP editor offers in its prompt box (`available_commands_update`).

Each maps onto a core operation the LSP face exposes as a method: `/compact`
on `baton/session/compact`, `/plan` on setMode, `/approve` on
`baton/plan/approve`, `/review` on `baton/plan/get` (the plan numbered),
`/changes` on `baton/plan/requestChanges` with annotations, `/undo` on
`baton/session/revert`, `/context` on `baton/session/context`. Skills and command
files follow them (`baton.skills`); their prompts are expanded by the core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from baton import protocol as p
from baton.errors import InvalidParams
from baton.labels import label
from baton.plan import annotate
from baton.skills.builtins import BUILTINS

if TYPE_CHECKING:
    from baton.app import App


# ACP has `session/new` of its own; the other built-ins are offered as commands.
COMMANDS = tuple(c for c in BUILTINS if c.name != "new")


def available_commands(extra: list[p.CommandInfo] | None = None) -> list[AvailableCommand]:
    """The built-ins, then every skill and command file (`extra`, the skills feature's
    list) whose name is not a built-in's."""
    builtin = {c.name for c in COMMANDS}
    offered = [(c.name, c.description, c.hint) for c in COMMANDS]
    offered += [
        (c.name, c.description, c.argument_hint)
        for c in extra or []
        if c.source != "builtin" and c.name not in builtin and c.name != "new"
    ]
    return [
        # A workspace's or the person's file says these: shown as labels (baton.labels).
        AvailableCommand(
            name=label(name),
            description=label(description),
            input=AvailableCommandInput(UnstructuredCommandInput(hint=label(hint)))
            if hint
            else None,
        )
        for name, description, hint in offered
    ]


def parse(text: str) -> tuple[str, str] | None:
    """`("compact", "keep the API notes")` for `/compact keep the API notes`; None otherwise."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    name, _, rest = stripped[1:].partition(" ")
    if name not in {c.name for c in COMMANDS}:
        return None
    return name, rest.strip()


async def compact(app: App, sid: str, instructions: str) -> str | None:
    await app.compaction.compact(sid, instructions=instructions or None)
    # The compaction itself is announced by its updates.
    return None


async def undo(app: App, sid: str, rest: str) -> str | None:
    if rest:
        raise InvalidParams("/undo takes no argument")
    state = app.sessions.state(sid)
    prompts = [m for m in state.messages if m.kind == "prompt" and m.id not in state.reverted]
    if not prompts:
        return "Nothing to undo."
    result = app.review.revert(p.RevertParams(session_id=sid, message_id=prompts[-1].id))
    lines = [f"Took back {len(result.message_ids)} messages."]
    lines += [f"- {f.path}: {f.action}" for f in result.files]
    lines += [f"- {n}" for n in result.notes]
    if result.shell_commands:
        lines.append("Shell commands are not undone: " + "; ".join(result.shell_commands))
    return "\n".join(lines)


async def context(app: App, sid: str, rest: str) -> str | None:
    info = app.sessions.context_info(sid)
    lines = [
        f"Context: {info.tokens} of {info.context_window} tokens (compaction at {info.threshold})."
    ]
    lines += [f"- {item.kind}: {item.tokens}" for item in info.items]
    return "\n".join(lines)


async def review(app: App, sid: str, rest: str) -> str | None:
    if rest:
        raise InvalidParams("/review takes no argument")
    plan = app.plans.get(sid)
    if plan is None:
        return "There is no plan yet."
    return annotate.numbered_plan(plan.path, plan.version, plan.status, plan.content)


def request_changes(app: App, sid: str, rest: str) -> None:
    """`/changes`: the notes on the plan's lines, and the overall feedback, as one message."""
    plans = app.plans
    plan = plans.get(sid)
    if plan is None:
        raise InvalidParams("there is no plan to request changes to")
    notes, feedback = annotate.parse_notes(rest, plan.content)
    if not notes and not feedback:
        raise InvalidParams(
            "/changes needs notes (`7: comment`, `5-6 replace: text`, `9 delete`) or feedback"
        )
    plans.request_changes(
        p.PlanRequestChangesParams(session_id=sid, feedback=feedback, annotations=notes or None)
    )
