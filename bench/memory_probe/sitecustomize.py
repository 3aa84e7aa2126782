"""Loaded by a server started with this folder on PYTHONPATH (bench/working_day.py
--tracemalloc): traces the server's allocations and writes a snapshot on SIGUSR1 to
BATON_TRACEMALLOC_DIR/<pid>-<n>.snap, so the bench can compare what the server process
(only) holds after warm-up and at the end. Beside each, <pid>-<n>.snap.sqlite holds the
bytes SQLite's own allocator has in use (`sqlite3_memory_used`), which the tracer does not
see."""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import os
import signal
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


_where = os.environ.get("BATON_TRACEMALLOC_DIR")
if _where:
    tracemalloc.start(int(os.environ.get("BATON_TRACEMALLOC_FRAMES", "12")))
    _count = itertools.count()

    def _dump(signum: int, frame: object) -> None:
        path = os.path.join(_where, f"{os.getpid()}-{next(_count)}.snap")
        with open(path + ".sqlite", "w") as out:
            out.write(str(_sqlite_memory_used()))
        tracemalloc.take_snapshot().dump(path + ".part")
        os.replace(path + ".part", path)

    signal.signal(signal.SIGUSR1, _dump)
