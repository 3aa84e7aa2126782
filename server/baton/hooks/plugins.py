"""Loading Python plugins: the `baton.plugins` entry-point group, then workspace files.

A plugin that fails to import, that pluggy refuses, or that implements a hook
name Baton does not define (a typo such as `baton_precompact`) is reported as a
`PluginProblem` and skipped: a broken plugin must never stop the server.
Plugins load once, when the core starts; the order is entry points sorted by
name, then `<workspace>/.baton/plugins/*.py` sorted by file name, and it is
the order hooks run in (after command hooks).

A workspace's own code (its `.baton/plugins/` files, and entry points of a
distribution installed from inside the workspace, such as an editable install
of the cloned repository) is imported only once the person trusts the
workspace (`baton.trust`); until then it is listed in `PluginSet.ignored` and
never read. Trust granted later loads it then; trust revoked unregisters it
(Python cannot unimport a module, but its hooks are no longer called).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote, urlparse

import pluggy

from baton.hooks import specs

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "baton.plugins"
WORKSPACE_PLUGINS = Path(".baton") / "plugins"


@dataclass(frozen=True)
class PluginProblem:
    source: str
    message: str

    def __str__(self) -> str:
        return f"plugin {self.source} was skipped: {self.message}"


@dataclass
class PluginSet:
    """The plugin manager plus the load order and what went wrong while loading."""

    manager: pluggy.PluginManager
    order: list[str] = field(default_factory=list)
    problems: list[PluginProblem] = field(default_factory=list)
    # The workspace's plugins not imported because it is not trusted (relative paths).
    ignored: list[str] = field(default_factory=list)
    # Names of the registered plugins that are the workspace's own code.
    workspace_names: list[str] = field(default_factory=list)

    def impls(self, spec: str) -> list[pluggy.HookImpl]:
        """Implementations of `spec` in run order: tryfirst, then load order, then trylast."""
        caller = getattr(self.manager.hook, spec, None)
        if caller is None:
            return []
        rank = {name: index for index, name in enumerate(self.order)}
        found = [impl for impl in caller.get_hookimpls() if not (impl.hookwrapper or impl.wrapper)]
        return sorted(
            found,
            key=lambda impl: (
                0 if impl.tryfirst else 2 if impl.trylast else 1,
                rank.get(impl.plugin_name, len(rank)),
            ),
        )


def new_manager() -> pluggy.PluginManager:
    manager = pluggy.PluginManager(specs.PROJECT)
    manager.add_hookspecs(specs)
    return manager


def load_plugins(
    workspace: Path,
    *,
    trusted: bool,
    entry_point_source: Callable[[], Iterable[EntryPoint]] | None = None,
) -> PluginSet:
    """Every plugin that loads cleanly, registered in order; the others as problems.

    The workspace's own code only when `trusted` (the rest is listed in `ignored`).
    """
    plugins = PluginSet(new_manager())
    source = entry_point_source or (lambda: entry_points(group=ENTRY_POINT_GROUP))
    try:
        found = sorted(source(), key=lambda ep: ep.name)
    except Exception as exc:  # a broken installed distribution's metadata
        plugins.problems.append(PluginProblem(ENTRY_POINT_GROUP, _describe(exc)))
        found = []
    for entry in found:
        label = f"{entry.name} ({entry.value})"
        own = _installed_from(entry, workspace)
        if own and not trusted:
            plugins.ignored.append(f"entry point {label} installed from the workspace")
            continue
        try:
            obj = entry.load()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            _problem(plugins, label, exc)
            continue
        if register(plugins, entry.name, obj, label) and own:
            plugins.workspace_names.append(entry.name)
    if trusted:
        load_workspace_plugins(plugins, workspace)
    else:
        plugins.ignored += [
            str(path.relative_to(workspace)) for path in workspace_plugin_files(workspace)
        ]
    return plugins


def workspace_plugin_files(workspace: Path) -> list[Path]:
    """`.baton/plugins/*.py`, listed without reading them."""
    folder = workspace / WORKSPACE_PLUGINS
    return sorted(folder.glob("*.py")) if folder.is_dir() else []


def load_workspace_plugins(plugins: PluginSet, workspace: Path) -> None:
    """Import and register the workspace's plugin files (the workspace is trusted)."""
    plugins.ignored = [
        item for item in plugins.ignored if not item.startswith(str(WORKSPACE_PLUGINS))
    ]
    for path in workspace_plugin_files(workspace):
        label = str(path)
        if path.stem in plugins.workspace_names:
            continue
        try:
            module = import_file(path)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            _problem(plugins, label, exc)
            continue
        if register(plugins, path.stem, module, label):
            plugins.workspace_names.append(path.stem)


