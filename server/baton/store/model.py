"""The session's history as stored: messages with typed parts, and tool results.

This is the core's own model. `to_wire` turns it into the protocol's `Message`
(what clients see); the context builder turns it into provider items (what the
model sees). Provider-native items ride along in `StoredPart.native`. A tool result's
output and a part's native item may leave memory once compacted (baton.store.offload).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from baton import protocol as p
from baton.providers.base import Native
from baton.store.offload import Offloadable


@dataclass
class Fact:
    """One thing a tool did, for the ledger.

    kind "read": path. kind "modified": path, action (created/modified/deleted).
    kind "command": command, exit_code (None when killed or timed out).
    """

    kind: Literal["read", "modified", "command"]
    path: str | None = None
    action: Literal["created", "modified", "deleted"] | None = None
    command: str | None = None
    exit_code: int | None = None
    # Set when a `task` child did it (the child's session id), reported in its parent.
    session: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Fact:
        return Fact(**data)


# What of a message's `meta` only a load reads: the provider identity and the token
# estimates of each model request (a loaded session's token model learns from them,
# `session/cache.py`), and how the response finished. The store keeps them; a message in
# memory lets them go once committed or loaded, as nothing reads them there again.
LOAD_ONLY_META = ("identity", "estimatedInput", "estimatedParts", "finish")


def let_go_of_load_only_meta(message: StoredMessage) -> None:
    for key in LOAD_ONLY_META:
        message.meta.pop(key, None)


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


# The fields that may leave memory once compacted (one descriptor each, shared by the
# classes: what they hold lives on each instance).
_NATIVE: Offloadable[Native | None] = Offloadable(None)
_OUTPUT: Offloadable[str] = Offloadable()


# One dataclass per part type. Each is stored as (type, `to_json()`, native) and read
# back by `part_from_json`; the JSON is the one these parts have always had, so a store
# written before they were types loads as it is.


@dataclass
class StoredText:
    text: str
    native: Offloadable[Native | None] = _NATIVE
    type: Literal["text"] = field(default="text", init=False)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text}


@dataclass
class StoredReasoning:
    text: str
    native: Offloadable[Native | None] = _NATIVE
    type: Literal["reasoning"] = field(default="reasoning", init=False)

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text}


@dataclass
class StoredToolCall:
    tool_call_id: str
    name: str
    # The arguments parsed ({} when they were not a JSON object), and as the model wrote
    # them ("" in parts stored without them: `input` is replayed then).
    input: dict[str, Any] = field(default_factory=dict)
    arguments: str = ""
    native: Offloadable[Native | None] = _NATIVE
    type: Literal["tool_call"] = field(default="tool_call", init=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "toolCallId": self.tool_call_id,
            "name": self.name,
            "input": self.input,
            "arguments": self.arguments,
        }


@dataclass
class StoredCompactionMarker:
    """The marker of a compaction in the history."""

    compaction_id: str
    native: Offloadable[Native | None] = _NATIVE
    type: Literal["compaction"] = field(default="compaction", init=False)

    def to_json(self) -> dict[str, Any]:
        return {"compactionId": self.compaction_id}


@dataclass
class StoredPreCompact:
    """The audit entry of a pre-compact round (stored as its wire form)."""

    record: p.PreCompactPart
    native: Offloadable[Native | None] = _NATIVE
    type: Literal["pre_compact"] = field(default="pre_compact", init=False)

    def to_json(self) -> dict[str, Any]:
        return self.record.wire()


@dataclass
class StoredAttachment:
    """Editor context attached to a prompt, as the model was shown it."""

    uri: str
    path: str
    text: str
    source: Literal["disk", "editor"] = "disk"
    start_line: int | None = None
    end_line: int | None = None
    truncated: bool = False
    native: Offloadable[Native | None] = _NATIVE
    type: Literal["attachment"] = field(default="attachment", init=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"uri": self.uri, "path": self.path, "source": self.source}
        if self.start_line is not None:
            data["startLine"], data["endLine"] = self.start_line, self.end_line
        if self.truncated:
            data["truncated"] = True
        data["text"] = self.text
        return data

    def to_wire(self) -> p.AttachmentPart:
        return p.AttachmentPart(
            uri=self.uri,
            path=self.path,
            start_line=self.start_line,
            end_line=self.end_line,
            source=self.source,
            text=self.text,
            truncated=self.truncated,
        )


@dataclass
class StoredImage:
    """An image attached to a prompt: its bytes in base64, shown to the model with it."""

    mime_type: str
    data: str
    size: int
    name: str | None = None
    native: Offloadable[Native | None] = _NATIVE
    type: Literal["image"] = field(default="image", init=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"mimeType": self.mime_type, "bytes": self.size, "data": self.data}
        if self.name:
            data["name"] = self.name
        return data

    def to_wire(self) -> p.ImagePart:
        return p.ImagePart(mime_type=self.mime_type, name=self.name, bytes=self.size)


@dataclass
class StoredOpaque:
    """A provider artifact (never shown to a client); `server_compaction`: a compaction
    item the server emitted mid-stream, replayed from the view's server window."""

    native: Offloadable[Native | None] = _NATIVE
    server_compaction: bool = False
    type: Literal["opaque"] = field(default="opaque", init=False)

    def to_json(self) -> dict[str, Any]:
        return {"serverCompaction": True} if self.server_compaction else {}


