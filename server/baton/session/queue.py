"""Messages the person sends while the agent works: queued, then delivered.

A message sent while a turn runs waits here (`baton/session/queue`), shown to every
client as a `queue` update. It reaches the model as the person chose: `steer` at the
running turn's next step boundary (a user message between one step's tool results
and the next model request, so the model reads it before it goes on), `after_turn`
as the next turn, started when this one ends. A turn that was stopped or failed
leaves the queue as it is: nothing the person said is lost or sent unasked; the next
turn delivers it by the same rules. A message sent to an idle session starts its
turn at once.

It is connected to the session's owner (`session/activity.py`) and the turn at
three points: a step boundary (`Turns.before_step` calls `steer`); the end of a turn
(`Turns._ended` tells `turn_ended` how it ended, and the owner, when the session is
idle again, asks `next_work` for what runs next, in the same callback, so nothing can
start in between); a cancel (`Turns.cancel` calls `cancelled`). An ACP editor's
prompt sent during a turn waits here as the next turn (`run_after`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from baton import protocol as p
from baton.agent.events import ClientChannel
from baton.agent.state import SessionState
from baton.errors import InvalidParams
from baton.ids import new_id
from baton.session.work import Work
from baton.store.model import MessageKind, StoredMessage

log = logging.getLogger(__name__)

# The message's meta says it was queued and how it was delivered.
QUEUED_META = "queued"
# At most this many messages wait per session: a client that loops cannot grow it unbounded.
MAX_QUEUED = 50


@dataclass(frozen=True)
class Queued:
    id: str
    text: str
    delivery: p.QueueDelivery
    # An ACP editor's prompt sent during a turn waits for the result of the turn that
    # carries it (`run_after`).
    waiter: asyncio.Future[p.PromptResult] | None = field(default=None, compare=False)

    def wire(self) -> p.QueuedPrompt:
        return p.QueuedPrompt(id=self.id, text=self.text, delivery=self.delivery)


class TurnStarter(Protocol):
    """What the queue needs of `session/turns.py`'s `Turns`."""

    def start(
        self, state: SessionState, text: str, *, meta: dict[str, Any] | None = None
    ) -> asyncio.Task[p.PromptResult]: ...

    def turn_work(
        self, state: SessionState, text: str, *, meta: dict[str, Any] | None = None
    ) -> Work: ...

    async def until_done(self, task: asyncio.Task[p.PromptResult]) -> p.PromptResult: ...

    def add_user_message(
        self,
        state: SessionState,
        text: str,
        kind: MessageKind,
        meta: dict[str, Any] | None = None,
        *,
        announce: bool = False,
    ) -> StoredMessage: ...


