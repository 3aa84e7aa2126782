"""The features around the session service, each set up on it, each saying what it adds.

A feature's setup builds it on the `SessionService` and returns a `Contribution`:
what it runs at which seam (`baton.session.seams`). `setup_features` is what the
service calls while it is being built (`SessionService(..., features=...)`): the
contributions are folded into one frozen `Seams` before the service serves
anything, and nothing changes them afterwards. The features are built on the
service rather than before it because two of them run turns of their own (a
plan approval starts one; a pre-compact hook runs a round), and every turn runs
through the service's seams.

To add a feature: write its setup here, returning its contribution, and call it
from `setup_features`; to find what runs at a seam, read this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from baton.compaction.engine import CompactionEngine
from baton.compaction.recall import RecallSource
from baton.compaction.server import ServerCompactionFeature, ServerStrategies
from baton.compaction.service import CompactionService
from baton.delegation.channel import DelegationChannel
from baton.delegation.feature import Delegation, TaskTool
from baton.delegation.steps import StepBuilder
from baton.hooks import build_hooks
from baton.hooks.lifecycle import LifecycleHooks
from baton.mcp_servers import McpManager
from baton.plan.service import PlanService
from baton.plan.source import PlanContext
from baton.review.service import ReviewService
from baton.session.seams import Contribution, Seams, fold
from baton.skills.service import SkillsFeature
from baton.store.compactions import CompactionStore
from baton.tools.base import (
    EditorDiagnostics,
    EditorFiles,
    EditorTerminal,
    PersonQuestions,
    ToolServices,
)

if TYPE_CHECKING:
    from baton.session.service import SessionService


@dataclass(frozen=True)
class Features:
    hooks: LifecycleHooks
    engine: CompactionEngine
    compaction: CompactionService
    plans: PlanService
    mcp: McpManager
    review: ReviewService
    delegation: Delegation
    steps: StepBuilder
    seams: Seams


def setup_hooks(sessions: SessionService) -> tuple[LifecycleHooks, Contribution]:
    """Tool hooks around every call; `baton/session/cancel` stops a pre-compact round."""
    hooks = build_hooks(sessions)
    return hooks, Contribution(tools=hooks, on_cancel=(hooks.cancel_round,))


def setup_compaction(
    sessions: SessionService, hooks: LifecycleHooks, plan_context: PlanContext
) -> tuple[CompactionEngine, CompactionService, Contribution]:
    """The trigger and overflow recovery around each step, the compaction a turn left
    pending, the compaction view of a loaded session, the server's in-stream items."""
    engine = CompactionEngine(
        sessions,
        CompactionStore(sessions.db, sessions.store),
        hooks=hooks,
        plan_state=plan_context.ledger_state,
        chooser=ServerStrategies(),
    )
    server = ServerCompactionFeature(engine)
    compaction = CompactionService(sessions, engine, model_switch=server.model_switch)
    return (
        engine,
        compaction,
        Contribution(
            turn=compaction,
            server_compaction=server,
            session_loaded=(engine.restore_view,),
            # What was asked while other work ran: between a step build's steps, and as
            # the work that follows the one that ended (baton.session.activity).
            next_work=(compaction.next_work,),
            at_boundary=(compaction.run_pending,),
        ),
    )


def setup_plans(
    sessions: SessionService, plan_context: PlanContext, compaction: CompactionService
) -> tuple[PlanService, Contribution]:
    """The plan tools' service; approving "in a fresh context" starts with a compaction."""
    plans = PlanService(
        plan_context, sessions.config, sessions.channel, sessions, fresh_start=compaction
    )
    return plans, Contribution(tool_services=ToolServices(plan=plans))


def setup_recall(sessions: SessionService) -> Contribution:
    """What compaction hid, for the `recall` tool."""
    return Contribution(tool_services=ToolServices(recall=RecallSource(sessions)))


def setup_mcp(sessions: SessionService) -> tuple[McpManager, Contribution]:
    """MCP servers start lazily, at the first model step that needs the tool list."""
    mcp = McpManager(sessions.workspace, sessions.config, sessions.tools, sessions.channel)
    return mcp, Contribution(before_step=(mcp.prepare,))


def setup_review(
    sessions: SessionService, plans: PlanService
) -> tuple[ReviewService, Contribution]:
    """Per-turn checkpoints of the file tools, and the reverted messages of a loaded session."""
    review = ReviewService(sessions, sessions.db, after_revert=[plans.restore_before])
    return review, Contribution(change_recorder=review.recorder, session_loaded=(review.attach,))


def setup_skills(skills: SkillsFeature) -> Contribution:
    """Skill files re-read before each step; slash commands typed as a prompt expanded."""
    return Contribution(before_step=(skills.before_step,), commands=skills)


def setup_delegation(
    sessions: SessionService, plans: PlanService, channel: DelegationChannel
) -> tuple[Delegation, StepBuilder, Contribution]:
    """The `task` tool and its children: each child offered its agent's tools, read-only
    children run at once, a cancelled parent cancels its children; `baton/plan/approve
    {build: "steps"}` builds each step in a fresh child."""
    delegation = Delegation(sessions.workspace, sessions.config, sessions, channel, plans=plans)
    sessions.tools.register(TaskTool(delegation))
    steps = StepBuilder(delegation, plans)
    return (
        delegation,
        steps,
        Contribution(
            tool_offer=delegation,
            before_step=(delegation.before_step,),
            on_cancel=(delegation.cancel_children,),
        ),
    )


def setup_editor(
    files: EditorFiles | None,
    terminal: EditorTerminal | None,
    questions: PersonQuestions | None = None,
    diagnostics: EditorDiagnostics | None = None,
) -> Contribution:
    """The editor's buffers, terminal and problems, and someone to ask questions, for a
    face whose client offers them."""
    return Contribution(
        tool_services=ToolServices(
            files=files, terminal=terminal, questions=questions, diagnostics=diagnostics
        )
    )


def setup_features(
    sessions: SessionService,
    plan_context: PlanContext,
    skills: SkillsFeature,
    channel: DelegationChannel,
    *,
    editor_files: EditorFiles | None = None,
    editor_terminal: EditorTerminal | None = None,
    questions: PersonQuestions | None = None,
    editor_diagnostics: EditorDiagnostics | None = None,
) -> Features:
    hooks, with_hooks = setup_hooks(sessions)
    engine, compaction, with_compaction = setup_compaction(sessions, hooks, plan_context)
    plans, with_plans = setup_plans(sessions, plan_context, compaction)
    mcp, with_mcp = setup_mcp(sessions)
    review, with_review = setup_review(sessions, plans)
    delegation, steps, with_delegation = setup_delegation(sessions, plans, channel)
    seams = fold(
        with_compaction,
        with_hooks,
        with_plans,
        setup_recall(sessions),
        setup_editor(editor_files, editor_terminal, questions, editor_diagnostics),
        with_review,
        with_mcp,
        setup_skills(skills),
        with_delegation,
    )
    return Features(hooks, engine, compaction, plans, mcp, review, delegation, steps, seams)
