"""The dispatcher: order, answer validation, failures recorded never raised, scrubbing."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from baton import protocol as p
from baton.config import Settings
from baton.hooks import hookimpl
from baton.hooks.dispatcher import HookDispatcher
from baton.hooks.events import (
    CompactingAnswer,
    CompactingEvent,
    PreCompactAnswer,
    PreCompactEvent,
    ToolAfterEvent,
    ToolBeforeAnswer,
    ToolBeforeEvent,
)
from baton.hooks.plugins import PluginSet, new_manager, register

PY = sys.executable
SECRET = "plain-secret-value-123"


def _settings(**hooks: list[dict[str, Any]]) -> Settings:
    return Settings.model_validate({"hooks": hooks})


def _plugins(*objs: object) -> PluginSet:
    plugins = PluginSet(new_manager())
    for index, obj in enumerate(objs):
        assert register(plugins, f"p{index}", obj, f"test plugin {index}"), plugins.problems
    return plugins


def _dispatcher(
    tmp_path: Path, settings: Settings, *plugins: object, timeout: float = 5.0
) -> HookDispatcher:
    return HookDispatcher(
        tmp_path,
        _plugins(*plugins),
        settings=lambda: settings,
        secrets=lambda: [SECRET],
        environ=lambda: {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-envkey-abcdefghij"},
        plugin_timeout=timeout,
    )


def _py(code: str, **extra: Any) -> dict[str, Any]:
    return {"command": [PY, "-c", code], **extra}


def _echo(answer: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    code = f"import sys; sys.stdin.read(); print({json.dumps(json.dumps(answer))})"
    return _py(code, name=name) if name else _py(code)


COMPACTING = CompactingEvent(session_id="s1", trigger="manual")


class Contextual:
    def __init__(self, line: str) -> None:
        self.line = line

    @hookimpl
    def baton_compacting(self, event: CompactingEvent) -> CompactingAnswer:
        return CompactingAnswer(context=[self.line])


@pytest.mark.asyncio
async def test_config_order_then_plugins(tmp_path: Path) -> None:
    settings = _settings(
        compacting=[_echo({"context": ["cmd1"]}, "one"), _echo({"context": ["cmd2"]})]
    )
    dispatcher = _dispatcher(tmp_path, settings, Contextual("plug1"), Contextual("plug2"))
    results = await dispatcher.dispatch("compacting", COMPACTING)
    assert results[0].hook == "one"
    assert [r.source for r in results] == ["command", "command", "plugin", "plugin"]
    assert [r.answer.context for r in results if isinstance(r.answer, CompactingAnswer)] == [
        ["cmd1"],
        ["cmd2"],
        ["plug1"],
        ["plug2"],
    ]


@pytest.mark.asyncio
async def test_every_failure_is_recorded_and_the_rest_still_run(tmp_path: Path) -> None:
    settings = _settings(
        pre_compact=[
            _py("import sys; sys.stdin.read(); raise SystemExit('crashed')", name="crash"),
            _py("import time; time.sleep(30)", name="hang", timeout=0.5),
            _py("print('hello there')", name="garbage"),
            _py("import sys; print('{\"shouldRun\": true}'); sys.exit(4)", name="exit4"),
            _echo({"should_run": "maybe"}, "invalid"),
            _echo({"shouldRun": True, "extra": 1}, "unknown-field"),
            _py("print('[1, 2]')", name="list"),
            _echo({"shouldRun": True, "prompt": "save"}, "good"),
        ]
    )

    class Raises:
        @hookimpl
        def baton_pre_compact(self, event: PreCompactEvent) -> None:
            raise ValueError("plugin bug")

    class Slow:
        @hookimpl
        async def baton_pre_compact(self, event: PreCompactEvent) -> None:
            await asyncio.sleep(30)

    class WrongType:
        @hookimpl
        def baton_pre_compact(self) -> str:
            return "yes"

    dispatcher = _dispatcher(tmp_path, settings, Raises(), Slow(), WrongType(), timeout=0.5)
    event = PreCompactEvent(session_id="s1", trigger="auto", messages=[])
    started = time.monotonic()
    results = await dispatcher.dispatch("pre_compact", event)
    assert time.monotonic() - started < 10
    errors = {r.hook: r.error for r in results}
    assert "crashed" in (errors["crash"] or "")
    assert "timed out after 0.5 s" in (errors["hang"] or "")
    assert "not JSON: hello there" in (errors["garbage"] or "")
    assert "exited with code 4" in (errors["exit4"] or "")
    assert "shouldRun" in (errors["invalid"] or "") or "should_run" in (errors["invalid"] or "")
    assert "extra" in (errors["unknown-field"] or "")
    assert "not a JSON object" in (errors["list"] or "")
    assert errors["good"] is None
    assert results[7].answer == PreCompactAnswer(should_run=True, prompt="save")
    assert errors["p0"] == "ValueError: plugin bug"
    assert errors["p1"] == "timed out after 0.5 s"
    assert "not a JSON object" in (errors["p2"] or "")


@pytest.mark.asyncio
async def test_async_and_awaitable_answers_and_dicts(tmp_path: Path) -> None:
    class Async:
        @hookimpl
        async def baton_compacting(self) -> dict[str, Any]:
            await asyncio.sleep(0)
            return {"context": ["async"]}

    class ReturnsAwaitable:
        @hookimpl
        def baton_compacting(self, workspace: Path, event: CompactingEvent) -> Any:
            async def later() -> dict[str, Any]:
                return {"prompt": f"from {workspace.name} for {event.session_id}"}

            return later()

    class Silent:
        @hookimpl
        def baton_compacting(self) -> None:
            return None

    dispatcher = _dispatcher(tmp_path, _settings(), Async(), ReturnsAwaitable(), Silent())
    results = await dispatcher.dispatch("compacting", COMPACTING)
    assert [r.error for r in results] == [None, None, None]
    assert results[0].answer == CompactingAnswer(context=["async"])
    assert results[1].answer == CompactingAnswer(prompt=f"from {tmp_path.name} for s1")
    assert results[2].answer is None


@pytest.mark.asyncio
async def test_a_plugin_cannot_change_the_next_ones_input(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    class Mutates:
        @hookimpl
        def baton_tool_after(self, event: ToolAfterEvent) -> None:
            event.input["command"] = "changed"

    class Reads:
        @hookimpl
        def baton_tool_after(self, event: ToolAfterEvent) -> None:
            seen.append(dict(event.input))

    dispatcher = _dispatcher(tmp_path, _settings(), Mutates(), Reads())
    event = ToolAfterEvent(session_id="s", name="bash", input={"command": "ls"}, output="x")
    await dispatcher.dispatch("tool_after", event)
    assert seen == [{"command": "ls"}]


@pytest.mark.asyncio
async def test_tool_before_stops_at_the_first_denial(tmp_path: Path) -> None:
    ran: list[str] = []

    class Later:
        @hookimpl
        def baton_tool_before(self) -> None:
            ran.append("later")

    settings = _settings(tool_before=[_echo({}), _echo({"deny": "no"}, "guard")])
    dispatcher = _dispatcher(tmp_path, settings, Later())
    event = ToolBeforeEvent(session_id="s", name="bash", input={"command": "ls"})
    results = await dispatcher.dispatch(
        "tool_before",
        event,
        stop=lambda r: isinstance(r.answer, ToolBeforeAnswer) and r.answer.deny is not None,
    )
    assert [r.hook for r in results][-1] == "guard"
    assert ran == []


@pytest.mark.asyncio
async def test_no_hook_input_or_environment_holds_a_credential(tmp_path: Path) -> None:
    dump = tmp_path / "dump.json"
    code = (
        "import json, os, sys; "
        f"json.dump({{'stdin': sys.stdin.read(), 'env': dict(os.environ)}}, open({str(dump)!r}, 'w'))"
    )
    seen: list[str] = []

    class Spy:
        @hookimpl
        def baton_tool_after(self, event: ToolAfterEvent) -> None:
            seen.append(event.model_dump_json())

    dispatcher = _dispatcher(tmp_path, _settings(tool_after=[_py(code)]), Spy())
    event = ToolAfterEvent(
        session_id="s",
        name="bash",
        input={"command": f"curl -H 'Authorization: Bearer {SECRET}'", SECRET: [SECRET]},
        output=f"OPENAI_API_KEY=sk-envkey-abcdefghij\nkey {SECRET} and sk-otherkey1234567",
    )
    results = await dispatcher.dispatch("tool_after", event)
    assert [r.error for r in results] == [None, None]
    data = json.loads(dump.read_text())
    for text in (data["stdin"], seen[0]):
        assert SECRET not in text
        assert "sk-envkey-abcdefghij" not in text
        assert "sk-otherkey1234567" not in text
        assert "[REDACTED]" in text
    assert "OPENAI_API_KEY" not in data["env"]
    assert data["env"]["BATON_HOOK"] == "tool_after"
    assert data["env"]["BATON_WORKSPACE"] == str(tmp_path)


@pytest.mark.asyncio
async def test_nothing_listening_costs_nothing(tmp_path: Path) -> None:
    dispatcher = _dispatcher(tmp_path, _settings())
    assert not dispatcher.has("pre_compact")
    assert await dispatcher.dispatch("compacting", COMPACTING) == []


@pytest.mark.asyncio
async def test_answers_of_no_answer_hooks_are_ignored(tmp_path: Path) -> None:
    settings = _settings(compacted=[_py("print('not json at all')")])
    dispatcher = _dispatcher(tmp_path, settings)
    from baton.hooks.events import CompactedEvent

    record = p.CompactionRecord(
        compaction_id="cmp_1",
        session_id="s",
        trigger="manual",
        strategy="native",
        tokens_before=10,
        tokens_after=5,
        first_kept_message_id=None,
        ledger=p.Ledger(),
        created_at="2026-01-01T00:00:00Z",
    )
    results = await dispatcher.dispatch(
        "compacted", CompactedEvent(session_id="s", compaction=record)
    )
    assert results[0].error is None and results[0].answer is None


@pytest.mark.asyncio
async def test_the_wrong_event_type_is_a_programming_error(tmp_path: Path) -> None:
    dispatcher = _dispatcher(tmp_path, _settings())
    with pytest.raises(TypeError):
        await dispatcher.dispatch("pre_compact", COMPACTING)
