"""Files outside `.git/` that decide what git runs: the hook folder and the hook managers.

`.git/hooks` is protected with `.git/` (`baton.tools.policy`), but git runs
the hooks of the folder `core.hooksPath` names, and the common hook managers
keep the real hook scripts, or the commands their hooks run, in ordinary
files of the repository: husky (`.husky/`, which it names as
`core.hooksPath = .husky/_`), lefthook (`lefthook.yml`, `.lefthook/`...),
pre-commit (`.pre-commit-config.yaml`), simple-git-hooks
(`.simple-git-hooks.json`, or a `simple-git-hooks` key in `package.json`),
lint-staged (what husky's pre-commit usually runs). A change to any of them
runs on the person's next `git commit`, so it asks like `.git/hooks` does.

`core.hooksPath` is read from the repository's own config (`.git/config`,
a worktree's `config.worktree` and its common dir's config) and every file it
includes (`include.path`, `includeIf.*.path`, followed whatever the condition);
those included files are protected too, since they could set it. The person's
global git config is theirs and outside the workspace, so it is not read.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

# Folders of hook managers: their files are hook scripts or hook definitions.
HOOK_MANAGER_FOLDERS = (".husky", ".lefthook", ".lefthook-local")
# File names (case-insensitive, at any depth) that define what a git hook runs.
_HOOK_MANAGER_FILE = re.compile(
    r"""^(
        \.?lefthook(-local)?\.(ya?ml|json|jsonc|toml)
      | \.pre-commit-config\.ya?ml
      | \.?simple-git-hooks(\.(c|m)?js|\.json)
      | \.huskyrc(\.(json|js|cjs|ya?ml))?
      | husky\.config\.(c|m)?js
      | \.lintstagedrc(\.(json|ya?ml|(c|m)?js))?
      | lint-staged\.config\.(c|m)?js
    )$""",
    re.IGNORECASE | re.VERBOSE,
)
# Keys of package.json that hook managers read (husky 4, simple-git-hooks, pre-commit,
# ghooks, lint-staged): a change to one of them asks; any other change does not.
PACKAGE_JSON_HOOK_KEYS = ("husky", "simple-git-hooks", "pre-commit", "ghooks", "lint-staged")
_MAX_INCLUDES = 20


def reason(
    workspace: Path,
    path: Path,
    names: list[tuple[str, ...]],
    real: Path,
    input: dict[str, Any],
) -> str | None:
    """Why changing `path` changes what git runs, or None. `names`: its parts relative
    to the workspace, as written and as its real path; `real`: its real path."""
    for parts in names:
        for part in parts[:-1]:
            if part.casefold() in HOOK_MANAGER_FOLDERS:
                return _why(path, f"inside {part}/, a git hook manager's folder")
        if parts and _HOOK_MANAGER_FILE.match(parts[-1]):
            return _why(path, "a git hook manager's configuration")
    for folder in hooks_folders(workspace, real):
        if real == folder or folder in real.parents:
            return _why(path, f"in {folder}, the folder core.hooksPath names")
    if real in git_config_files(workspace, real):
        return _why(path, "a git config file the repository's config includes")
    if real.name == "package.json" and _changes_hook_keys(real, input):
        keys = ", ".join(PACKAGE_JSON_HOOK_KEYS)
        return _why(path, f"a change to package.json's git hook settings ({keys})")
    return None


def _why(path: Path, what: str) -> str:
    return (
        f"{path} is {what}, which decides what git runs; changes there always ask, "
        "even after Always allow"
    )


def _repositories(workspace: Path, target: Path) -> list[tuple[Path, Path]]:
    """(work tree, git dir) of the repository holding `target` and of the workspace's own
    repository: the nearest folder upwards with a `.git`."""
    found: list[tuple[Path, Path]] = []
    for start in (target.parent, Path(os.path.realpath(workspace))):
        for folder in (start, *start.parents):
            dot_git = folder / ".git"
            git_dir = _git_dir(dot_git)
            if git_dir is not None:
                if (folder, git_dir) not in found:
                    found.append((folder, git_dir))
                break
    return found


def _git_dir(dot_git: Path) -> Path | None:
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
        try:
            line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None
        if line.startswith("gitdir:"):
            return (dot_git.parent / line[len("gitdir:") :].strip()).resolve()
    return None


def _config_roots(git_dir: Path) -> list[Path]:
    roots = [git_dir / "config", git_dir / "config.worktree"]
    commondir = git_dir / "commondir"
    if commondir.is_file():
        try:
            common = (git_dir / commondir.read_text(encoding="utf-8").strip()).resolve()
        except OSError:
            common = None
        if common is not None:
            roots.append(common / "config")
    return roots


def _configs(workspace: Path, target: Path) -> list[tuple[Path, Path, list[tuple[str, str]]]]:
    """(work tree, config file, its (section.key, value) entries) for every config file
    of the repositories concerned, includes followed."""
    out: list[tuple[Path, Path, list[tuple[str, str]]]] = []
    seen: set[Path] = set()
    for work_tree, git_dir in _repositories(workspace, target):
        pending = _config_roots(git_dir)
        while pending and len(seen) < _MAX_INCLUDES:
            config = Path(os.path.realpath(pending.pop(0)))
            if config in seen:
                continue
            seen.add(config)
            entries = parse_git_config(config)
            out.append((work_tree, config, entries))
            for key, value in entries:
                if key.endswith(".path") and key.startswith(("include.", "includeif.")) and value:
                    pending.append(config.parent / Path(value).expanduser())
    return out


def hooks_folders(workspace: Path, target: Path) -> list[Path]:
    """The real paths of the folders `core.hooksPath` names (relative to the work tree)."""
    folders: list[Path] = []
    for work_tree, _config, entries in _configs(workspace, target):
        for key, value in entries:
            if key == "core.hookspath" and value:
                folder = Path(os.path.realpath(work_tree / Path(value).expanduser()))
                if folder not in folders:
                    folders.append(folder)
    return folders


def git_config_files(workspace: Path, target: Path) -> list[Path]:
    """Every config file git reads for the repositories concerned (includes too)."""
    return [config for _tree, config, _entries in _configs(workspace, target)]


_SECTION = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_ENTRY = re.compile(r"^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def parse_git_config(path: Path) -> list[tuple[str, str]]:
    """`(section.key, value)` pairs of a git config file, keys lower-cased (a subsection
    is left out of the name: `includeIf "gitdir:x".path` is `includeif.path`); an
    unreadable file has none."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    entries: list[tuple[str, str]] = []
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        while line.startswith("["):
            match = _SECTION.match(line)
            if match is None:
                line = ""
                break
            section = match.group(1).lower()
            line = match.group(3).strip()
        if not line or line[0] in "#;":
            continue
        match = _ENTRY.match(line)
        if match is None:
            continue
        entries.append((f"{section}.{match.group(1).lower()}", _value(match.group(2) or "")))
    return entries


