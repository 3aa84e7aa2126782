"""Every hook's input and answer, as pydantic models: the single source of their shapes.

Command hooks get the input as JSON on stdin and print the answer as JSON on
stdout; Python plugins get the input model and may return the answer model or
a plain dict of the same shape. The JSON Schemas in docs/plugins.md ("Schemas")
are generated from these classes, so the docs
cannot drift from what the dispatcher accepts.

Answers are validated strictly (unknown fields are an error): a misspelt
`shouldrun` silently read as "no" would be much harder to debug than a
recorded validation error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from baton import protocol as p

HookName = Literal["pre_compact", "compacting", "compacted", "tool_before", "tool_after"]


class HookModel(p.WireModel):
    """camelCase on the wire, absent optionals left out, unknown fields refused."""


TRIGGER = "What started the compaction: a person (`manual`) or Baton."


class PreCompactEvent(HookModel):
    """Before a compaction: the full history, so a hook can decide whether to save anything."""

    session_id: str
    trigger: p.Trigger = Field(description=TRIGGER)
    instructions: str | None = Field(
        None, description="The person's instructions for a manual compaction."
    )
    messages: list[p.Message] = Field(
        description="The whole history as `baton/session/load` returns it (compacted ones marked)."
    )


class PreCompactAnswer(HookModel):
    """`shouldRun: true` asks for one autonomous round of the agent before the compaction."""

    should_run: bool = Field(description="Run one autonomous round before the compaction.")
    prompt: str | None = Field(
        None, description="The round's user message (a default asking to save notes if absent)."
    )


class CompactingEvent(HookModel):
    session_id: str
    trigger: p.Trigger = Field(description=TRIGGER)


class CompactingAnswer(HookModel):
    """`context` lines are added to the summary instructions; `prompt` replaces them."""

    context: list[str] | None = Field(None, description="Lines added to the summary instructions.")
    prompt: str | None = Field(None, description="Replaces Baton's base summary instructions.")


class CompactedEvent(HookModel):
    """After the compaction was committed; nothing a hook does can undo it."""

    session_id: str
    compaction: p.CompactionRecord = Field(description="The committed record.")


class ToolBeforeEvent(HookModel):
    session_id: str
    name: str = Field(description="The tool's name (`bash`, `write`, …).")
    input: dict[str, Any] = Field(description="The tool's arguments as the model sent them.")


class ToolBeforeAnswer(HookModel):
    """`deny` stops the call; the model sees the reason as the tool's (failed) output."""

    deny: str | None = Field(
        None, min_length=1, description="Do not run the tool; the model is shown this reason."
    )


class ToolAfterEvent(HookModel):
    session_id: str
    name: str = Field(description="The tool's name.")
    input: dict[str, Any] = Field(description="The tool's arguments as the model sent them.")
    output: str = Field(description="The tool's output, as the model sees it.")


@dataclass(frozen=True)
class HookKind:
    """One hook: its config key, plugin hook name, input model and answer model (None: no answer)."""

    name: HookName
    event: type[HookModel]
    answer: type[HookModel] | None

    @property
    def spec(self) -> str:
        return f"baton_{self.name}"


HOOKS: dict[HookName, HookKind] = {
    "pre_compact": HookKind("pre_compact", PreCompactEvent, PreCompactAnswer),
    "compacting": HookKind("compacting", CompactingEvent, CompactingAnswer),
    "compacted": HookKind("compacted", CompactedEvent, None),
    "tool_before": HookKind("tool_before", ToolBeforeEvent, ToolBeforeAnswer),
    "tool_after": HookKind("tool_after", ToolAfterEvent, None),
}
