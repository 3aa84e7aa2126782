"""Where skills and command files are found, and reading them (re-read only when changed).

Folders, in the order a name is taken (the first one wins):

1. the person's own: `skills/<name>/SKILL.md` and `commands/*.md` in Baton's config
   folder (`~/.config/baton/` on Linux, platformdirs elsewhere);
2. the workspace's, from the workspace folder up to its git root, nearest first:
   `.baton/skills/`, `.agents/skills/`, `.claude/skills/` (skills) and
   `.claude/commands/`, `.opencode/command/`, `.opencode/commands/` (command files).

A workspace's files count only when it is trusted: a repository's skill is text it
puts in front of the model and offers the person as a command. Untrusted, they are
listed as ignored instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_config_path

from baton.config import ConfigProblem
from baton.skills.frontmatter import FrontmatterError, Value, split
from baton.skills.model import Kind, Origin, Skill, Snapshot

SKILL_FILE = "SKILL.md"
SKILL_FOLDERS = (".baton/skills", ".agents/skills", ".claude/skills")
COMMAND_FOLDERS = (".claude/commands", ".opencode/command", ".opencode/commands")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_FILE_BYTES = 256 * 1024
# How far up a workspace's parents the git root is looked for.
MAX_PARENTS = 32
_SKILL_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_COMMAND_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class Folder:
    path: Path
    kind: Kind
    origin: Origin


def person_folder() -> Path:
    return user_config_path("baton", appauthor=False)


def workspace_roots(workspace: Path) -> list[Path]:
    """The workspace folder and its parents up to the git root, nearest first; the
    workspace alone when it is not inside a git repository."""
    chain = [workspace]
    current = workspace
    for _ in range(MAX_PARENTS):
        if (current / ".git").exists():
            return chain
        if current.parent == current:
            break
        current = current.parent
        chain.append(current)
    return [workspace]


def folders(workspace: Path, *, person: Path | None = None) -> list[Folder]:
    """Every folder searched, in precedence order."""
    own = person if person is not None else person_folder()
    out = [Folder(own / "skills", "skill", "person"), Folder(own / "commands", "command", "person")]
    for root in workspace_roots(workspace):
        out += [Folder(root / sub, "skill", "workspace") for sub in SKILL_FOLDERS]
        out += [Folder(root / sub, "command", "workspace") for sub in COMMAND_FOLDERS]
    return out


def candidates(folder: Folder) -> Iterator[Path]:
    """The files one folder holds, by name: `<name>/SKILL.md` or `*.md`."""
    try:
        entries = sorted(os.scandir(folder.path), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if folder.kind == "skill":
            if entry.is_dir():
                yield Path(entry.path) / SKILL_FILE
        elif entry.name.endswith(".md") and entry.is_file():
            yield Path(entry.path)


class Scanner:
    """Reads the folders; a file is parsed again only when its size or time changed,
    so a scan before every turn costs a few `stat` calls."""

    def __init__(self, workspace: Path, *, person: Path | None = None) -> None:
        self.workspace = workspace
        self.person = person
        self._parsed: dict[Path, tuple[tuple[int, int], Skill | ConfigProblem]] = {}

    def scan(self, *, trusted: bool) -> Snapshot:
        skills: dict[str, Skill] = {}
        problems: list[ConfigProblem] = []
        clashes: list[str] = []
        ignored: list[str] = []
        seen: set[Path] = set()
        for folder in folders(self.workspace, person=self.person):
            for path in candidates(folder):
                if folder.origin == "workspace" and not trusted:
                    if path.is_file():
                        ignored.append(f"{folder.kind} file {self._shown(path)}")
                    continue
                parsed = self._read(path, folder)
                if parsed is None:
                    continue
                seen.add(path)
                if isinstance(parsed, ConfigProblem):
                    problems.append(parsed)
                    continue
                winner = skills.get(parsed.name)
                if winner is None:
                    skills[parsed.name] = parsed
                else:
                    clashes.append(
                        f"/{parsed.name}: {self._shown(winner.path)} is used, "
                        f"{self._shown(parsed.path)} is not"
                    )
        for stale in set(self._parsed) - seen:
            del self._parsed[stale]
        return Snapshot(
            skills=dict(sorted(skills.items())),
            problems=tuple(problems),
            clashes=tuple(clashes),
            ignored=tuple(ignored),
        )

    def _shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.workspace))
        except ValueError:
            return str(path)

    def _read(self, path: Path, folder: Folder) -> Skill | ConfigProblem | None:
        try:
            st = path.stat()
        except OSError:
            return None  # a skill folder without SKILL.md: not a skill
        key = (st.st_mtime_ns, st.st_size)
        cached = self._parsed.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        result = read_file(path, folder)
        self._parsed[path] = (key, result)
        return result


def read_file(path: Path, folder: Folder) -> Skill | ConfigProblem:
    """One skill or command file, or why it cannot be used."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return ConfigProblem(str(path), f"larger than {MAX_FILE_BYTES // 1024} KB")
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return ConfigProblem(str(path), "not UTF-8 text")
    except OSError as exc:
        return ConfigProblem(str(path), f"cannot be read: {exc.strerror or exc}")
    try:
        fields, body = split(text, required=folder.kind == "skill")
    except FrontmatterError as exc:
        return ConfigProblem(str(path), str(exc))
    try:
        if folder.kind == "skill":
            return _skill(path, folder, fields, body)
        return _command(path, folder, fields, body)
    except ValueError as exc:
        return ConfigProblem(str(path), str(exc))


def _text(fields: dict[str, Value], key: str) -> str | None:
    value = fields.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"`{key}` must be text, not {str(value).lower()}")
    return value.strip() or None


