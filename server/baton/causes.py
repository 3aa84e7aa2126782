"""What a failed turn is called, by its cause: the one set of words every face uses.

The providers classify their errors (`ProviderError.cause`, from the status, the
error code and the kind of transport failure), the settings theirs
(`ConfigError.cause`); a face titles the error with `headline` and keeps the
provider's own message as the detail. The VS Code sidebar holds the same titles
(client-vscode/src/features/sessions/webview/errors.ts; its tests compare them with these).
"""

from __future__ import annotations

import re
from typing import get_args

from baton import protocol as p
from baton.errors import BatonError

TITLES: dict[p.ErrorCause, str] = {
    "rate_limit": "The model server is rate-limiting requests.",
    "quota": "The model provider's quota or billing limit is used up.",
    "server_error": "The model server had an error.",
    "connection_dropped": "The connection to the model server dropped mid-answer.",
    "unreachable": "Could not reach the model server.",
    "timeout": "The model server did not answer in time.",
    "model_not_found": "The model server does not have this model.",
    "key_refused": "The model server refused the API key.",
    "key_missing": "The model provider needs an API key.",
    "model_missing": "No model is chosen for this server.",
    "not_configured": "The model server is not fully configured.",
    "local_model": "The local model is not set up yet.",
    "context_overflow": "The conversation is too long for the model's context window.",
    "other": "The turn stopped with an error.",
}

# What to do next, said after the title where there is one thing to do.
ADVICE: dict[p.ErrorCause, str] = {
    "rate_limit": "Wait a moment, then retry.",
    "server_error": "Retry in a moment.",
    "connection_dropped": "The partial answer is kept; retry to ask again.",
    "context_overflow": "Compact it, or start a new session.",
}

_CAUSES: frozenset[str] = frozenset(get_args(p.ErrorCause))
_RETRIES = re.compile(r"gave up after (\d+) retr")


def cause_of(exc: BaseException) -> p.ErrorCause | None:
    """The cause an error names, None for one that is not about reaching a model."""
    cause = exc.cause if isinstance(exc, BatonError) else None
    return cause if cause in _CAUSES else None  # type: ignore[return-value]


def headline(cause: p.ErrorCause, message: str = "") -> str:
    """The error's title in people's words: the cause, how often Baton retried, the advice."""
    words = [TITLES[cause]]
    retried = _RETRIES.search(message)
    if retried:
        count = int(retried.group(1))
        words.append(f"Baton retried {count} {'time' if count == 1 else 'times'}.")
    if cause in ADVICE:
        words.append(ADVICE[cause])
    return " ".join(words)


# The cause of an error stored before causes were kept with it: read from Baton's own
# message formats (http_errors.py, retry.py, factory.py), most telling first.
_STORED: tuple[tuple[p.ErrorCause, re.Pattern[str]], ...] = (
    ("context_overflow", re.compile(r"context_length_exceeded|maximum context|context window")),
    ("quota", re.compile(r"insufficient_quota|billing_hard_limit")),
    ("key_refused", re.compile(r"returned HTTP 40[13]\b|invalid_api_key")),
    ("rate_limit", re.compile(r"returned HTTP 429\b|rate_limit_exceeded")),
    ("model_not_found", re.compile(r"model_not_found|returned HTTP 404: [^\n]*model")),
    ("server_error", re.compile(r"returned HTTP 5\d\d\b|\bserver_error\b|overloaded")),
    ("server_error", re.compile(r"stream broke after partial output: .*(?<!connection) failed: ")),
    ("connection_dropped", re.compile(r"stream broke after partial output|stream ended before")),
    ("unreachable", re.compile(r": could not connect: ")),
    ("timeout", re.compile(r"no response within the request timeout")),
    ("connection_dropped", re.compile(r": connection failed: ")),
    ("key_missing", re.compile(r"^no OpenAI API key|does not get your OpenAI key")),
    ("model_missing", re.compile(r"needs a model: set the `model` key")),
    ("local_model", re.compile(r"the local (?:model|provider)|local\.modelPath|baton\[local\]")),
    ("not_configured", re.compile(r"needs a base URL|unknown provider")),
)


def cause_of_message(message: str | None) -> p.ErrorCause | None:
    """The cause of a stored error message of Baton's own making, None when it names none."""
    if not message:
        return None
    for cause, pattern in _STORED:
        if pattern.search(message):
            return cause
    return None
