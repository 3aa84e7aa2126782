"""Which workspace a session belongs to, looked up across every workspace's store.

Each workspace has its own store (`store.db.workspace_db_path`), so a session id
given in the wrong directory is simply "not found" there; this finds where it
is so the message can say so. Other stores are opened read-only and never
migrated or written.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from baton.config import data_dir


def session_workspace(session_id: str) -> Path | None:
    """The workspace whose store holds `session_id`, or None if no store does."""
    root = data_dir() / "workspaces"
    if not root.is_dir():
        return None
    for db_path in sorted(root.glob("*/baton.db")):
        try:
            with closing(sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True)) as conn:
                found = conn.execute(
                    "SELECT 1 FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
        except sqlite3.Error:  # another version's layout, or damaged: not ours to judge here
            continue
        if found is None:
            continue
        try:
            info = json.loads((db_path.parent / "workspace.json").read_text(encoding="utf-8"))
            return Path(info["path"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
    return None
