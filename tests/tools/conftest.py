"""Fixtures for the tool tests: a temp workspace beside an "outside" directory, a fake gate."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from baton.config import Settings
from baton.tools.base import ToolContext


@dataclass
class FakeGate:
    """Records every permission request and answers `allow`."""

    allow: bool = True
    calls: list[tuple[str, str, dict[str, Any], str | None]] = field(default_factory=list)
    on_ask: Callable[[], None] | None = None

    async def __call__(
        self, tool: str, tool_call_id: str, input: dict[str, Any], diff: str | None = None
    ) -> bool:
        self.calls.append((tool, tool_call_id, input, diff))
        if self.on_ask is not None:
            self.on_ask()
        return self.allow


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


@pytest.fixture
def workspace(root: Path) -> Path:
    ws = root / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def outside(root: Path) -> Path:
    out = root / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("TOP SECRET\n")
    return out


@pytest.fixture
def gate() -> FakeGate:
    return FakeGate()


MakeCtx = Callable[..., ToolContext]


@pytest.fixture
def make_ctx(workspace: Path, gate: FakeGate) -> MakeCtx:
    def make(
        *,
        mode: Literal["build", "plan"] = "build",
        settings: dict[str, Any] | None = None,
        permission: FakeGate | None = None,
        before_change: Callable[[list[Path]], Awaitable[None]] | None = None,
    ) -> ToolContext:
        return ToolContext(
            session_id="s1",
            tool_call_id="call-1",
            workspace=workspace,
            mode=mode,
            settings=Settings.model_validate(settings or {}),
            ask_permission=permission or gate,
            before_change=before_change,
        )

    return make


@pytest.fixture
def ctx(make_ctx: MakeCtx) -> ToolContext:
    return make_ctx()
