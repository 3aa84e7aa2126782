"""The agents a `task` call can start: three built in, and custom ones from markdown files.

A custom agent is `<name>.md` in the person's config folder (`agents/`) or in the
workspace's `.baton/agents/`, with a small front matter (`name`, `description`,
`tools`, `model`, `maxSteps`) and the agent's instructions as its body. The
workspace's agents are code-like (they choose tools and words sent to the model), so
they count only in a trusted workspace; until then they are counted as ignored (the
first few named). The person's file wins over the workspace's of the same name, as
for skills. Folders are looked into with a bound (baton.folder_scan): at most
MAX_AGENT_FILES files, regular files only, read without blocking.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from baton.agent import prompts
from baton.config import user_config_file
from baton.folder_scan import (
    LISTED,
    Listing,
    folder_stamp,
    list_folder,
    read_regular,
    shown_entries,
)
from baton.skills import frontmatter

log = logging.getLogger(__name__)

WORKSPACE_AGENTS = Path(".baton") / "agents"
# What an explore child may use: reading, searching, and bash under the person's
# permissions; `recall` for what its own compaction hid.
EXPLORE_TOOLS = ("read", "glob", "grep", "bash", "recall", "webfetch", "diagnostics")
# A plan child adds the plan tools, on a plan file of its own (its own session's), and may
# ask the person a question (labelled with the child).
PLAN_TOOLS = (*EXPLORE_TOOLS, "plan_write", "plan_edit", "question")
# The tools whose use cannot change the workspace (beyond the person's own answers to
# bash), so children holding only these may run at the same time.
NON_WRITING = frozenset(PLAN_TOOLS)
# Never offered to a child: children have no children.
TASK_TOOL = "task"
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
MAX_AGENT_FILE_CHARS = 50_000
MAX_AGENT_FILE_BYTES = 256 * 1024
# Agent files of one folder used, at most (a repository can hold 150,000).
MAX_AGENT_FILES = 200


@dataclass(frozen=True)
class Agent:
    name: str
    description: str
    instructions: str
    # The tools it is offered; None: every tool the session has (except `task`).
    tools: tuple[str, ...] | None = None
    model: str | None = None
    max_steps: int | None = None
    # "builtin", or the file it was read from.
    source: str = "builtin"

    @property
    def writes(self) -> bool:
        """Whether the agent can change the workspace (then it never runs beside another)."""
        return self.tools is None or not set(self.tools) <= NON_WRITING

    def offers(self, name: str) -> bool:
        if name == TASK_TOOL:
            return False
        return self.tools is None or name in self.tools


BUILTIN: tuple[Agent, ...] = (
    Agent("explore", prompts.AGENT_EXPLORE_DESCRIPTION, prompts.AGENT_EXPLORE, EXPLORE_TOOLS),
    Agent("plan", prompts.AGENT_PLAN_DESCRIPTION, prompts.AGENT_PLAN, PLAN_TOOLS),
    Agent("build", prompts.AGENT_BUILD_DESCRIPTION, prompts.AGENT_BUILD, None),
)


@dataclass(frozen=True)
class AgentSet:
    agents: dict[str, Agent]
    # Workspace agent files not in force (the workspace is not trusted), relative paths.
    ignored: list[str]
    problems: list[str]

    def get(self, name: str) -> Agent | None:
        return self.agents.get(name)


def person_agents_dir() -> Path:
    return user_config_file().parent / "agents"


def load_agents(workspace: Path, *, trusted: bool, person_dir: Path | None = None) -> AgentSet:
    """The built-in agents, then the person's, then (trusted only) the workspace's. A
    name is taken once: a built-in's never by a file, the person's file over the
    workspace's (the clash is reported)."""
    agents = {agent.name: agent for agent in BUILTIN}
    problems: list[str] = []
    ignored: list[str] = []
    folder = workspace / WORKSPACE_AGENTS
    person = person_dir or person_agents_dir()
    sources = [*_listed(person, problems).paths]
    if trusted:
        sources += _listed(folder, problems).paths
    else:
        ignored = shown_entries(
            "agent", folder, lambda path: _relative(path, workspace), _agent_files(folder, LISTED)
        )
    for path in sources:
        try:
            data = read_regular(path, MAX_AGENT_FILE_BYTES)
            agent = parse_agent(data.decode("utf-8")[:MAX_AGENT_FILE_CHARS], path)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problems.append(f"{path}: {exc}")
            continue
        if any(agent.name == builtin.name for builtin in BUILTIN):
            problems.append(f"{path}: {agent.name!r} is a built-in agent's name")
            continue
        if agent.name in agents:
            problems.append(f"{path}: {agent.name!r} is {agents[agent.name].source}'s; not used")
            continue
        agents[agent.name] = agent
    for problem in problems:
        log.warning("agent file ignored: %s", problem)
    return AgentSet(agents, ignored, problems)


