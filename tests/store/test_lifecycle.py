"""Deleting a session removes every row that belongs to it, whatever tables exist."""

from __future__ import annotations

from pathlib import Path

from baton.store.db import Database
from baton.store.lifecycle import delete_session, owned_tables
from baton.store.model import StoredText, ToolResultRecord, part_from_json
from baton.store.sessions import SessionStore


def _db(tmp_path: Path) -> tuple[Database, SessionStore]:
    db = Database(tmp_path / "baton.db")
    return db, SessionStore(db)


def _session_with_history(store: SessionStore, title: str) -> tuple[str, str]:
    row = store.create_session(title, "build")
    store.append_message(row.id, "user", "prompt", [StoredText("hi")])
    call = part_from_json("tool_call", {"toolCallId": "call_1", "name": "read", "input": {}})
    message = store.append_message(row.id, "assistant", "step", [call])
    store.append_tool_result(message, ToolResultRecord("call_1", "completed", "ok"))
    return row.id, message.id


def _count(db: Database, table: str, where: str = "1", *args: object) -> int:
    return int(db.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}", args).fetchone()[0])


def test_delete_removes_rows_of_known_and_later_tables(tmp_path: Path) -> None:
    db, store = _db(tmp_path)
    keep, _ = _session_with_history(store, "keep")
    doomed, message_id = _session_with_history(store, "doomed")
    # Tables a later feature might add: one by session id, one only through a message,
    # one through another table, one naming the session with another column.
    db.conn.executescript(
        """
        CREATE TABLE notes (id INTEGER PRIMARY KEY, session_id TEXT REFERENCES sessions(id));
        CREATE TABLE marks (message_id TEXT PRIMARY KEY REFERENCES messages(id));
        CREATE TABLE note_tags (note_id INTEGER REFERENCES notes(id), tag TEXT);
        CREATE TABLE links (id INTEGER PRIMARY KEY, owner TEXT REFERENCES sessions(id));
        """
    )
    for sid in (keep, doomed):
        cur = db.conn.execute("INSERT INTO notes (session_id) VALUES (?)", (sid,))
        db.conn.execute("INSERT INTO note_tags VALUES (?, 'x')", (cur.lastrowid,))
        db.conn.execute("INSERT INTO links (owner) VALUES (?)", (sid,))
    db.conn.execute("INSERT INTO marks VALUES (?)", (message_id,))

    tables = [o.table for o in owned_tables(db.conn)]
    assert tables.index("parts") < tables.index("messages") < tables.index("sessions")
    assert tables.index("note_tags") < tables.index("notes")

    deleted = delete_session(db, doomed)
    assert deleted["messages"] == 2 and deleted["parts"] == 2 and deleted["tool_results"] == 1
    assert deleted["marks"] == 1 and deleted["note_tags"] == 1 and deleted["links"] == 1
    assert store.get_session(doomed) is None
    assert _count(db, "messages", "session_id = ?", doomed) == 0
    assert _count(db, "marks") == 0
    # The other session is whole.
    assert store.get_session(keep) is not None
    assert len(store.load_messages(keep)) == 2
    assert _count(db, "notes") == 1 and _count(db, "note_tags") == 1 and _count(db, "links") == 1
    db.close()


def test_the_same_tool_call_id_may_appear_in_two_sessions(tmp_path: Path) -> None:
    # Forks copy tool calls under the provider's ids (migration 4).
    db, store = _db(tmp_path)
    _session_with_history(store, "a")
    other, _ = _session_with_history(store, "b")
    [_, step] = store.load_messages(other)
    assert step.results["call_1"].output == "ok"
    db.close()
