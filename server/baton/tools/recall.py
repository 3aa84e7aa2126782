"""`recall`: exact text that compaction took out of the model's view.

Read-only and allowed in every mode; the session's `RecallSource`
(`ctx.recall`, baton.compaction.recall) does the reading.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from baton.tools.base import ToolContext, ToolFailure, ToolInput, ToolResult


class RecallInput(ToolInput):
    call_id: str | None = None
    query: str | None = None
    offset: int = Field(0, ge=0)


class RecallTool:
    name: ClassVar[str] = "recall"
    description: ClassVar[str] = (
        "Get back hidden text: an output by the call_id its note names, or lines containing query."
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
