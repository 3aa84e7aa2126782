"""The core's ClientChannel over ACP: `session/update` notifications and permission requests.

The core calls `send_update` synchronously from the agent loop; ACP sends are
coroutines. Every outgoing message goes through one ordered outbox, so an
editor sees updates in the order the core made them, and a request's answer
(`session/prompt`, `session/load`) is sent only after `flush()`: every update of
that turn or replay has been written first.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    FileEditToolCallContent,
    PermissionOption,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)
from acp.schema import (
    ToolCallUpdate as AcpToolCallUpdate,
)

from baton import protocol as p
from baton.agent.events import ProgressScope, no_progress
from baton.faces.acp import children, translate
from baton.faces.acp.commands import available_commands
from baton.labels import label

if TYPE_CHECKING:
    from acp.interfaces import Client

    from baton.app import App
    from baton.faces.acp.transport import LineTransport

log = logging.getLogger(__name__)

SessionUpdate = Any  # one of the SDK's session update models


@dataclass
class ClientOptIns:
    """What the client said it can take beyond the stable protocol (initialize)."""

    plan_file: bool = False  # `plan_update` / `plan_removed` (capability `plan`)
    # `compaction_update` / `compaction_summary_chunk` (capability `session.compaction`)
    compaction: bool = False
    # Children as sessions of their own: `subagent_update` announcing and ending each, the
    # child's updates under its own id, `session` content in its call (capability
    # `subagents`)
    subagents: bool = False


@dataclass
class TurnUsage:
    """The provider's reported tokens over one prompt, for `PromptResponse.usage`."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@dataclass
class _SessionView:
    """What the face remembers of a session between updates."""

    tool_names: dict[str, str] = field(default_factory=dict)
    diffs: dict[str, FileEditToolCallContent] = field(default_factory=dict)
    # The editor terminal a bash call ran in (kept shown when the call completes).
    terminals: dict[str, str] = field(default_factory=dict)
    compaction_ids: list[str] = field(default_factory=list)
    usage: TurnUsage = field(default_factory=TurnUsage)