class PromptQueue:
    """Per session, what the person said while the agent worked, oldest first."""

    def __init__(self, turns: TurnStarter, channel: ClientChannel) -> None:
        self.turns = turns
        self.channel = channel
        self._waiting: dict[str, list[Queued]] = {}
        # Sessions whose last turn ended well: what waits there is the next work.
        self._ready: set[str] = set()

    def waiting(self, session_id: str) -> list[Queued]:
        return list(self._waiting.get(session_id, ()))

    def add(self, state: SessionState, text: str, delivery: p.QueueDelivery) -> p.QueueResult:
        """Queue `text`, or start the turn with it when the session is idle."""
        if not text.strip():
            raise InvalidParams("params.text: must not be empty")
        if not state.busy and not state.compacting:
            self.turns.start(state, text, meta={QUEUED_META: "idle"})
            return p.QueueResult(queued=self._wire(state.id), started=True)
        waiting = self._waiting.setdefault(state.id, [])
        if len(waiting) >= MAX_QUEUED:
            raise InvalidParams(f"{MAX_QUEUED} messages already wait; take one back first")
        waiting.append(Queued(new_id("queued"), text, delivery))
        self._changed(state.id)
        return p.QueueResult(queued=self._wire(state.id))

    async def run_after(self, state: SessionState, text: str) -> p.PromptResult:
        """ACP's prompt queueing: a prompt sent while a turn runs is the next turn; its
        result is that turn's. Idle, it runs at once."""
        if not state.busy and not state.compacting:
            return await self.turns.until_done(self.turns.start(state, text))
        waiting = self._waiting.setdefault(state.id, [])
        if len(waiting) >= MAX_QUEUED:
            raise InvalidParams(f"{MAX_QUEUED} messages already wait; take one back first")
        waiter: asyncio.Future[p.PromptResult] = asyncio.get_running_loop().create_future()
        queued = Queued(new_id("queued"), text, "after_turn", waiter)
        waiting.append(queued)
        self._changed(state.id)
        try:
            return await asyncio.shield(waiter)
        except asyncio.CancelledError:  # the editor gave up on it: it never reaches the model
            if queued in self._waiting.get(state.id, []):
                self._waiting[state.id].remove(queued)
                self._changed(state.id)
            raise

    def cancelled(self, state: SessionState) -> None:
        """The turn was stopped: the person's queue stays; an editor's waiting prompts end
        `cancelled` with it (their requests are answered, nothing of theirs runs)."""
        waiting = self._waiting.get(state.id, [])
        answered = [q for q in waiting if q.waiter is not None]
        if not answered:
            return
        for queued in answered:
            if queued.waiter is not None and not queued.waiter.done():
                queued.waiter.set_result(p.PromptResult(stop_reason="cancelled"))
        self._waiting[state.id] = [q for q in waiting if q.waiter is None]
        self._changed(state.id)

    def remove(self, state: SessionState, queued_id: str) -> p.QueueResult:
        waiting = self._waiting.get(state.id, [])
        kept = [q for q in waiting if q.id != queued_id]
        if len(kept) == len(waiting):
            raise InvalidParams(f"params.id: no queued message {queued_id!r} (delivered already?)")
        self._waiting[state.id] = kept
        self._changed(state.id)
        return p.QueueResult(queued=self._wire(state.id))

    def steer(self, state: SessionState) -> None:
        """At a step boundary of a running turn: the `steer` messages join the history."""
        waiting = self._waiting.get(state.id, [])
        steering = [q for q in waiting if q.delivery == "steer"]
        if not steering:
            return
        self._waiting[state.id] = [q for q in waiting if q.delivery != "steer"]
        for queued in steering:
            self.turns.add_user_message(
                state, queued.text, "prompt", {QUEUED_META: "steer"}, announce=True
            )
        self._changed(state.id)

    def turn_ended(self, state: SessionState, task: asyncio.Task[Any]) -> None:
        """After a turn: what still waits becomes the next turn, unless the turn was stopped
        or failed (then it waits for the person's next turn)."""
        if self._waiting.get(state.id) and _ended_well(task):
            self._ready.add(state.id)
        else:
            self._ready.discard(state.id)

    def next_work(self, state: SessionState) -> Work | None:
        """The owner's question once the session is idle again: the waiting messages as
        one turn, when the last turn ended well (a compaction asked meanwhile goes first)."""
        waiting = self._waiting.get(state.id, [])
        if state.id not in self._ready or not waiting:
            self._ready.discard(state.id)
            return None
        text = "\n\n".join(q.text for q in waiting)
        work = self.turns.turn_work(state, text, meta={QUEUED_META: "after_turn"})
        prepare, ended = work.prepare, work.ended

        def taken() -> None:
            if prepare is not None:
                prepare()
            # Admitted: they are delivered (what the person queues from now on waits anew).
            self._waiting[state.id] = [
                q for q in self._waiting.get(state.id, []) if q not in waiting
            ]
            self._ready.discard(state.id)
            self._changed(state.id)

        def answered(task: asyncio.Task[Any]) -> None:
            if ended is not None:
                ended(task)
            for queued in waiting:
                _answer_with(task, queued.waiter)

        return dataclasses.replace(work, prepare=taken, ended=answered)

    def _wire(self, session_id: str) -> list[p.QueuedPrompt]:
        return [q.wire() for q in self._waiting.get(session_id, ())]

    def _changed(self, session_id: str) -> None:
        self.channel.send_update(session_id, p.QueueUpdate(queued=self._wire(session_id)))


def _answer_with(task: asyncio.Task[Any], waiter: asyncio.Future[Any] | None) -> None:
    """`waiter` gets the result of the turn `task` ran, now ended (a failed turn's error, too)."""
    if waiter is None or waiter.done():
        return
    if task.cancelled():
        waiter.set_result(p.PromptResult(stop_reason="cancelled"))
    elif (exc := task.exception()) is not None:
        waiter.set_exception(exc)
    else:
        waiter.set_result(task.result())


def _ended_well(task: asyncio.Task[Any]) -> bool:
    if task.cancelled() or task.exception() is not None:
        return False
    result = task.result()
    return isinstance(result, p.PromptResult) and result.stop_reason in (
        "end_turn",
        "max_steps",
        "refusal",
    )
