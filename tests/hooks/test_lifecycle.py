"""LifecycleHooks without a server: how answers combine, and how a round's end is named."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from baton import protocol as p
from baton.agent.compact_request import CompactRequest
from baton.agent.state import SessionState
from baton.config import Settings
from baton.errors import ProviderError
from baton.hooks import hookimpl
from baton.hooks.dispatcher import HookDispatcher
from baton.hooks.events import CompactingEvent, ToolBeforeEvent
from baton.hooks.lifecycle import LifecycleHooks, _round_error
from baton.hooks.plugins import PluginSet, new_manager, register


def _hooks(tmp_path: Path, *plugins: object) -> LifecycleHooks:
    plugin_set = PluginSet(new_manager())
    for index, plugin in enumerate(plugins):
        assert register(plugin_set, f"p{index}", plugin, "test")
    dispatcher = HookDispatcher(tmp_path, plugin_set, settings=Settings)
    return LifecycleHooks(cast(Any, None), dispatcher)


def _state() -> SessionState:
    return cast(SessionState, type("S", (), {"id": "ses_1"})())


class Answers:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    @hookimpl
    def baton_compacting(self, event: CompactingEvent) -> Any:
        return self.answer

    @hookimpl
    def baton_tool_before(self, event: ToolBeforeEvent) -> Any:
        return self.answer


@pytest.mark.asyncio
async def test_compacting_context_is_concatenated_and_prompts_joined(tmp_path: Path) -> None:
    class Fails:
        @hookimpl
        def baton_compacting(self) -> None:
            raise RuntimeError("nope")

    hooks = _hooks(
        tmp_path,
        Answers({"context": ["a", "  "], "prompt": "First."}),
        Fails(),
        Answers({"context": ["b"], "prompt": "Second."}),
    )
    request = CompactRequest("manual")
    context, prompt = await hooks.compacting(_state(), request)
    assert context == ["a", "b"]
    assert prompt == "First.\n\nSecond."
    assert request.notes == ["compacting hook p1 failed: RuntimeError: nope"]


@pytest.mark.asyncio
async def test_no_compacting_hooks_change_nothing(tmp_path: Path) -> None:
    assert await _hooks(tmp_path).compacting(_state(), CompactRequest("auto")) == ([], None)


@pytest.mark.asyncio
async def test_tool_before_names_the_first_denying_hook(tmp_path: Path) -> None:
    hooks = _hooks(tmp_path, Answers({}), Answers({"deny": "not here"}), Answers({"deny": "x"}))
    denied = await hooks.tool_before(_state(), "bash", {"command": "ls"})
    assert denied == "denied by hook p1: not here"
    assert await _hooks(tmp_path, Answers(None)).tool_before(_state(), "bash", {}) is None


@pytest.mark.asyncio
async def test_round_outcomes_are_named(tmp_path: Path) -> None:
    async def returns(result: p.PromptResult) -> p.PromptResult:
        return result

    async def raises(exc: BaseException) -> p.PromptResult:
        raise exc

    async def finished(coro: Any) -> asyncio.Task[p.PromptResult]:
        task = asyncio.ensure_future(coro)
        await asyncio.gather(task, return_exceptions=True)
        return task

    cases = [
        (returns(p.PromptResult(stop_reason="end_turn")), None),
        (returns(p.PromptResult(stop_reason="max_steps")), "stopped at the step limit (3 steps)"),
        (returns(p.PromptResult(stop_reason="cancelled")), "cancelled"),
        (returns(p.PromptResult(stop_reason="refusal")), "the model refused"),
        (returns(p.PromptResult(stop_reason="error", error="tool broke")), "tool broke"),
        (raises(ProviderError("HTTP 500: down")), "provider error: HTTP 500: down"),
        (raises(KeyError("k")), "internal error: KeyError: 'k'"),
    ]
    for coro, expected in cases:
        assert _round_error(await finished(coro), 3) == expected
    cancelled = asyncio.ensure_future(asyncio.sleep(10))
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    assert _round_error(cast(Any, cancelled), 3) == "cancelled"
