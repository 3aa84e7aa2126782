"""Every way out of the workspace is refused; every way inside works."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from baton.tools.base import ToolFailure
from baton.tools.fileio import atomic_write, read_bytes
from baton.tools.sandbox import (
    SandboxError,
    display_path,
    open_dir,
    resolve_in_workspace,
)


def test_relative_path_resolves_inside(workspace: Path) -> None:
    (workspace / "a").mkdir()
    (workspace / "a" / "f.txt").write_text("x")
    assert resolve_in_workspace(workspace, "a/f.txt", must_exist=True) == workspace / "a" / "f.txt"
    assert resolve_in_workspace(workspace, "./a/../a/f.txt") == workspace / "a" / "f.txt"
    assert resolve_in_workspace(workspace, ".") == workspace


@pytest.mark.parametrize("path", ["../x", "a/../../x", "../ws2/x", "..", "a/b/../../../x"])
def test_dotdot_escapes_are_refused(workspace: Path, path: str) -> None:
    with pytest.raises(SandboxError, match="path escapes the workspace"):
        resolve_in_workspace(workspace, path)


def test_sandbox_error_is_a_tool_failure() -> None:
    assert issubclass(SandboxError, ToolFailure)


def test_escape_message_names_the_path(workspace: Path) -> None:
    with pytest.raises(SandboxError) as info:
        resolve_in_workspace(workspace, "../x")
    assert "path escapes the workspace: ../x" in str(info.value)


def test_absolute_outside_is_refused(workspace: Path, outside: Path) -> None:
    with pytest.raises(SandboxError, match="escapes"):
        resolve_in_workspace(workspace, str(outside / "secret.txt"))
    with pytest.raises(SandboxError, match="escapes"):
        resolve_in_workspace(workspace, "/etc/passwd")


def test_prefix_sibling_is_outside(workspace: Path) -> None:
    sibling = workspace.parent / (workspace.name + "-evil")
    sibling.mkdir()
    with pytest.raises(SandboxError):
        resolve_in_workspace(workspace, str(sibling / "x"))


def test_absolute_inside_is_accepted(workspace: Path) -> None:
    (workspace / "f.txt").write_text("x")
    assert resolve_in_workspace(workspace, str(workspace / "f.txt")) == workspace / "f.txt"


def test_absolute_inside_through_unresolved_workspace_spelling(root: Path, workspace: Path) -> None:
    alias = root / "alias"
    alias.symlink_to(workspace)
    (workspace / "f.txt").write_text("x")
    got = resolve_in_workspace(alias, str(alias / "f.txt"), must_exist=True)
    assert got == workspace / "f.txt"


def test_symlinked_file_out_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(SandboxError, match="symbolic link"):
        resolve_in_workspace(workspace, "link.txt")


def test_symlinked_dir_out_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "d").symlink_to(outside)
    with pytest.raises(SandboxError, match="symbolic link"):
        resolve_in_workspace(workspace, "d/secret.txt")


def test_new_file_under_symlinked_parent_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "d").symlink_to(outside)
    with pytest.raises(SandboxError):
        resolve_in_workspace(workspace, "d/new/deeper.txt", for_write=True)


def test_dangling_symlink_out_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "dangling").symlink_to(outside / "does-not-exist.txt")
    with pytest.raises(SandboxError, match="symbolic link"):
        resolve_in_workspace(workspace, "dangling", for_write=True)


def test_symlink_inside_resolves_to_its_target(workspace: Path) -> None:
    (workspace / "real.txt").write_text("x")
    (workspace / "alias.txt").symlink_to("real.txt")
    assert resolve_in_workspace(workspace, "alias.txt") == workspace / "real.txt"


def test_must_exist_and_for_write(workspace: Path) -> None:
    (workspace / "dir").mkdir()
    with pytest.raises(SandboxError, match="no such file"):
        resolve_in_workspace(workspace, "missing.txt", must_exist=True)
    with pytest.raises(SandboxError, match="is a directory"):
        resolve_in_workspace(workspace, "dir", for_write=True)
    with pytest.raises(SandboxError, match="workspace directory"):
        resolve_in_workspace(workspace, ".", for_write=True)
    with pytest.raises(SandboxError, match="empty"):
        resolve_in_workspace(workspace, "  ")
    with pytest.raises(SandboxError, match="NUL"):
        resolve_in_workspace(workspace, "a\x00b")


def test_display_path(workspace: Path, outside: Path) -> None:
    assert display_path(workspace, workspace / "a" / "b.txt") == "a/b.txt"
    assert display_path(workspace, workspace) == "."
    assert display_path(workspace, outside) == str(outside)


def test_swapped_parent_dir_is_not_followed_on_write(workspace: Path, outside: Path) -> None:
    """A directory replaced by a link after the check (TOCTOU) makes the write fail."""
    (workspace / "d").mkdir()
    target = resolve_in_workspace(workspace, "d/new.txt", for_write=True)
    (workspace / "d").rmdir()
    (workspace / "d").symlink_to(outside)
    with pytest.raises(SandboxError, match="symbolic link"):
        atomic_write(workspace, target, b"pwned")
    assert sorted(os.listdir(outside)) == ["secret.txt"]


def test_swapped_file_is_not_followed_on_read(workspace: Path, outside: Path) -> None:
    (workspace / "f.txt").write_text("mine")
    target = resolve_in_workspace(workspace, "f.txt", must_exist=True)
    (workspace / "f.txt").unlink()
    (workspace / "f.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(SandboxError, match="symbolic link"):
        read_bytes(workspace, target)


def test_open_dir_creates_missing_directories(workspace: Path) -> None:
    fd = open_dir(workspace, workspace / "x" / "y", create=True)
    os.close(fd)
    assert (workspace / "x" / "y").is_dir()
    with pytest.raises(SandboxError):
        open_dir(workspace, workspace.parent)
