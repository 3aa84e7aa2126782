"""Where skills and command files are found, and reading them (re-read only when changed).

Folders, in the order a name is taken (the first one wins):

1. the person's own: `skills/<name>/SKILL.md` and `commands/*.md` in Baton's config
   folder (`~/.config/baton/` on Linux, platformdirs elsewhere);
2. the workspace's, from the workspace folder up to its git root, nearest first:
   `.baton/skills/`, `.agents/skills/`, `.claude/skills/` (skills) and
   `.claude/commands/`, `.opencode/command/`, `.opencode/commands/` (command files).

A workspace's files count only when it is trusted: a repository's skill is text it
puts in front of the model and offers the person as a command. Untrusted, they are
ignored: the first few named, the rest counted.

Every folder is looked into with a bound (baton.folder_scan): at most MAX_ENTRIES
entries used a folder, within a time bound, and a file is read only if it is a
regular file, without blocking (a FIFO named `SKILL.md` is reported, never waited on).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_config_path

from baton.config import ConfigProblem
from baton.folder_scan import (
    LISTED,
    MAX_ENTRIES,
    Listing,
    NotRegular,
    TooLarge,
    list_folder,
    read_regular,
    shown_entries,
)
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


def candidates(folder: Folder, max_entries: int = MAX_ENTRIES) -> Listing:
    """The files one folder holds, by name: `<name>/SKILL.md` or `*.md`; bounded."""
    if folder.kind == "skill":
        listing = list_folder(folder.path, lambda e: e.is_dir(), max_entries=max_entries)
        return Listing(
            tuple(path / SKILL_FILE for path in listing.paths), listing.seen, listing.complete
        )
    return list_folder(
        folder.path, lambda e: e.name.endswith(".md") and e.is_file(), max_entries=max_entries
    )


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
            if folder.origin == "workspace" and not trusted:
                # Counted, not listed: the first few by name, the rest as a number.
                listing = candidates(folder, LISTED)
                ignored += shown_entries(f"{folder.kind} file", folder.path, self._shown, listing)
                continue
            listing = candidates(folder)
            if not listing.complete:
                problems.append(
                    ConfigProblem(
                        str(folder.path),
                        f"only {len(listing.paths)} entries are used (at most {MAX_ENTRIES} "
                        "a folder are looked at, within a time bound)",
                    )
                )
            for path in listing.paths:
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
        text = read_regular(path, MAX_FILE_BYTES).decode("utf-8")
    except TooLarge:
        return ConfigProblem(str(path), f"larger than {MAX_FILE_BYTES // 1024} KB")
    except NotRegular:
        return ConfigProblem(str(path), "not a regular file (a FIFO, a device or a folder)")
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