def _flag(fields: dict[str, Value], key: str) -> bool:
    value = fields.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"`{key}` must be true or false, not {value!r}")
    return value


def _skill(path: Path, folder: Folder, fields: dict[str, Value], body: str) -> Skill:
    name = _text(fields, "name")
    if name is None:
        raise ValueError("the front matter has no `name`")
    if len(name) > MAX_NAME:
        raise ValueError(f"`name` is longer than {MAX_NAME} characters")
    if not _SKILL_NAME.fullmatch(name):
        raise ValueError(
            f"`name` {name!r} must be lowercase letters, digits and single hyphens between them"
        )
    if name != path.parent.name:
        raise ValueError(f"`name` {name!r} differs from its folder's name {path.parent.name!r}")
    description = _text(fields, "description")
    if description is None:
        raise ValueError("the front matter has no `description`")
    if len(description) > MAX_DESCRIPTION:
        raise ValueError(f"`description` is longer than {MAX_DESCRIPTION} characters")
    if not body.strip():
        raise ValueError("the skill has no instructions after its front matter")
    return _made(name, description, body, path, folder, fields)


def _command(path: Path, folder: Folder, fields: dict[str, Value], body: str) -> Skill:
    name = path.stem
    if not _COMMAND_NAME.fullmatch(name) or len(name) > MAX_NAME:
        raise ValueError(
            f"the file name {name!r} is not a command name (letters, digits, `-`, `_`, `.`)"
        )
    if not body.strip():
        raise ValueError("the command file is empty")
    description = _text(fields, "description")
    if description is None:
        first = next(line.strip() for line in body.splitlines() if line.strip())
        description = first.lstrip("# ").strip()[:200]
    return _made(name, description[:MAX_DESCRIPTION], body, path, folder, fields)


def _made(
    name: str, description: str, body: str, path: Path, folder: Folder, fields: dict[str, Value]
) -> Skill:
    return Skill(
        name=name,
        description=" ".join(description.split()),
        body=body.strip("\n"),
        path=path,
        kind=folder.kind,
        origin=folder.origin,
        argument_hint=_text(fields, "argument-hint"),
        model=_text(fields, "model"),
        agent=_text(fields, "agent"),
        model_invocable=not _flag(fields, "disable-model-invocation"),
    )
