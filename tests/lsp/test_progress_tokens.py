"""A work-done progress leaves nothing behind once it ends: pygls registers each token
(for a client's cancel) and never lets one go, so a server reporting a compaction's
progress all day kept every token it ever made."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.progress import Progress

from baton.faces.lsp.channel import LspChannel


class _Protocol:
    """What a pygls Progress sends through: requests answered at once, notifications kept."""

    def __init__(self) -> None:
        self.notified: list[tuple[str, Any]] = []

    async def send_request_async(self, method: str, params: Any, msg_id: Any = None) -> None:
        return None

    def notify(self, method: str, params: Any) -> None:
        self.notified.append((method, params))


class _Peer:
    def __init__(self, *, refuse_create: bool = False) -> None:
        self.protocol = _Protocol()
        self.client_capabilities = lsp.ClientCapabilities(
            window=lsp.WindowClientCapabilities(work_done_progress=True)
        )
        self.work_done_progress = Progress(self.protocol)  # type: ignore[arg-type]
        if refuse_create:

            async def refused(token: Any) -> None:
                self.work_done_progress.tokens[token] = None  # type: ignore[assignment]
                raise RuntimeError("the client refused")

            self.work_done_progress.create_async = refused  # type: ignore[method-assign]


@pytest.mark.asyncio
async def test_each_progress_lets_its_token_go_when_it_ends() -> None:
    peer = _Peer()
    channel = LspChannel(peer)  # type: ignore[arg-type]
    for n in range(50):
        async with channel.progress(f"Compacting {n}") as report:
            report("halfway", 50)
    assert peer.work_done_progress.tokens == {}
    # Each was reported whole: begin, the report, end.
    kinds = [type(params.value).__name__ for _, params in peer.protocol.notified]
    assert kinds[:3] == ["WorkDoneProgressBegin", "WorkDoneProgressReport", "WorkDoneProgressEnd"]
    assert len(kinds) == 150


@pytest.mark.asyncio
async def test_a_progress_the_client_refused_leaves_no_token_either() -> None:
    peer = _Peer(refuse_create=True)
    channel = LspChannel(peer)  # type: ignore[arg-type]
    async with channel.progress("Compacting") as report:
        report("halfway", 50)
    assert peer.work_done_progress.tokens == {}
    assert peer.protocol.notified == []