def drop_workspace_plugins(plugins: PluginSet, workspace: Path) -> None:
    """Trust revoked: the workspace's plugins are no longer called."""
    for name in plugins.workspace_names:
        plugin = plugins.manager.get_plugin(name)
        if plugin is not None:
            plugins.manager.unregister(plugin, name=name)
        if name in plugins.order:
            plugins.order.remove(name)
    plugins.workspace_names = []
    plugins.ignored = [
        str(path.relative_to(workspace)) for path in workspace_plugin_files(workspace)
    ]


def _installed_from(entry: EntryPoint, workspace: Path) -> bool:
    """Whether an entry point's distribution lives in, or was installed from, the workspace."""
    dist = entry.dist
    if dist is None:
        return False
    located = getattr(dist, "_path", None)
    if located is not None and _inside(Path(str(located)), workspace):
        return True
    try:
        direct = dist.read_text("direct_url.json")
    except Exception:  # unreadable metadata: decide by location alone
        return False
    if not direct:
        return False
    try:
        url = json.loads(direct).get("url", "")
    except (ValueError, AttributeError):
        return False
    parsed = urlparse(url) if isinstance(url, str) else None
    return (
        parsed is not None
        and parsed.scheme == "file"
        and _inside(Path(unquote(parsed.path)), workspace)
    )


def _inside(path: Path, workspace: Path) -> bool:
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(workspace))
    except ValueError:
        return False
    return True


def import_file(path: Path) -> ModuleType:
    """Import a workspace plugin file under a private module name."""
    name = "baton_workspace_plugins." + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    # Registered before running so dataclasses and pickling inside the plugin work.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def register(plugins: PluginSet, name: str, obj: Any, label: str) -> bool:
    manager = plugins.manager
    if manager.has_plugin(name):
        plugins.problems.append(PluginProblem(label, f"another plugin is already named {name!r}"))
        return False
    try:
        manager.register(obj, name=name)
    except Exception as exc:
        _problem(plugins, label, exc)
        return False
    unknown = [
        impl_name
        for impl_name, caller in _hook_callers(manager, obj)
        if impl_name not in _SPEC_NAMES and not _optional(caller, obj)
    ]
    if unknown:
        manager.unregister(obj, name=name)
        plugins.problems.append(
            PluginProblem(
                label,
                f"unknown hook {', '.join(unknown)}; Baton's hooks are {', '.join(_SPEC_NAMES)}",
            )
        )
        return False
    plugins.order.append(name)
    log.info("plugin %s loaded from %s", name, label)
    return True


_SPEC_NAMES = tuple(name for name in dir(specs) if name.startswith("baton_"))


def _hook_callers(manager: pluggy.PluginManager, obj: Any) -> list[tuple[str, Any]]:
    return [(caller.name, caller) for caller in manager.get_hookcallers(obj) or []]


def _optional(caller: Any, obj: Any) -> bool:
    return any(impl.optionalhook for impl in caller.get_hookimpls() if impl.plugin is obj)


def _problem(plugins: PluginSet, label: str, exc: BaseException) -> None:
    problem = PluginProblem(label, _describe(exc))
    plugins.problems.append(problem)
    log.warning("%s", problem, exc_info=exc)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
