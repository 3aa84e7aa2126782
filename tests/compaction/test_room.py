"""The room a compaction leaves and the ledger's share of it (pure)."""

from __future__ import annotations

from baton.compaction import room


def test_the_ledger_gets_what_the_rest_of_the_view_leaves_within_floor_and_cap() -> None:
    # A 16,384-token window: usable 13,107 (the reserve is 20% of it).
    usable, window = 13_107, 16_384
    cap = room.ledger_cap(window, 8_000)
    floor = room.ledger_floor(window, 0.10, cap)
    assert (room.room_tokens(usable), floor, cap) == (6_553, 1_638, 4_096)
    # Half the room free: the ledger takes it.
    assert room.ledger_tokens(6_553, 3_600, floor, cap) == 2_953
    # A full room: the floor; an empty one: the cap.
    assert room.ledger_tokens(6_553, 6_000, floor, cap) == floor
    assert room.ledger_tokens(6_553, 500, floor, cap) == cap


def test_a_large_window_is_bounded_by_the_setting() -> None:
    window = 200_000
    cap = room.ledger_cap(window, 8_000)
    assert cap == 8_000 and room.ledger_floor(window, 0.10, cap) == 8_000
    assert room.room_tokens(window - 16_000) == 92_000
