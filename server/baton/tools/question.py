"""`question`: one question for the person with two to six options, and their answer.

Offered only where someone can answer (a client that shows the card, a terminal);
the answer is the tool's result. A cancelled turn withdraws the question.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from baton import protocol as p
from baton.tools.base import ToolContext, ToolFailure, ToolInput, ToolResult


class QuestionOptionInput(ToolInput):
    label: str = Field(min_length=1, max_length=80)
    description: str | None = Field(None, max_length=300)


class QuestionInput(ToolInput):
    question: str = Field(min_length=1, max_length=2_000)
    options: list[QuestionOptionInput] = Field(
        min_length=p.QUESTION_MIN_OPTIONS, max_length=p.QUESTION_MAX_OPTIONS
    )
    multiple: bool = False
    allow_text: bool = False


class QuestionTool:
    name: ClassVar[str] = "question"
    description: ClassVar[str] = "Ask the person a question with 2-6 options."
    input_model: ClassVar[type[ToolInput]] = QuestionInput
    read_only: ClassVar[bool] = True

    async def run(self, args: QuestionInput, ctx: ToolContext) -> ToolResult:
        if ctx.questions is None:
            raise ToolFailure("question is not available here: there is no one to ask")
        labels = [option.label for option in args.options]
        if len(set(labels)) != len(labels):
            raise ToolFailure("two options have the same label; give each its own")
        request = p.QuestionRequestParams(
            session_id=ctx.session_id,
            tool_call_id=ctx.tool_call_id,
            question=args.question,
            options=[
                p.QuestionOption(label=o.label, description=o.description) for o in args.options
            ],
            multiple=args.multiple,
            allow_text=args.allow_text,
            parent_id=ctx.parent_id,
            agent=ctx.agent,
        )
        answer = await ctx.questions.ask(request)
        if answer is None or answer.outcome == "cancelled":
            return ToolResult(
                output="The person closed the question without answering. Do not ask it "
                "again; go on with what you know, or end your turn and ask in words.",
                is_error=True,
            )
        return ToolResult(output=answer_text(args, answer))


def answer_text(args: QuestionInput, answer: p.QuestionResponse) -> str:
    """What the model reads of the answer: the chosen labels as offered, then their words.
    A label the question did not offer is not passed on as a choice."""
    offered = [o.label for o in args.options]
    chosen = [label for label in offered if label in answer.labels]
    if not args.multiple:
        chosen = chosen[:1]
    text = (answer.text or "").strip() if args.allow_text else ""
    parts = []
    if chosen:
        parts.append("The person chose: " + "; ".join(chosen))
    if text:
        parts.append(f"The person wrote: {text}")
    if not parts:
        parts.append("The person answered without choosing an option or writing anything.")
    return "\n".join(parts)
