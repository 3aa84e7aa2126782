"""Errors that say what happened, each carrying its JSON-RPC code (docs/protocol.md, "Errors")."""

from __future__ import annotations


class BatonError(Exception):
    """Base of every error Baton reports to a client."""

    code = -32603
    # Structured detail for the JSON-RPC error's `data` member (None: no `data`).
    data: object = None
    # What went wrong, in the words of protocol.ErrorCause (baton/causes.py), for an
    # error a person can act on (a provider's, the configuration's); None otherwise.
    cause: str | None = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidParams(BatonError):
    code = -32602


class SessionNotFound(BatonError):
    code = -32001

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session not found: {session_id!r}")
        self.session_id = session_id


class SessionBusy(BatonError):
    code = -32002

    def __init__(self, session_id: str, why: str | None = None) -> None:
        super().__init__(
            f"session busy: {why}"
            if why
            else f"session busy: a turn is already running in {session_id!r}"
        )


class ProviderError(BatonError):
    """The model provider failed; the message carries its status and text, never a credential."""

    code = -32003

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        overflow: bool = False,
        retry_after: float | None = None,
        cause: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.overflow = overflow
        self.retry_after = retry_after
        self.cause = cause or ("context_overflow" if overflow else "other")
        # A JSON-RPC client titles the error by its cause without reading the message.
        self.data = {"cause": self.cause, **({"status": status} if status is not None else {})}


class PlanChanged(BatonError):
    code = -32004

    def __init__(self, current: int, base: int) -> None:
        super().__init__(f"plan changed: current version is {current}, baseVersion was {base}")
        self.current = current


class NoPlan(BatonError):
    code = -32005


class PlanStateError(BatonError):
    """A plan operation that the plan's status does not allow."""

    code = -32006


class CompactionError(BatonError):
    code = -32007


class NotFound(BatonError):
    """A referenced object other than a session (compaction, message) does not exist."""

    code = -32008


class ConfigError(BatonError):
    """A setting cannot be used. One that keeps Baton from reaching a model names its
    `cause` (`not_configured`, `key_missing`, `local_model`)."""

    code = -32009

    def __init__(self, message: str, *, cause: str | None = None) -> None:
        super().__init__(message)
        self.cause = cause
        if cause is not None:
            self.data = {"cause": cause}


class StorageError(BatonError):
    """The store could not commit (disk full, read-only); nothing was changed."""

    code = -32010


# The way out of a damaged store, named by the error and run by `baton.doctor`.
REPAIR_COMMAND = "baton doctor --repair"


class StoreDamaged(StorageError):
    """SQLite reports the store's file as damaged; `data` is `{path, fix}`.

    Nothing is changed by reporting it: the way out (`baton doctor --repair`, or
    `baton/store/repair`) copies the file aside and recovers what is readable."""

    code = -32013

    def __init__(self, path: object, detail: str) -> None:
        super().__init__(
            f"the store at {path} is damaged ({detail}); run `{REPAIR_COMMAND}` in the workspace"
            " (or 'Baton: Repair Store' in VS Code) to keep a copy of it and recover"
            " every readable session into a new store"
        )
        self.path = str(path)
        self.data = {"path": self.path, "fix": REPAIR_COMMAND}


class RevertConflict(BatonError):
    """A revert would overwrite changes made outside Baton since its last change.

    `data` is `{conflicts: [{path, reason}]}` so a client can list them and offer `force`.
    """

    code = -32011

    def __init__(self, message: str, conflicts: list[dict[str, str]]) -> None:
        super().__init__(message)
        self.data = {"conflicts": conflicts}
