"""The session's history as stored: messages with typed parts, and tool results.

This is the core's own model. `to_wire` turns it into the protocol's `Message`
(what clients see); the context builder turns it into provider items (what the
model sees). Provider-native items ride along in `StoredPart.native`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from baton import protocol as p
from baton.providers.base import Native
from baton.tools.base import Fact

# The title of a session until it gets one (its first prompt, or the person's).
DEFAULT_TITLE = "New session"
# A title taken from the first prompt keeps this many characters: enough for a whole
# sentence of a request (lists cut it to their width themselves, `baton sessions` not).
TITLE_CHARS = 200


def title_from_prompt(text: str) -> str:
    """A session's title from its first prompt: on one line, cut at a word with `…` when
    longer than TITLE_CHARS."""
    title = " ".join(text.split())
    if len(title) <= TITLE_CHARS:
        return title or DEFAULT_TITLE
    cut = title[: TITLE_CHARS - 1]
    if " " in cut[TITLE_CHARS // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + "…"


# Part types as stored. "opaque" (a provider artifact) never reaches a client.
PartType = Literal[
    "text", "reasoning", "tool_call", "compaction", "pre_compact", "opaque", "attachment"
]

# Why a message exists, which decides how the context builder shows it.
MessageKind = Literal[
    "prompt",  # the person's prompt
    "step",  # one model step's output
    "feedback",  # plan feedback from the person
    "approval",  # the plan was approved; build it
    "continue",  # auto-continue after compaction
    "pre_compact",  # the prompt of a pre-compact round
    "compaction",  # marker of a compaction in the history
    "context",  # a note Baton appended for the model: the mode, a plan changed on disk
]


# The kinds of user message Baton writes itself, as the wire's `origin`.
_ORIGINS: dict[str, p.MessageOrigin] = {
    "feedback": "feedback",
    "approval": "approval",
    "continue": "continue",
    "pre_compact": "pre_compact",
}


@dataclass
class StoredPart:
    type: PartType
    data: dict[str, Any]
    native: Native | None = None


@dataclass
class ToolResultRecord:
    tool_call_id: str
    status: Literal["completed", "failed"]
    output: str
    facts: list[Fact] = field(default_factory=list)
    created_at: str = ""


@dataclass
class StoredMessage:
    seq: int
    id: str
    session_id: str
    role: Literal["user", "assistant", "system"]
    kind: MessageKind
    created_at: str
    parts: list[StoredPart]
    incomplete: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    results: dict[str, ToolResultRecord] = field(default_factory=dict)

    def text(self) -> str:
        return "".join(part.data.get("text", "") for part in self.parts if part.type == "text")

    def tool_calls(self) -> list[StoredPart]:
        return [part for part in self.parts if part.type == "tool_call"]

    def answered(self, running: frozenset[str] = frozenset()) -> bool:
        """Whether every tool call of this message has its result (and none of them is
        among the `running` call ids): such a message never changes again."""
        return all(
            (call_id := part.data.get("toolCallId")) in self.results and call_id not in running
            for part in self.tool_calls()
        )

    def origin(self) -> p.MessageOrigin | None:
        """Why Baton wrote this user message itself; None for the person's own and the model's."""
        return _ORIGINS.get(self.kind) if self.role == "user" else None

    def to_wire(self, *, compacted: bool, running: bool = False) -> p.Message:
        parts: list[Any] = []
        for part in self.parts:
            if part.type == "text":
                parts.append(p.TextPart(text=part.data["text"]))
            elif part.type == "reasoning":
                parts.append(p.ReasoningPart(text=part.data.get("text", "")))
            elif part.type == "tool_call":
                call_id = part.data["toolCallId"]
                result = self.results.get(call_id)
                if result is not None:
                    status: p.ToolStatus = result.status
                    output: str | None = result.output
                elif running:
                    status, output = "pending", None
                else:
                    status, output = "failed", "[interrupted: no result was recorded]"
                parts.append(
                    p.ToolCallPart(
                        tool_call_id=call_id,
                        name=part.data["name"],
                        input=part.data.get("input", {}),
                        status=status,
                        output=output,
                    )
                )
            elif part.type == "compaction":
                parts.append(p.CompactionPart(compaction_id=part.data["compactionId"]))
            elif part.type == "pre_compact":
                parts.append(p.PreCompactPart.model_validate(part.data))
            elif part.type == "attachment":
                parts.append(p.AttachmentPart.model_validate(part.data))
        return p.Message(
            id=self.id,
            role=self.role,
            created_at=self.created_at,
            parts=parts,
            compacted=compacted,
            incomplete=self.incomplete,
            origin=self.origin(),
        )


@dataclass
class SessionRow:
    id: str
    title: str
    mode: Literal["build", "plan"]
    created_at: str
    updated_at: str
    provider: str | None = None
    model: str | None = None
    # A `task` child (baton.delegation): the session that started it, its agent, its task
    # ({description, prompt, callId}); None for a top-level session.
    parent_id: str | None = None
    agent: str | None = None
    task: dict[str, Any] | None = None

    def to_wire(self) -> p.SessionInfo:
        return p.SessionInfo(
            session_id=self.id,
            title=self.title,
            mode=self.mode,
            created_at=self.created_at,
            updated_at=self.updated_at,
            parent_id=self.parent_id,
            agent=self.agent,
        )
