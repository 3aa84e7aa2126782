"""A session held in memory while the server runs: its history, its running turn, its view."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from baton.providers.base import Item, OpaqueItem
from baton.session.grants import Grants
from baton.session.model import SessionRow, StoredMessage
from baton.tokens import TokenModel

if TYPE_CHECKING:
    from baton.session.turn import Turn


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
class SessionState:
    row: SessionRow
    messages: list[StoredMessage]
    view: View = field(default_factory=View)
    turn: Turn | None = None
    turn_task: asyncio.Task[Any] | None = None
    # A compaction is running outside a turn (manual compaction of an idle session).
    compacting: bool = False
    # What the person allowed "always" for this session (commands, files, categories).
    grants: Grants = field(default_factory=Grants)
    # Messages taken back by `baton/session/revert`: out of the model's view (it only grows).
    reverted: set[str] = field(default_factory=set)
    # Tokens per estimated token, from the provider's last usage report.
    calibration: float = 1.0
    last_input_tokens: int | None = None
    # Counts views as the provider would, from its reports (baton.tokens.TokenModel).
    token_model: TokenModel = field(default_factory=TokenModel)
    # The context builder's converted history (see context.HistoryCache).
    history_cache: Any = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def busy(self) -> bool:
        return self.turn_task is not None and not self.turn_task.done()

    def add(self, message: StoredMessage) -> None:
        self.messages.append(message)

    def find(self, message_id: str) -> StoredMessage | None:
        for message in reversed(self.messages):
            if message.id == message_id:
                return message
        return None
