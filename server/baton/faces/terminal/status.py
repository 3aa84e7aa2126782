"""What `baton run` shows on stderr while the model works and nothing else is printed.

On a CPU the local model can take a minute or two to load and read its
prompt before the first token; a terminal that shows nothing meanwhile looks
hung. In a TTY a spinner line says what is happening (loading the model,
reading the prompt with tokens read / total, waiting for the model, running
a tool) with the seconds spent so far, and is erased before anything else is
written. Without a TTY (a pipe, a log file) the same news is written as
plain lines, at most one every few seconds per phase.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TextIO

from baton import protocol as p
from baton.terminal_escape import escape_terminal, write_raw

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.1
# Without a TTY: the least time between two lines of the same phase.
LINE_EVERY = 5.0


def describe_progress(update: p.ModelProgress) -> tuple[str, str]:
    """(phase, text) for a `model_progress` update."""
    if update.phase == "loading":
        return "loading", "loading the model"
    done, total, cached = update.done, update.total, update.cached
    if done is not None and total:
        if done >= total:
            return "answering", f"the model is answering (prompt of {total:,} tokens read)"
        text = f"reading the prompt: {done:,} / {total:,} tokens"
        if cached:
            text += f" ({cached:,} from the cache)"
        return "reading", text
    return "reading", "reading the prompt"


class StatusLine:
    """One line of status on stderr: a spinner when `live`, else occasional plain lines."""

    def __init__(
        self, err: TextIO, *, live: bool, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.err = err
        self.live = live
        self.clock = clock
        self._phase: str | None = None
        self._text = ""
        self._since = 0.0  # when the phase began
        self._last_line = float("-inf")  # when a plain line was last written
        self._drawn = False
        self._task: asyncio.Task[None] | None = None
        self._frame = 0

    def show(self, phase: str, text: str) -> None:
        """Say `text`; the elapsed time restarts when `phase` changes."""
        now = self.clock()
        if phase != self._phase:
            self._phase, self._since, self._last_line = phase, now, float("-inf")
        self._text = text
        if self.live:
            self._start()
            self._draw()
        elif now - self._last_line >= LINE_EVERY:
            self._last_line = now
            self.err.write(f"[{text}]\n")
            self.err.flush()

    def hide(self) -> None:
        """Stop showing anything until the next `show` (the answer is streaming)."""
        self._phase = None
        self.clear()

    def clear(self) -> None:
        """Erase the spinner line so other output starts at the line's beginning."""
        if self._drawn:
            write_raw(self.err, "\r\x1b[K")
            self.err.flush()
            self._drawn = False

    def close(self) -> None:
        self.hide()
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def _draw(self) -> None:
        if self._phase is None:
            return
        elapsed = int(self.clock() - self._since)
        frame = FRAMES[self._frame % len(FRAMES)]
        write_raw(self.err, f"\r\x1b[K{frame} {escape_terminal(self._text)} ({elapsed} s)")
        self.err.flush()
        self._drawn = True

    def _start(self) -> None:
        if self._task is not None:
            return
        with contextlib.suppress(RuntimeError):  # no running loop: draw on updates only
            self._task = asyncio.get_running_loop().create_task(self._spin())

    async def _spin(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            self._frame += 1
            self._draw()
