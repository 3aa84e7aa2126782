"""Session leases: one process at a time works on a session, whichever process that is.

Two `baton serve` processes on one workspace (two editor windows on one folder)
share one store. A turn, a compaction, a revert or a delete first takes the
session's lease: a row in `session_leases` naming the process (host, pid and a
random token), written in a `BEGIN IMMEDIATE` transaction after checking that
no live process holds it. Another process that wants the session meanwhile
gets "session busy" (-32002) naming the holder, before it writes anything.

A lease is released when the work ends. The process renews the leases it holds
while it runs (`expires_at`); a lease whose holder is gone is taken over: at
once when the holder's pid is dead on this host, otherwise when it expires. So
a killed process never blocks a session for longer than `TTL` seconds, and on
one host not at all.

Lease rows are the one kind of row that is updated and deleted while a session
lives: they are coordination, not history.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

from baton.errors import SessionBusy
from baton.store.db import Database

log = logging.getLogger(__name__)

# Seconds a lease lasts without renewal; renewed every RENEW_EVERY seconds while held.
TTL = 60.0
RENEW_EVERY = 15.0


@dataclass(frozen=True)
class Lease:
    session_id: str
    owner: str
    host: str
    pid: int
    purpose: str
    expires_at: float

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}, {self.purpose}"


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    if pid <= 0:
        return False
    if sys.platform == "win32":  # no signal 0 there: rely on expiry
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Leases:
    """The leases this process holds, re-entrant within the process (counted)."""

    def __init__(self, db: Database, *, ttl: float = TTL) -> None:
        self.db = db
        self.ttl = ttl
        self.host = socket.gethostname()
        self.pid = os.getpid()
        self.owner = f"{self.host}/{self.pid}/{secrets.token_hex(6)}"
        self._held: dict[str, int] = {}
        self._renewer: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ queries

    def current(self, session_id: str) -> Lease | None:
        row = self.db.conn.execute(
            "SELECT * FROM session_leases WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None:
            return None
        return Lease(
            session_id=row["session_id"],
            owner=row["owner"],
            host=row["host"],
            pid=int(row["pid"]),
            purpose=row["purpose"],
            expires_at=float(row["expires_at"]),
        )

    def live(self, lease: Lease) -> bool:
        """Whether another process still holds `lease`."""
        if lease.expires_at < time.time():
            return False
        return not (lease.host == self.host and not pid_alive(lease.pid))

    @property
    def held(self) -> set[str]:
        """The sessions this process believes it holds."""
        return set(self._held)

    def holds(self, session_id: str) -> bool:
        """Whether this process holds the session's lease, as the store says now."""
        if session_id not in self._held:
            return False
        lease = self.current(session_id)
        return lease is not None and lease.owner == self.owner

    # ------------------------------------------------------------------ taking and releasing

    def acquire(self, session_id: str, purpose: str) -> None:
        """Take the session's lease (or count one more use of ours); SessionBusy if another
        live process holds it."""
        if session_id in self._held:
            self._held[session_id] += 1
            return
        with self.db.transaction() as conn:
            lease = self.current(session_id)
            if lease is not None and lease.owner != self.owner and self.live(lease):
                raise SessionBusy(
                    session_id,
                    f"another Baton process ({lease.describe()}) is working on"
                    f" {session_id!r}; try again when it is done",
                )
            if lease is not None and lease.owner != self.owner:
                log.info("session %s: taking over the stale lease of %s", session_id, lease.owner)
            conn.execute(
                "INSERT OR REPLACE INTO session_leases"
                " (session_id, owner, host, pid, purpose, acquired_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    self.owner,
                    self.host,
                    self.pid,
                    purpose,
                    time.time(),
                    time.time() + self.ttl,
                ),
            )
        self._held[session_id] = 1
        self._start_renewing()

    def release(self, session_id: str) -> None:
        count = self._held.get(session_id, 0)
        if count > 1:
            self._held[session_id] = count - 1
            return
        self._held.pop(session_id, None)
        if count == 0:
            return
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    "DELETE FROM session_leases WHERE session_id = ? AND owner = ?",
                    (session_id, self.owner),
                )
        except Exception as exc:
            # It expires on its own, and a dead pid's lease is taken over at once.
            log.warning("releasing the lease of session %s failed: %s", session_id, exc)

    @contextlib.contextmanager
    def hold(self, session_id: str, purpose: str) -> Iterator[None]:
        self.acquire(session_id, purpose)
        try:
            yield
        finally:
            self.release(session_id)

    def release_all(self) -> None:
        self._held.clear()
        if self._renewer is not None:
            self._renewer.cancel()
            self._renewer = None
        with contextlib.suppress(Exception), self.db.transaction() as conn:
            conn.execute("DELETE FROM session_leases WHERE owner = ?", (self.owner,))

    # ------------------------------------------------------------------ renewal

    def renew(self) -> list[str]:
        """Push back the expiry of every lease held; returns the sessions whose lease is no
        longer ours (taken over after it expired)."""
        if not self._held:
            return []
        lost: list[str] = []
        with self.db.transaction() as conn:
            for session_id in list(self._held):
                cur = conn.execute(
                    "UPDATE session_leases SET expires_at = ? WHERE session_id = ? AND owner = ?",
                    (time.time() + self.ttl, session_id, self.owner),
                )
                if cur.rowcount == 0:
                    lost.append(session_id)
        for session_id in lost:
            log.warning("session %s: this process's lease was taken over", session_id)
        return lost

    def _start_renewing(self) -> None:
        if self._renewer is not None and not self._renewer.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a synchronous caller): the work is short
        self._renewer = loop.create_task(self._renew_loop(), name="baton-lease-renewal")

    async def _renew_loop(self) -> None:
        every = min(RENEW_EVERY, self.ttl / 4)
        while self._held:
            await asyncio.sleep(every)
            try:
                self.renew()
            except Exception as exc:
                log.warning("renewing session leases failed: %s", exc)
