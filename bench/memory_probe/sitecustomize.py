"""Loaded by a server started with this folder on PYTHONPATH (bench/working_day.py
--tracemalloc): traces the server's allocations and writes a snapshot on SIGUSR1 to
BATON_TRACEMALLOC_DIR/<pid>-<n>.snap, so the bench can compare what the server process
(only) holds after warm-up and at the end. Beside each, <pid>-<n>.snap.json holds what the
tracer does not see: the bytes SQLite's own allocator has in use (`sqlite3_memory_used`),
glibc's heap (`mallinfo2`: in use, free but kept, mmapped) and the traced heap's peak
since the snapshot before, the high-water mark that RSS keeps after the memory is freed.
With BATON_TRACEMALLOC_FRAMES=0 nothing is traced (the tracer's own memory and
snapshots would swamp what is measured): the .snap file is empty, and the JSON adds
Python's small-object allocator (`sys._debugmallocstats`): its arenas, the bytes in
use in them and the bytes free inside them."""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import json
import os
import re
import signal
import sys
import tempfile
import tracemalloc


def _sqlite_memory_used() -> int:
    """Bytes SQLite's allocator has in use in this process (-1 when it cannot be read)."""
    name = ctypes.util.find_library("sqlite3")
    if name is None:
        return -1
    try:
        used = ctypes.CDLL(name).sqlite3_memory_used
    except (OSError, AttributeError):
        return -1
    used.restype = ctypes.c_int64
    return int(used())


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _glibc_heap() -> dict[str, int]:
    """glibc's view of the heap (all arenas): bytes in use, free but kept, and mmapped."""
    try:
        libc = ctypes.CDLL(None)
        mallinfo2 = libc.mallinfo2
    except (OSError, AttributeError):
        return {}
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    return {
        "in_use": info.uordblks + info.hblkhd,
        "free_kept": info.fordblks,
        "mmapped": info.hblkhd,
        "sbrk_and_arenas": info.arena,
    }


_PYMALLOC_LINES = {
    "arenas": re.compile(r"^(\d+) arenas \* (\d+) bytes/arena"),
    "in_use": re.compile(r"^# bytes in allocated blocks\s+=\s+([\d,]+)"),
    "free_in_pools": re.compile(r"^# bytes in available blocks\s+=\s+([\d,]+)"),
    "unused_pools": re.compile(r"^\d+ unused pools \* \d+ bytes\s+=\s+([\d,]+)"),
}


def _pymalloc() -> dict[str, int]:
    """Python's small-object allocator: bytes its arenas take, in use, free in them."""
    with tempfile.TemporaryFile("w+") as out:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read()
    found: dict[str, int] = {}
    for line in text.splitlines():
        for name, pattern in _PYMALLOC_LINES.items():
            match = pattern.match(line)
            if match and name not in found:
                groups = [int(g.replace(",", "")) for g in match.groups()]
                found[name] = groups[0] * groups[1] if name == "arenas" else groups[0]
    return found


_where = os.environ.get("BATON_TRACEMALLOC_DIR")
_frames = int(os.environ.get("BATON_TRACEMALLOC_FRAMES", "12"))
if _where:
    if _frames:
        tracemalloc.start(_frames)
    _count = itertools.count()

    def _dump(signum: int, frame: object) -> None:
        path = os.path.join(_where, f"{os.getpid()}-{next(_count)}.snap")
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        beside = {
            "sqlite": _sqlite_memory_used(),
            "traced": current,
            "traced_peak_since_last": peak,
            "glibc": _glibc_heap(),
            "pymalloc": {} if _frames else _pymalloc(),
        }
        with open(path + ".json", "w") as out:
            json.dump(beside, out)
        if _frames:
            tracemalloc.take_snapshot().dump(path + ".part")
        else:
            open(path + ".part", "w").close()
        os.replace(path + ".part", path)

    signal.signal(signal.SIGUSR1, _dump)
