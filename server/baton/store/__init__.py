"""SQLite persistence: one database per workspace, append-only history, atomic steps."""

from baton.store.db import Database, open_workspace_db

__all__ = ["Database", "open_workspace_db"]
