"""Confine every path a tool touches to the workspace.

The model names paths; nothing it names may reach outside the workspace, whether
through `..`, an absolute path, or a symbolic link (to a file, to a directory,
as a parent of a file about to be created, or dangling). `resolve_in_workspace`
checks a path once, lexically and then after resolving every symbolic link, and
returns the resolved path. The `open_*` helpers then open that path by walking
it from the workspace root one component at a time with `O_NOFOLLOW`, so a
directory swapped for a symbolic link between the check and the use makes the
operation fail instead of escaping (a reasonable guard against TOCTOU races
without platform-specific `openat2`).

POSIX only (Linux, macOS), like the rest of the tool layer.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import NoReturn

from baton.tools.base import ToolFailure

# Directories that are never walked by glob and grep: large, generated, or private.
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__"})

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class SandboxError(ToolFailure):
    """A path is outside the workspace or cannot be used safely; the message says which."""


def _within(root: str, path: str) -> bool:
    if path == root:
        return True
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path.startswith(prefix)


def workspace_root(workspace: Path | str) -> str:
    """The workspace as an absolute path with every symbolic link resolved."""
    return os.path.realpath(workspace)


def resolve_in_workspace(
    workspace: Path | str,
    path: str | Path,
    *,
    must_exist: bool = False,
    for_write: bool = False,
) -> Path:
    """Resolve `path` (workspace-relative, or absolute inside the workspace) safely.

    Returns the absolute path with all symbolic links resolved. Raises
    `SandboxError` when the path escapes the workspace lexically or through a
    link, when `must_exist` and it does not exist, or when `for_write` and it
    names a directory or the workspace itself.
    """
    root = workspace_root(workspace)
    raw = os.fspath(path)
    if not raw.strip():
        raise SandboxError("path is empty; give a path relative to the workspace")
    if "\x00" in raw:
        raise SandboxError(f"path contains a NUL character: {raw!r}")

    lexical = os.path.normpath(os.path.join(root, raw))
    if not _within(root, lexical) and os.path.isabs(raw):
        # An absolute path may spell the workspace without resolving its links
        # (macOS /var vs /private/var); map it onto the resolved root.
        spelled = os.path.normpath(os.path.abspath(workspace))
        if _within(spelled, lexical):
            lexical = os.path.normpath(os.path.join(root, os.path.relpath(lexical, spelled)))
    if not _within(root, lexical):
        raise SandboxError(
            f"path escapes the workspace: {raw}; only paths inside the workspace ({root}) "
            "can be used"
        )

    real = os.path.realpath(lexical)
    if not _within(root, real):
        raise SandboxError(
            f"path escapes the workspace through a symbolic link: {raw}; "
            "only files inside the workspace can be used"
        )
    if must_exist and not os.path.lexists(real):
        rest = without_workspace_name(root, raw)
        hint = "use glob to find files"
        if rest is not None and os.path.lexists(os.path.join(root, rest)):
            hint = f"{workspace_name_hint(root)}: did you mean {rest}?"
        raise SandboxError(f"no such file or directory: {raw}; {hint}")
    if for_write:
        if real == root:
            raise SandboxError(f"{raw} is the workspace directory; give a file path")
        if os.path.isdir(real):
            raise SandboxError(f"{raw} is a directory; give a file path")
    return Path(real)


def read_root(workspace: Path, roots: tuple[Path, ...], path: str) -> Path:
    """The directory a read of `path` is confined to: one of `roots` (read-only
    directories outside the workspace) when the absolute `path` lies in it, else the
    workspace. The read is still resolved with `resolve_in_workspace` against it."""
    if not roots or not os.path.isabs(path):
        return workspace
    lexical = os.path.normpath(path)
    if _within(workspace_root(workspace), lexical):
        return workspace
    for root in roots:
        if _within(workspace_root(root), lexical) or _within(os.path.normpath(root), lexical):
            return root
    return workspace


def without_workspace_name(root: str, path: str) -> str | None:
    """`path` less a leading copy of the workspace's own folder name (`project/a.py` in
    `.../project` gives `a.py`), or None when it does not start with it."""
    name = os.path.basename(root)
    rest = path.replace(os.sep, "/").removeprefix(name + "/")
    if os.path.isabs(path) or rest == path or not rest.strip("/"):
        return None
    return rest


def workspace_name_hint(root: str) -> str:
    return f"paths are relative to the workspace, which is {os.path.basename(root)}/ itself"


def display_path(workspace: Path | str, path: Path | str) -> str:
    """`path` as the model should see it: workspace-relative with forward slashes."""
    root = workspace_root(workspace)
    p = os.path.normpath(os.path.abspath(path))
    if not _within(root, p):
        # Resolve links in case `path` spells the workspace differently.
        p = os.path.realpath(p)
    if _within(root, p):
        rel = os.path.relpath(p, root)
        return "." if rel == "." else rel.replace(os.sep, "/")
    return p.replace(os.sep, "/")


def _components(root: str, directory: str) -> list[str]:
    rel = os.path.relpath(directory, root)
    if rel == ".":
        return []
    parts = rel.split(os.sep)
    if any(part in ("", ".", "..") for part in parts):
        raise SandboxError(f"path escapes the workspace: {directory}")
    return parts


def open_dir(workspace: Path | str, directory: Path | str, *, create: bool = False) -> int:
    """Open `directory` (a resolved path inside the workspace) and return its fd.

    Walks from the workspace root refusing symbolic links at every step; with
    `create`, missing directories are made on the way. The caller closes the fd.
    """
    root = workspace_root(workspace)
    directory = os.fspath(directory)
    if not _within(root, directory):
        raise SandboxError(f"path escapes the workspace: {directory}")
    flags = os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC
    fd = os.open(root, flags)
    try:
        walked = root
        for part in _components(root, directory):
            walked = os.path.join(walked, part)
            try:
                child = os.open(part, flags | _O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, flags | _O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                _raise_component_error(workspace, walked, exc)
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def _raise_component_error(workspace: Path | str, walked: str, exc: OSError) -> NoReturn:
    """Turn a refused `O_NOFOLLOW` open into a message; re-raise anything else."""
    shown = display_path(workspace, walked)
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        try:
            is_link = stat.S_ISLNK(os.lstat(walked).st_mode)
        except OSError:
            is_link = False
        if is_link:
            raise SandboxError(
                f"{shown} is a symbolic link that appeared while in use; refusing to follow it"
            ) from exc
        raise ToolFailure(f"{shown} is not a directory") from exc
    raise exc


def open_file(
    workspace: Path | str, path: Path | str, flags: int = os.O_RDONLY, mode: int = 0o666
) -> int:
    """Open a resolved file path inside the workspace without following any link.

    Returns a file descriptor; the caller closes it.
    """
    path = os.fspath(path)
    dir_fd = open_dir(workspace, os.path.dirname(path))
    try:
        try:
            return os.open(
                os.path.basename(path), flags | _O_NOFOLLOW | _O_CLOEXEC, mode, dir_fd=dir_fd
            )
        except OSError as exc:
            _raise_component_error(workspace, path, exc)
    finally:
        os.close(dir_fd)


def is_inside(workspace: Path | str, path: Path | str) -> bool:
    """True when `path`, with its links resolved, lies inside the workspace."""
    return _within(workspace_root(workspace), os.path.realpath(path))
