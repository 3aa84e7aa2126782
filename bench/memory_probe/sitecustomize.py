"""Loaded by a server started with this folder on PYTHONPATH (bench/working_day.py
--tracemalloc): traces the server's allocations and writes a snapshot on SIGUSR1 to
BATON_TRACEMALLOC_DIR/<pid>-<n>.snap, so the bench can compare what the server process
(only) holds after warm-up and at the end."""

from __future__ import annotations

import itertools
import os
import signal
import tracemalloc

_where = os.environ.get("BATON_TRACEMALLOC_DIR")
if _where:
    tracemalloc.start(int(os.environ.get("BATON_TRACEMALLOC_FRAMES", "12")))
    _count = itertools.count()

    def _dump(signum: int, frame: object) -> None:
        path = os.path.join(_where, f"{os.getpid()}-{next(_count)}.snap")
        tracemalloc.take_snapshot().dump(path + ".part")
        os.replace(path + ".part", path)

    signal.signal(signal.SIGUSR1, _dump)
