"""`baton acp`: Baton as an Agent Client Protocol agent, the third face on the same core.

One process serves one editor connection. Each ACP session has a working
directory (`cwd`); Baton builds one `App` per directory, as the LSP face does
for its workspace folder, and remembers which App holds which session.
ACP names stay in this package: the core is driven through `SessionService`,
`PlanService`, `CompactionService` and `ReviewService` and talks back through
`AcpChannel`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthEnvVar,
    AvailableCommandsUpdate,
    CloseSessionResponse,
    DeleteSessionResponse,
    EnvVarAuthMethod,
    FileEditToolCallContent,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    McpServerStdio,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionDeleteCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)
from pydantic import ValidationError

from baton import __version__
from baton import protocol as p
from baton.causes import cause_of, headline
from baton.config import McpServerSettings
from baton.errors import BatonError, InvalidParams, SessionBusy, SessionNotFound
from baton.faces.acp import commands
from baton.faces.acp.channel import AcpChannel, agent_text
from baton.faces.acp.files import AcpEditorFiles
from baton.faces.acp.history import replay
from baton.faces.acp.prompts import prompt_parts
from baton.faces.acp.question import AcpQuestions
from baton.faces.acp.roots import read_roots
from baton.faces.acp.terminal import AcpEditorTerminal
from baton.logs import register_secret
from baton.session.manage import SessionManager
from baton.trust import decide

if TYPE_CHECKING:
    from acp.interfaces import Client

    from baton.app import App
    from baton.faces.acp.transport import LineTransport
    from baton.providers.models import ModelCatalog

log = logging.getLogger(__name__)

AUTH_METHOD = "openai-api-key"
ANTHROPIC_AUTH_METHOD = "anthropic-api-key"
MODES = (
    SessionMode(id="build", name="Build", description="Read, change files and run commands"),
    SessionMode(id="plan", name="Plan", description="Read and write the plan file only"),
)
# ACP's stop reasons have no "error": a failed turn is a JSON-RPC error instead.
STOP_REASONS: dict[str, Any] = {
    "end_turn": "end_turn",
    "cancelled": "cancelled",
    "refusal": "refusal",
    "max_steps": "max_turn_requests",
}


# Baton's extension method for a compaction the client asks for (ACP has none yet): its
# name starts with `_` as the protocol's extension rules ask, and it is reported with
# the compaction updates.
COMPACT_METHOD = "_baton/session/compact"


def _error(exc: BatonError) -> RequestError:
    """A core error as a JSON-RPC error with Baton's message (ACP codes where they differ)."""
    if isinstance(exc, SessionNotFound):
        return RequestError(-32002, exc.message, {"kind": "session_not_found"})
    if isinstance(exc, SessionBusy):
        return RequestError(-32600, exc.message, {"kind": "session_busy"})
    cause = cause_of(exc)
    if cause is not None:
        # The title a person reads first; the provider's own words stay in the details.
        return RequestError(
            exc.code, headline(cause, exc.message), {"cause": cause, "details": exc.message}
        )
    return RequestError(exc.code, exc.message)


@asynccontextmanager
async def core_errors() -> AsyncIterator[None]:
    try:
        yield
    except BatonError as exc:
        raise _error(exc) from exc
    except ValidationError as exc:
        raise RequestError.invalid_params({"errors": exc.errors(include_url=False)}) from exc


