"""The `skill` tool: the model loads a skill's body (or one of its bundled files) by name."""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import Field

from baton.agent import framing, prompts
from baton.folder_scan import read_regular_head
from baton.skills.model import Skill, Snapshot
from baton.tools.base import ToolContext, ToolFailure, ToolInput, ToolResult

MAX_BUNDLED = 100
MAX_FILE_CHARS = 60_000
# Names the tool's `name` enum lists, at most: past it `name` is free text (a name or a
# word to find one), so the tool's schema stays small at any count of skills.
ENUM_MAX = 64
# Skills a search by words answers with, at most.
FOUND_MAX = 20


class SkillInput(ToolInput):
    name: str = Field(description="The skill's name, as the skills list gives it")
    file: str | None = Field(
        default=None, description="A bundled file's path as the skill lists it, to read it"
    )


class SkillHost(Protocol):
    """What the tool needs of the skills feature (baton.skills.service.SkillsFeature)."""

    def snapshot(self) -> Snapshot: ...

    def loaded_in_view(self, session_id: str, name: str) -> bool: ...


def input_model(names: list[str]) -> type[ToolInput]:
    """`SkillInput`, offering `name` as the enum of the skills the model may load."""

    class Input(SkillInput):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            schema = copy.deepcopy(SkillInput.model_json_schema(*args, **kwargs))
            if len(names) <= ENUM_MAX:
                schema["properties"]["name"]["enum"] = list(names)
            else:
                schema["properties"]["name"]["description"] = (
                    "The skill's name, or a word of what you need to find skills by"
                )
            return schema

    return Input


class SkillTool:
    name: ClassVar[str] = "skill"
    description: ClassVar[str] = prompts.SKILL_TOOL
    read_only: ClassVar[bool] = True

    def __init__(self, host: SkillHost, names: list[str], workspace: Path) -> None:
        self.host = host
        self.input_model = input_model(names)
        self.workspace = workspace

    async def run(self, args: SkillInput, ctx: ToolContext) -> ToolResult:
        skill = self.host.snapshot().skills.get(args.name)
        if skill is None or not skill.in_catalog:
            raise ToolFailure(not_found(self.host.snapshot().catalog(), args.name))
        if args.file:
            return ToolResult(output=read_bundled(skill, args.file))
        if self.host.loaded_in_view(ctx.session_id, skill.name):
            return ToolResult(output=prompts.SKILL_ALREADY_LOADED.format(name=skill.name))
        return ToolResult(output=render(skill, skill.body, self.workspace))


def not_found(catalog: list[Skill], name: str) -> str:
    """The answer to a name that is no skill: every skill when they are few, else the
    skills whose name or description holds a word of it (at most FOUND_MAX)."""
    if len(catalog) <= ENUM_MAX:
        names = ", ".join(s.name for s in catalog) or "none"
        return f"no skill named {name!r}; the skills are: {names}"
    words = [w for w in re.split(r"[^\w]+", name.lower()) if len(w) > 1]
    found = [
        s for s in catalog if any(w in s.name.lower() or w in s.description.lower() for w in words)
    ]
    shown_words = " or ".join(repr(w) for w in words) or "any word"
    if not found:
        return prompts.SKILLS_NONE_FOUND.format(name=name, total=len(catalog), words=shown_words)
    lines = [prompts.SKILLS_FOUND.format(name=name, words=shown_words)]
    for skill in found[:FOUND_MAX]:
        lines.append(f"- {framing.inline(skill.name)}: {framing.inline(skill.description[:200])}")
    if len(found) > FOUND_MAX:
        lines.append(f"(and {len(found) - FOUND_MAX:,} more; use a narrower word)")
    return "\n".join(lines)


def bundled(skill: Skill) -> list[str]:
    """The files beside a skill's SKILL.md, by path relative to its folder (links not
    followed, hidden entries left out), at most MAX_BUNDLED."""
    if skill.kind != "skill":
        return []
    folder = skill.path.parent
    out: list[str] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(root) / name
            if name.startswith(".") or path == skill.path or path.is_symlink():
                continue
            out.append(path.relative_to(folder).as_posix())
            if len(out) >= MAX_BUNDLED:
                return out
    return out


def render(
    skill: Skill,
    body: str,
    workspace: Path,
    *,
    files: Callable[[Skill], list[str]] = bundled,
) -> str:
    """The framed body the model is sent, with the bundled files listed by path."""
    text = body
    listed = files(skill)
    if listed:
        folder = skill.path.parent
        try:
            shown = folder.relative_to(workspace).as_posix()
            header = prompts.SKILL_FILES_READ.format(folder=framing.inline(shown))
        except ValueError:
            header = prompts.SKILL_FILES_OWN
        text += "\n\n" + header + "\n" + "\n".join(f"- {framing.inline(f)}" for f in listed)
    return framing.block("skill", text, {"name": skill.name})


def read_bundled(skill: Skill, relative: str) -> str:
    if relative not in bundled(skill):
        raise ToolFailure(
            f"{relative!r} is not one of the files of skill {skill.name}; "
            f"they are: {', '.join(bundled(skill)) or 'none'}"
        )
    path = skill.path.parent / relative
    try:
        # A regular file only, never waited on (a FIFO among a skill's files), and only
        # as much as can be shown (a UTF-8 character is at most 4 bytes).
        data = read_regular_head(path, MAX_FILE_CHARS * 4)
    except OSError as exc:
        raise ToolFailure(f"cannot read {relative}: {exc.strerror or exc}") from None
    if b"\0" in data[:8192]:
        raise ToolFailure(f"{relative} is a binary file")
    text = data.decode("utf-8", errors="replace")
    if len(text) > MAX_FILE_CHARS:
        text = text[:MAX_FILE_CHARS] + f"\n[... cut at {MAX_FILE_CHARS} characters]"
    return framing.block("skill-file", text, {"skill": skill.name, "path": relative})
