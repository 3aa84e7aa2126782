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
        description="The id a compaction note names.",
    )
    query: str | None = Field(
        None,
        description="Case-insensitive.",
    )
    offset: int = Field(0, ge=0, description="With call_id: where to start in a long output.")


class RecallTool:
    name: ClassVar[str] = "recall"
    description: ClassVar[str] = (
        "Get back, word for word, text compaction hid: a pruned output by the call_id its "
        "note names, or the lines of compacted text containing query. Cheaper than "
        "running a tool again."
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
