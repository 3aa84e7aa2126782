"""The composition root: builds the core for one workspace, for any face (LSP, CLI)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baton import protocol as p
from baton.agent.events import ClientChannel
from baton.auth import Credentials
from baton.compaction.service import CompactionService
from baton.config import ConfigLoader
from baton.delegation.channel import DelegationChannel
from baton.delegation.feature import Delegation
from baton.delegation.steps import StepBuilder
from baton.errors import BatonError, SessionBusy
from baton.features import Features, setup_features
from baton.hooks.lifecycle import LifecycleHooks
from baton.hooks.plugins import drop_workspace_plugins, load_workspace_plugins
from baton.mcp_servers import McpManager
from baton.plan.service import PlanService
from baton.plan.source import PlanContext
from baton.plan.store import PlanStore
from baton.providers.factory import ProviderRegistry
from baton.review.service import ReviewService
from baton.session.seams import Seams
from baton.session.service import SessionService
from baton.skills.service import SkillsFeature
from baton.store.db import Database, open_workspace_db
from baton.store.sessions import SessionStore
from baton.tools.base import EditorDiagnostics, EditorFiles, EditorTerminal, PersonQuestions
from baton.tools.diagnostics import DiagnosticsTool
from baton.tools.plan import plan_tools
from baton.tools.question import QuestionTool
from baton.tools.registry import default_registry
from baton.trust import Trust, decide

log = logging.getLogger(__name__)


@dataclass
class App:
    workspace: Path
    config: ConfigLoader
    credentials: Credentials
    db: Database
    sessions: SessionService
    compaction: CompactionService
    plans: PlanService
    hooks: LifecycleHooks
    mcp: McpManager
    review: ReviewService
    skills: SkillsFeature
    delegation: Delegation
    steps: StepBuilder
    _trust_announced: set[str] = field(default_factory=set)

    def ignored(self) -> list[str]:
        """What the workspace has that is not in force now (settings, plugins, skills, agents)."""
        return (
            self.config.ignored()
            + self.hooks.dispatcher.plugins.ignored
            + self.skills.ignored()
            + self.delegation.ignored()
        )

    def trust_result(self) -> p.WorkspaceTrustResult:
        trust = self.config.trust
        return p.WorkspaceTrustResult(
            trusted=trust.trusted, source=trust.source, ignored=self.ignored()
        )

    def set_trust(self, trusted: bool) -> p.WorkspaceTrustResult:
        """The editor's live decision (VS Code's "Trust" button): in force from now on.

        Command hooks and MCP servers follow the settings at their next use (MCP servers
        of the workspace are stopped when trust is revoked); plugins load or unload here.
        """
        self.config.trust = Trust(trusted, "editor")
        plugins = self.hooks.dispatcher.plugins
        if trusted:
            load_workspace_plugins(plugins, self.workspace)
        else:
            drop_workspace_plugins(plugins, self.workspace)
        log.info("workspace trust set by the editor: %s", trusted)
        return self.trust_result()

    def trust_notice(self) -> str | None:
        """The one plain sentence about an untrusted workspace, or None if nothing is lost."""
        if self.config.trust.trusted:
            return None
        ignored = self.ignored()
        if not ignored:
            return None
        return (
            f"This workspace is not trusted, so Baton ignores {len(ignored)} of its settings "
            f"or plugins ({'; '.join(ignored)}) and runs on your own settings. To use them, "
            "trust the folder: in VS Code with Manage Workspace Trust, in a terminal with "
            "`baton trust`."
        )

    def announce_trust(self, session_id: str) -> None:
        """Say `trust_notice` to a session, once per session per server."""
        if session_id in self._trust_announced:
            return
        self._trust_announced.add(session_id)
        notice = self.trust_notice()
        if notice is None:
            return
        trust = self.config.trust
        self.sessions.channel.send_update(
            session_id,
            p.WorkspaceTrustUpdate(
                trusted=trust.trusted, source=trust.source, ignored=self.ignored(), message=notice
            ),
        )

    def check_store(self) -> p.StoreCheckResult:
        from baton.store.health import check_result

        return check_result(self.db.path)

    def repair_store(self) -> p.StoreRepairResult:
        """`baton/store/repair` in the running server: refused while this process works
        on a session or another process has the store open; afterwards every session is
        read afresh from the new store."""
        from baton.store.health import repair_result

        working = self.sessions.working()
        if working:
            raise SessionBusy(
                working[0], "a turn or compaction is running; repair the store when it ends"
            )
        self.sessions.leases.release_all()
        self.db.close()
        try:
            return repair_result(self.db.path)
        finally:
            self.sessions.forget_all()
            try:
                self.db.reopen()
            except BatonError as exc:
                log.error("the store could not be opened again after the repair: %s", exc)

    def config_problems(self) -> list[str]:
        problems = [str(problem) for problem in self.config.load()[1]]
        # Plugins that failed to load are shown like configuration problems.
        problems += [str(problem) for problem in self.hooks.dispatcher.plugins.problems]
        problems += self.skills.problems()
        return problems

    async def close(self) -> None:
        await self.sessions.shutdown()
        # After the turns: their tool calls are cancelled first.
        await self.mcp.aclose()


def build_app(
    workspace: Path,
    channel: ClientChannel,
    *,
    client_settings: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
    trust: Trust | None = None,
    editor_files: EditorFiles | None = None,
    editor_terminal: EditorTerminal | None = None,
    questions: PersonQuestions | None = None,
    editor_diagnostics: EditorDiagnostics | None = None,
) -> App:
    """The core for `workspace`. `trust` is the person's decision already made (the
    editor's); without one, the trust record decides (see `baton.trust`). It is known
    before anything of the workspace is loaded or any provider is asked anything.
    `editor_files` / `editor_terminal`: the editor's buffers and terminal, for a face
    whose client offers them (ACP). `questions`: someone to ask (the `question` tool is
    offered only with it); `editor_diagnostics`: the editor's problems (`diagnostics`).

    The session service is built with the features' setup (`baton.features`): each
    feature is set up on it and says what it adds at which seam, and the service's
    frozen `Seams` is the fold of those contributions."""
    workspace = workspace.resolve()
    trust = trust if trust is not None else decide(workspace, None)
    config = ConfigLoader(workspace, client_settings, environ, trust=trust)
    credentials = Credentials(environ)
    db = open_workspace_db(workspace)
    # Every update of a `task` child reaches the face labelled with its parent.
    channel = DelegationChannel(channel, SessionStore(db).parent_of)
    tools = default_registry()
    for tool in plan_tools():
        tools.register(tool)
    if questions is not None:
        tools.register(QuestionTool())
    if editor_diagnostics is not None:
        tools.register(DiagnosticsTool())
    # What the model is shown of a plan depends on the plan store alone; the plan methods
    # (which start turns) are built on the sessions.
    plan_context = PlanContext(PlanStore(workspace, db), channel)
    built: list[Features] = []
    # Skills are read before any session is: the context's head holds their list. The
    # `skill` tool asks the sessions (made next) whether a skill is in a session's view.
    skills = SkillsFeature(
        workspace, config, channel, tools, lambda session_id: sessions.state(session_id)
    )

    def setup(sessions: SessionService) -> Seams:
        built.append(
            setup_features(
                sessions,
                plan_context,
                skills,
                channel,
                editor_files=editor_files,
                editor_terminal=editor_terminal,
                questions=questions,
                editor_diagnostics=editor_diagnostics,
            )
        )
        return built[0].seams

    sessions = SessionService(
        workspace,
        db,
        config,
        credentials,
        channel,
        ProviderRegistry(),
        tools,
        plans=plan_context,
        features=setup,
        skills=skills,
    )
    (f,) = built
    log.info("baton ready for workspace %s (store %s)", workspace, db.path)
    return App(
        workspace,
        config,
        credentials,
        db,
        sessions,
        f.compaction,
        f.plans,
        f.hooks,
        f.mcp,
        f.review,
        skills,
        f.delegation,
        f.steps,
    )
