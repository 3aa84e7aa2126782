"""The `skill` tool: the model loads a skill's body (or one of its bundled files) by name."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import Field

from baton.agent import framing, prompts
from baton.skills.model import Skill, Snapshot
from baton.tools.base import ToolContext, ToolFailure, ToolInput, ToolResult

MAX_BUNDLED = 100
MAX_FILE_CHARS = 60_000


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
            schema["properties"]["name"]["enum"] = list(names)
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
            names = ", ".join(s.name for s in self.host.snapshot().catalog()) or "none"
            raise ToolFailure(f"no skill named {args.name!r}; the skills are: {names}")
        if args.file:
            return ToolResult(output=read_bundled(skill, args.file))
        if self.host.loaded_in_view(ctx.session_id, skill.name):
            return ToolResult(output=prompts.SKILL_ALREADY_LOADED.format(name=skill.name))
        return ToolResult(output=render(skill, skill.body, self.workspace))


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
        data = path.read_bytes()
    except OSError as exc:
        raise ToolFailure(f"cannot read {relative}: {exc.strerror or exc}") from None
    if b"\0" in data[:8192]:
        raise ToolFailure(f"{relative} is a binary file")
    text = data.decode("utf-8", errors="replace")
    if len(text) > MAX_FILE_CHARS:
        text = text[:MAX_FILE_CHARS] + f"\n[... cut at {MAX_FILE_CHARS} characters]"
    return framing.block("skill-file", text, {"skill": skill.name, "path": relative})
