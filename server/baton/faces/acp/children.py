"""A `task` child's progress as an ACP editor sees it.

A child always shows as the content of its parent's `task` tool call: one text block
that says which agent works on what, its status, its tokens, the step of a plan it
builds, and its latest tool calls. A step Baton itself started (a plan built step by
step) has no `task` call of the model's: it becomes a tool call of its own, titled
"Step k of n: …". An editor that opted in to subagents (`clientCapabilities.subagents`)
also gets the child as a session of its own, as ACP's subagent sessions have it since
they were stabilised (2026-11-20): announced on its parent with a `subagent_update`
(the child's `sessionId`, a title, `capabilities.cancel`, `state: running`), its own
updates under its own id, the parent's call linked to it by `session` content, and a
last `subagent_update` saying it is idle and why it stopped. The SDK has no models for
these, so they are plain dicts. Pure: the channel sends.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from baton import protocol as p
from baton.delegation.words import STATUS_WORDS
from baton.faces.acp import translate
from baton.labels import label

# The child's latest tool calls shown in the call's content (older ones are counted).
SHOWN_STEPS = 8
# One activity line at most this long (a long command is cut, and says so).
LINE_CHARS = 160


@dataclass
class ChildView:
    """What the face knows of one child: its parent's latest `child` update and the
    child's own tool calls so far."""

    parent_id: str
    update: p.ChildUpdate
    # The call is Baton's own (a plan step), started here as a tool call of its own.
    own_call: bool = False
    announced: bool = False
    # Its last `subagent_update` (idle) was queued (once, whatever follows); `over` is set
    # then, for a `session/close` waiting on it.
    ended: bool = False
    over: asyncio.Event = field(default_factory=asyncio.Event)
    steps: list[str] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)  # child's tool call id -> line

    def tool_started(self, update: p.ToolCallStarted) -> None:
        self.calls[update.tool_call_id] = len(self.steps)
        self.steps.append(_line("→ " + translate.tool_title(update.name, update.input)))

    def tool_ended(self, update: p.ToolCallUpdate) -> None:
        index = self.calls.pop(update.tool_call_id, None)
        if index is None or update.status != "failed":
            return
        first = (update.output or "failed").strip().splitlines() or ["failed"]
        self.steps[index] = _line(self.steps[index].replace("→", "✗", 1) + f" ({first[0]})")


def title(update: p.ChildUpdate) -> str:
    """The title of a call Baton started itself for a child (a step of the plan)."""
    if update.step is not None:
        return label(f"Step {update.step.index} of {update.step.total}: {update.description}")
    return label(f"{update.agent}: {update.description}")


def text(view: ChildView) -> str:
    """The call's content: who works on what, how far, and its latest tool calls."""
    update = view.update
    lines = [f"{update.agent} child: {update.description}"]
    state = [STATUS_WORDS[update.status]]
    if update.step is not None:
        state.insert(0, f"step {update.step.index} of {update.step.total}")
    state.append(f"{update.tokens:,} tokens")
    lines.append(" · ".join(state))
    hidden = len(view.steps) - SHOWN_STEPS
    if hidden > 0:
        lines.append(f"… {hidden:,} earlier tool call{'s' if hidden != 1 else ''}")
    lines.extend(view.steps[-SHOWN_STEPS:])
    return "\n".join(lines)


# Baton's child states as the stop reason of the child's last `subagent_update` (a failed
# child has none in ACP's words: its status is in `_meta.baton`).
STOP_REASONS = {
    "done": "end_turn",
    "cancelled": "cancelled",
    "max_steps": "max_turn_requests",
}


def announced(update: p.ChildUpdate) -> dict[str, object]:
    """The `subagent_update` that announces a child on its parent's session, before any
    update of the child's own."""
    return {
        "sessionUpdate": "subagent_update",
        "sessionId": update.child_id,
        "title": title(update),
        # `session/cancel` on the child's id stops only the child (the only per-child
        # mutation the protocol defines; `session/close` on it works too, see agent.py).
        "capabilities": {"cancel": {}},
        "state": {"state": "running"},
        "_meta": {"baton": {"callId": update.call_id, "agent": update.agent}},
    }


def ended(update: p.ChildUpdate) -> dict[str, object]:
    """The child's last `subagent_update`, on its parent's session: idle, with why it
    stopped. Baton's children end with their call; nothing is left to cancel."""
    state: dict[str, object] = {"state": "idle"}
    reason = STOP_REASONS.get(update.status)
    if reason is not None:
        state["stopReason"] = reason
    return {
        "sessionUpdate": "subagent_update",
        "sessionId": update.child_id,
        "capabilities": None,
        "state": state,
        "_meta": {"baton": {"status": update.status, "tokens": update.tokens}},
    }


def session_content(child_id: str) -> dict[str, object]:
    """The `session` tool-call content that links the parent's call to the child."""
    return {"type": "session", "sessionId": child_id}


def meta(view: ChildView) -> dict[str, object]:
    """The child as Baton's wire says it, for editors that read `_meta`."""
    return {"baton": {"child": view.update.wire()}}


def _line(line: str) -> str:
    one = " ".join(line.split())
    if len(one) <= LINE_CHARS:
        return one
    return one[:LINE_CHARS] + f"… [{len(one) - LINE_CHARS:,} more characters]"
