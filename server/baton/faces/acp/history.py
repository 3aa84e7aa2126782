"""A stored session as ACP `session/update` notifications, for `session/load`.

Every message is replayed, also those a compaction took out of the model's
view (`_meta.baton.compacted: true`, as `baton/session/load` marks them);
a compaction marker becomes a `compaction_update` for clients that opted in,
an agent message otherwise. Messages taken back with undo are left out.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    FileEditToolCallContent,
    TextContentBlock,
    ToolCallStart,
    UserMessageChunk,
)

from baton import protocol as p
from baton.faces.acp import translate
from baton.faces.acp.channel import compaction_announcement, compaction_update

Replayed = Any  # an SDK update model, or a raw dict for a draft update
# The old/new text of the files a tool call changed (from the review checkpoints).
DiffsOf = Callable[[str], list[FileEditToolCallContent]]


def no_diffs(tool_call_id: str) -> list[FileEditToolCallContent]:
    return []


def replay(
    workspace: Path,
    messages: list[p.Message],
    records: dict[str, p.CompactionRecord],
    *,
    compaction_updates: bool,
    diffs_of: DiffsOf = no_diffs,
) -> list[Replayed]:
    out: list[Replayed] = []
    for message in messages:
        if message.reverted:
            continue
        meta = {"baton": {"compacted": True}} if message.compacted else None
        for part in message.parts:
            out.extend(_part(workspace, message, part, meta, records, compaction_updates, diffs_of))
    return out


def _text(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def _part(
    workspace: Path,
    message: p.Message,
    part: Any,
    meta: dict[str, Any] | None,
    records: dict[str, p.CompactionRecord],
    compaction_updates: bool,
    diffs_of: DiffsOf,
) -> list[Replayed]:
    if isinstance(part, p.TextPart):
        if message.role == "user":
            # A slash command replays as the person typed it; the expansion rides in _meta.
            command = message.command
            return [
                UserMessageChunk(
                    session_update="user_message_chunk",
                    content=_text(command.typed if command is not None else part.text),
                    message_id=message.id,
                    field_meta=meta
                    if command is None
                    else {
                        **(meta or {}),
                        "batonCommand": {"name": command.name, "expanded": part.text},
                    },
                )
            ]
        return [
            AgentMessageChunk(
                session_update="agent_message_chunk",
                content=_text(part.text),
                message_id=message.id,
                field_meta=meta,
            )
        ]
    if isinstance(part, p.ReasoningPart) and part.text:
        return [
            AgentThoughtChunk(
                session_update="agent_thought_chunk",
                content=_text(part.text),
                message_id=message.id,
                field_meta=meta,
            )
        ]
    if isinstance(part, p.ToolCallPart):
        content: list[Any] = diffs_of(part.tool_call_id) if part.name in ("write", "edit") else []
        if part.output:
            content.append(translate.text_content(part.output))
        return [
            ToolCallStart(
                session_update="tool_call",
                tool_call_id=part.tool_call_id,
                title=translate.tool_title(part.name, part.input),
                kind=translate.tool_kind(part.name),
                status=part.status,
                content=content or None,
                locations=translate.locations(workspace, part.name, part.input) or None,
                raw_input=part.input,
                raw_output=part.output,
                field_meta=meta,
            )
        ]
    if isinstance(part, p.CompactionPart):
        record = records.get(part.compaction_id)
        if record is None:
            return []
        if compaction_updates:
            return [compaction_update(record.compaction_id, record)]
        return [
            AgentMessageChunk(
                session_update="agent_message_chunk",
                content=_text(compaction_announcement(record)),
                message_id=message.id,
                field_meta={"baton": {"compactionId": record.compaction_id}},
            )
        ]
    return []
