"""The plan tools: the agent writes, edits, shows, submits and finishes its plan file.

They work through the session's PlanService (`ctx.plan`), which keeps the file,
its versions and the client in step; its refusals (a missing `old_string`, a
plan that is not in a state to submit) reach the model as the tool's error. The
model sees the plan's whole text once, in `plan_write`'s own arguments; a
`plan_edit` result shows only the changed lines (`baton.plan.view.edit_text`),
so no tool output here repeats the plan. Writing the plan file is not a change
to the workspace that needs permission, so these tools run in plan mode too
(`plan_exit` only there).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from baton.tools.base import PlanTools, Tool, ToolContext, ToolFailure, ToolInput, ToolResult

BOTH_MODES: tuple[str, ...] = ("build", "plan")


class PlanWriteInput(ToolInput):
    content: str = Field(
        description=("Steps: `- [ ]` open, `- [~]` doing, `- [!]` blocked: why, `- [x]` done.")
    )


class PlanEditInput(ToolInput):
    # The description says what both are (as edit's does).
    old_string: str
    new_string: str


class NoInput(ToolInput):
    pass


def _service(ctx: ToolContext) -> PlanTools:
    if ctx.plan is None:
        raise ToolFailure("plans are not available in this session")
    return ctx.plan


class PlanWriteTool:
    name: ClassVar[str] = "plan_write"
    description: ClassVar[str] = (
        "Write the whole plan once: the goal, then steps. Revise it with plan_edit."
    )
    input_model: ClassVar[type[ToolInput]] = PlanWriteInput
    read_only: ClassVar[bool] = False
    modes: ClassVar[tuple[str, ...]] = BOTH_MODES

    async def run(self, args: PlanWriteInput, ctx: ToolContext) -> ToolResult:
        plan, version = _service(ctx).write(
            ctx.session_id, args.content, ctx.tool_call_id, mode=ctx.mode
        )
        return ToolResult(
            output=f"Plan v{version.version} written to {plan.path} ({plan.status}); "
            "change it with plan_edit."
        )


class PlanEditTool:
    name: ClassVar[str] = "plan_edit"
    description: ClassVar[str] = (
        "Replace old_string (exact, once in the plan) with new_string, e.g. tick a step."
    )
    input_model: ClassVar[type[ToolInput]] = PlanEditInput
    read_only: ClassVar[bool] = False
    modes: ClassVar[tuple[str, ...]] = BOTH_MODES

    async def run(self, args: PlanEditInput, ctx: ToolContext) -> ToolResult:
        service = _service(ctx)
        _, version = service.edit(
            ctx.session_id, args.old_string, args.new_string, ctx.tool_call_id
        )
        return ToolResult(output=service.edit_result(ctx.session_id, version.version))


class PlanShowTool:
    name: ClassVar[str] = "plan_show"
    description: ClassVar[str] = "Show the plan to the person."
    input_model: ClassVar[type[ToolInput]] = NoInput
    read_only: ClassVar[bool] = False
    modes: ClassVar[tuple[str, ...]] = BOTH_MODES

    async def run(self, args: NoInput, ctx: ToolContext) -> ToolResult:
        plan, version = _service(ctx).show(ctx.session_id)
        return ToolResult(output=f"Showed plan v{version} ({plan.path}) to the person.")


class PlanExitTool:
    name: ClassVar[str] = "plan_exit"
    description: ClassVar[str] = "Submit the plan for approval; your turn ends."
    input_model: ClassVar[type[ToolInput]] = NoInput
    read_only: ClassVar[bool] = False
    modes: ClassVar[tuple[str, ...]] = ("plan",)

    async def run(self, args: NoInput, ctx: ToolContext) -> ToolResult:
        _, version = _service(ctx).submit(ctx.session_id)
        return ToolResult(
            output=f"Plan v{version} submitted for approval; waiting for the person.",
            end_turn=True,
        )


class PlanDoneTool:
    name: ClassVar[str] = "plan_done"
    description: ClassVar[str] = "Mark the plan done once every step is."
    input_model: ClassVar[type[ToolInput]] = NoInput
    read_only: ClassVar[bool] = False
    modes: ClassVar[tuple[str, ...]] = BOTH_MODES

    async def run(self, args: NoInput, ctx: ToolContext) -> ToolResult:
        plan, version = _service(ctx).finish(ctx.session_id)
        return ToolResult(output=f"Plan v{version} ({plan.path}) marked done.")


def plan_tools() -> list[Tool]:
    """The five plan tools, in the order they are offered."""
    return [PlanWriteTool(), PlanEditTool(), PlanShowTool(), PlanExitTool(), PlanDoneTool()]
