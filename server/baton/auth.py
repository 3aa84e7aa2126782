"""API keys: from the environment or from the client at run time, held in memory only.

Nothing here is ever written to disk, logged, or handed to a plugin. Every key
that passes through is registered with the log redactor, and a key read from
the environment is wiped from the process's environment block
(`baton.secret_env.seal_process`): it stays in `os.environ`, in memory only.
"""

from __future__ import annotations

import os

from baton.logs import register_secret
from baton.secret_env import wipe_from_environment_block


class Credentials:
    def __init__(self, environ: dict[str, str] | None = None) -> None:
        self._keys: dict[str, str] = {}
        self._environ = environ

    def set(self, provider: str, api_key: str) -> None:
        register_secret(api_key)
        self._keys[provider] = api_key

    def get(self, provider: str, env_var: str) -> str | None:
        """The client's key for `provider` if one was set, else the environment's."""
        key = self._keys.get(provider)
        if key:
            return key
        return self.from_environment(env_var)

    def from_environment(self, env_var: str) -> str | None:
        """The environment's value of `env_var` only (never a key the client set)."""
        environ = self._environ if self._environ is not None else os.environ
        value = environ.get(env_var) or None
        if value:
            register_secret(value)
            if self._environ is None:
                # A variable read as a key (a client's apiKeyEnv too) leaves the process's
                # environment block: no child can read it from /proc/$PPID/environ.
                wipe_from_environment_block([env_var])
        return value

    def persons_keys(self, env_var: str) -> frozenset[str]:
        """The person's own keys: every key the client set and `env_var`'s value (the
        variable their own settings name), which no workspace's URL may receive."""
        keys = set(self._keys.values())
        own = self.from_environment(env_var)
        if own:
            keys.add(own)
        return frozenset(keys)

    def has_openai_key(self, env_var: str) -> bool:
        return self.get("openai", env_var) is not None

    def secrets(self) -> list[str]:
        """Every key currently known (for scrubbing hook inputs and notifications)."""
        out = list(self._keys.values())
        environ = self._environ if self._environ is not None else os.environ
        for name, value in environ.items():
            if value and (name.endswith("_API_KEY") or name.endswith("_TOKEN")):
                out.append(value)
        return [s for s in out if len(s) >= 8]
