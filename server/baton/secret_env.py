"""Which environment variables hold secrets, by their names: never passed to commands.

Every command Baton starts (the bash tool, command hooks) and the editor's
terminal when it runs bash for Baton get the server's environment minus every
variable whose name looks like a credential. The values of those variables are
also redacted from hook inputs (`baton.hooks`).

A name is secret-shaped when, in any case, it matches one of
`SECRET_NAME_PATTERNS` (shell-style patterns), one of the person's own
`env.scrub` patterns, or is the variable holding the provider's key
(`apiKeyEnv`). `env.keep` lists names (or patterns) the person wants commands
to see although they match a built-in pattern (a `GH_TOKEN` for `gh`, say); it
never passes the provider's key or a name the person listed in `env.scrub`.

`env` is one of the settings only the person sets: the user file, the
environment (`BATON_ENV__KEEP='["GH_TOKEN"]'`), the editor's user settings.
A workspace's `.baton/config.toml` never does, trusted or not (see
`baton.config.PERSON_ONLY`), so a repository cannot ask for a secret to be
handed to the commands it suggests.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from baton.config import Settings

# Matched against the upper-cased name. Documented in docs/security.md and README.
SECRET_NAME_PATTERNS: tuple[str, ...] = (
    "*_KEY",  # OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, STRIPE_KEY, ...
    "*_KEY_*",  # ..._KEY_FILE_CONTENT, ..._KEY_BASE64
    "*_SECRET*",  # CLIENT_SECRET, JWT_SECRET_KEY, ..._SECRETS
    "SECRET_*",
    "*_TOKEN*",  # GITHUB_TOKEN, AWS_SESSION_TOKEN, HF_TOKEN, NPM_TOKEN, ..._TOKENS
    "TOKEN",
    "*PASSWORD*",  # DB_PASSWORD, PGPASSWORD
    "*PASSWD*",
    "*_CREDENTIAL*",  # GOOGLE_APPLICATION_CREDENTIALS, ..._CREDENTIALS_JSON
    "*_PRIVATE_KEY*",  # SSH_PRIVATE_KEY, ..._PRIVATE_KEY_PATH
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "MYSQL_PWD",
)


def _matches(name: str, patterns: Iterable[str]) -> bool:
    upper = name.upper()
    return any(fnmatchcase(upper, pattern.upper()) for pattern in patterns)


def is_secret_name(name: str, settings: Settings) -> bool:
    """Whether a variable's value is a secret (by its name), whatever `env.keep` says:
    what hook inputs and logs are redacted of."""
    return (
        name == settings.api_key_env
        or _matches(name, SECRET_NAME_PATTERNS)
        or _matches(name, settings.env.scrub)
    )


def is_hidden(name: str, settings: Settings) -> bool:
    """Whether a command is started without this variable."""
    if name == settings.api_key_env or _matches(name, settings.env.scrub):
        return True
    return _matches(name, SECRET_NAME_PATTERNS) and not _matches(name, settings.env.keep)


def scrubbed_env(settings: Settings, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a command: inherited, minus every hidden variable."""
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items() if not is_hidden(name, settings)}


def hidden_names(settings: Settings, environ: Mapping[str, str] | None = None) -> list[str]:
    """The names a command must not see (set empty in an editor's terminal)."""
    source = os.environ if environ is None else environ
    return [name for name in source if is_hidden(name, settings)]
