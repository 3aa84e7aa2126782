"""Skills and command files as Baton holds them once read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from baton.config import ConfigProblem

Kind = Literal["skill", "command"]
# Whose folder a file came from: the person's own config folder, or the workspace's.
Origin = Literal["person", "workspace"]


@dataclass(frozen=True)
class Skill:
    """One `SKILL.md` (kind "skill") or one command file (kind "command")."""

    name: str
    description: str
    body: str
    path: Path  # the file itself
    kind: Kind
    origin: Origin
    argument_hint: str | None = None
    model: str | None = None
    agent: str | None = None
    # `disable-model-invocation: true`: a slash command only, never in the catalog.
    model_invocable: bool = True

    @property
    def in_catalog(self) -> bool:
        """Whether the model is offered it: skills only, unless the file says not."""
        return self.kind == "skill" and self.model_invocable


@dataclass(frozen=True)
class Snapshot:
    """Every skill and command in force at one scan, and what was wrong or left out."""

    skills: dict[str, Skill] = field(default_factory=dict)
    # Files that could not be used: `source` is the path, `message` why.
    problems: tuple[ConfigProblem, ...] = ()
    # A name defined twice: which file won, which lost.
    clashes: tuple[str, ...] = ()
    # An untrusted workspace's files, not in force (the trust notice lists them).
    ignored: tuple[str, ...] = ()

    def catalog(self) -> list[Skill]:
        """The skills the model may load, by name."""
        return [s for s in self.skills.values() if s.in_catalog]

    def catalog_key(self) -> tuple[tuple[str, str], ...]:
        """What the catalog block and the tool's enum are made of: equal keys, equal text."""
        return tuple((s.name, s.description) for s in self.catalog())