def _value(raw: str) -> str:
    """A git config value: quotes removed, escapes read, a comment outside quotes cut."""
    out: list[str] = []
    quoted = False
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[i + 1], raw[i + 1]))
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif ch in "#;" and not quoted:
            break
        else:
            out.append(ch)
        i += 1
    return "".join(out).strip()


def _changes_hook_keys(real: Path, input: dict[str, Any]) -> bool:
    """Whether a write or edit of package.json changes one of the hook managers' keys."""
    try:
        before = real.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        before = ""
    content = input.get("content")
    if isinstance(content, str):
        after = content
    else:
        from baton.tools.base import ToolFailure
        from baton.tools.replace import replace_exact

        old, new = input.get("old_string"), input.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            return False
        try:
            # The edit tool's own matching (CRLF files included), so this sees its result.
            after, _, _ = replace_exact(before, old, new, bool(input.get("replace_all")), "")
        except ToolFailure:
            return False  # the edit fails too
    return (_hook_keys(before) or {}) != (_hook_keys(after) or {})


def _hook_keys(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    keys = {key: data[key] for key in PACKAGE_JSON_HOOK_KEYS if key in data}
    config = data.get("config")
    if isinstance(config, dict) and "ghooks" in config:
        keys["config.ghooks"] = config["ghooks"]
    return keys