StoredPart = (
    StoredText
    | StoredReasoning
    | StoredToolCall
    | StoredCompactionMarker
    | StoredPreCompact
    | StoredAttachment
    | StoredImage
    | StoredOpaque
)


def part_from_json(type: str, data: dict[str, Any], native: Native | None = None) -> StoredPart:
    """A part as the store holds it (its type, its JSON, its native item)."""
    if type == "text":
        return StoredText(data.get("text", ""), native)
    if type == "reasoning":
        return StoredReasoning(data.get("text", ""), native)
    if type == "tool_call":
        return StoredToolCall(
            data["toolCallId"],
            data["name"],
            data.get("input") or {},
            data.get("arguments") or "",
            native,
        )
    if type == "compaction":
        return StoredCompactionMarker(data["compactionId"], native)
    if type == "pre_compact":
        return StoredPreCompact(p.PreCompactPart.model_validate(data), native)
    if type == "attachment":
        return StoredAttachment(
            uri=data["uri"],
            path=data.get("path", ""),
            text=data.get("text", ""),
            source="editor" if data.get("source") == "editor" else "disk",
            start_line=data.get("startLine"),
            end_line=data.get("endLine"),
            truncated=bool(data.get("truncated")),
            native=native,
        )
    if type == "image":
        return StoredImage(
            mime_type=str(data.get("mimeType", "")),
            data=str(data.get("data", "")),
            size=int(data.get("bytes", 0)),
            name=data.get("name"),
            native=native,
        )
    return StoredOpaque(native, server_compaction=bool(data.get("serverCompaction")))


@dataclass
class ToolResultRecord:
    tool_call_id: str
    status: Literal["completed", "failed"]
    # Offloaded once its message is before the latest compaction's cut (baton.store.offload).
    output: Offloadable[str] = _OUTPUT
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
        return "".join(part.text for part in self.parts if isinstance(part, StoredText))

    def tool_calls(self) -> list[StoredToolCall]:
        return [part for part in self.parts if isinstance(part, StoredToolCall)]

    def answered(self, running: frozenset[str] = frozenset()) -> bool:
        """Whether every tool call of this message has its result (and none of them is
        among the `running` call ids): such a message never changes again."""
        return all(
            (call_id := part.tool_call_id) in self.results and call_id not in running
            for part in self.tool_calls()
        )

    def origin(self) -> p.MessageOrigin | None:
        """Why Baton wrote this user message itself; None for the person's own and the model's."""
        return _ORIGINS.get(self.kind) if self.role == "user" else None

    def command(self) -> p.MessageCommand | None:
        """The person's slash command this user message was expanded from, or None."""
        return _command(self.meta.get("command")) if self.role == "user" else None

    def to_wire(self, *, compacted: bool, running: bool = False) -> p.Message:
        parts: list[Any] = []
        for part in self.parts:
            if isinstance(part, StoredText):
                parts.append(p.TextPart(text=part.text))
            elif isinstance(part, StoredReasoning):
                parts.append(p.ReasoningPart(text=part.text))
            elif isinstance(part, StoredToolCall):
                call_id = part.tool_call_id
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
                        name=part.name,
                        input=part.input,
                        status=status,
                        output=output,
                    )
                )
            elif isinstance(part, StoredCompactionMarker):
                parts.append(p.CompactionPart(compaction_id=part.compaction_id))
            elif isinstance(part, StoredPreCompact):
                parts.append(part.record)
            elif isinstance(part, StoredAttachment | StoredImage):
                parts.append(part.to_wire())
        return p.Message(
            id=self.id,
            role=self.role,
            created_at=self.created_at,
            parts=parts,
            compacted=compacted,
            incomplete=self.incomplete,
            origin=self.origin(),
            command=self.command(),
        )


def _command(data: Any) -> p.MessageCommand | None:
    """The slash command a person's message was expanded from (its `meta`)."""
    if not isinstance(data, dict):
        return None
    return p.MessageCommand(
        name=str(data.get("name", "")),
        arguments=str(data.get("arguments", "")),
        typed=str(data.get("typed", "")),
        source="skill" if data.get("kind") == "skill" else "command",
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
