"""Settings: defaults → user file → workspace file → environment → client.

The workspace file is the only layer the person did not write: it is filtered
by trust and may never relax the person's permissions (see `ConfigLoader`).

Keys are camelCase in files and in `initializationOptions.settings` (snake_case
is accepted too). Files are re-read when they change, so a session that does
not pin its model follows the configuration "afresh for every request".
Credentials are never part of settings: see `baton.auth`.
"""

from __future__ import annotations

import json
import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from platformdirs import user_config_path, user_data_path
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from baton.protocol import StrategySetting
from baton.terminal_escape import has_control
from baton.trust import Trust, decide

log = logging.getLogger(__name__)

ProviderId = Literal["openai", "openai-compatible", "local", "anthropic"]
Permission = Literal["allow", "ask", "deny"]
Layer = Literal["default", "user", "workspace", "environment", "client"]
# The layers that are the person's own: everything but the workspace's file.
PERSON_LAYERS: frozenset[Layer] = frozenset({"default", "user", "environment", "client"})


class _Section(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class CompactionSettings(_Section):
    auto: bool = True
    threshold: float = Field(0.85, gt=0, le=1)
    reserve: int | None = Field(None, ge=0)
    strategy: StrategySetting = "auto"
    server_threshold: float = Field(0.8, gt=0, le=1)
    model: str | None = None
    # Tokens of recent messages kept verbatim; default: a quarter of the usable window,
    # clamped to [1,000, 20,000].
    keep_recent_tokens: int | None = Field(None, ge=0)
    # Tokens of the newest tool outputs that pruning never masks.
    protect_tool_output_tokens: int | None = Field(None, ge=0)
    auto_continue: bool = True
    # Seconds a compaction's summary calls may take in all; past it the summary is
    # built by code from the ledger, the plan and the messages.
    summary_timeout: float = Field(600.0, gt=0, le=7200)
    # The ledger's budget: the room a compaction leaves it (compaction/room.py), at least
    # this share of the context window and at most `ledger_max_tokens` (and a quarter of
    # the window); past it entries fold by value to one line or a count, `recall` away.
    ledger_share: float = Field(0.10, gt=0, le=0.5)
    ledger_max_tokens: int = Field(8_000, ge=300)
    # The person's requests block's budget at most (15% of the usable window below it);
    # past it its least telling old messages fold to a head or a count, `recall` away.
    requests_max_tokens: int = Field(6_000, ge=300)


class PermissionSettings(_Section):
    bash: Permission = "ask"
    write: Permission = "ask"
    mcp: Permission = "ask"
    # `webfetch`, per host ("Always allow this host" is a session grant).
    web: Permission = "ask"


def _no_control(value: str | None) -> str | None:
    """A folder or file name is one visible line: control characters (an escape sequence
    that would steer a terminal, a newline) and bidi controls are refused."""
    if value is not None and has_control(value):
        raise ValueError("holds control or bidi characters; a path must be plain text, one line")
    return value


class PlanSettings(_Section):
    dir: str = ".baton/plans"

    _dir_is_text = field_validator("dir")(_no_control)


class CommandHook(_Section):
    command: list[str] = Field(min_length=1)
    timeout: float = Field(30.0, gt=0, le=3600)
    name: str | None = None


class HookSettings(_Section):
    pre_compact: list[CommandHook] = Field(default_factory=list)
    compacting: list[CommandHook] = Field(default_factory=list)
    compacted: list[CommandHook] = Field(default_factory=list)
    tool_before: list[CommandHook] = Field(default_factory=list)
    tool_after: list[CommandHook] = Field(default_factory=list)
    # Bounds of the autonomous pre-compact round.
    pre_compact_max_steps: int = Field(8, ge=1, le=100)
    pre_compact_timeout: float = Field(300.0, gt=0)
    # Nobody may be at the editor when an automatic compaction runs: a permission
    # request in the round that stays unanswered this long ends the round.
    pre_compact_permission_timeout: float = Field(60.0, gt=0)


class LocalSettings(_Section):
    """The embedded model (`provider = "local"`); see `baton.local.engine`."""

    model_path: str | None = None
    _model_path_is_text = field_validator("model_path")(_no_control)
    # Threads generating tokens; default: half the CPUs, at least one. Generation is
    # memory-bound, and on a busy 2-core machine two threads that wait on each other
    # measured 1-2 tok/s against 12-16 for one (bench/local_model.py).
    threads: int | None = Field(None, ge=1)
    # Threads reading the prompt (compute-bound); default: every CPU.
    batch_threads: int | None = Field(None, ge=1)
    context_size: int = Field(8192, ge=512)
    temperature: float = Field(0.2, ge=0, le=2)
    top_p: float = Field(0.9, gt=0, le=1)
    seed: int = 42
    # The most tokens one response may generate, summaries included.
    max_tokens: int = Field(1024, ge=16)
    # Keep the KV cache of the instructions and tools on disk between runs
    # (local/prompt_cache.py), so a new process does not read them again.
    prompt_cache: bool = True


class ToolSettings(_Section):
    bash_timeout_ms: int = Field(120_000, ge=100)
    # The most one tool result may say; lowered for small windows (tools/limits.py).
    max_output_chars: int = Field(30_000, ge=1_000)
    # The share of the usable context window one tool result may take at most.
    output_share: float = Field(0.25, gt=0, le=1)
    read_max_lines: int = Field(2_000, ge=10)
    # Identical calls in a row that run; the next ones are refused (session/repeats.py).
    repeat_limit: int = Field(2, ge=1, le=100)
    # After a write or edit, the file's new problems from the editor (a client that
    # announced `capabilities.diagnostics`), waited for at most this long.
    diagnostics_after_edit: bool = True
    diagnostics_wait_ms: int = Field(1_500, ge=0, le=10_000)


class WebSettings(_Section):
    """`webfetch`. Only the person's own layers may set this section: which addresses a
    fetch may reach is theirs to decide, never a repository's."""

    # Hosts (`name` or `name:port`) on a loopback, link-local or private address that
    # webfetch may reach; every other such address is refused.
    allow_private_hosts: list[str] = Field(default_factory=list)
    max_bytes: int = Field(5_000_000, ge=1_000, le=50_000_000)
    timeout_s: float = Field(30.0, gt=0, le=120)
    max_redirects: int = Field(5, ge=0, le=10)


class EnvSettings(_Section):
    """Which environment variables commands (bash, command hooks) do not get; see
    `baton.secret_env`. Only the person's own layers may set this section."""

    # More names (shell-style patterns, any case) to hide from commands.
    scrub: list[str] = Field(default_factory=list)
    # Names (or patterns) to pass on although they look like secrets by the built-in list.
    keep: list[str] = Field(default_factory=list)
    # Variables (names or patterns) whose value a trusted workspace's own `baseUrl` may
    # receive as its key when the workspace's `apiKeyEnv` names one; never the variable
    # holding the person's own key, nor one with the same value (baton.providers.factory).
    workspace_keys: list[str] = Field(default_factory=list)


class AgentSettings(_Section):
    """How Baton talks to the model (prompts.py holds the words)."""

    # The compact system prompt and tool descriptions: "auto" when the usable window is
    # at most 16k tokens (baton.context.compact_prompt), or always / never.
    compact_prompt: Literal["auto", "always", "never"] = "auto"
    # Once per turn, a model that answers a question about the code without a tool call,
    # while the workspace has files, is asked to look first (baton.session.nudge).
    nudge_no_tool: bool = True


class DelegationSettings(_Section):
    """`task` children (baton.delegation)."""

    # A child's final message comes back cut to this many tokens (the whole of it is
    # one `recall` of the task call away).
    result_tokens: int = Field(1_000, ge=50, le=100_000)
    # Read-only children of one response that run at the same time.
    max_parallel: int = Field(4, ge=1, le=32)
    # Model steps a child may take (an agent's own `maxSteps` may lower it).
    max_steps: int = Field(40, ge=1, le=10_000)
    # Input and output tokens a child may spend; reached, it ends with what it did.
    token_budget: int = Field(400_000, ge=1_000)
    # Children one model response may start, and one turn of a session (past either, a
    # `task` call is answered "not started" and the model is told why).
    max_children_per_response: int = Field(8, ge=1, le=100)
    max_children_per_turn: int = Field(32, ge=1, le=1_000)


class McpServerSettings(_Section):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")
    command: list[str] | None = None
    url: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    allow: bool = False
    # Seconds to start (connect and list tools) and for one tool call.
    start_timeout: float = Field(20.0, gt=0, le=600)
    timeout: float = Field(120.0, gt=0, le=3600)


class McpSettings(_Section):
    servers: list[McpServerSettings] = Field(default_factory=list)


class AnthropicSettings(_Section):
    """The `anthropic` provider (Claude's Messages API; docs/providers.md)."""

    # Where Claude is asked (ANTHROPIC_BASE_URL; the host, `/v1` optional); None: the
    # top-level `baseUrl` from a settings file, else Anthropic's own API. OPENAI_BASE_URL
    # never applies here.
    base_url: str | None = None
    # How long the prompt cache keeps what Baton's breakpoints mark: Anthropic's default
    # five minutes, or an hour (writes then cost 2x the input price instead of 1.25x).
    cache_ttl: Literal["5m", "1h"] = "5m"
    # Extended thinking's budget in tokens; None: thinking off. Thinking blocks come
    # back signed and are replayed unchanged to the same model.
    thinking_budget: int | None = Field(None, ge=1024)
    # The most tokens one answer may generate (thinking not counted: its budget is added).
    max_tokens: int = Field(16_000, ge=16, le=300_000)
    # Context editing on the server: clear old tool results (and, with thinking on, old
    # thinking) past the trigger. Off by default: it rewrites the prompt's middle, so the
    # cache is read up to the first cleared block only.
    context_editing: bool = False
    context_editing_trigger: int = Field(100_000, ge=1_000)


class SkillsSettings(_Section):
    # The share of the context window the skills list may take; beyond it descriptions
    # are shortened (docs/skills.md).
    catalog_share: float = Field(0.02, gt=0, le=0.5)


class Settings(_Section):
    provider: ProviderId | None = None
    model: str | None = None
    base_url: str | None = None
    context_window: int | None = Field(None, ge=1024)
    max_steps: int = Field(50, ge=1, le=10_000)
    api_key_env: str = Field("OPENAI_API_KEY", min_length=1)
    request_timeout: float = Field(600.0, gt=0)
    max_retries: int = Field(4, ge=0, le=20)
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    plans: PlanSettings = Field(default_factory=PlanSettings)
    hooks: HookSettings = Field(default_factory=HookSettings)
    local: LocalSettings = Field(default_factory=LocalSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    delegation: DelegationSettings = Field(default_factory=DelegationSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    env: EnvSettings = Field(default_factory=EnvSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    skills: SkillsSettings = Field(default_factory=SkillsSettings)
    anthropic: AnthropicSettings = Field(default_factory=AnthropicSettings)
    # Which layer supplied each value (canonical dotted key -> layer); see `origin`.
    _origins: dict[str, Layer] = PrivateAttr(default_factory=dict)
    # `apiKeyEnv` as the person's own layers set it (the workspace's may differ).
    _person_key_env: str | None = PrivateAttr(default=None)

    @property
    def person_key_env(self) -> str:
        """The variable holding the person's own key: `apiKeyEnv` from their layers."""
        return self._person_key_env or (
            self.api_key_env if self.from_person("apiKeyEnv") else "OPENAI_API_KEY"
        )

    def person_key_env_for(self, provider: str) -> str:
        """The variable holding the person's key for `provider`: their `apiKeyEnv`, or,
        left at its default, the provider's own variable (ANTHROPIC_API_KEY for Claude)."""
        own = self.person_key_env
        if own == "OPENAI_API_KEY":
            return DEFAULT_KEY_ENVS.get(provider, own)
        return own

    def origin(self, key: str) -> Layer:
        """The layer `key` ("baseUrl", "permissions.bash") came from; "default" if none set it."""
        canonical = ".".join(_canonical_key(part) for part in key.split("."))
        return self._origins.get(canonical, "default")

    def from_person(self, key: str) -> bool:
        """Whether `key` is the default or was set by one of the person's own layers."""
        return self.origin(key) in PERSON_LAYERS


# Context windows of well-known models, by id prefix (longest prefix wins).
KNOWN_CONTEXT_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "codex-mini": 200_000,
    "qwen2.5-coder": 32_768,
    # Claude: 200k tokens by default on every current model (the 1M window of some is a
    # beta a person opts into with `contextWindow`).
    "claude": 200_000,
}
DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MODELS: dict[str, str] = {
    "openai": "gpt-5.1",
    "local": "qwen2.5-coder-1.5b-instruct",
    "anthropic": "claude-sonnet-4-6",
}
# Anthropic's base URL is the host, without `/v1`, as its SDK and ANTHROPIC_BASE_URL have it.
DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
# The variable holding each provider's key when the person's `apiKeyEnv` is left unset.
DEFAULT_KEY_ENVS: dict[str, str] = {"anthropic": "ANTHROPIC_API_KEY"}


def known_context_window(model: str) -> int | None:
    best: tuple[int, int] | None = None
    lowered = model.lower()
    for prefix, window in KNOWN_CONTEXT_WINDOWS.items():
        if lowered.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), window)
    return best[1] if best else None


@dataclass(frozen=True)
class ConfigProblem:
    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.message}"


