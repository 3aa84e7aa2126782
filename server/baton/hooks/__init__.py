"""Hooks and plugins: compaction lifecycle hooks and tool hooks, as commands or Python plugins.

`build_hooks` loads the plugins and makes the dispatcher and the `LifecycleHooks`
that `baton.features` connects to the compaction engine's and the session service's
seams.
Plugin authors need only `hookimpl` (and the event/answer models in
`baton.hooks.events`); see docs/plugins.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from baton.hooks.specs import hookimpl

if TYPE_CHECKING:
    from baton.hooks.lifecycle import LifecycleHooks
    from baton.session.service import SessionService

__all__ = ["build_hooks", "hookimpl"]


def build_hooks(sessions: SessionService) -> LifecycleHooks:
    from baton.hooks.dispatcher import HookDispatcher
    from baton.hooks.lifecycle import LifecycleHooks
    from baton.hooks.plugins import load_plugins
    from baton.secret_env import is_secret_name

    plugins = load_plugins(sessions.workspace, trusted=sessions.config.trust.trusted)
    config = sessions.config

    def secrets() -> list[str]:
        # Every key the server knows, the configured key variable whatever its name, and
        # every variable the command environment drops as a credential.
        settings = sessions.settings()
        found = sessions.credentials.secrets()
        found += [
            value
            for name, value in config.environ.items()
            if value and is_secret_name(name, settings)
        ]
        return found

    dispatcher = HookDispatcher(
        sessions.workspace,
        plugins,
        settings=sessions.settings,
        secrets=secrets,
        environ=lambda: config.environ,
    )
    return LifecycleHooks(sessions, dispatcher)