AgentFilesKey = tuple[object, ...]


def agent_files_key(
    workspace: Path, *, trusted: bool, person_dir: Path | None = None
) -> AgentFilesKey:
    """What `load_agents` would read now: trust, each folder's stamp, and each agent file
    it would read with its mtime and size. Equal keys give equal agent sets, so a caller
    reloads only when it changes. Bounded like the reading (MAX_AGENT_FILES a folder)."""
    person = person_dir or person_agents_dir()
    folder = workspace / WORKSPACE_AGENTS
    files = [*_agent_files(person).paths, *(_agent_files(folder).paths if trusted else ())]
    stamps = []
    for path in files:
        try:
            st = path.stat()
        except OSError:
            continue
        stamps.append((str(path), st.st_mtime_ns, st.st_size))
    return trusted, folder_stamp(person), folder_stamp(folder), tuple(stamps)


def _agent_files(folder: Path, max_entries: int = MAX_AGENT_FILES) -> Listing:
    return list_folder(
        folder, lambda e: e.name.endswith(".md") and e.is_file(), max_entries=max_entries
    )


def _listed(folder: Path, problems: list[str]) -> Listing:
    listing = _agent_files(folder)
    if not listing.complete:
        problems.append(
            f"{folder}: only {len(listing.paths)} agent files are used "
            f"(at most {MAX_AGENT_FILES} are looked at, within a time bound)"
        )
    return listing


def _relative(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)


def parse_agent(text: str, path: Path) -> Agent:
    """An agent from its file's text; ValueError says what is wrong with it."""
    parsed, body = frontmatter.split(text, required=True)
    fields = {key: str(value) for key, value in parsed.items()}
    name = fields.get("name") or path.stem
    if not _NAME.fullmatch(name):
        raise ValueError(f"name {name!r}: use lowercase letters, digits, '-' and '_'")
    description = fields.get("description", "").strip()
    if not description:
        raise ValueError("the front matter needs a description")
    tools = _tools(fields["tools"]) if "tools" in fields else None
    max_steps = None
    if fields.get("maxSteps"):
        try:
            max_steps = int(fields["maxSteps"])
        except ValueError:
            raise ValueError(f"maxSteps {fields['maxSteps']!r} is not a number") from None
        if not 1 <= max_steps <= 10_000:
            raise ValueError("maxSteps must be between 1 and 10000")
    instructions = body.strip()
    if not instructions:
        raise ValueError("the body (the agent's instructions) is empty")
    return Agent(
        name=name,
        description=" ".join(description.split()),
        instructions=instructions,
        tools=tools,
        model=fields.get("model") or None,
        max_steps=max_steps,
        source=str(path),
    )


def _tools(value: str) -> tuple[str, ...]:
    # `read, grep`, `[read, grep]`, or a YAML list of `- read` lines.
    items = value.strip().strip("[]").replace("\n", ",").split(",")
    names = [name.strip().removeprefix("- ").strip().strip("\"'") for name in items]
    names = [name for name in names if name]
    if not names:
        raise ValueError("tools is empty")
    if TASK_TOOL in names:
        raise ValueError("a child has no task tool")
    return tuple(dict.fromkeys(names))


# Agents the `task` tool's description lists, at most, and characters of each one's
# description there: the list is in every request, so it has a bound like every catalog.
DESCRIBED_MAX = 30
DESCRIPTION_CHARS = 300


def describe(agents: Iterable[Agent]) -> str:
    """The agents as the `task` tool's description lists them: at most DESCRIBED_MAX (the
    built-ins first), each description cut to DESCRIPTION_CHARS, the rest counted."""
    every = list(agents)
    lines = []
    for agent in every[:DESCRIBED_MAX]:
        mode = "read-only" if not agent.writes else "can change files"
        description = agent.description
        if len(description) > DESCRIPTION_CHARS:
            description = description[: DESCRIPTION_CHARS - 1].rstrip() + "…"
        lines.append(f"- {agent.name} ({mode}): {description}")
    if len(every) > DESCRIBED_MAX:
        lines.append(
            f"- … {len(every) - DESCRIBED_MAX:,} more agents are not listed here; "
            "a task call with an unknown agent name lists the names"
        )
    return "\n".join(lines)


def names_of(agents: Iterable[Agent], limit: int = 200) -> str:
    """The agents' names for a message, at most `limit` of them, the rest counted."""
    names = [agent.name for agent in agents]
    shown = ", ".join(names[:limit])
    return shown + (f", … and {len(names) - limit:,} more" if len(names) > limit else "")
