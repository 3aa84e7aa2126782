"""The one owner of what runs on a session in this process: its activity.

Every kind of work that yields while it runs on a session is admitted through
`SessionActivity.admit`: a turn (a prompt, a plan approval's build turn, the
revision turn of `requestChanges`, a `task` child's turn, all by
`Turns.start`), a step-by-step build (`delegation/steps.py`), a compaction and a
fresh-context approval (`compaction/service.py`). Admission, in one synchronous
stretch with no `await` in it:

1. refuses (SessionBusy) while anything else runs on the session here;
2. takes the session's lease (SessionBusy if another process holds it), reloads
   what another process committed, and runs the work's `prepare` under it (a
   turn commits its user message there); a `prepare` that raises releases the
   lease and leaves the session idle;
3. starts the work's task and marks the session busy (`turn_task` for a turn or
   a step build, `compacting` for a compaction) before anything can yield.

When the task ends, however it ended (done, failed, cancelled), its end
callback runs: the work's own `ended`, the `after_turn` seams, then the session
is idle again and, in the same callback so that nothing can start in between,
the work's `then` (a fresh approval's build turn) and then the first follow-up
the `next_work` seams offer (a compaction asked while the work ran) are
admitted; last the lease is released. A new kind of work (a queued prompt, say)
is admitted with `admit`, or offered at the end of the current work through a
`next_work` seam.

`turn_task` and `compacting` are assigned here and nowhere else
(tests/session/test_activity_owner.py checks it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

from baton.agent.state import SessionState
from baton.errors import SessionBusy
from baton.session.seams import NextWork, Seams
from baton.session.work import Work
from baton.store.leases import Leases

log = logging.getLogger(__name__)


class SessionActivity:
    def __init__(
        self,
        leases: Leases,
        seams: Seams,
        *,
        refresh: Callable[[SessionState], Any],
        next_work: Sequence[NextWork] = (),
    ) -> None:
        self.leases = leases
        self.seams = seams
        self.refresh = refresh
        # The session's own follow-ups (the prompts the person queued), after the features'.
        self._next_work = (*seams.next_work, *next_work)
        # The task of the work running on each session (a compaction's too).
        self._tasks: dict[str, asyncio.Task[Any]] = {}

    @staticmethod
    def idle(state: SessionState) -> bool:
        return not state.busy and not state.compacting

    def ensure_idle(self, state: SessionState) -> None:
        """SessionBusy while any work runs on the session in this process."""
        if not self.idle(state):
            raise SessionBusy(state.id)

    def admit(self, state: SessionState, work: Work) -> asyncio.Task[Any]:
        """Start `work` on `state`: the session is busy from this call's return until the
        work's end callback has run. Raises SessionBusy (another work here, or another
        process holds the lease) or whatever `prepare` raised, with nothing started."""
        self.ensure_idle(state)
        self.leases.acquire(state.id, work.purpose)
        try:
            self.refresh(state)
            if work.prepare is not None:
                work.prepare()
            task: asyncio.Task[Any] = asyncio.get_running_loop().create_task(
                _run(work), name=f"{work.kind}-{state.id}"
            )
        except BaseException:
            self.leases.release(state.id)
            raise
        # Busy before anything can yield: no other work can be admitted from here on.
        if work.kind == "compaction":
            state.compacting = True
        else:
            state.turn_task = task
        self._tasks[state.id] = task
        task.add_done_callback(lambda t: self._ended(t, state, work))
        return task

    def task(self, state: SessionState) -> asyncio.Task[Any] | None:
        """The task of the work running on `state`, or None when it is idle."""
        return self._tasks.get(state.id)

    def running(self) -> list[asyncio.Task[Any]]:
        return [task for task in self._tasks.values() if not task.done()]

    async def boundary(self, state: SessionState) -> None:
        """A point inside long work that is not a turn where what was asked meanwhile may
        run (between the steps of a step build): the `at_boundary` seams."""
        for hook in self.seams.at_boundary:
            await hook(state)

    def _ended(self, task: asyncio.Task[Any], state: SessionState, work: Work) -> None:
        try:
            if work.ended is not None:
                _guarded(work.ended, task)
            for callback in self.seams.after_turn:
                _guarded(callback, state)
        finally:
            if self._tasks.get(state.id) is task:
                del self._tasks[state.id]
            state.turn_task = None
            state.compacting = False
            try:
                if work.then is not None and not task.cancelled() and task.exception() is None:
                    _guarded(work.then, task.result())
                if self.idle(state):
                    self._follow_up(state)
            finally:
                self.leases.release(state.id)

    def _follow_up(self, state: SessionState) -> None:
        for offer in self._next_work:
            try:
                work = offer(state)
            except Exception:
                log.exception("a next-work seam failed")
                continue
            if work is None:
                continue
            try:
                self.admit(state, work)
            except BaseException as exc:
                log.warning("follow-up %s on %s not admitted: %r", work.kind, state.id, exc)
                if work.refused is not None:
                    _guarded(work.refused, exc)
                continue
            return


async def _run(work: Work) -> Any:
    # The coroutine is made when the task first runs, after `admit` has marked the session.
    return await work.run()


def _guarded(callback: Callable[[Any], None], value: Any) -> None:
    try:
        callback(value)
    except Exception:
        log.exception("end-of-work callback failed")
