"""The sessions this process holds in memory, loaded from the store and kept in step with it.

Another `baton serve` may share the store (two editor windows on one workspace):
`refresh` reloads a session in place when another connection committed to it
since it was last read, unless this process is working on it (its lease keeps
other processes' turns out).

Memory stays flat over a long day: the cache holds at most `held` idle sessions,
the most recently used (those a client shows are the ones it asks for); a session
that is working is always held. An idle session beyond that leaves memory once
nothing else refers to it, and is read again from the store when it is next asked
for: everything a client can open is in the store. What the store does not keep of
a session, its "Always allow" grants, is kept aside. A session still referred to
(a request that holds it across an await) is found again by a weak reference, so
there is never a second state for one session. A `task` child is let go as soon as
its call ends (`release`).
"""

from __future__ import annotations

import logging
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from baton import protocol as p
from baton.agent.grants import Grants, SessionGrants
from baton.agent.state import SessionState
from baton.agent.tokens import calibration
from baton.errors import SessionNotFound
from baton.store.db import Database
from baton.store.model import SessionRow, let_go_of_load_only_meta
from baton.store.sessions import SessionStore

log = logging.getLogger(__name__)

# Idle sessions held in memory at most (the most recently used).
HELD = 16


class SessionCache:
    def __init__(
        self,
        db: Database,
        store: SessionStore,
        loaded: Callable[[SessionState], None],
        *,
        held: int = HELD,
    ) -> None:
        """`loaded` is called with each state (re)loaded from the store: the features
        attach their per-session data there (the `session_loaded` seam). `held`: idle
        sessions kept in memory at most."""
        self.db = db
        self.store = store
        self._loaded = loaded
        self.held = held
        # Held, least recently used first.
        self._sessions: OrderedDict[str, SessionState] = OrderedDict()
        # Every state still in memory, held or not (one state per session, always).
        self._alive: weakref.WeakValueDictionary[str, SessionState] = weakref.WeakValueDictionary()
        # The grants of sessions let go (the store does not keep them).
        self._grants: dict[str, SessionGrants] = {}
        # Per session: the store's data version and the session's signature when its
        # state was last known to match the store (see `refresh`).
        self._seen: dict[str, tuple[int, tuple[Any, ...]]] = {}

    def get(self, session_id: str) -> SessionState:
        """The session's state, loaded on first use; SessionNotFound if the store lacks it."""
        state = self._sessions.get(session_id) or self._alive.get(session_id)
        if state is not None:
            self._hold(state)
            return self.refresh(state)
        version = self.db.data_version()
        signature = self.store.signature(session_id)
        row = self.store.get_session(session_id)
        if signature is None or row is None:
            raise SessionNotFound(session_id)
        state = SessionState(row=row, messages=[])
        grants = self._grants.pop(session_id, None)
        if grants is not None:
            state.grants = grants
        self._fill(state, row)
        self._seen[session_id] = (version, signature)
        self._hold(state)
        return state

    def _hold(self, state: SessionState) -> None:
        self._sessions[state.id] = state
        self._sessions.move_to_end(state.id)
        self._alive[state.id] = state
        idle = [s for s in self._sessions.values() if not s.busy and not s.compacting]
        for old in idle[: max(0, len(idle) - self.held)]:
            self._let_go(old)

    def _let_go(self, state: SessionState) -> None:
        self._sessions.pop(state.id, None)
        # Found again while still referred to, it is checked against the store afresh.
        self._seen.pop(state.id, None)
        # A child's grants are its parent's, given again at each of its calls.
        if state.row.parent_id is None and any(g != Grants() for g in state.grants.modes.values()):
            self._grants[state.id] = state.grants

    def release(self, session_id: str) -> None:
        """Let an idle session go from memory now (a `task` child whose call ended); it is
        read again from the store if it is asked for."""
        state = self._sessions.get(session_id)
        if state is not None and not state.busy and not state.compacting:
            self._let_go(state)

    def held_ids(self) -> list[str]:
        """The sessions held in memory, least recently used first."""
        return list(self._sessions)

    def create(self, title: str, mode: p.Mode) -> SessionState:
        """A new session, stored and held."""
        return self.get(self.store.create_session(title, mode).id)

    def _fill(self, state: SessionState, row: SessionRow) -> None:
        """(Re)load everything of `state` that the store holds, and let features attach."""
        state.reset(row, self.store.load_messages(row.id))
        for message in state.messages:
            usage = message.meta.get("usage")
            if usage and message.meta.get("estimatedInput"):
                state.calibration = calibration(usage["input"], message.meta["estimatedInput"])
                parts = message.meta.get("estimatedParts")
                if isinstance(parts, dict):
                    state.token_model.observe(usage["input"], parts)
            let_go_of_load_only_meta(message)
        self._loaded(state)

    def refresh(self, state: SessionState) -> SessionState:
        """Reload `state` in place if another process committed to its session since it
        was loaded. A session this process is working on is left as it is."""
        if state.busy or state.compacting:
            return state
        version = self.db.data_version()
        seen = self._seen.get(state.id)
        if seen is not None and seen[0] == version:
            return state  # no other connection committed anything since
        signature = self.store.signature(state.id)
        if signature is None:
            self.forget(state.id)
            raise SessionNotFound(state.id)
        if seen is None or seen[1] != signature:
            row = self.store.get_session(state.id)
            if row is None:
                self.forget(state.id)
                raise SessionNotFound(state.id)
            log.info("session %s changed in the store: reloading it", state.id)
            self._fill(state, row)
        self._seen[state.id] = (version, signature)
        return state

    def forget(self, session_id: str) -> None:
        """Drop a deleted session from memory (its rows are gone from the store)."""
        self._sessions.pop(session_id, None)
        self._alive.pop(session_id, None)
        self._seen.pop(session_id, None)
        self._grants.pop(session_id, None)

    def forget_all(self) -> None:
        """Drop every session from memory: the store was replaced (`baton/store/repair`)."""
        self._sessions.clear()
        self._alive.clear()
        self._seen.clear()
        self._grants.clear()
        self.store.forget_reads()

    def working(self) -> list[str]:
        """Sessions with a turn or a compaction running in this process."""
        return [s.id for s in list(self._alive.values()) if s.busy or s.compacting]
