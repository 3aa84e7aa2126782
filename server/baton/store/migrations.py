"""Schema migrations, applied in order; `PRAGMA user_version` records how far we are.

Never edit a migration that has shipped: add a new one.
"""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 1: sessions, messages and their parts, tool results.
    """
    CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        title       TEXT NOT NULL,
        mode        TEXT NOT NULL CHECK (mode IN ('build', 'plan')),
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        provider    TEXT,
        model       TEXT
    );
    -- Messages are never updated or deleted; `seq` is the session's order.
    CREATE TABLE messages (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        id          TEXT NOT NULL UNIQUE,
        session_id  TEXT NOT NULL REFERENCES sessions(id),
        role        TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
        kind        TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        incomplete  INTEGER NOT NULL DEFAULT 0,
        meta        TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX messages_by_session ON messages(session_id, seq);
    CREATE TABLE parts (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id  TEXT NOT NULL REFERENCES messages(id),
        type        TEXT NOT NULL,
        data        TEXT NOT NULL,
        native      TEXT
    );
    CREATE INDEX parts_by_message ON parts(message_id, seq);
    -- A tool call's outcome arrives after the call was stored; it is its own row.
    CREATE TABLE tool_results (
        tool_call_id TEXT PRIMARY KEY,
        message_id   TEXT NOT NULL REFERENCES messages(id),
        session_id   TEXT NOT NULL REFERENCES sessions(id),
        status       TEXT NOT NULL CHECK (status IN ('completed', 'failed')),
        output       TEXT NOT NULL,
        facts        TEXT NOT NULL DEFAULT '[]',
        created_at   TEXT NOT NULL
    );
    CREATE INDEX tool_results_by_session ON tool_results(session_id);
    """,
    # 2: plans (one per session) and their versions.
    """
    CREATE TABLE plans (
        session_id  TEXT PRIMARY KEY REFERENCES sessions(id),
        path        TEXT NOT NULL,
        status      TEXT NOT NULL
                    CHECK (status IN ('draft', 'awaiting_approval', 'approved', 'done')),
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
    );
    CREATE TABLE plan_versions (
        session_id   TEXT NOT NULL REFERENCES sessions(id),
        version      INTEGER NOT NULL,
        content      TEXT NOT NULL,
        sha256       TEXT NOT NULL,
        author       TEXT NOT NULL CHECK (author IN ('agent', 'user')),
        created_at   TEXT NOT NULL,
        tool_call_id TEXT,
        PRIMARY KEY (session_id, version)
    );
    """,
    # 3: compaction records; an undo is its own row, so records are never rewritten.
    """
    CREATE TABLE compactions (
        id             TEXT PRIMARY KEY,
        session_id     TEXT NOT NULL REFERENCES sessions(id),
        created_at     TEXT NOT NULL,
        first_kept_seq INTEGER,
        record         TEXT NOT NULL,
        view           TEXT NOT NULL
    );
    CREATE INDEX compactions_by_session ON compactions(session_id, created_at);
    CREATE TABLE compaction_undos (
        compaction_id TEXT PRIMARY KEY REFERENCES compactions(id),
        created_at    TEXT NOT NULL
    );
    """,
    # 4: a tool call id is unique within its message, not across the store: a forked
    # session holds copies of its source's tool calls under the provider's own ids (so
    # the fork's requests replay them exactly), so the key becomes (message, call).
    """
    CREATE TABLE tool_results_v4 (
        tool_call_id TEXT NOT NULL,
        message_id   TEXT NOT NULL REFERENCES messages(id),
        session_id   TEXT NOT NULL REFERENCES sessions(id),
        status       TEXT NOT NULL CHECK (status IN ('completed', 'failed')),
        output       TEXT NOT NULL,
        facts        TEXT NOT NULL DEFAULT '[]',
        created_at   TEXT NOT NULL,
        PRIMARY KEY (message_id, tool_call_id)
    );
    INSERT INTO tool_results_v4
        (tool_call_id, message_id, session_id, status, output, facts, created_at)
        SELECT tool_call_id, message_id, session_id, status, output, facts, created_at
        FROM tool_results;
    DROP TABLE tool_results;
    ALTER TABLE tool_results_v4 RENAME TO tool_results;
    CREATE INDEX tool_results_by_session ON tool_results(session_id);
    """,
    # 5: review and undo: the files Baton's tools changed, content-addressed, and reverts.
    # Every row is inserted once and never updated: a change's outcome, and a revert's
    # marks on messages, are rows of their own.
    """
    CREATE TABLE file_blobs (
        sha256  TEXT PRIMARY KEY,
        data    BLOB NOT NULL
    );
    -- One row per file a tool (or a revert) is about to change, written before it changes.
    CREATE TABLE file_changes (
        seq           INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id    TEXT NOT NULL REFERENCES sessions(id),
        message_id    TEXT,
        tool_call_id  TEXT,
        revert_id     TEXT,
        path          TEXT NOT NULL,
        before_sha256 TEXT,
        created_dirs  TEXT NOT NULL DEFAULT '[]',
        created_at    TEXT NOT NULL
    );
    CREATE INDEX file_changes_by_session ON file_changes(session_id, path, seq);
    -- The file as the change left it (NULL sha: the file does not exist afterwards).
    CREATE TABLE file_change_results (
        change_seq    INTEGER PRIMARY KEY REFERENCES file_changes(seq),
        after_sha256  TEXT,
        created_at    TEXT NOT NULL
    );
    CREATE TABLE reverts (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id),
        message_id  TEXT NOT NULL,
        forced      INTEGER NOT NULL,
        files       TEXT NOT NULL,
        created_at  TEXT NOT NULL
    );
    CREATE TABLE reverted_messages (
        message_id  TEXT PRIMARY KEY REFERENCES messages(id),
        session_id  TEXT NOT NULL REFERENCES sessions(id),
        revert_id   TEXT NOT NULL REFERENCES reverts(id)
    );
    CREATE INDEX reverted_messages_by_session ON reverted_messages(session_id);
    """,
    # 6: one row per model request with the tokens the provider reported, the part of the
    # input its prompt cache served among them (OpenAI's cached_tokens, llama.cpp's cache_n).
    # Rows of earlier requests come from the usage their step messages stored.
    """
    CREATE TABLE model_requests (
        seq           INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id    TEXT NOT NULL REFERENCES sessions(id),
        message_id    TEXT,
        purpose       TEXT NOT NULL,
        provider      TEXT,
        model         TEXT,
        input_tokens  INTEGER NOT NULL,
        cached_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        created_at    TEXT NOT NULL
    );
    CREATE INDEX model_requests_by_session ON model_requests(session_id, seq);
    INSERT INTO model_requests
        (session_id, message_id, purpose, provider, model,
         input_tokens, cached_tokens, output_tokens, created_at)
        SELECT session_id, id,
               CASE WHEN json_extract(meta, '$.preCompact') THEN 'pre_compact' ELSE 'turn' END,
               json_extract(meta, '$.identity.provider'), json_extract(meta, '$.identity.model'),
               COALESCE(json_extract(meta, '$.usage.input'), 0),
               COALESCE(json_extract(meta, '$.usage.cached'), 0),
               COALESCE(json_extract(meta, '$.usage.output'), 0),
               created_at
        FROM messages
        WHERE json_type(meta, '$.usage') = 'object'
        ORDER BY seq;
    """,
    # 7: session leases (store/leases.py): which process works on a session now, so two
    # processes on one workspace never interleave a session's turns. Coordination rows,
    # the one table whose rows are replaced and deleted while a session lives.
    """
    CREATE TABLE session_leases (
        session_id  TEXT PRIMARY KEY,
        owner       TEXT NOT NULL,
        host        TEXT NOT NULL,
        pid         INTEGER NOT NULL,
        purpose     TEXT NOT NULL,
        acquired_at REAL NOT NULL,
        expires_at  REAL NOT NULL
    );
    """,
    # 8: delegation. A `task` child is a session of its own: the session that started it
    # (no foreign key: deleting a parent leaves its children readable), its agent, and
    # its task as JSON ({description, prompt, callId}). NULL for a top-level session.
    """
    ALTER TABLE sessions ADD COLUMN parent_id TEXT;
    ALTER TABLE sessions ADD COLUMN agent TEXT;
    ALTER TABLE sessions ADD COLUMN task TEXT;
    CREATE INDEX sessions_by_parent ON sessions(parent_id);
    """,
    # 9: how each turn ended (store/outcomes.py), after which message: a reopened session
    # shows its error cards and "Stopped" markers where they were shown live.
    """
    CREATE TABLE turn_outcomes (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id   TEXT NOT NULL REFERENCES sessions(id),
        after_seq    INTEGER,
        stop_reason  TEXT NOT NULL,
        error        TEXT,
        created_at   TEXT NOT NULL
    );
    CREATE INDEX turn_outcomes_by_session ON turn_outcomes(session_id, seq);
    """,
    # 10: updates shown live that are no message (a model request's retry, a compaction
    # that gained nothing), after which message (store/outcomes.py), for a reopened session.
    """
    CREATE TABLE shown_updates (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id   TEXT NOT NULL REFERENCES sessions(id),
        after_seq    INTEGER,
        payload      TEXT NOT NULL,
        created_at   TEXT NOT NULL
    );
    CREATE INDEX shown_updates_by_session ON shown_updates(session_id, seq);
    """,
]
