"""Fixtures for the plan unit tests: a workspace, a store on disk, and a session to own plans."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.plan.store import PlanStore
from baton.store.db import Database
from baton.store.sessions import SessionStore


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws.resolve()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(tmp_path / "store" / "baton.db")
    yield database
    database.close()


@pytest.fixture
def sessions(db: Database) -> SessionStore:
    return SessionStore(db)


@pytest.fixture
def session_id(sessions: SessionStore) -> str:
    return sessions.create_session("Add a login page", "plan").id


@pytest.fixture
def store(workspace: Path, db: Database) -> PlanStore:
    return PlanStore(workspace, db)
