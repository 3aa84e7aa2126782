"""What the person's "Always allow" answers grant for the rest of a session.

A permission request offers the narrowest grant first: this exact command (bash),
this one file (write, edit), this one tool (an MCP tool), and then the whole
category (every command, every file change, every MCP tool). Each option's name
says in words what it grants. A protected path (`.baton/`, `.git/`, ...; see
`baton.tools.policy`) is never covered by any of them: the caller checks that
first, offers no "always" option for it, and counts an "always" answer as once.
Grants live in memory with the session; they are not stored. They hold in the mode
they were given in (`SessionGrants`): an answer given in build mode does not carry
into plan mode, nor into a child running in another mode than the one it was given in
(see `baton.delegation.inherit`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from baton import protocol as p

CATEGORY_OPTION = "allow_always"
COMMAND_OPTION = "allow_always_command"
PATH_OPTION = "allow_always_path"
TOOL_OPTION = "allow_always_tool"
HOST_OPTION = "allow_always_host"

# Commands longer than this are named "this exact command" rather than quoted.
_QUOTED_COMMAND_MAX = 60

_CATEGORY_NAMES = {
    "bash": "Always allow every command in this session",
    "write": "Always allow every file change in this session",
    "mcp": "Always allow every MCP tool in this session",
    "web": "Always allow every web fetch in this session",
}


def permission_category(tool: str) -> str:
    """The category a tool's permission belongs to (`permissions.<category>` setting)."""
    if tool == "bash":
        return "bash"
    if tool in ("write", "edit"):
        return "write"
    if "__" in tool:
        return "mcp"
    if tool == "webfetch":
        return "web"
    return "write"


def _command(tool: str, input: dict[str, Any]) -> str | None:
    command = input.get("command")
    return command if tool == "bash" and isinstance(command, str) and command.strip() else None


def _path(tool: str, input: dict[str, Any]) -> str | None:
    path = input.get("path")
    return path if tool in ("write", "edit") and isinstance(path, str) and path else None


def url_host(tool: str, input: dict[str, Any]) -> str | None:
    """The host (`name` or `name:port`, lower case) a webfetch call reaches."""
    url = input.get("url")
    if tool != "webfetch" or not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return None
    if not host:
        return None
    return f"{host}:{port}" if port else host


def path_key(workspace: Path, path: str) -> str:
    """One file's identity for a grant: its real path (`a/../b.txt`, `./b.txt` and a
    symlink to it are the same file)."""
    return os.path.realpath(os.path.normpath(workspace / path))


def _shown_path(workspace: Path, path: str) -> str:
    key = Path(path_key(workspace, path))
    try:
        return key.relative_to(os.path.realpath(workspace)).as_posix()
    except ValueError:
        return path


@dataclass
class Grants:
    """The "Always allow" answers given in one session."""

    categories: set[str] = field(default_factory=set)
    commands: set[str] = field(default_factory=set)
    paths: set[str] = field(default_factory=set)
    tools: set[str] = field(default_factory=set)
    hosts: set[str] = field(default_factory=set)

    def covers(self, workspace: Path, tool: str, input: dict[str, Any]) -> bool:
        """Whether an earlier answer allows this call without asking."""
        if permission_category(tool) in self.categories:
            return True
        command = _command(tool, input)
        if command is not None and command in self.commands:
            return True
        path = _path(tool, input)
        if path is not None and path_key(workspace, path) in self.paths:
            return True
        host = url_host(tool, input)
        if host is not None and host in self.hosts:
            return True
        return "__" in tool and tool in self.tools

    def options(
        self, workspace: Path, tool: str, input: dict[str, Any]
    ) -> list[p.PermissionOption]:
        """The "always" options for this call, narrowest first."""
        options: list[p.PermissionOption] = []
        command = _command(tool, input)
        if command is not None:
            quoted = command.strip()
            name = (
                f"Always allow `{quoted}` in this session"
                if len(quoted) <= _QUOTED_COMMAND_MAX and "\n" not in quoted
                else "Always allow this exact command in this session"
            )
            options.append(self._option(COMMAND_OPTION, name, "command"))
        path = _path(tool, input)
        if path is not None:
            name = f"Always allow changes to {_shown_path(workspace, path)} in this session"
            options.append(self._option(PATH_OPTION, name, "path"))
        if "__" in tool:
            options.append(
                self._option(TOOL_OPTION, f"Always allow {tool} in this session", "tool")
            )
        host = url_host(tool, input)
        if host is not None:
            options.append(
                self._option(HOST_OPTION, f"Always allow {host} in this session", "host")
            )
        category = permission_category(tool)
        options.append(self._option(CATEGORY_OPTION, _CATEGORY_NAMES[category], "category"))
        return options

    def grant(self, workspace: Path, option_id: str, tool: str, input: dict[str, Any]) -> bool:
        """Remember an "always" answer; False when `option_id` is not one for this call."""
        if option_id == CATEGORY_OPTION:
            self.categories.add(permission_category(tool))
            return True
        command = _command(tool, input)
        if option_id == COMMAND_OPTION and command is not None:
            self.commands.add(command)
            return True
        path = _path(tool, input)
        if option_id == PATH_OPTION and path is not None:
            self.paths.add(path_key(workspace, path))
            return True
        host = url_host(tool, input)
        if option_id == HOST_OPTION and host is not None:
            self.hosts.add(host)
            return True
        if option_id == TOOL_OPTION and "__" in tool:
            self.tools.add(tool)
            return True
        return False

    @staticmethod
    def _option(option_id: str, name: str, scope: p.PermissionScope) -> p.PermissionOption:
        return p.PermissionOption(option_id=option_id, kind="allow_always", name=name, scope=scope)


@dataclass
class SessionGrants:
    """A session's "Always allow" answers, by the mode they were given in. A session's
    `task` children share this object, so an answer given in a child holds for its
    parent and siblings in the same mode, and only there."""

    modes: dict[str, Grants] = field(default_factory=dict)

    def in_mode(self, mode: str) -> Grants:
        """The answers given in `mode` (empty until one is)."""
        return self.modes.setdefault(mode, Grants())
