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

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from pathlib import Path

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


# ----------------------------------------------------------------------------- the server's own


# prctl(2) option: whether the process may be dumped, and so whether processes of the
# same user may read its /proc/PID/{environ,mem} or attach to it.
_PR_SET_DUMPABLE = 4
_wiped: set[str] = set()


def seal_process(settings: Settings, extra: Iterable[str] = ()) -> list[str]:
    """Keep the server's secrets from every process it starts (bash, hooks, MCP servers).

    A child's own environment is scrubbed (`scrubbed_env`), but it could read its
    parent's: `/proc/$PPID/environ` shows the environment block the server was started
    with, and `os.environ.pop` or `unsetenv` do not change that block. So every
    secret-shaped variable (by `is_secret_name`, `env.keep` too: those are handed to
    commands explicitly) is overwritten in place in that block and removed from the C
    library's environment; its value stays in `os.environ`, in memory only, where Baton
    reads keys. The process is also made non-dumpable, so a process of the same user
    cannot read its `/proc/PID/environ` or `/proc/PID/mem`, nor attach a debugger.
    Linux only (elsewhere nothing happens). Returns the names wiped from the block.
    """
    make_undumpable()
    names = {name for name in os.environ if is_secret_name(name, settings)}
    names.update(name for name in extra if name)
    return wipe_from_environment_block(names)


def make_undumpable() -> bool:
    """prctl(PR_SET_DUMPABLE, 0): /proc/PID/* of this process is root's, not the user's."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def wipe_from_environment_block(names: Iterable[str]) -> list[str]:
    """Zero `NAME=value` of each of `names` in the block `/proc/self/environ` shows, and
    unset them in the C library's environment (not in `os.environ`)."""
    wanted = {name for name in names if name not in _wiped}
    if not wanted or not sys.platform.startswith("linux"):
        return []
    for name in wanted:
        with contextlib.suppress(OSError, ValueError):
            os.unsetenv(name)
    bounds = _environment_block()
    if bounds is None:
        return []
    start, end = bounds
    raw = ctypes.string_at(start, end - start)
    wiped: list[str] = []
    offset = 0
    for entry in raw.split(b"\0"):
        raw_name, sep, _ = entry.partition(b"=")
        decoded = raw_name.decode("utf-8", "surrogateescape")
        if sep and decoded in wanted:
            ctypes.memset(start + offset, 0, len(entry))
            wiped.append(decoded)
        offset += len(entry) + 1
    _wiped.update(wanted)
    return wiped


def _environment_block() -> tuple[int, int] | None:
    """(env_start, env_end) of this process: fields 50 and 51 of /proc/self/stat."""
    try:
        stat = Path("/proc/self/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # fields[0] is field 3 (the state)
    if len(fields) < 49:
        return None
    start, end = int(fields[47]), int(fields[48])
    return (start, end) if 0 < start < end else None