@dataclass
class _FileCache:
    key: tuple[int, int] | None = None
    data: dict[str, Any] = field(default_factory=dict)
    problem: ConfigProblem | None = None


# Environment variables that configure Baton; `BATON_<SECTION>__<KEY>` reaches nested keys.
_ENV_SHORTHANDS = {
    "OPENAI_BASE_URL": ("baseUrl",),
    "ANTHROPIC_BASE_URL": ("anthropic", "baseUrl"),
}
_ENV_IGNORED = {"BATON_SKIP_VSCODE_E2E", "BATON_TEST_REAL_MODEL", "BATON_LOG_LEVEL"}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        norm = _canonical_key(key)
        existing_key = next((k for k in out if _canonical_key(k) == norm), None)
        if existing_key is not None:
            prev = out.pop(existing_key)
            if isinstance(prev, dict) and isinstance(value, dict):
                out[key] = _merge(prev, value)
                continue
        out[key] = value
    return out


def _canonical_key(key: str) -> str:
    return key.replace("_", "").lower()


def _parse_env_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def env_overrides(environ: dict[str, str] | os._Environ[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, raw in environ.items():
        if name in _ENV_SHORTHANDS:
            path: tuple[str, ...] = _ENV_SHORTHANDS[name]
            value: Any = raw
        elif name.startswith("BATON_") and name not in _ENV_IGNORED:
            parts = name[len("BATON_") :].lower().split("__")
            if not all(parts):
                continue
            path = tuple(to_camel(p) for p in parts)
            value = _parse_env_value(raw)
            if path[-1] in ("model", "baseUrl", "provider", "dir", "modelPath", "apiKeyEnv"):
                value = raw
        else:
            continue
        node = out
        for key in path[:-1]:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                break
        else:
            node[path[-1]] = value
    # Keep only keys Settings knows, so unrelated BATON_* variables do no harm.
    return _known_only(out, Settings)


def _known_only(data: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    known: dict[str, Any] = {}
    fields: dict[str, FieldInfo] = {}
    for name, info in model.model_fields.items():
        fields[_canonical_key(name)] = info
        if info.alias:
            fields[_canonical_key(info.alias)] = info
    for key, value in data.items():
        found = fields.get(_canonical_key(key))
        if found is None:
            continue
        sub = found.annotation
        if isinstance(value, dict) and isinstance(sub, type) and issubclass(sub, BaseModel):
            known[key] = _known_only(value, sub)
        else:
            known[key] = value
    return known


def data_dir() -> Path:
    """Baton's data directory (honours XDG_DATA_HOME on Linux)."""
    return user_data_path("baton", appauthor=False)


def user_config_file() -> Path:
    return user_config_path("baton", appauthor=False) / "config.toml"


def workspace_config_file(workspace: Path) -> Path:
    return workspace / ".baton" / "config.toml"


class ConfigLoader:
    """Resolves settings for a workspace, re-reading files only when they change.

    Layers, later over earlier: defaults, the user file, the workspace file,
    the environment, the client's settings. All but the workspace file are the
    person's own. The workspace file is filtered (`split_workspace_layer`):
    untrusted, it may only tune; trusted, it may do what the person's layers
    may, except relax a permission the person set.
    """

    def __init__(
        self,
        workspace: Path,
        client_settings: dict[str, Any] | None = None,
        environ: dict[str, str] | None = None,
        *,
        trust: Trust | None = None,
    ) -> None:
        self.workspace = workspace
        self.client_settings = client_settings or {}
        self._environ = environ
        self._trust = trust if trust is not None else decide(workspace, None)
        self._files: dict[Path, _FileCache] = {}
        self._last: tuple[tuple[Any, ...], _Resolved] | None = None
        self._reported: set[str] = set()

    @property
    def environ(self) -> dict[str, str] | os._Environ[str]:
        return self._environ if self._environ is not None else os.environ

    @property
    def trust(self) -> Trust:
        return self._trust

    @trust.setter
    def trust(self, value: Trust) -> None:
        self._trust = value
        self._last = None

    def _read_file(self, path: Path) -> _FileCache:
        cache = self._files.setdefault(path, _FileCache())
        try:
            st = path.stat()
        except FileNotFoundError:
            cache.key, cache.data, cache.problem = None, {}, None
            return cache
        except OSError as exc:
            cache.key, cache.data = None, {}
            cache.problem = ConfigProblem(str(path), f"cannot read: {exc.strerror}")
            return cache
        key = (st.st_mtime_ns, st.st_size)
        if cache.key == key:
            return cache
        cache.key = key
        try:
            cache.data = tomllib.loads(path.read_text(encoding="utf-8"))
            cache.problem = None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
            cache.data = {}
            cache.problem = ConfigProblem(str(path), f"not valid TOML: {exc}")
        return cache

    def _resolved(self) -> _Resolved:
        layers: list[tuple[Layer, str, dict[str, Any]]] = []
        problems: list[ConfigProblem] = []
        cache_key: list[Any] = [self._trust]
        for layer, path in (
            ("user", user_config_file()),
            ("workspace", workspace_config_file(self.workspace)),
        ):
            entry = self._read_file(path)
            cache_key.append((str(path), entry.key))
            if entry.problem:
                problems.append(entry.problem)
            elif entry.data:
                layers.append((cast(Layer, layer), str(path), entry.data))
        env = env_overrides(self.environ)
        cache_key.append(json.dumps(env, sort_keys=True))
        cache_key.append(json.dumps(self.client_settings, sort_keys=True, default=str))
        key = tuple(cache_key)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        if env:
            layers.append(("environment", "environment", env))
        if self.client_settings:
            layers.append(("client", "client settings", self.client_settings))
        if self._trust.warning:
            problems.append(ConfigProblem("workspace trust", self._trust.warning))
        resolved = _layer(layers, problems, trusted=self._trust.trusted)
        for problem in resolved.problems:
            if str(problem) not in self._reported:
                self._reported.add(str(problem))
                log.warning("configuration problem, source ignored: %s", problem)
        self._last = (key, resolved)
        return resolved

    def load(self) -> tuple[Settings, list[ConfigProblem]]:
        """Current settings and any problems found; a broken source is skipped, not fatal."""
        resolved = self._resolved()
        return resolved.settings, resolved.problems

    def settings(self) -> Settings:
        return self.load()[0]

    def person_settings(self) -> Settings:
        """Settings from the person's own layers only (defaults, user file, environment,
        client): what a feature that must not follow the workspace reads."""
        return self._resolved().person

    def ignored(self) -> list[str]:
        """What the workspace file sets that is not in force now, each with why."""
        return list(self._resolved().ignored)


@dataclass(frozen=True)
class _Resolved:
    settings: Settings
    person: Settings
    problems: list[ConfigProblem]
    ignored: list[str]


_STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
# What an untrusted workspace may still set: tuning that can neither run code, nor choose
# where requests and keys go, nor relax a permission (permissions are handled apart: a
# workspace may always tighten them). Canonical dotted paths; a section name covers the
# whole section. A setting added later is ignored from an untrusted workspace until it is
# listed here, which is the safe default.
UNTRUSTED_WORKSPACE_MAY_SET = frozenset(
    {
        "model",
        "contextwindow",
        "maxsteps",
        "requesttimeout",
        "maxretries",
        "compaction",
        "agent",
        "delegation",
        "plans.dir",
        "tools.bashtimeoutms",
        "tools.maxoutputchars",
        "tools.readmaxlines",
        "tools.repeatlimit",
        "tools.diagnosticsafteredit",
        "tools.diagnosticswaitms",
        "hooks.precompactmaxsteps",
        "hooks.precompacttimeout",
        "hooks.precompactpermissiontimeout",
        "local.threads",
        "local.batchthreads",
        "local.contextsize",
        "local.temperature",
        "local.topp",
        "local.seed",
        "local.maxtokens",
        "skills.catalogshare",
        "anthropic.cachettl",
        "anthropic.thinkingbudget",
        "anthropic.maxtokens",
        "anthropic.contextediting",
        "anthropic.contexteditingtrigger",
    }
)


# Limits an untrusted workspace may lower but never raise above what the person's layers
# (or the defaults) set: they bound how much runs and is spent without the person
# watching (steps, retries, children, tokens, a command's time).
UNTRUSTED_WORKSPACE_MAY_ONLY_LOWER = frozenset(
    {
        "maxsteps",
        "maxretries",
        "delegation.maxsteps",
        "delegation.tokenbudget",
        "delegation.maxparallel",
        "delegation.maxchildrenperresponse",
        "delegation.maxchildrenperturn",
        "tools.bashtimeoutms",
        "hooks.precompactmaxsteps",
    }
)


# What a workspace file may never set, trusted or not: which secrets commands get is the
# person's own choice (a repository could otherwise hand itself their tokens).
PERSON_ONLY = frozenset({"env", "web"})
PERSON_ONLY_NOTE = "only your own settings may set it, never a workspace"


def split_workspace_layer(
    data: dict[str, Any], *, trusted: bool
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The workspace file as (settings that apply, its permissions, ignored setting names).

    Permissions come apart because they are not layered like the rest: see `_layer`.
    """
    permissions: dict[str, Any] = {}
    ignored: list[str] = []

    def walk(node: dict[str, Any], prefix: tuple[str, ...]) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        for key, value in node.items():
            path = (*prefix, key)
            canonical = ".".join(_canonical_key(part) for part in path)
            if canonical == "permissions" and isinstance(value, dict):
                permissions.update(value)
                continue
            if canonical in PERSON_ONLY:
                ignored.append(f"{'.'.join(path)} ({PERSON_ONLY_NOTE})")
                continue
            if trusted or canonical in UNTRUSTED_WORKSPACE_MAY_SET:
                kept[key] = value
            elif isinstance(value, dict) and value:
                inner = walk(value, path)
                if inner:
                    kept[key] = inner
            else:
                ignored.append(".".join(path))
        return kept

    return walk(data, ()), permissions, ignored


def _layer(
    layers: list[tuple[Layer, str, dict[str, Any]]],
    problems: list[ConfigProblem],
    *,
    trusted: bool,
) -> _Resolved:
    merged: dict[str, Any] = {}
    origins: dict[str, Layer] = {}
    ignored: list[str] = []
    workspace_permissions: dict[str, Any] = {}
    workspace_name = ""
    for layer, name, raw in layers:
        data = raw
        if layer == "workspace":
            data, workspace_permissions, dropped = split_workspace_layer(raw, trusted=trusted)
            workspace_name = name
            if not trusted:
                dropped += _drop_raised_limits(merged, data)
            ignored += [f"{_short(name)}: {item}" for item in dropped]
        candidate = _merge(merged, data)
        try:
            Settings.model_validate(candidate)
        except ValidationError as exc:
            problems.append(ConfigProblem(name, _describe(exc)))
            continue
        merged = candidate
        _record_origins(data, (), layer, origins)
    if workspace_permissions:
        try:
            PermissionSettings.model_validate(workspace_permissions)
        except ValidationError as exc:
            problems.append(ConfigProblem(workspace_name, _describe(exc)))
        else:
            ignored += _apply_workspace_permissions(
                merged, origins, workspace_permissions, _short(workspace_name), trusted=trusted
            )
    settings = _settings(merged, origins)
    person = settings
    if any(layer == "workspace" for layer, _, _ in layers):
        rest = [entry for entry in layers if entry[0] != "workspace"]
        person = _layer(rest, [], trusted=trusted).settings
    settings._person_key_env = person.api_key_env
    return _Resolved(settings, person, problems, ignored)


def _drop_raised_limits(merged: dict[str, Any], data: dict[str, Any]) -> list[str]:
    """Take out of an untrusted workspace's `data` every limit it raises above the value
    of the layers before it (UNTRUSTED_WORKSPACE_MAY_ONLY_LOWER); what was taken out."""
    try:
        current: BaseModel = Settings.model_validate(merged)
    except ValidationError:
        return []
    dropped: list[str] = []

    def walk(node: dict[str, Any], model: BaseModel, prefix: tuple[str, ...]) -> None:
        for key in list(node):
            field = _field_name(key, type(model))
            if field is None:
                continue
            value, now = node[key], getattr(model, field)
            path = ".".join(_canonical_key(part) for part in (*prefix, key))
            if isinstance(value, dict) and isinstance(now, BaseModel):
                walk(value, now, (*prefix, key))
            elif (
                path in UNTRUSTED_WORKSPACE_MAY_ONLY_LOWER
                and isinstance(value, int | float)
                and not isinstance(value, bool)
                and isinstance(now, int | float)
                and value > now
            ):
                del node[key]
                shown = ".".join((*prefix, key))
                dropped.append(
                    f"{shown} = {value!r} (an untrusted workspace may lower this limit, "
                    f"not raise it above {now!r})"
                )

    walk(data, current, ())
    return dropped


def _apply_workspace_permissions(
    merged: dict[str, Any],
    origins: dict[str, Layer],
    wanted: dict[str, Any],
    source: str,
    *,
    trusted: bool,
) -> list[str]:
    """Deny beats ask beats allow: the workspace may tighten any permission, relax only
    one the person left unset, and only once trusted."""
    ignored: list[str] = []
    current = Settings.model_validate(merged).permissions
    values: dict[str, Any] = {}
    for key, value in wanted.items():
        field = _field_name(key, PermissionSettings)
        if field is None:
            continue
        now: str = getattr(current, field)
        person_set = origins.get(f"permissions.{_canonical_key(field)}") is not None
        if _STRICTNESS[value] >= _STRICTNESS[now] or (trusted and not person_set):
            values[to_camel(field)] = value
            origins[f"permissions.{_canonical_key(field)}"] = "workspace"
        else:
            whose = "your" if person_set else "the default"
            why = "" if trusted else " in an untrusted workspace"
            ignored.append(
                f"{source}: permissions.{to_camel(field)} = {value!r} "
                f"(cannot relax {whose} {now!r}{why})"
            )
    if values:
        updated = _merge(merged, {"permissions": values})
        merged.clear()
        merged.update(updated)
    return ignored


def _field_name(key: str, model: type[BaseModel]) -> str | None:
    for name in model.model_fields:
        if _canonical_key(name) == _canonical_key(key):
            return name
    return None


def _record_origins(
    data: dict[str, Any], prefix: tuple[str, ...], layer: Layer, origins: dict[str, Layer]
) -> None:
    for key, value in data.items():
        path = (*prefix, _canonical_key(key))
        if isinstance(value, dict) and value:
            _record_origins(value, path, layer, origins)
        else:
            origins[".".join(path)] = layer


def _settings(merged: dict[str, Any], origins: dict[str, Layer]) -> Settings:
    settings = Settings.model_validate(merged)
    settings._origins = dict(origins)
    return settings


def _short(source: str) -> str:
    """A workspace file's name as the person knows it (relative to the workspace)."""
    parts = Path(source).parts
    return str(Path(*parts[-2:])) if len(parts) >= 2 else source


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)
