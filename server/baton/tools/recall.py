"""`recall`: exact text that compaction took out of the model's view.

Read-only and allowed in every mode; the session's `RecallSource`
(`ctx.recall`, baton.compaction.recall) does the reading.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from baton.tools.base import ToolContext, ToolFailure, ToolInput, ToolResult


class RecallInput(ToolInput):
    call_id: str | None = Field(
        None,
        description="The id a note of compaction names: a pruned tool output's call id, or "
        "the message id of a person's message shown cut.",
    )
    query: str | None = Field(
        None,
        description="Text to find (case-insensitive) in compacted messages and pruned outputs.",
    )
    offset: int = Field(0, ge=0, description="With call_id: where to start in a long output.")


class RecallTool:
    name: ClassVar[str] = "recall"
    description: ClassVar[str] = (
        "Get back, word for word, text that compaction hid from you: a pruned tool output by "
        "the call id its note names, or the lines of compacted messages and pruned outputs "
        "that contain `query`. Cheaper and more exact than running a tool again."
    )
    input_model: ClassVar[type[ToolInput]] = RecallInput
    read_only: ClassVar[bool] = True

    async def run(self, args: RecallInput, ctx: ToolContext) -> ToolResult:
        if ctx.recall is None:
            raise ToolFailure("recall is not available in this session")
        text = ctx.recall.recall(
            ctx.session_id, call_id=args.call_id, query=args.query, offset=args.offset
        )
        return ToolResult(output=text)