class BatonAgent:
    def __init__(self, transport: LineTransport) -> None:
        self.transport = transport
        self.channel: AcpChannel | None = None
        self.apps: dict[Path, App] = {}
        self.session_apps: dict[str, App] = {}
        self.client_settings: dict[str, Any] | None = None
        # The editor's trust answer (`_meta.baton.workspaceTrusted`); None: `baton trust`'s
        # record decides, as for `baton run`.
        self.editor_trust: bool | None = None
        self._keys: dict[str, str] = {}
        self._catalogs: dict[int, ModelCatalog] = {}
        self.editor_files: AcpEditorFiles | None = None
        self.editor_terminal: AcpEditorTerminal | None = None
        # Each session's additional directories (`additionalDirectories`), for this
        # connection: `read` may read them; write and edit may change those the person
        # trusted with `baton trust` (each change asks).
        self.read_roots: dict[str, tuple[Path, ...]] = {}
        self.write_roots: dict[str, tuple[Path, ...]] = {}
        self.questions: AcpQuestions | None = None

    def on_connect(self, conn: Client) -> None:
        self.channel = AcpChannel(conn, self.transport, self.session_apps.get)
        self.channel.options_of = self._options_of

    def _channel(self) -> AcpChannel:
        if self.channel is None:
            raise RequestError.internal_error({"details": "not connected"})
        return self.channel

    async def aclose(self) -> None:
        for app in self.apps.values():
            await app.close()
        if self.channel is not None:
            await self.channel.aclose()

    # ------------------------------------------------------------------ apps

    def _app(self, cwd: str) -> App:
        path = Path(cwd)
        if not path.is_absolute():
            raise RequestError.invalid_params({"cwd": f"must be an absolute path: {cwd!r}"})
        if not path.is_dir():
            raise RequestError.invalid_params({"cwd": f"not a directory: {cwd!r}"})
        workspace = path.resolve()
        app = self.apps.get(workspace)
        if app is None:
            from baton.app import build_app

            trust = decide(workspace, self.editor_trust)
            if trust.warning:
                log.warning("%s", trust.warning)
            app = build_app(
                workspace,
                self._channel(),
                client_settings=self.client_settings,
                trust=trust,
                editor_files=self.editor_files,
                editor_terminal=self.editor_terminal,
                questions=self.questions,
            )
            for provider, key in self._keys.items():
                app.credentials.set(provider, key)
            self.apps[workspace] = app
        return app

    def _session(self, session_id: str) -> App:
        app = self.session_apps.get(session_id)
        if app is not None:
            return app
        for candidate in self.apps.values():
            if candidate.sessions.store.get_session(session_id) is not None:
                self.session_apps[session_id] = candidate
                return candidate
        raise _error(SessionNotFound(session_id))

    def _add_mcp_servers(self, app: App, servers: list[Any] | None) -> list[str]:
        """The editor's MCP servers join the workspace's; returns why any was left out (a
        server Baton cannot connect to must not cost the person the whole session)."""
        left_out: list[str] = []
        for server in servers or []:
            try:
                settings = mcp_settings(server)
            except ValueError as exc:
                left_out.append(str(exc))
                continue
            app.mcp.client_servers[settings.name] = settings
        return left_out

    def _tell(self, sid: str, notes: list[str]) -> None:
        for note in notes:
            self._channel().update(sid, agent_text(note))

    def _tell_left_out(self, sid: str, left_out: list[str]) -> None:
        for reason in left_out:
            self._channel().update(sid, agent_text(f"[MCP server left out: {reason}]\n"))

    # ------------------------------------------------------------------ initialize, auth

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        channel = self._channel()
        raw_caps = self.transport.initialize_params.get("clientCapabilities") or {}
        if isinstance(raw_caps, dict):
            channel.opt_ins.plan_file = raw_caps.get("plan") is not None
            session_caps = raw_caps.get("session")
            channel.opt_ins.compaction = isinstance(session_caps, dict) and bool(
                session_caps.get("compaction") is not None
            )
            channel.opt_ins.subagents = isinstance(raw_caps.get("subagents"), dict)
        fs = getattr(client_capabilities, "fs", None)
        if fs is not None and (fs.read_text_file or fs.write_text_file):
            self.editor_files = AcpEditorFiles(
                channel.client, read=bool(fs.read_text_file), write=bool(fs.write_text_file)
            )
        if getattr(client_capabilities, "terminal", False):
            self.editor_terminal = AcpEditorTerminal(channel.client, channel)
        elicitation = getattr(client_capabilities, "elicitation", None)
        if elicitation is not None and getattr(elicitation, "form", None) is not None:
            # The `question` tool, asked as a form; not offered to a client without forms.
            self.questions = AcpQuestions(channel.client)
        baton_meta = kwargs.get("baton")
        if isinstance(baton_meta, dict):
            trusted = baton_meta.get("workspaceTrusted")
            if trusted is not None and not isinstance(trusted, bool):
                raise RequestError.invalid_params(
                    {"_meta.baton.workspaceTrusted": "must be true or false"}
                )
            # The editor's answer, as VS Code's workspaceTrusted: the person's own setting.
            self.editor_trust = trusted
            if isinstance(baton_meta.get("settings"), dict):
                # The editor's own Baton settings, as the VS Code extension's initialization
                # options: the person's configuration, layered over the files.
                self.client_settings = baton_meta["settings"]
        response = InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                    delete=SessionDeleteCapabilities(),
                    additional_directories=SessionAdditionalDirectoriesCapabilities(),
                ),
            ),
            auth_methods=[
                EnvVarAuthMethod(
                    type="env_var",
                    id=AUTH_METHOD,
                    name="OpenAI API key",
                    description=(
                        "For the openai providers; the local model needs none. Set the "
                        "variable, or send the key as _meta.apiKey of authenticate."
                    ),
                    vars=[AuthEnvVar(name="OPENAI_API_KEY", label="OpenAI API key")],
                ),
                EnvVarAuthMethod(
                    type="env_var",
                    id=ANTHROPIC_AUTH_METHOD,
                    name="Anthropic API key",
                    description=(
                        "For the anthropic provider (Claude). Set the variable, or send "
                        "the key as _meta.apiKey of authenticate."
                    ),
                    vars=[AuthEnvVar(name="ANTHROPIC_API_KEY", label="Anthropic API key")],
                ),
            ],
            agent_info=Implementation(name="baton", title="Baton", version=__version__),
        )
        # No agent capability for children: ACP's subagent sessions have none (a client
        # learns of them from the first `subagent_update`).
        answer: dict[str, Any] = response.model_dump(
            mode="json", by_alias=True, exclude_none=True, exclude_unset=True
        )
        return answer

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        if method_id not in (AUTH_METHOD, ANTHROPIC_AUTH_METHOD):
            raise RequestError.invalid_params(
                {
                    "methodId": f"unknown authentication method {method_id!r}; use "
                    f"{AUTH_METHOD!r} or {ANTHROPIC_AUTH_METHOD!r}"
                }
            )
        key = kwargs.get("apiKey")
        variable = "OPENAI_API_KEY"
        if method_id == ANTHROPIC_AUTH_METHOD:
            provider, variable = "anthropic", "ANTHROPIC_API_KEY"
        else:
            provider = kwargs.get("provider", "openai")
        if provider not in ("openai", "openai-compatible", "anthropic"):
            raise RequestError.invalid_params(
                {"provider": "keys are for 'openai' or 'openai-compatible'; local needs none"}
            )
        if key is None:
            if os.environ.get(variable):
                return AuthenticateResponse()
            raise RequestError.auth_required(
                {"details": f"no key: set {variable} for the agent, or send _meta.apiKey"}
            )
        if not isinstance(key, str) or not key.strip() or len(key) > 4096:
            raise RequestError.invalid_params({"apiKey": "must be a non-empty string"})
        # As baton/auth/set: held in memory, registered with the log redactor.
        register_secret(key)
        self._keys[provider] = key
        for app in self.apps.values():
            app.credentials.set(provider, key)
        return AuthenticateResponse()

    # ------------------------------------------------------------------ sessions

    async def new_session(
        self,
        cwd: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        app = self._app(cwd)
        roots = read_roots(app.workspace, additional_directories)
        left_out = self._add_mcp_servers(app, mcp_servers)
        async with core_errors():
            sid = app.sessions.new_session(p.SessionNewParams()).session_id
        self.session_apps[sid] = app
        read_only = self._set_read_roots(app, sid, roots)
        self._after_reply(lambda: self._tell_left_out(sid, left_out))
        self._after_reply(lambda: self._tell(sid, read_only))
        self._after_reply(lambda: self._announce(sid))
        return NewSessionResponse(
            session_id=sid,
            modes=self._modes(app, sid),
            config_options=await self._options(app, sid),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[Any] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        app = self._app(cwd)
        roots = read_roots(app.workspace, additional_directories)
        async with core_errors():
            loaded = app.sessions.load(session_id)
        left_out = self._add_mcp_servers(app, mcp_servers)
        self.session_apps[session_id] = app
        read_only = self._set_read_roots(app, session_id, roots)
        self._tell_left_out(session_id, left_out)
        self._tell(session_id, read_only)
        channel = self._channel()
        records = {r.compaction_id: r for r in app.compaction.compactions(session_id).compactions}
        for update in replay(
            app.workspace,
            loaded.messages,
            records,
            compaction_updates=channel.opt_ins.compaction,
            diffs_of=lambda call_id: recorded_diffs(app, session_id, call_id),
        ):
            if isinstance(update, dict):
                channel.raw_update(session_id, update)
            else:
                channel.update(session_id, update)
        self._announce(session_id)
        # ACP: the whole history is sent before the answer.
        await channel.flush()
        return LoadSessionResponse(
            modes=self._modes(app, session_id), config_options=await self._options(app, session_id)
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        apps = [self._app(cwd)] if cwd else list(self.apps.values())
        sessions = [
            SessionInfo(
                session_id=row.session_id,
                cwd=str(app.workspace),
                additional_directories=[str(d) for d in self.read_roots.get(row.session_id, ())]
                or None,
                title=row.title,
                updated_at=row.updated_at,
            )
            for app in apps
            for row in app.sessions.list_sessions().sessions
        ]
        # Every session is in one page.
        return ListSessionsResponse(sessions=sessions)

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[Any] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """`session/load` without the replay: the editor still shows the history."""
        app = self._app(cwd)
        roots = read_roots(app.workspace, additional_directories)
        async with core_errors():
            app.sessions.load(session_id)
        left_out = self._add_mcp_servers(app, mcp_servers)
        self.session_apps[session_id] = app
        read_only = self._set_read_roots(app, session_id, roots)
        self._after_reply(lambda: self._tell_left_out(session_id, left_out))
        self._after_reply(lambda: self._tell(session_id, read_only))
        self._after_reply(lambda: self._announce(session_id))
        return ResumeSessionResponse(
            modes=self._modes(app, session_id), config_options=await self._options(app, session_id)
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Stop the session's work (as `session/cancel`) and let go of it; it stays on disk
        for `session/load` or `session/resume`. On a child's id (a client with
        `subagents`): that child alone."""
        if session_id in self._channel().parents:
            await self._close_child(session_id)
            return CloseSessionResponse()
        app = self._session(session_id)
        state = app.sessions.state(session_id)
        task = state.turn_task
        if state.busy:
            app.sessions.cancel(session_id)
        if task is not None and not task.done():
            # The cancelled turn ends (and its answer is sent) before the session goes.
            await asyncio.wait([task], timeout=10)
        await self._channel().flush()
        if not app.sessions.state(session_id).busy:
            app.sessions.forget(session_id)
        self.session_apps.pop(session_id, None)
        self._forget_roots(session_id)
        self._channel().forget(session_id)
        return CloseSessionResponse()

    async def _close_child(self, child_id: str) -> None:
        """A child shown as a session of its own, closed: its work stops as on
        `session/cancel` (its parent's turn goes on and gets its cancelled result), and
        the answer waits for the child's last `subagent_update`. The child stays in the
        store with its parent; the parent's own session is untouched."""
        channel = self._channel()
        app = self.session_apps.get(channel.root_of(child_id))
        if app is None:
            raise _error(SessionNotFound(child_id))
        async with core_errors():
            state = app.sessions.state(child_id)
            if state.busy:
                app.sessions.cancel(child_id)
        await channel.child_over(child_id, timeout=10)
        await channel.flush()
        channel.let_go(child_id)

    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Delete the session (and its children) from the store and from `session/list`; a
        session whose turn runs is refused as busy."""
        app = self._session(session_id)
        async with core_errors():
            SessionManager(app.sessions, app.plans).delete(session_id)
        self.session_apps.pop(session_id, None)
        self._forget_roots(session_id)
        self._channel().forget(session_id)
        return DeleteSessionResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Baton's `_baton/...` extension requests (the router strips the leading `_`)."""
        if f"_{method}" != COMPACT_METHOD:
            raise RequestError.method_not_found(f"_{method}")
        session_id = params.get("sessionId")
        instructions = params.get("instructions")
        if not isinstance(session_id, str) or not session_id:
            raise RequestError.invalid_params({"sessionId": "a session id"})
        if instructions is not None and (
            not isinstance(instructions, str) or len(instructions) > 20_000
        ):
            raise RequestError.invalid_params(
                {"instructions": "a string of at most 20,000 characters"}
            )
        app = self._session(session_id)
        async with core_errors():
            record = await app.compaction.compact(session_id, instructions=instructions or None)
        # Its compaction updates reach the editor before the answer.
        await self._channel().flush()
        return {
            "compactionId": record.compaction_id,
            "committed": record.committed,
            "tokensBefore": record.tokens_before,
            "tokensAfter": record.tokens_after,
            "notes": list(record.notes),
        }

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("ignored extension notification _%s", method)

    def _set_read_roots(self, app: App, sid: str, roots: tuple[Path, ...]) -> list[str]:
        """The session's additional directories: the complete list (ACP: omitted or empty
        is none). A directory is changed only when the person trusted it as they trust a
        workspace (`baton trust DIR`, the record every face reads); returns what to tell
        them of the others."""
        writable = tuple(root for root in roots if decide(root, None).trusted)
        self.read_roots[sid], self.write_roots[sid] = roots, writable
        self._apply_roots(app, sid)
        return [
            f"[Additional directory {root} is read-only for Baton: `baton trust {root}` "
            "in a terminal lets it change files there (each change asks first)]\n"
            for root in roots
            if root not in writable
        ]

    def _apply_roots(self, app: App, sid: str) -> None:
        state = app.sessions.state(sid)
        state.read_roots = self.read_roots.get(sid, ())
        state.write_roots = self.write_roots.get(sid, ())

    def _forget_roots(self, sid: str) -> None:
        self.read_roots.pop(sid, None)
        self.write_roots.pop(sid, None)

    def _after_reply(self, callback: Any) -> None:
        # Scheduled now, run once the handler has returned: the answer is queued for
        # writing before anything the callback sends.
        asyncio.get_running_loop().call_soon(callback)

    def _announce(self, sid: str) -> None:
        """What an editor shows beside the prompt box: commands, and the plan if any."""
        channel = self._channel()
        app = self.session_apps.get(sid)
        channel.update(
            sid,
            AvailableCommandsUpdate(
                session_update="available_commands_update",
                available_commands=commands.available_commands(
                    app.skills.commands() if app is not None else None
                ),
            ),
        )
        channel.send_plan(sid)
        if app is not None:
            # Later changes of the skills arrive as `skills` updates (the channel).
            app.skills.remember(sid)
            # What the VS Code extension shows as warnings: broken settings or plugins...
            for problem in app.config_problems():
                channel.update(sid, agent_text(f"[Baton configuration: {problem}]\n"))
            # ...and, once per session, what an untrusted workspace's settings lose.
            app.announce_trust(sid)

    def _modes(self, app: App, sid: str) -> SessionModeState:
        return SessionModeState(
            current_mode_id=app.sessions.state(sid).row.mode, available_modes=list(MODES)
        )

    async def _options_of(self, sid: str) -> list[Any]:
        app = self.session_apps.get(sid)
        return await self._options(app, sid) if app is not None else []

    async def _options(self, app: App, sid: str) -> list[Any]:
        """The model choice as a select config option (empty when no model is known)."""
        from baton.providers.models import ModelCatalog

        catalog = self._catalogs.setdefault(
            id(app), ModelCatalog(app.sessions.providers, app.credentials)
        )
        row = app.sessions.state(sid).row
        try:
            listed = await catalog.models(
                app.sessions.settings(),
                provider=None,
                pinned_provider=row.provider,
                pinned_model=row.model,
            )
        except Exception as exc:
            log.warning("could not list models: %s", exc)
            listed = None
        mode = SessionConfigOptionSelect(
            type="select",
            id="mode",
            name="Mode",
            category="mode",
            description="Plan: read and write the plan only; build: change files, run commands",
            current_value=row.mode,
            options=[SessionConfigSelectOption(value=m.id, name=m.name) for m in MODES],
        )
        ids = [m.id for m in listed.models] if listed is not None else []
        current = (
            row.model
            or (listed.current if listed is not None else None)
            or (ids[0] if ids else None)
        )
        if current is None:
            return [mode]
        if current not in ids:
            ids.insert(0, current)
        return [
            mode,
            SessionConfigOptionSelect(
                type="select",
                id="model",
                name="Model",
                category="model",
                description="The model this session uses",
                current_value=current,
                options=[SessionConfigSelectOption(value=i, name=i) for i in ids],
            ),
        ]

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        app = self._session(session_id)
        if mode_id not in ("build", "plan"):
            raise RequestError.invalid_params(
                {"modeId": f"unknown mode {mode_id!r}; Baton's modes are 'build' and 'plan'"}
            )
        async with core_errors():
            app.sessions.set_mode(p.SetModeParams(session_id=session_id, mode=mode_id))
        await self._channel().flush()
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        app = self._session(session_id)
        if config_id not in ("model", "mode"):
            raise RequestError.invalid_params(
                {"configId": f"unknown option {config_id!r}; Baton offers 'model' and 'mode'"}
            )
        if config_id == "mode":
            await self.set_session_mode(session_id, str(value))
        else:
            if not isinstance(value, str) or not value:
                raise RequestError.invalid_params({"value": "a model id"})
            async with core_errors():
                app.sessions.set_model(p.SetModelParams(session_id=session_id, model=value))
        return SetSessionConfigOptionResponse(config_options=await self._options(app, session_id))

    # ------------------------------------------------------------------ prompts

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        app = self._session(session_id)
        channel = self._channel()
        # Set again each turn: the core may have read the session afresh from the store.
        self._apply_roots(app, session_id)
        parts = prompt_parts(prompt, app.workspace, self.read_roots.get(session_id, ()))
        text, context, images = parts.text, parts.context, parts.images
        command = commands.parse(text) if not (context or images) else None
        channel.take_usage(session_id)
        title = app.sessions.state(session_id).row.title
        try:
            async with core_errors():
                state = app.sessions.state(session_id)
                if command is not None:
                    stop = await self._command(app, session_id, *command)
                elif state.busy and not context:
                    # ACP's prompt queueing: sent during a turn, it is the next turn.
                    result = await app.sessions.turns.queue.run_after(state, text)
                    stop = self._stop(result, app, session_id)
                else:
                    result = await app.sessions.prompt(
                        p.PromptParams(
                            session_id=session_id,
                            text=text,
                            context=context or None,
                            images=images or None,
                        )
                    )
                    stop = self._stop(result, app, session_id)
        finally:
            # A plan file deleted while the session lived is a removed plan.
            channel.check_plan(session_id)
            row = app.sessions.state(session_id).row
            if row.title != title:
                # The first prompt names the session.
                channel.update(
                    session_id,
                    SessionInfoUpdate(
                        session_update="session_info_update",
                        title=row.title,
                    ),
                )
            await channel.flush()
        usage = channel.take_usage(session_id)
        # The stable schema's prompt result has no `usage` (only the unstable one has):
        # the turn's tokens go in `_meta`, in the unstable shape's names.
        meta = (
            {
                "usage": {
                    "totalTokens": usage.input_tokens + usage.output_tokens,
                    "inputTokens": usage.input_tokens,
                    "outputTokens": usage.output_tokens,
                    "cachedReadTokens": usage.cached_tokens,
                }
            }
            if usage.input_tokens or usage.output_tokens
            else None
        )
        return PromptResponse(stop_reason=stop, field_meta=meta)

    def _needs_key(self, app: App, session_id: str) -> bool:
        settings = app.sessions.settings()
        provider = app.sessions.state(session_id).row.provider or settings.provider
        if provider == "anthropic":
            variable = settings.person_key_env_for("anthropic")
            return app.credentials.get("anthropic", variable) is None
        return provider == "openai" and not app.credentials.has_openai_key(settings.api_key_env)

    def _stop(self, result: p.PromptResult, app: App, session_id: str) -> Any:
        if result.stop_reason == "error":
            details: dict[str, Any] = {"details": result.error or "the turn failed"}
            if result.cause is not None:
                details["cause"] = result.cause
            if self._needs_key(app, session_id):
                # ACP's "authenticate first": the editor offers the auth method.
                raise RequestError.auth_required(details)
            if result.cause is not None:
                raise RequestError(-32603, headline(result.cause, result.error or ""), details)
            raise RequestError.internal_error(details)
        return STOP_REASONS[result.stop_reason]

    async def _command(self, app: App, sid: str, name: str, rest: str) -> Any:
        channel = self._channel()
        if name == "plan":
            app.sessions.set_mode(p.SetModeParams(session_id=sid, mode="plan"))
            if not rest:
                return "end_turn"
            result = await app.sessions.prompt(p.PromptParams(session_id=sid, text=rest))
            return self._stop(result, app, sid)
        if name == "approve":
            if rest not in ("", "fresh", "steps"):
                raise InvalidParams("/approve takes no argument, or `fresh`, or `steps`")
            if rest == "steps":
                await app.steps.approve(p.PlanApproveParams(session_id=sid, build="steps"))
            else:
                await app.plans.approve(
                    p.PlanApproveParams(session_id=sid, start=True, fresh=rest == "fresh")
                )
            return await self._started_turn(app, sid)
        if name == "changes":
            commands.request_changes(app, sid, rest)
            return await self._started_turn(app, sid)
        handler = {
            "compact": commands.compact,
            "undo": commands.undo,
            "context": commands.context,
            "review": commands.review,
        }[name]
        shown = await handler(app, sid, rest)
        if shown:
            channel.update(sid, agent_text(shown))
        return "end_turn"

    async def _started_turn(self, app: App, sid: str) -> Any:
        """The stop reason of the turn a plan method started (approval, feedback)."""
        task = app.sessions.state(sid).turn_task
        return self._stop(await asyncio.shield(task), app, sid) if task is not None else "end_turn"

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        # A child shown as a session of its own is cancelled alone (its parent goes on).
        app = self.session_apps.get(self._channel().root_of(session_id))
        if app is None:
            log.warning("session/cancel for an unknown session %s", session_id)
            return
        try:
            app.sessions.cancel(session_id)
        except BatonError as exc:
            log.warning("session/cancel: %s", exc.message)


def recorded_diffs(app: App, session_id: str, tool_call_id: str) -> list[FileEditToolCallContent]:
    """What a write or edit changed, from the review checkpoints (text files only)."""
    changes = app.review.changes(
        p.ChangesParams(session_id=session_id, tool_call_id=tool_call_id)
    ).changes
    return [
        FileEditToolCallContent(
            type="diff",
            path=str(app.workspace / change.path),
            old_text=change.before,
            new_text=change.after,
        )
        for change in changes
        if change.after is not None and change.omitted is None
    ]


def mcp_settings(server: Any) -> McpServerSettings:
    """An ACP `mcpServers` entry as a Baton server entry (names made safe for tool names);
    ValueError saying why for one Baton cannot connect to."""
    name = re.sub(r"[^A-Za-z0-9_-]", "-", server.name).strip("-") or "client"
    if isinstance(server, McpServerStdio):
        return McpServerSettings(
            name=name,
            command=[server.command, *server.args],
            env={e.name: e.value for e in server.env},
        )
    if isinstance(server, HttpMcpServer):
        if server.headers:
            raise ValueError(f"{server.name}: Baton's HTTP MCP client sends no headers")
        return McpServerSettings(name=name, url=server.url)
    raise ValueError(f"{server.name}: only stdio and http MCP servers are supported")
