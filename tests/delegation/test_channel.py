"""DelegationChannel: a store error while finding a session's parent is logged, and the
update still goes out."""

from __future__ import annotations

import logging

import pytest

from baton import protocol as p
from baton.delegation.channel import DelegationChannel


class Recording:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str | None]] = []

    def send_update(
        self, session_id: str, update: p.Update, *, parent_id: str | None = None
    ) -> None:
        self.sent.append((session_id, parent_id))


def test_a_store_error_reading_the_parent_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    def broken(session_id: str) -> str | None:
        raise OSError("disk I/O error")

    inner = Recording()
    channel = DelegationChannel(inner, broken)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="baton.delegation.channel"):
        channel.send_update("ses_1", p.ModeUpdate(mode="build"))
    assert inner.sent == [("ses_1", None)]
    assert any(
        "ses_1" in r.getMessage() and r.exc_info and "disk I/O error" in str(r.exc_info[1])
        for r in caplog.records
    )
