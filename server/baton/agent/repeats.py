"""The same tool call made again and again: small models loop, and the turn stops them.

A run of identical calls (same tool, same arguments, nothing else in between)
is allowed up to `tools.repeatLimit` calls; from the next one on the call is not
run and the model is told why, and when it insists `STOP_AFTER_REFUSALS` times
the turn ends with an error the person can read. An exact-string edit is not
idempotent (an edit whose new text contains the old one applies again), so the
same edit runs only once in a row.
"""

from __future__ import annotations

import json

from baton.providers.base import ToolCall

STOP_AFTER_REFUSALS = 2
NOT_IDEMPOTENT = frozenset({"edit", "plan_edit"})


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments or "{}"), sort_keys=True)
    except ValueError:
        return arguments


class RepeatGuard:
    """Counts the current run of identical calls within one turn."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._key: tuple[str, str] | None = None
        self.run = 0

    def see(self, call: ToolCall) -> None:
        key = (call.name, _canonical(call.arguments))
        self.run = self.run + 1 if key == self._key else 1
        self._key = key

    @property
    def edit(self) -> bool:
        return self._key is not None and self._key[0] in NOT_IDEMPOTENT

    @property
    def limit(self) -> int:
        return 1 if self.edit else self._limit

    @property
    def refuse(self) -> bool:
        return self.run > self.limit

    @property
    def stop(self) -> bool:
        return self.run >= self.limit + STOP_AFTER_REFUSALS
