"""One dispatcher for both kinds of hook: command hooks from config, then Python plugins.

For each hook it builds the input once, scrubs every string in it of
credentials, runs the hooks in a defined order (config order, then plugin
load order), and validates each answer against the hook's pydantic model.
Whatever goes wrong in a hook (it cannot start, crashes, hangs, answers
garbage) becomes a `HookResult` with an `error` and a log line: nothing here
ever raises into the compaction engine or the agent loop, except
cancellation of the caller itself.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pluggy
from pydantic import ValidationError

from baton.config import CommandHook, Settings
from baton.hooks.commands import CommandFailed, hook_label, run_command
from baton.hooks.events import HOOKS, HookKind, HookModel, HookName
from baton.hooks.plugins import PluginSet
from baton.scrub import Scrubber
from baton.secret_env import scrubbed_env

log = logging.getLogger(__name__)

# A Python plugin gets as long as a command hook does by default.
PLUGIN_TIMEOUT = 30.0
SNIPPET = 200


@dataclass
class HookResult:
    """One hook's outcome: its validated answer (None: it gave none), or why it failed."""

    hook: str
    source: Literal["command", "plugin"]
    answer: HookModel | None = None
    error: str | None = None


class HookDispatcher:
    def __init__(
        self,
        workspace: Path,
        plugins: PluginSet,
        *,
        settings: Callable[[], Settings],
        secrets: Callable[[], Iterable[str]] = list,
        environ: Callable[[], Mapping[str, str]] | None = None,
        plugin_timeout: float = PLUGIN_TIMEOUT,
    ) -> None:
        self.workspace = workspace
        self.plugins = plugins
        self.settings = settings
        self.secrets = secrets
        self.environ = environ
        self.plugin_timeout = plugin_timeout

    def commands(self, hook: HookName) -> list[CommandHook]:
        hooks: list[CommandHook] = getattr(self.settings().hooks, hook)
        return hooks

    def has(self, hook: HookName) -> bool:
        """Whether anything listens: callers skip building costly inputs when not."""
        return bool(self.commands(hook)) or bool(self.plugins.impls(HOOKS[hook].spec))

    def scrubber(self) -> Scrubber:
        return Scrubber(self.secrets())

    async def dispatch(
        self,
        hook: HookName,
        event: HookModel,
        *,
        stop: Callable[[HookResult], bool] | None = None,
    ) -> list[HookResult]:
        """Run every hook for `hook` in order; `stop` ends the run early (a tool denial)."""
        kind = HOOKS[hook]
        if not isinstance(event, kind.event):
            raise TypeError(f"{hook} takes {kind.event.__name__}, not {type(event).__name__}")
        commands = self.commands(hook)
        impls = self.plugins.impls(kind.spec)
        if not commands and not impls:
            return []
        scrubber = self.scrubber()
        payload = scrubber.json(event.wire())
        results: list[HookResult] = []
        env = self._command_env(kind) if commands else {}
        for command in commands:
            result = await self._run_command(kind, command, payload, env)
            results.append(self._logged(hook, result, scrubber))
            if stop is not None and stop(result):
                return results
        for impl in impls:
            result = await self._run_plugin(kind, impl, payload)
            results.append(self._logged(hook, result, scrubber))
            if stop is not None and stop(result):
                return results
        return results

    # ------------------------------------------------------------------ commands

    def _command_env(self, kind: HookKind) -> dict[str, str]:
        env = scrubbed_env(self.settings(), self.environ() if self.environ else None)
        env["BATON_HOOK"] = kind.name
        env["BATON_WORKSPACE"] = str(self.workspace)
        return env

    async def _run_command(
        self, kind: HookKind, command: CommandHook, payload: dict[str, Any], env: dict[str, str]
    ) -> HookResult:
        label = hook_label(command)
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            output = await run_command(command, data, cwd=self.workspace, env=env)
        except CommandFailed as exc:
            return HookResult(label, "command", error=str(exc))
        except Exception as exc:
            log.exception("command hook %s crashed the dispatcher", label)
            return HookResult(label, "command", error=f"{type(exc).__name__}: {exc}")
        if kind.answer is None:
            return HookResult(label, "command")
        text = output.stdout.decode("utf-8", "replace").strip()
        if not text:
            raw: Any = {}
        else:
            try:
                raw = json.loads(text)
            except ValueError:
                return HookResult(
                    label, "command", error=f"printed output that is not JSON: {_snippet(text)}"
                )
        return self._validated(kind, label, "command", raw)

    # ------------------------------------------------------------------ plugins

    async def _run_plugin(
        self, kind: HookKind, impl: pluggy.HookImpl, payload: dict[str, Any]
    ) -> HookResult:
        label = impl.plugin_name
        try:
            # A fresh copy per plugin: one plugin changing its input cannot affect the next.
            event = kind.event.model_validate(payload)
            args = {"event": event, "workspace": self.workspace}
            call_args = [args[name] for name in impl.argnames]
            async with asyncio.timeout(self.plugin_timeout):
                if inspect.iscoroutinefunction(impl.function):
                    value = await impl.function(*call_args)
                else:
                    # Plain functions run in a worker thread: a slow one never stalls the server.
                    value = await asyncio.to_thread(impl.function, *call_args)
                if inspect.isawaitable(value):
                    value = await value
        except TimeoutError:
            return HookResult(label, "plugin", error=f"timed out after {self.plugin_timeout:g} s")
        except Exception as exc:
            log.warning("plugin %s failed in %s", label, kind.spec, exc_info=exc)
            return HookResult(label, "plugin", error=f"{type(exc).__name__}: {exc}")
        if kind.answer is None or value is None:
            return HookResult(label, "plugin")
        if isinstance(value, HookModel):
            value = value.model_dump(mode="json", by_alias=True)
        return self._validated(kind, label, "plugin", value)

    # ------------------------------------------------------------------ answers

    def _validated(
        self, kind: HookKind, label: str, source: Literal["command", "plugin"], raw: Any
    ) -> HookResult:
        assert kind.answer is not None
        if not isinstance(raw, dict):
            return HookResult(
                label, source, error=f"answered {type(raw).__name__}, not a JSON object"
            )
        try:
            return HookResult(label, source, answer=kind.answer.model_validate(raw))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in err['loc']) or 'answer'}: {err['msg']}"
                for err in exc.errors()
            )
            return HookResult(label, source, error=f"invalid answer: {problems}")

    def _logged(self, hook: HookName, result: HookResult, scrubber: Scrubber) -> HookResult:
        if result.error:
            # Errors reach records and clients; a hook's stderr must not leak a key either.
            result.error = scrubber.text(result.error)
            log.warning("%s hook %s failed: %s", hook, result.hook, result.error)
        return result


def _snippet(text: str) -> str:
    return text if len(text) <= SNIPPET else text[:SNIPPET] + "…"
