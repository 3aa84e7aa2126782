"""Keep credentials out of everything a hook is given.

Hook inputs carry conversation text, tool inputs and tool outputs, any of
which may contain a key (a person pasting one, a model echoing `env`). Every
string in an input, keys of objects included, passes through here before a
hook sees it: the exact values of every known secret are replaced, then the
log redactor's patterns (`sk-…`, `Bearer …`, `api_key=…`) catch the rest.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from baton.logs import REDACTED, redact

MIN_SECRET = 6


class Scrubber:
    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return redact(value)

    def json(self, value: Any) -> Any:
        """A copy of a JSON-ready value with every string scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.json(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.json(v) for v in value]
        return value
