"""Starting a session's turn and ending it: the lease, the title, the user message, the task.

A turn is admitted as work by the session's owner (`activity.py`): the lease is
taken first (SessionBusy if another process works on it), then what another
process committed is loaded, so the request is built on the whole history and
no turn interleaves with another's in the store; the user message is committed
under it. When the turn task ends, however it ends, the owner runs the
after-work seams and what follows, then releases the lease.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from baton import protocol as p
from baton.agent.events import ClientChannel
from baton.agent.state import SessionState
from baton.agent.turn import Turn, TurnHost
from baton.errors import InvalidParams, ProviderError, SessionBusy
from baton.ids import new_id
from baton.providers.base import StepChoice, ToolCall
from baton.session.activity import SessionActivity
from baton.session.queue import PromptQueue
from baton.session.seams import Seams
from baton.session.work import Work
from baton.store.leases import Leases
from baton.store.model import (
    DEFAULT_TITLE,
    MessageKind,
    StoredMessage,
    StoredPart,
    StoredText,
    title_from_prompt,
)
from baton.store.sessions import SessionStore

log = logging.getLogger(__name__)


class Turns:
    def __init__(
        self,
        host: TurnHost,
        store: SessionStore,
        channel: ClientChannel,
        leases: Leases,
        seams: Seams,
        activity: SessionActivity,
        *,
        refresh: Callable[[SessionState], SessionState],
        sync_notes: Callable[[SessionState], None],
    ) -> None:
        self.host = host
        self.store = store
        self.channel = channel
        self.leases = leases
        self.seams = seams
        self.activity = activity
        self.refresh = refresh
        self.sync_notes = sync_notes
        # What the person sends while the agent works (session/queue.py).
        self.queue = PromptQueue(self, channel)

    def add_user_message(
        self,
        state: SessionState,
        text: str,
        kind: MessageKind,
        meta: dict[str, Any] | None = None,
        *,
        extra_parts: Sequence[StoredPart] = (),
        announce: bool = False,
    ) -> StoredMessage:
        parts: list[StoredPart] = [StoredText(text), *extra_parts]
        message = self.store.append_message(state.id, "user", kind, parts, meta=meta)
        state.add(message)
        command = message.command()
        # A client shows the person's own prompt as they sent it; a slash command it is
        # told of, so that what the agent was sent is one click away while it runs. A
        # queued message (`announce`) was not sent as a prompt: every client is told.
        queued = (meta or {}).get("queued")
        if kind != "prompt" or command is not None or announce or queued:
            self.channel.send_update(
                state.id,
                p.UserMessageUpdate(
                    message_id=message.id,
                    text=text,
                    origin=message.origin(),
                    command=command,
                    queued=queued if queued in ("steer", "after_turn", "idle") else None,
                ),
            )
        return message

    def start(
        self,
        state: SessionState,
        text: str,
        kind: MessageKind = "prompt",
        *,
        extra_parts: Sequence[StoredPart] = (),
        max_steps: int | None = None,
        require_tools: Sequence[StepChoice] = (),
        meta: dict[str, Any] | None = None,
        first_call: ToolCall | None = None,
    ) -> asyncio.Task[p.PromptResult]:
        """Commit the user message and start the turn; the returned task ends with it.
        `meta` rides on the message (a slash command as typed, a child's task call)."""
        work = self.turn_work(
            state,
            text,
            kind,
            extra_parts=extra_parts,
            max_steps=max_steps,
            require_tools=require_tools,
            meta=meta,
            first_call=first_call,
        )
        return self.activity.admit(state, work)

    def turn_work(
        self,
        state: SessionState,
        text: str,
        kind: MessageKind = "prompt",
        *,
        extra_parts: Sequence[StoredPart] = (),
        max_steps: int | None = None,
        require_tools: Sequence[StepChoice] = (),
        meta: dict[str, Any] | None = None,
        first_call: ToolCall | None = None,
    ) -> Work:
        """A turn as work for the session's owner to admit (`start` admits it at once; the
        prompt queue offers one as the work after the current one)."""
        if not text.strip():
            raise InvalidParams("params.text: must not be empty")

        def prepare() -> None:
            if kind == "prompt" and state.row.title == DEFAULT_TITLE:
                # A slash command's title is what the person typed, not its expansion.
                typed = ((meta or {}).get("command") or {}).get("typed")
                title = title_from_prompt(typed if isinstance(typed, str) else text)
                self.store.update_session(state.id, title=title)
                state.row.title = title
            self.sync_notes(state)
            self.add_user_message(state, text, kind, meta, extra_parts=extra_parts)
            # A command's own `model:` holds for its turn only.
            model = ((meta or {}).get("command") or {}).get("model")
            state.turn_model = model if isinstance(model, str) else None

        def run() -> Awaitable[p.PromptResult]:
            turn = Turn(
                self.host,
                state,
                max_steps=max_steps,
                require_tools=require_tools,
                first_call=first_call,
            )
            return turn.run()

        return Work("turn", "turn", run, prepare=prepare, ended=lambda t: self._ended(t, state))

    def _ended(self, task: asyncio.Task[Any], state: SessionState) -> None:
        _log_task_failure(task, state.id)
        state.turn_model = None
        # The queue learns how the turn ended: what waits becomes the next turn only after
        # one that ended well (offered to the owner as the next work, `queue.next_work`).
        self.queue.turn_ended(state, task)

    async def command(
        self, text: str, command: p.PromptCommand | None
    ) -> tuple[str, dict[str, Any] | None, ToolCall | None]:
        """(message text, its meta, a call Baton makes first) for a prompt. `/name
        arguments` of a skill or command file: the model is sent its expansion, the
        message keeps what the person typed; one with `agent:` runs as a `task` child
        of that agent (the person's message is what they typed, the child's prompt the
        expansion)."""
        expanded = await self.seams.commands.expand(text, command)
        if command is not None and expanded is None:
            raise InvalidParams(f"params.command.name: no skill or command {command.name!r}")
        if expanded is None:
            return text, None, None
        first_call = agent_call(expanded.meta, expanded.text)
        if first_call is not None:
            return expanded.meta["command"]["typed"], expanded.meta, first_call
        return expanded.text, expanded.meta, None

    async def until_done(self, task: asyncio.Task[p.PromptResult]) -> p.PromptResult:
        """The turn's result; a cancelled request ($/cancelRequest) stops the turn too."""
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise

    def cancel(self, state: SessionState) -> None:
        # The turn or step build; a compaction goes on (its pre-compact round stops
        # through the `on_cancel` seam).
        task = state.turn_task
        if task is not None and not task.done():
            task.cancel()
        # The person's queue stays; an editor's prompts waiting on it end with the turn.
        self.queue.cancelled(state)
        for callback in self.seams.on_cancel:
            callback(state)

    async def before_step(self, turn: Turn) -> None:
        if turn.state.id in self.leases.held and not self.leases.holds(turn.state.id):
            # Taken over after it expired (this process stalled longer than its TTL).
            raise SessionBusy(
                turn.state.id,
                f"this process's lease on {turn.state.id!r} expired and another Baton "
                "process took the session over; the turn stops here",
            )
        for prepare in self.seams.before_step:
            await prepare(turn)
        await self.seams.turn.before_step(turn)
        # After a compaction the hooks may have run: its notes go after its marker.
        self.sync_notes(turn.state)
        # A step boundary: what the person sent to steer joins the history
        # before this step's request, after the last step's tool results.
        if turn.purpose == "turn":
            self.queue.steer(turn.state)


def _log_task_failure(task: asyncio.Task[Any], session_id: str) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None and not isinstance(exc, ProviderError):
        log.error("turn task of session %s ended with %r", session_id, exc)


def agent_call(meta: dict[str, Any] | None, prompt: str) -> ToolCall | None:
    """The `task` call a slash command with frontmatter `agent:` makes, or None."""
    command = (meta or {}).get("command") or {}
    agent = command.get("agent")
    if not isinstance(agent, str) or not agent:
        return None
    arguments = {"agent": agent, "description": f"/{command.get('name', agent)}", "prompt": prompt}
    return ToolCall(new_id("call"), "task", json.dumps(arguments, ensure_ascii=False))
