"""Looking into a folder a repository fills, with a bound: entries, time, file kinds.

Baton looks for agents, skills and command files in folders a cloned repository can
fill with anything: 150,000 files, a FIFO named `SKILL.md`, a link to a device. Every
such look goes through here:

- **Bounded in entries and time.** `list_folder` looks at entries in the order the
  file system gives them and keeps at most `max_entries` of those it wants; it stops
  when it has them, or when `seconds` have passed, and says whether it saw the whole
  folder. `count_entries` counts what an untrusted folder holds, within a time
  bound, without keeping a name.
- **Regular files only, never blocking.** `read_regular` opens a file without
  following a FIFO's or a device's wait (`O_NONBLOCK`), checks on the open descriptor
  that it is a regular file (so a swap after a check changes nothing), and reads at
  most `max_bytes` + 1 bytes.
- **Named in a bounded list.** `shown_entries` names at most `LISTED` entries of a
  folder and counts the rest, for the notices the person reads.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# Entries of one folder Baton uses, at most (agents, skills or command files).
MAX_ENTRIES = 1_000
# How long one look into a folder may take (seconds).
SCAN_SECONDS = 2.0
# Entries of an ignored folder named in a notice; the rest are counted.
LISTED = 10


@dataclass(frozen=True)
class Listing:
    """What a bounded look into a folder found."""

    paths: tuple[Path, ...]  # the entries wanted, sorted, at most max_entries
    seen: int  # entries looked at
    complete: bool  # every entry was looked at (not stopped by the bound or the time)


def list_folder(
    folder: Path,
    wanted: Callable[[os.DirEntry[str]], bool],
    *,
    max_entries: int = MAX_ENTRIES,
    seconds: float = SCAN_SECONDS,
) -> Listing:
    """At most `max_entries` entries of `folder` that `wanted` accepts (hidden ones left
    out), within `seconds`."""
    deadline = time.monotonic() + seconds
    kept: list[Path] = []
    seen = 0
    try:
        entries = os.scandir(folder)
    except OSError:
        return Listing((), 0, True)
    with entries:
        for entry in entries:
            if len(kept) >= max_entries or time.monotonic() > deadline:
                return Listing(tuple(sorted(kept)), seen, False)
            seen += 1
            if not entry.name.startswith(".") and _safely(wanted, entry):
                kept.append(Path(entry.path))
    return Listing(tuple(sorted(kept)), seen, True)


def count_entries(folder: Path, *, seconds: float = SCAN_SECONDS) -> tuple[int, bool]:
    """How many entries `folder` holds (hidden ones left out), counted for at most
    `seconds`; (count, whether every entry was counted)."""
    deadline = time.monotonic() + seconds
    count = 0
    try:
        entries = os.scandir(folder)
    except OSError:
        return 0, True
    with entries:
        for entry in entries:
            if count % 256 == 0 and time.monotonic() > deadline:
                return count, False
            if not entry.name.startswith("."):
                count += 1
    return count, True


def folder_stamp(folder: Path) -> tuple[int, int, int] | None:
    """A folder's identity and last change (adding or removing an entry changes it)."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


class NotRegular(OSError):
    """The path is not a regular file (a FIFO, a device, a socket, a folder)."""


class TooLarge(OSError):
    """The file holds more than the bytes asked for."""


def read_regular_head(path: Path, max_bytes: int) -> bytes:
    """The first `max_bytes` bytes of a regular file (more may follow), without blocking."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(f"{path} is not a regular file")
        return os.read(fd, max_bytes)
    finally:
        os.close(fd)


def read_regular(path: Path, max_bytes: int) -> bytes:
    """A regular file's bytes, at most `max_bytes` (TooLarge past it), without blocking:
    a FIFO, a device or a socket raises NotRegular before anything is read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{path} is not a regular file")
        if st.st_size > max_bytes:
            raise TooLarge(f"{path} is larger than {max_bytes} bytes")
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 16, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise TooLarge(f"{path} is larger than {max_bytes} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def is_regular(entry: os.DirEntry[str]) -> bool:
    """A directory entry that is a regular file (a link to one counts; it is read with
    `read_regular`, which checks again)."""
    return entry.is_file()


def shown_entries(
    kind: str, folder: Path, shown_as: Callable[[Path], str], listing: Listing
) -> list[str]:
    """Lines naming what a folder holds for a notice: at most LISTED entries by name,
    the rest counted (`… and 149,992 more agent entries in .baton/agents`). Give it a
    listing made with `max_entries=LISTED`: the rest is counted, never listed."""
    lines = [f"{kind} {shown_as(path)}" for path in listing.paths[:LISTED]]
    if listing.complete:
        rest, whole = len(listing.paths) - LISTED, True
    else:
        counted, whole = count_entries(folder)
        rest = counted - min(len(listing.paths), LISTED)
    if rest > 0:
        more = f"{rest:,}" if whole else f"at least {rest:,}"
        lines.append(f"… and {more} more {kind} entries in {shown_as(folder)}")
    return lines


def _safely(wanted: Callable[[os.DirEntry[str]], bool], entry: os.DirEntry[str]) -> bool:
    try:
        return wanted(entry)
    except OSError:
        return False
