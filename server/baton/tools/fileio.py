"""File I/O shared by the file tools: safe reads, atomic writes, binary sniffing, diffs.

Every open goes through `sandbox.open_file`/`open_dir`, so a link swapped in
after `resolve_in_workspace` checked the path makes the operation fail rather
than reach outside the workspace.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import secrets
import stat
from pathlib import Path

from baton.tools.base import ToolFailure
from baton.tools.sandbox import SandboxError, display_path, open_dir, open_file

# How much of a file is sniffed for NUL bytes to call it binary (what git and grep do).
SNIFF_BYTES = 8192

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def looks_binary(prefix: bytes) -> bool:
    """A file is binary when its first bytes contain a NUL."""
    return b"\x00" in prefix[:SNIFF_BYTES]


def os_failure(workspace: Path, path: Path, exc: OSError, doing: str) -> ToolFailure:
    """An OSError as a message the model can act on (never a traceback)."""
    reason = exc.strerror or type(exc).__name__
    return ToolFailure(f"cannot {doing} {display_path(workspace, path)}: {reason}")


def open_regular(workspace: Path, path: Path) -> int:
    """Open an existing regular file inside the workspace for reading; returns the fd.

    `O_NONBLOCK` keeps a FIFO from hanging the open; anything but a regular file
    is refused (directories with a hint to use glob). FileNotFoundError propagates.
    """
    fd = open_file(workspace, path, os.O_RDONLY | _O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        shown = display_path(workspace, path)
        if stat.S_ISDIR(mode):
            raise ToolFailure(
                f'{shown} is a directory; use glob to list its files (pattern "{shown}/*")'
            )
        if not stat.S_ISREG(mode):
            raise ToolFailure(f"{shown} is not a regular file")
        if _O_NONBLOCK:
            os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_bytes(workspace: Path, path: Path, max_bytes: int | None = None) -> bytes | None:
    """The whole content of a file inside the workspace, or None when it does not exist.

    With `max_bytes`, a file that is (or grows) larger is refused: no more than
    `max_bytes` + 1 bytes are ever read.
    """
    try:
        fd = open_regular(workspace, path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise os_failure(workspace, path, exc, "read") from exc
    with os.fdopen(fd, "rb") as fh:
        data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise ToolFailure(
            f"{display_path(workspace, path)} is larger than {max_bytes} bytes; "
            "too large to load whole"
        )
    return data


def atomic_write(workspace: Path, path: Path, data: bytes) -> bool:
    """Replace `path` with `data` atomically; returns True when the file was created.

    The data goes to a temporary file in the same directory which then replaces
    the target with `os.replace`, so readers see the old or the new content,
    never a mix, and a failure leaves the old file untouched and no temporary
    file behind. Missing parent directories are created (inside the workspace).
    An existing file keeps its permission bits.
    """
    try:
        dir_fd = open_dir(workspace, path.parent, create=True)
    except OSError as exc:
        raise os_failure(workspace, path.parent, exc, "create directory") from exc
    tmp = f".baton-{secrets.token_hex(6)}.tmp"
    try:
        try:
            st: os.stat_result | None = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise SandboxError(
                f"{display_path(workspace, path)} became a symbolic link while in use; "
                "refusing to write through it"
            )
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise ToolFailure(f"{display_path(workspace, path)} is not a regular file")
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
        fd = os.open(tmp, flags, mode, dir_fd=dir_fd)
        try:
            if st is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return st is None
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        if isinstance(exc, OSError):
            raise os_failure(workspace, path, exc, "write") from exc
        raise
    finally:
        os.close(dir_fd)


def unified_diff(shown_path: str, old: str | None, new: str) -> str:
    """A unified diff of `old` → `new` for the permission prompt (None: a new file)."""
    old_lines = _diff_lines(old or "")
    new_lines = _diff_lines(new)
    fromfile = "/dev/null" if old is None else f"a/{shown_path}"
    return "".join(
        difflib.unified_diff(old_lines, new_lines, fromfile=fromfile, tofile=f"b/{shown_path}")
    )


def _diff_lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1] + "\n\\ No newline at end of file\n")
    return lines
