"""The skills feature: what is found on disk, the catalog block, the loaded skills kept
after a compaction, the `skill` tool, and slash commands expanded into prompts.

Files are scanned again (a `stat` per file, off the event loop) before each turn and
each listing, so a skill added, edited or removed counts from the next turn on. The
catalog's text, and the tool's enum, change only when a skill's name or description
does: the cached prefix of a session holds for as long as its skills stay the same.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from baton import protocol as p
from baton.agent.events import ClientChannel
from baton.agent.state import SessionState, View
from baton.config import ConfigLoader, Settings
from baton.labels import label
from baton.skills import catalog, loaded
from baton.skills.builtins import BUILTIN_NAMES, BUILTINS
from baton.skills.discovery import Scanner
from baton.skills.expand import expand, parse_command
from baton.skills.model import Skill, Snapshot
from baton.skills.tool import SkillTool, render
from baton.tools.base import Tool

if TYPE_CHECKING:
    from baton.agent.turn import Turn
    from baton.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Expanded:
    """A person's `/name arguments` as the message the model is sent."""

    text: str
    meta: dict[str, Any]
    skill: Skill


class SkillsFeature:
    def __init__(
        self,
        workspace: Path,
        config: ConfigLoader,
        channel: ClientChannel,
        tools: ToolRegistry,
        states: Callable[[str], SessionState],
        *,
        person: Path | None = None,
    ) -> None:
        self.workspace = workspace
        self.config = config
        self.channel = channel
        self.tools = tools
        # The session service's `state` (built after this feature: called only at a turn).
        self.states = states
        self.scanner = Scanner(workspace, person=person)
        self._snapshot: Snapshot | None = None
        self._offered: tuple[str, ...] = ()
        self._catalogs: dict[tuple[Any, ...], str | None] = {}
        self._lock = asyncio.Lock()
        # Per session: the commands and problems it was last told of.
        self._told: dict[str, tuple[Any, ...]] = {}

    # ------------------------------------------------------------------ discovery

    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            self._apply(self.scanner.scan(trusted=self.config.trust.trusted))
        assert self._snapshot is not None
        return self._snapshot

    async def refresh(self) -> Snapshot:
        """Scan again (changed files are parsed again) in a worker thread."""
        async with self._lock:
            trusted = self.config.trust.trusted
            snapshot = await asyncio.to_thread(self.scanner.scan, trusted=trusted)
            self._apply(snapshot)
        return snapshot

    def _apply(self, snapshot: Snapshot) -> None:
        names = tuple(s.name for s in snapshot.catalog())
        if names != self._offered or self._snapshot is None:
            if names:
                tool = SkillTool(self, list(names), self.workspace)
                self.tools.register(cast(Tool, tool), replace=True)
            else:
                self.tools.unregister(SkillTool.name)
            self._offered = names
        for problem in snapshot.problems:
            if self._snapshot is None or problem not in self._snapshot.problems:
                log.warning("skill file not used: %s", problem)
        self._snapshot = snapshot

    def ignored(self) -> list[str]:
        """An untrusted workspace's skills and commands, for the trust notice."""
        return list(self.snapshot().ignored)

    def problems(self) -> list[str]:
        snapshot = self.snapshot()
        shadowed = [
            f"{s.path}: /{s.name} is a built-in command; this file is not used as one"
            for s in snapshot.skills.values()
            if s.name in BUILTIN_NAMES
        ]
        return (
            [str(x) for x in snapshot.problems]
            + [f"name defined twice: {clash}" for clash in snapshot.clashes]
            + shadowed
        )

    # ------------------------------------------------------------------ the context

    def catalog(self, settings: Settings, window: int) -> str | None:
        """The skills block for a window of `window` tokens (None without skills)."""
        snapshot = self.snapshot()
        budget = max(1, int(settings.skills.catalog_share * window))
        key = (snapshot.catalog_key(), budget)
        if key not in self._catalogs:
            if len(self._catalogs) > 16:
                self._catalogs.clear()
            self._catalogs[key] = catalog.render(snapshot.catalog(), budget)
        return self._catalogs[key]

    def kept(self, state: SessionState, view: View, usable_window: int | None = None) -> list[str]:
        """The skill blocks after a compaction's checkpoint: every skill the session
        loaded in the part `view` compacted, verbatim like the plan, within their budget
        (`loaded.kept_budget` of `usable_window`; past it the oldest fold to one line,
        `loaded.within_budget`)."""
        budget = None if usable_window is None else loaded.kept_budget(usable_window)
        # Frozen for the view, like the plan block: what later turns load is appended after
        # it, never put into it, so the view's prefix holds.
        key = (view.signature, len(state.reverted), budget)
        cached = state.skill_blocks
        if cached is not None and cached[0] == key:
            return cached[1]
        kept = loaded.kept_after(state, view)
        if budget is None:
            texts = [load.text for load in kept]
        else:
            texts = [
                load.text if whole else loaded.folded_line(load)
                for load, whole in loaded.within_budget(kept, budget)
            ]
        if view is state.view:
            state.skill_blocks = (key, texts)
        return texts

    def loaded_in_view(self, session_id: str, name: str) -> bool:
        state = self.states(session_id)
        kept = loaded.kept_after(state, state.view)
        cached = state.skill_blocks
        if cached is not None and cached[0][:2] == (state.view.signature, len(state.reverted)):
            # A kept skill folded to one line is not in view: the tool loads its body.
            kept = [load for load in kept if load.text in cached[1]]
        return loaded.in_view(state, name, kept)

    # ------------------------------------------------------------------ commands

    def commands(self) -> list[p.CommandInfo]:
        out = [
            p.CommandInfo(
                name=c.name, description=c.description, source="builtin", argument_hint=c.hint
            )
            for c in BUILTINS
        ]
        for skill in self.snapshot().skills.values():
            if skill.name in BUILTIN_NAMES:
                continue
            out.append(
                # A file's words, shown to the person on every face: labels (baton.labels).
                p.CommandInfo(
                    name=skill.name,
                    description=label(skill.description),
                    source=skill.kind,
                    argument_hint=label(skill.argument_hint) if skill.argument_hint else None,
                    origin=skill.origin,
                    path=str(skill.path),
                    model=skill.model,
                    agent=skill.agent,
                    model_invocable=skill.in_catalog,
                )
            )
        return out

    async def list_commands(self) -> p.CommandsListResult:
        await self.refresh()
        return p.CommandsListResult(commands=self.commands(), problems=self.problems())

    async def expand(self, text: str, command: p.PromptCommand | None) -> Expanded | None:
        """The message for a prompt that is a slash command of a skill or command file;
        None for anything else (a built-in, an unknown name, plain text)."""
        if command is not None:
            name, arguments = command.name.removeprefix("/"), command.arguments
        else:
            parsed = parse_command(text)
            if parsed is None:
                return None
            name, arguments = parsed
        await self.refresh()
        skill = self.snapshot().skills.get(name)
        if skill is None or name in BUILTIN_NAMES:
            return None
        body = expand(skill.body, arguments)
        expanded = render(skill, body, self.workspace) if skill.kind == "skill" else body
        typed = text if text.strip() else f"/{name} {arguments}".rstrip()
        meta: dict[str, Any] = {
            "command": {
                "name": name,
                "arguments": arguments.strip(),
                "typed": typed,
                "kind": skill.kind,
            }
        }
        if skill.agent:
            meta["command"]["agent"] = skill.agent
        if skill.model:
            meta["command"]["model"] = skill.model
        return Expanded(expanded, meta, skill)

    # ------------------------------------------------------------------ the session

    async def before_step(self, turn: Turn) -> None:
        """At a turn's first step: scan again, and tell the session if its commands or
        the problems with the files changed since it was last told."""
        if turn.steps:
            return
        await self.refresh()
        self.announce(turn.session_id)

    def _key(self) -> tuple[Any, ...]:
        return (tuple(c.model_dump_json() for c in self.commands()), tuple(self.problems()))

    def remember(self, session_id: str) -> None:
        """The session's client was just sent the commands as they are (a face did)."""
        self._told[session_id] = self._key()

    def announce(self, session_id: str) -> None:
        commands = self.commands()
        problems = self.problems()
        key = self._key()
        if self._told.get(session_id) == key:
            return
        first = session_id not in self._told
        self._told[session_id] = key
        if first and not problems and not self.snapshot().skills:
            return  # nothing beyond the built-ins every client knows
        self.channel.send_update(session_id, p.SkillsUpdate(commands=commands, problems=problems))
