"""The room a compaction leaves, and the ledger's share of it.

A compaction knows what the view after it may hold: `ROOM_SHARE` of the usable
window, well under the automatic threshold (`compaction.threshold`, 85% by
default), so that the next compaction is many turns away. The instructions, the
tools, the checkpoint, the person's requests block (its own budget,
`agent/requests_block.py`), the plan, the kept skills and the messages kept
verbatim are what they are; the ledger gets the room they leave, never less than
its floor (`compaction.ledgerShare` of the window: the ledger a compaction had
before this room existed) and never more than its cap (`LEDGER_CAP_SHARE` of the
window, at most `compaction.ledgerMaxTokens`). A room the others filled leaves
the ledger its floor; a room they left empty is spent on facts instead of
standing unused. Pure: sizes in, sizes out (docs/compaction.md, "The room").
"""

from __future__ import annotations

# The view after a compaction aims at this share of the usable window (the automatic
# one's target is 60% of its threshold, 51% of the usable window: about the same).
ROOM_SHARE = 0.5
# The ledger never takes more than this share of the window, whatever room is left.
LEDGER_CAP_SHARE = 0.25


def room_tokens(usable_window: int) -> int:
    """What the view after a compaction may hold (the provider's tokens)."""
    return int(usable_window * ROOM_SHARE)


def ledger_cap(window: int, max_tokens: int) -> int:
    """The most the ledger may hold (the provider's tokens)."""
    return min(max_tokens, int(window * LEDGER_CAP_SHARE))


def ledger_floor(window: int, share: float, cap: int) -> int:
    """The least the ledger gets, however full the room (the provider's tokens)."""
    return min(cap, int(window * share))


def ledger_tokens(room: int, others: int, floor: int, cap: int) -> int:
    """The ledger's budget: what the rest of the view (`others`) leaves of the room,
    within the floor and the cap."""
    return max(floor, min(cap, room - others))
