"""Slash commands an ACP editor offers in its prompt box (`available_commands_update`).

Each maps onto a core operation the LSP face exposes as a method: `/compact`
on `baton/session/compact`, `/plan` on setMode, `/approve` on
`baton/plan/approve`, `/review` on `baton/plan/get` (the plan numbered),
`/changes` on `baton/plan/requestChanges` with annotations, `/undo` on
`baton/session/revert`, `/context` on `baton/session/context`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from baton import protocol as p
from baton.errors import InvalidParams
from baton.plan import annotate

if TYPE_CHECKING:
    from baton.app import App


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    hint: str | None  # the argument's hint, None for a command without one


COMMANDS = (
    Command("compact", "Compact the conversation now", "what the summary should focus on"),
    Command("plan", "Switch to plan mode (optionally with a request to plan)", "what to plan"),
    Command(
        "approve",
        "Approve the plan, switch to build mode and start building",
        "`fresh`: build in a fresh context (the plan, the ledger and your requests only);"
        " `steps`: each step in a fresh child session, in order",
    ),
    Command("review", "Show the plan with line numbers, to annotate with /changes", None),
    Command(
        "changes",
        "Request changes to the plan, line by line",
        "`7: comment`, `5-6 replace: text`, `9 delete`; other lines: overall feedback",
    ),
    Command("undo", "Take back the last prompt and the file changes it made", None),
    Command("context", "Show what fills the model's context window", None),
)


def available_commands() -> list[AvailableCommand]:
    return [
        AvailableCommand(
            name=c.name,
            description=c.description,
            input=AvailableCommandInput(UnstructuredCommandInput(hint=c.hint)) if c.hint else None,
        )
        for c in COMMANDS
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