class AcpChannel:
    """One per connection; `app_of` finds the App (workspace) a session belongs to."""

    def __init__(
        self,
        client: Client,
        transport: LineTransport,
        app_of: Callable[[str], App | None],
    ) -> None:
        self.client = client
        self.transport = transport
        self.app_of = app_of
        self.opt_ins = ClientOptIns()
        # The session's config options now (set by the agent; None: none are offered).
        self.options_of: Callable[[str], Awaitable[list[Any]]] | None = None
        self._queue: asyncio.Queue[Callable[[], Awaitable[None]]] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._views: dict[str, _SessionView] = {}
        # Each `task` child by its session id: shown in its parent's `task` call.
        self._children: dict[str, children.ChildView] = {}
        # A child session's parent (any depth), for children shown as sessions of their own.
        self.parents: dict[str, str] = {}
        self._compaction_seq = itertools.count(1)
        # The plan each session's client was shown as a `plan_update` (its planId), so a
        # plan whose file is gone can be removed there.
        self._plans_shown: dict[str, str] = {}

    # ------------------------------------------------------------------ outbox

    def _put(self, send: Callable[[], Awaitable[None]]) -> None:
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._drain(), name="acp-outbox")
        self._queue.put_nowait(send)

    async def _drain(self) -> None:
        while True:
            send = await self._queue.get()
            try:
                await send()
            except Exception:
                # A vanished client must not break the turn that is running.
                log.warning("could not send an update to the ACP client", exc_info=True)

    async def flush(self) -> None:
        """Wait until everything queued so far has been written (not what is queued later:
        another session streaming at the same time does not hold this one up)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def mark() -> None:
            if not done.done():
                done.set_result(None)

        self._put(mark)
        await done

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker

    def update(self, session_id: str, update: SessionUpdate) -> None:
        """Queue one ACP session update."""
        self._put(lambda: self.client.session_update(session_id=session_id, update=update))

    def raw_update(self, session_id: str, update: dict[str, Any]) -> None:
        """Queue an update of a draft the SDK has no model for yet (`compaction_update`)."""
        payload = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
        self._put(lambda: self.transport.send(payload))

    def root_of(self, session_id: str) -> str:
        """The editor's own session a (child) session belongs to."""
        seen = 0
        while session_id in self.parents and seen < 64:
            session_id, seen = self.parents[session_id], seen + 1
        return session_id

    def _app_of(self, session_id: str) -> App | None:
        return self.app_of(self.root_of(session_id))

    def forget(self, session_id: str) -> None:
        """A closed or deleted session's view goes (its children's links with it)."""
        self._views.pop(session_id, None)
        self._plans_shown.pop(session_id, None)
        for child, parent in list(self.parents.items()):
            if parent == session_id:
                self.parents.pop(child, None)
                self._children.pop(child, None)

    async def child_over(self, child_id: str, *, timeout: float) -> None:
        """Wait until a child shown as a session has had its last `subagent_update`
        queued (at most `timeout` seconds: a child that does not stop is left to its
        parent)."""
        view = self._children.get(child_id)
        if view is None or view.ended:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(view.over.wait(), timeout)

    def let_go(self, child_id: str) -> None:
        """A closed child: nothing more of it reaches the client under its id."""
        self.parents.pop(child_id, None)
        self._views.pop(child_id, None)

    def view(self, session_id: str) -> _SessionView:
        return self._views.setdefault(session_id, _SessionView())

    def take_usage(self, session_id: str) -> TurnUsage:
        view = self.view(session_id)
        usage, view.usage = view.usage, TurnUsage()
        return usage

    # ------------------------------------------------------------------ ClientChannel

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        try:
            if parent_id is not None:
                if self.opt_ins.subagents:
                    # The child's updates as its own session's, once it was announced.
                    if session_id in self.parents:
                        self._translate(session_id, update)
                    return
                # A `task` child's own progress: shown in its parent's `task` call.
                self._child_progress(session_id, update)
                return
            self._translate(session_id, update)
        except Exception:
            log.warning("could not translate %r for the ACP client", update, exc_info=True)

    def _translate(self, sid: str, update: p.WireModel) -> None:
        if isinstance(update, p.AgentMessageChunk):
            self.update(sid, agent_text(update.text))
        elif isinstance(update, p.AgentThoughtChunk):
            self.update(
                sid,
                AgentThoughtChunk(
                    session_update="agent_thought_chunk",
                    content=TextContentBlock(type="text", text=update.text),
                ),
            )
        elif isinstance(update, p.ToolCallStarted):
            self._tool_started(sid, update)
        elif isinstance(update, p.ToolCallUpdate):
            self._tool_progress(sid, update)
        elif isinstance(update, p.ChildUpdate):
            self._child_changed(sid, update)
        elif isinstance(update, p.ModeUpdate):
            self.update(
                sid,
                CurrentModeUpdate(
                    session_update="current_mode_update", current_mode_id=update.mode
                ),
            )
            # Clients that show the mode as a config option follow it there too.
            self._put(lambda: self._send_options(sid))
        elif isinstance(update, p.UsageUpdate):
            usage = self.view(sid).usage
            usage.input_tokens += update.input_tokens or 0
            usage.output_tokens += update.output_tokens or 0
            usage.cached_tokens += update.cached_tokens or 0
            self.update(
                sid,
                UsageUpdate(
                    session_update="usage_update", used=update.tokens, size=update.context_window
                ),
            )
        elif isinstance(update, p.UserMessageUpdate):
            if update.command is not None:
                return  # the person's own prompt: the ACP client already shows it as typed
            self.update(
                sid,
                UserMessageChunk(
                    session_update="user_message_chunk",
                    content=TextContentBlock(type="text", text=update.text),
                    message_id=update.message_id,
                ),
            )
        elif isinstance(update, p.CompactionStarted):
            self._compaction_started(sid, update)
        elif isinstance(update, p.CompactionFinished):
            self._compaction_finished(sid, update.compaction)
        elif isinstance(update, p.CompactionFailed):
            self._compaction_failed(sid, update.error)
        elif isinstance(update, p.WorkspaceTrustUpdate):
            self.update(
                sid,
                agent_text(
                    f"[{update.message}]\n",
                    workspaceTrusted=update.trusted,
                    ignored=update.ignored,
                ),
            )
        elif isinstance(update, p.SkillsUpdate):
            self.update(
                sid,
                AvailableCommandsUpdate(
                    session_update="available_commands_update",
                    available_commands=available_commands(update.commands),
                ),
            )
            for problem in update.problems:
                self.update(sid, agent_text(f"[Baton skills: {problem}]\n"))
        elif isinstance(update, p.McpServerUpdate) and update.status == "failed":
            # ACP has no MCP server status: a server that cannot run is said plainly.
            self.update(
                sid,
                agent_text(
                    f"\n[MCP server {update.server} failed: {update.error or 'unknown error'}]\n",
                    mcpServer=update.server,
                ),
            )
        # TurnEnded is the prompt's own answer here.

    def _tool_started(self, sid: str, update: p.ToolCallStarted) -> None:
        # Queued as one step: the diff may need the editor's buffer (an async read), and
        # must be known before a permission request for the same call is sent.
        self._put(lambda: self._send_tool_started(sid, update))

    async def _send_tool_started(self, sid: str, update: p.ToolCallStarted) -> None:
        view = self.view(sid)
        view.tool_names[update.tool_call_id] = update.name
        app = self._app_of(sid)
        content: list[Any] = []
        locations = []
        if app is not None:
            workspace = app.workspace
            locations = translate.locations(workspace, update.name, update.input)
            editor_text = await self._editor_text(app, sid, update)
            diff = translate.file_diff(
                workspace, update.name, update.input, editor_text=editor_text
            )
            if diff is not None:
                view.diffs[update.tool_call_id] = diff
                content.append(diff)
        await self.client.session_update(
            session_id=sid,
            update=ToolCallStart(
                session_update="tool_call",
                tool_call_id=update.tool_call_id,
                title=translate.tool_title(update.name, update.input),
                kind=translate.tool_kind(update.name),
                status="pending",
                content=content or None,
                locations=locations or None,
                raw_input=update.input,
            ),
        )

    async def _editor_text(self, app: App, sid: str, update: p.ToolCallStarted) -> str | None:
        files = app.sessions.seams.tool_services.files
        target = translate.change_target(app.workspace, update.name, update.input)
        if files is None or target is None or not target.is_file():
            return None
        try:
            text: str | None = await files.read_text(sid, target)
        except Exception:
            return None  # the tool reports the failure when it runs
        return text

    def _tool_progress(self, sid: str, update: p.ToolCallUpdate) -> None:
        view = self.view(sid)
        content: list[Any] | None = None
        if update.status != "in_progress":
            diff = view.diffs.pop(update.tool_call_id, None)
            view.tool_names.pop(update.tool_call_id, None)
            content = [diff] if diff is not None and update.status == "completed" else []
            terminal = view.terminals.pop(update.tool_call_id, None)
            if terminal is not None:
                content.append(TerminalToolCallContent(type="terminal", terminal_id=terminal))
            if update.output:
                content.append(translate.text_content(update.output))
        elif update.output is not None:
            # A running command's output so far (Baton's own shell): shown live.
            content = [translate.text_content(update.output)]
        self.update(
            sid,
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=update.tool_call_id,
                status=update.status,
                content=content,
                raw_output=update.output if update.status != "in_progress" else None,
            ),
        )

    # ------------------------------------------------------------------ children

    def _child_changed(self, sid: str, update: p.ChildUpdate) -> None:
        view = self._children.get(update.child_id)
        if view is None or view.update.call_id != update.call_id:
            # A child's first call, or a later `task` call that resumes it: a run of its
            # own in that call, announced again (running) to a client that shows children
            # as sessions, also after the client closed it.
            view = self._children[update.child_id] = children.ChildView(sid, update)
            if self.opt_ins.subagents:
                # Announced on its parent before any update of its own.
                self.parents[update.child_id] = sid
                self.raw_update(sid, children.announced(update))
        view.update = update
        self._put(lambda: self._send_child(view))
        if self.opt_ins.subagents and update.status != "running" and not view.ended:
            # After the child's own updates (the outbox keeps their order).
            view.ended = True
            self.raw_update(sid, children.ended(update))
            view.over.set()

    def _child_progress(self, child_id: str, update: p.WireModel) -> None:
        view = self._children.get(child_id)
        if view is None:
            return  # not a child of a session this editor shows
        if isinstance(update, p.ToolCallStarted):
            view.tool_started(update)
        elif isinstance(update, p.ToolCallUpdate) and update.status != "in_progress":
            view.tool_ended(update)
        else:
            return
        self._put(lambda: self._send_child(view))

    async def _send_child(self, view: children.ChildView) -> None:
        """The child's text as its `task` call's content (queued after the call itself,
        so the call is known by then); a step Baton started gets a call of its own."""
        sid, update = view.parent_id, view.update
        if not view.announced:
            view.announced = True
            view.own_call = update.call_id not in self.view(sid).tool_names
            if view.own_call:
                await self.client.session_update(
                    session_id=sid,
                    update=ToolCallStart(
                        session_update="tool_call",
                        tool_call_id=update.call_id,
                        title=children.title(update),
                        kind="other",
                        status="in_progress",
                        raw_input={"agent": update.agent, "description": update.description},
                        field_meta=children.meta(view),
                    ),
                )
        status: Any = None
        if view.own_call:
            status = {"running": "in_progress", "done": "completed"}.get(update.status, "failed")
        progress = ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=update.call_id,
            status=status,
            content=[translate.text_content(children.text(view))],
            field_meta=children.meta(view),
        )
        if not (self.opt_ins.subagents and update.child_id in self.parents):
            await self.client.session_update(session_id=sid, update=progress)
            return
        # The call links to the child's session (`session` content, which the SDK has no
        # model for): sent as raw JSON, after the text that says the same to any client.
        raw = progress.model_dump(mode="json", by_alias=True, exclude_none=True)
        raw["content"].append(children.session_content(update.child_id))
        await self.transport.send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": sid, "update": raw},
            }
        )

    async def _send_options(self, sid: str) -> None:
        if self.options_of is None:
            return
        options = await self.options_of(sid)
        if options:
            await self.client.session_update(
                session_id=sid,
                update=ConfigOptionUpdate(
                    session_update="config_option_update", config_options=options
                ),
            )

    # ------------------------------------------------------------------ compaction

    def _compaction_started(self, sid: str, update: p.CompactionStarted) -> None:
        view = self.view(sid)
        view.compaction_ids.append(f"compaction-{next(self._compaction_seq)}")
        if self.opt_ins.compaction:
            self.raw_update(
                sid,
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": view.compaction_ids[-1],
                    "status": "in_progress",
                    "_meta": {"baton": {"trigger": update.trigger, "strategy": update.strategy}},
                },
            )
        else:
            self.update(sid, agent_text(f"\n[compacting the conversation ({update.trigger})…]\n"))

    def _compaction_id(self, sid: str) -> str:
        ids = self.view(sid).compaction_ids
        return ids.pop() if ids else f"compaction-{next(self._compaction_seq)}"

    def _compaction_finished(self, sid: str, record: p.CompactionRecord) -> None:
        if self.opt_ins.compaction:
            compaction_id = self._compaction_id(sid)
            if record.summary:
                # The summary streamed into the running compaction, then the terminal
                # update that carries it whole (a client may show either).
                self.raw_update(
                    sid,
                    {
                        "sessionUpdate": "compaction_summary_chunk",
                        "compactionId": compaction_id,
                        "content": {"type": "text", "text": record.summary},
                    },
                )
            self.raw_update(sid, compaction_update(compaction_id, record))
            return
        self._compaction_id(sid)
        self.update(sid, agent_text(compaction_announcement(record)))

    def _compaction_failed(self, sid: str, error: str) -> None:
        if self.opt_ins.compaction:
            self.raw_update(
                sid,
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": self._compaction_id(sid),
                    "status": "failed",
                    "error": error,
                },
            )
            return
        self._compaction_id(sid)
        self.update(sid, agent_text(f"\n[compaction failed: {error}]\n"))

    # ------------------------------------------------------------------ plans

    def notify(self, method: str, params: p.WireModel) -> None:
        if method in ("baton/plan/didChange", "baton/plan/show"):
            sid = params.wire().get("sessionId")
            if isinstance(sid, str):
                self.send_plan(sid)

    def send_plan(self, sid: str) -> None:
        """The plan's checklist as a `plan` update, and, where the client opted in
        (`plan`), the whole Markdown plan with its file's absolute path as a `plan_update`
        (or `plan_removed` once its file is gone)."""
        app = self._app_of(sid)
        if app is None:
            return
        try:
            plan = app.plans.get(sid)
        except Exception:
            log.warning("could not read the plan of %s", sid, exc_info=True)
            return
        if plan is None:
            return
        self.update(
            sid,
            AgentPlanUpdate(session_update="plan", entries=translate.plan_entries(plan.content)),
        )
        if not self.opt_ins.plan_file:
            return
        path = (app.workspace / plan.path).resolve()
        if not path.is_file():
            self._plan_removed(sid)
            return
        self._plans_shown[sid] = plan.path
        self.raw_update(sid, plan_markdown(plan, path))

    def check_plan(self, sid: str) -> None:
        """After a turn: a plan file the person deleted is a removed plan for a client
        that was shown it (`plan_removed`); written again, it comes back as an update."""
        if sid not in self._plans_shown:
            return
        app = self._app_of(sid)
        if app is None or not (app.workspace / self._plans_shown[sid]).is_file():
            self._plan_removed(sid)

    def _plan_removed(self, sid: str) -> None:
        plan_id = self._plans_shown.pop(sid, None)
        if plan_id is not None:
            self.raw_update(sid, {"sessionUpdate": "plan_removed", "planId": plan_id})

    # ------------------------------------------------------------------ permissions

    async def request_permission(
        self, params: p.PermissionRequestParams
    ) -> p.PermissionResponse | None:
        sid = params.session_id
        call = params.tool_call
        # The tool call the editor asks about must be on screen before the question.
        await self.flush()
        diff = self.view(sid).diffs.get(call.tool_call_id)
        title = translate.tool_title(call.name, call.input)
        meta: dict[str, Any] | None = None
        if params.parent_id is not None:
            # A child asks: the title says which child. An editor that shows children as
            # sessions is asked on the child's own session (its tool call is there);
            # otherwise on the parent's, with the diff made here (the child's calls are not
            # shown there).
            child = self._children.get(sid)
            agent = params.agent or (child.update.agent if child else "child")
            about = f" ({child.update.description})" if child else ""
            title = label(f"{agent} child{about}: {title}")
            meta = {"baton": {"childSessionId": sid, "agent": agent}}
            if not (self.opt_ins.subagents and sid in self.parents):
                app = self._app_of(params.parent_id)
                if app is not None:
                    diff = translate.file_diff(app.workspace, call.name, call.input)
                sid = params.parent_id
        tool_call = AcpToolCallUpdate(
            tool_call_id=call.tool_call_id,
            title=title,
            kind=translate.tool_kind(call.name),
            status="pending",
            raw_input=call.input,
            # What is approved is shown in full: the diff, or the whole command.
            content=_asked_content(diff, translate.command_content(call.name, call.input)),
            field_meta=meta,
        )
        options = [
            PermissionOption(option_id=o.option_id, name=o.name or o.option_id, kind=o.kind)
            for o in params.options
        ]
        try:
            answer = await self.client.request_permission(
                session_id=sid, tool_call=tool_call, options=options
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("permission request failed, treated as rejected: %s", exc)
            return None
        if isinstance(answer.outcome, AllowedOutcome):
            return p.PermissionResponse(
                outcome=p.SelectedOutcome(option_id=answer.outcome.option_id)
            )
        return p.PermissionResponse(outcome="cancelled")

    def progress(self, title: str) -> ProgressScope:
        # Compaction progress is told through compaction updates; ACP has no progress bar.
        return no_progress()


def agent_text(text: str, **meta: Any) -> AgentMessageChunk:
    return AgentMessageChunk(
        session_update="agent_message_chunk",
        content=TextContentBlock(type="text", text=text),
        field_meta={"baton": meta} if meta else None,
    )


def plan_markdown(plan: p.PlanInfo, path: Path) -> dict[str, Any]:
    """The stable `plan_update` of a Baton plan: the whole Markdown plan, its id the
    workspace-relative path, `path` the file's absolute path (the SDK's model has no
    `path` yet, so it is sent as raw JSON)."""
    return {
        "sessionUpdate": "plan_update",
        "plan": {
            "type": "markdown",
            "planId": plan.path,
            "content": plan.content,
            "path": str(path),
        },
        "_meta": {"baton": {"status": plan.status, "version": plan.version}},
    }


def compaction_update(compaction_id: str, record: p.CompactionRecord) -> dict[str, Any]:
    """The `compaction_update` of a finished compaction (the schema's shape: the summary as
    content blocks), Baton's record in `_meta.baton`."""
    baton: dict[str, Any] = {
        "compactionId": record.compaction_id,
        "trigger": record.trigger,
        "strategy": record.strategy,
        "tokensBefore": record.tokens_before,
        "tokensAfter": record.tokens_after,
    }
    if record.score is not None:
        # What stayed in view of the facts Baton tracks, beside the record id.
        baton["score"] = record.score.wire()
    update: dict[str, Any] = {
        "sessionUpdate": "compaction_update",
        "compactionId": compaction_id,
        "status": "completed",
        "_meta": {"baton": baton},
    }
    if record.summary:
        update["summary"] = [{"type": "text", "text": record.summary}]
    return update


def compaction_announcement(record: p.CompactionRecord) -> str:
    """A compaction told as an agent message, for clients without the draft capability."""
    return (
        f"\n[conversation compacted ({record.trigger}, {record.strategy}): "
        f"{record.tokens_before} → {record.tokens_after} tokens; "
        "earlier messages stay in the history]\n"
    )


def _asked_content(*parts: Any) -> list[Any] | None:
    """A permission request's content: its diff and its whole command, those it has."""
    shown = [part for part in parts if part is not None]
    return shown or None
