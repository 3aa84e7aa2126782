"""Migration 8: a store made before delegation gains the child columns, its sessions stay
top-level, and children are stored and listed under their parent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from baton.store.db import Database
from baton.store.migrations import MIGRATIONS
from baton.store.sessions import SessionStore


def test_a_store_from_before_delegation_migrates_and_keeps_its_sessions_top_level(
    tmp_path: Path,
) -> None:
    path = tmp_path / "baton.db"
    old = sqlite3.connect(path)
    for index, script in enumerate(MIGRATIONS[:7]):
        old.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {index + 1};\nCOMMIT;")
    old.execute(
        "INSERT INTO sessions (id, title, mode, created_at, updated_at)"
        " VALUES ('ses_old', 'Old', 'build', '2026-01-01', '2026-01-01')"
    )
    old.commit()
    old.close()

    db = Database(path)
    assert db.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 8
    store = SessionStore(db)
    row = store.get_session("ses_old")
    assert row is not None
    assert (row.parent_id, row.agent, row.task) == (None, None, None)
    wire = row.to_wire().wire()
    assert wire["parentId"] is None and wire["agent"] is None

    task = {"description": "look", "prompt": "Look.", "callId": "call_1"}
    child = store.create_child("ses_old", "explore", task, "look", "build")
    again = store.get_session(child.id)
    assert again is not None
    assert (again.parent_id, again.agent, again.task) == ("ses_old", "explore", task)
    assert store.parent_of(child.id) == "ses_old"
    assert store.parent_of("ses_old") is None
    assert [c.id for c in store.children_of("ses_old")] == [child.id]
    listed = {r.id: r for r in store.list_sessions()}
    assert listed[child.id].to_wire().wire()["parentId"] == "ses_old"
