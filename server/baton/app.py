"""The composition root: builds the core for one workspace, for any face (LSP, CLI)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baton.auth import Credentials
from baton.compaction.engine import CompactionEngine
from baton.compaction.server import install_server_compaction
from baton.compaction.service import CompactionService
from baton.config import ConfigLoader
from baton.hooks import install_hooks
from baton.hooks.lifecycle import LifecycleHooks
from baton.mcp_servers import McpManager
from baton.plan.service import PlanService
from baton.providers.factory import ProviderRegistry
from baton.review.service import ReviewService
from baton.session.events import ClientChannel
from baton.session.service import SessionService
from baton.store.compactions import CompactionStore
from baton.store.db import Database, open_workspace_db
from baton.tools.plan import plan_tools
from baton.tools.registry import default_registry

log = logging.getLogger(__name__)


@dataclass
class App:
    workspace: Path
    config: ConfigLoader
    credentials: Credentials
    db: Database
    sessions: SessionService
    compaction: CompactionService
    plans: PlanService | None = None
    hooks: LifecycleHooks | None = None
    mcp: McpManager | None = None
    review: ReviewService | None = None

    def config_problems(self) -> list[str]:
        problems = [str(problem) for problem in self.config.load()[1]]
        if self.hooks is not None:
            # Plugins that failed to load are shown like configuration problems.
            problems += [str(problem) for problem in self.hooks.dispatcher.plugins.problems]
        return problems

    async def close(self) -> None:
        await self.sessions.shutdown()
        if self.mcp is not None:
            # After the turns: their tool calls are cancelled first.
            await self.mcp.aclose()


def build_app(
    workspace: Path,
    channel: ClientChannel,
    *,
    client_settings: dict[str, Any] | None = None,
    environ: dict[str, str] | None = None,
) -> App:
    workspace = workspace.resolve()
    config = ConfigLoader(workspace, client_settings, environ)
    credentials = Credentials(environ)
    db = open_workspace_db(workspace)
    tools = default_registry()
    for tool in plan_tools():
        tools.register(tool)
    plans = PlanService(workspace, db, config, channel)
    sessions = SessionService(
        workspace, db, config, credentials, channel, ProviderRegistry(), tools, plans=plans
    )
    plans.attach(sessions)
    sessions.tool_context_extras["plan"] = plans
    engine = CompactionEngine(sessions, CompactionStore(db, sessions.store))
    engine.plan_state = plans.ledger_state
    compaction = CompactionService(sessions, engine)
    install_server_compaction(engine)
    # MCP servers start lazily, at the first model step that needs the tool list.
    mcp = McpManager(workspace, config, tools, channel)
    sessions.step_preparers.append(mcp.prepare)
    hooks = install_hooks(sessions, engine)
    log.info("baton ready for workspace %s (store %s)", workspace, db.path)
    app = App(workspace, config, credentials, db, sessions, compaction, plans, hooks, mcp=mcp)
    app.review = ReviewService(sessions, db)
    return app
