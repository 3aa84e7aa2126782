"""A session held in memory while the server runs: its history, its running turn, its view."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from baton import protocol as p
from baton.agent.compact_request import CompactRequest
from baton.agent.grants import SessionGrants
from baton.agent.history_cache import HistoryCache
from baton.agent.tokens import TokenModel
from baton.providers.base import Item, OpaqueItem
from baton.store.model import SessionRow, StoredMessage


class PlanBlock(NamedTuple):
    """The plan block after a compaction's checkpoint, and the version it shows."""

    text: str
    version: int


@dataclass
class View:
    """What the model sees of the history, as set by the latest compaction.

    With no compaction every message is in view. After one, messages before
    `first_kept_seq` leave the view and `checkpoint` (a summary or the server's
    compacted window) stands in for them; `ledger_text` is the deterministic
    ledger block; `masked` maps pruned tool-call ids to the one-line note the
    model sees instead of their output.
    """

    compaction_id: str | None = None
    first_kept_seq: int | None = None
    summary: str | None = None
    server_window: list[OpaqueItem | Item] | None = None
    ledger_text: str | None = None
    masked: dict[str, str] = field(default_factory=dict)

    @property
    def signature(self) -> tuple[Any, ...]:
        return (self.compaction_id, self.first_kept_seq, len(self.masked))


@dataclass
class PendingCompaction:
    """A compaction asked for while a turn runs: it runs at the turn's next step boundary
    (or when the turn ends), and `done` gets its record."""

    request: CompactRequest
    done: asyncio.Future[p.CompactionRecord]


@dataclass
class Told:
    """What the model has been told in the current view, as far as it was scanned
    (baton.session.notes)."""

    signature: tuple[Any, ...]
    scanned: int = 0  # messages whose contribution is final
    # The instructions say a session is in build mode until a note says otherwise.
    mode: str | None = "build"
    plan_version: int | None = None  # of the last copy in view, in order


@dataclass
class SessionState:
    row: SessionRow
    messages: list[StoredMessage]
    view: View = field(default_factory=View)
    # The task of the turn or step build running on the session, from its admission until
    # its end callback has run. Set and cleared only by its owner (baton.session.activity).
    turn_task: asyncio.Task[Any] | None = None
    # The tool call the running turn is executing (set by the turn; empty between calls).
    running_call_ids: frozenset[str] = frozenset()
    # A compaction runs outside a turn (a manual one, a fresh start, one asked while other
    # work ran), until its end callback has run. Set only by baton.session.activity.
    compacting: bool = False
    # What the person allowed "always" for this session (commands, files, categories),
    # by the mode it was given in; a `task` child shares its parent's.
    grants: SessionGrants = field(default_factory=SessionGrants)
    # Directories outside the workspace `read` may read (an ACP editor's additional
    # roots, set by the face for this connection), and those of them write and edit may
    # change (the person trusted them; each change asks).
    read_roots: tuple[Path, ...] = ()
    write_roots: tuple[Path, ...] = ()
    # Messages taken back by `baton/session/revert`: out of the model's view (it only grows).
    reverted: set[str] = field(default_factory=set)
    # Tokens per estimated token, from the provider's last usage report.
    calibration: float = 1.0
    # Counts views as the provider would, from its reports (baton.tokens.TokenModel).
    token_model: TokenModel = field(default_factory=TokenModel)
    # The context builder's converted history (rebuilt when the view changes).
    history_cache: HistoryCache | None = None

    # What the features keep between requests; dropped with the rest when the session is
    # read again from the store (`reset`).
    # Compactions asked for during the turn (baton.compaction.service).
    pending_compactions: list[PendingCompaction] = field(default_factory=list)
    # The pre-compact hook round that is running (baton.hooks.lifecycle).
    pre_compact_round: asyncio.Task[Any] | None = None
    # The context notes' scan of what the model was told (baton.session.notes).
    told: Told | None = None
    # The plan block frozen at the first request after a compaction: (its compaction id,
    # the block) (baton.context.ContextBuilder.plan_block).
    plan_block: tuple[str | None, PlanBlock | None] | None = None
    # The skills loaded before the current compaction, kept in view: (the view's key, the
    # blocks) (baton.skills.service.SkillsFeature.kept).
    skill_blocks: tuple[tuple[Any, ...], list[str]] | None = None
    # The model a slash command's `model:` asks for, for the turn it runs (then None).
    turn_model: str | None = None

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def busy(self) -> bool:
        # Not `done()`: the session stays busy until the owner's end callback has run, so
        # nothing starts between the task's end and the work that follows it.
        return self.turn_task is not None

    def reset(self, row: SessionRow, messages: list[StoredMessage]) -> None:
        """Everything of the session afresh from the store: what was derived goes."""
        self.row, self.messages = row, messages
        self.view = View()
        self.reverted = set()
        self.calibration = 1.0
        self.token_model = TokenModel()
        self.history_cache = None
        self.pending_compactions = []
        self.pre_compact_round = None
        self.told = None
        self.plan_block = None
        self.skill_blocks = None

    def add(self, message: StoredMessage) -> None:
        self.messages.append(message)

    def find(self, message_id: str) -> StoredMessage | None:
        for message in reversed(self.messages):
            if message.id == message_id:
                return message
        return None
