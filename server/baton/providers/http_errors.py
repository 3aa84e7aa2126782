"""Turning what a provider sent back into a `ProviderError` the user can act on.

Every provider speaks a slightly different error dialect (OpenAI's
`{"error": {"message", "code"}}`, Ollama's `{"error": "..."}`, llama.cpp's
`exceed_context_size_error`, HTML from a proxy). This module reduces them to one
message that names the status and the provider's own words, decides whether a
retry can help, and recognises a context overflow so the caller compacts
instead of retrying. Messages never contain headers, and pass through the log
redactor so a key echoed back by a server is not repeated.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from baton.errors import ProviderError
from baton.logs import redact

# Statuses worth retrying: rate limits, server errors, gateways, Anthropic-style "overloaded".
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
# Error codes a stream (`error` event, `response.failed`) reports that a retry can fix.
RETRYABLE_CODES = frozenset(
    {"server_error", "rate_limit_exceeded", "server_is_overloaded", "slow_down", "overloaded"}
)
# Error codes that are never worth retrying, whatever the status says.
FATAL_CODES = frozenset({"insufficient_quota", "invalid_api_key", "billing_hard_limit_reached"})
OVERFLOW_CODES = frozenset(
    {"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"}
)
_OVERFLOW_TEXT = re.compile(
    r"maximum context length|context window|context length|too many tokens"
    r"|exceeds the available context size|prompt is too long|input is too long"
    r"|exceeds? (?:the )?(?:model'?s? )?context|reduce the length of the (?:messages|input)",
    re.IGNORECASE,
)
_MODEL_MISSING_TEXT = re.compile(
    r"model[^.]{0,80}(?:not found|does not exist|not exist|unknown|no such|not available"
    r"|not loaded)|(?:unknown|invalid|no such) model|model_not_found",
    re.IGNORECASE,
)
RATE_CODES = frozenset({"rate_limit_exceeded", "slow_down"})
QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
KEY_CODES = frozenset({"invalid_api_key", "unauthorized", "authentication_error"})
MAX_RETRY_AFTER = 60.0
_SNIPPET = 300


def safe_url(url: str) -> str:
    """`url` without user info, query or fragment: fit for messages and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def is_overflow(status: int | None, code: str | None, message: str) -> bool:
    """Whether an error says the request does not fit the model's context window."""
    if status == 429:  # "Request too large ... tokens per min" is a rate limit, not an overflow
        return False
    if status == 413 or (code is not None and code in OVERFLOW_CODES):
        return True
    return bool(_OVERFLOW_TEXT.search(message))


def cause_of(status: int | None, code: str | None, message: str, *, overflow: bool) -> str:
    """What an error from a provider is (protocol.ErrorCause), from its status, code
    and words; the status first, since a proxy's words say little."""
    if overflow:
        return "context_overflow"
    if code in QUOTA_CODES:
        return "quota"
    if code in KEY_CODES or status in (401, 403):
        return "key_refused"
    if status == 429 or code in RATE_CODES:
        return "rate_limit"
    if code == "model_not_found" or (
        status in (400, 404, None) and _MODEL_MISSING_TEXT.search(message)
    ):
        return "model_not_found"
    if status == 404:
        return "not_configured"  # the base URL does not lead to the API
    if (status is not None and status >= 500) or code in RETRYABLE_CODES:
        return "server_error"
    return "other"


def parse_retry_after(headers: httpx.Headers, *, cap: float = MAX_RETRY_AFTER) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, `Retry-After` seconds or date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return _clamp(float(raw_ms) / 1000.0, cap)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return _clamp(float(raw), cap)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return _clamp((when - datetime.now(UTC)).total_seconds(), cap)


def _clamp(seconds: float, cap: float) -> float | None:
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), cap)


def error_details(body: bytes | str) -> tuple[str, str | None]:
    """(message, code) from an error body in any of the common dialects."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = text.strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        message, code = _from_json(data)
        if message:
            return message, code
    if not text:
        return "", None
    if text.lstrip().startswith("<"):  # an HTML error page from a proxy: its title says enough
        title = re.search(r"<title>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
        text = title.group(1).strip() if title else "an HTML error page"
    return _snippet(text), None


def _from_json(data: dict[str, Any]) -> tuple[str, str | None]:
    err = data.get("error", data)
    if isinstance(err, str):
        return err, _name_or_none(data.get("code"))
    if not isinstance(err, dict):
        return "", None
    message = err.get("message") or err.get("detail") or err.get("msg") or ""
    if not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    # `code` says most (context_length_exceeded); llama.cpp and vLLM put the HTTP status
    # there and the telling name in `type` (exceed_context_size_error).
    code = _name_or_none(err.get("code")) or _name_or_none(err.get("type"))
    return _snippet(message.strip()), code


def _name_or_none(value: Any) -> str | None:
    if not isinstance(value, str) or not value or value.isdigit():
        return None
    return value


def _snippet(text: str) -> str:
    return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "…"


def error_from_response(
    status: int, body: bytes | str, headers: httpx.Headers, *, label: str
) -> ProviderError:
    """The error an HTTP error response stands for."""
    message, code = error_details(body)
    if not message:
        message = httpx.codes.get_reason_phrase(status) or "no message"
    overflow = is_overflow(status, code, message)
    retryable = status in RETRYABLE_STATUSES and not overflow and code not in FATAL_CODES
    text = f"{label} returned HTTP {status}: {message}"
    if code and code not in message:
        text += f" ({code})"
    return ProviderError(
        redact(text),
        status=status,
        retryable=retryable,
        overflow=overflow,
        retry_after=parse_retry_after(headers) if retryable else None,
        cause=cause_of(status, code, message, overflow=overflow),
    )


def error_from_payload(payload: Any, *, label: str, status: int | None = None) -> ProviderError:
    """The error a stream event reports (`error`, `response.failed`, a chunk with `error`)."""
    message, code = ("", None)
    if isinstance(payload, dict):
        message, code = _from_json(payload)
    elif isinstance(payload, str):
        message = _snippet(payload)
    message = message or "the provider reported an error without a message"
    overflow = is_overflow(status, code, message)
    retryable = not overflow and code in RETRYABLE_CODES
    text = f"{label} failed: {message}"
    if code and code not in message:
        text += f" ({code})"
    cause = cause_of(status, code, message, overflow=overflow)
    # An error event in the middle of a stream is the server's own failure unless it says
    # otherwise (Ollama and LM Studio send `{"error": "..."}` with no code).
    return ProviderError(
        redact(text),
        status=status,
        retryable=retryable,
        overflow=overflow,
        cause="server_error" if cause == "other" else cause,
    )


# Transport failures a new attempt can plausibly fix. A read timeout is not one of them:
# the server took longer than `requestTimeout`, and asking again would wait as long.
_RETRYABLE_TRANSPORT = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.ReadError,
    httpx.WriteError,
    httpx.WriteTimeout,
    httpx.PoolTimeout,
    httpx.RemoteProtocolError,
    httpx.CloseError,
)


def transport_error(exc: httpx.TransportError, *, label: str) -> ProviderError:
    """A connection-level failure as a `ProviderError` (no URL query, no headers)."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        what, cause = "could not connect", "unreachable"
    elif isinstance(exc, httpx.ReadTimeout):
        what, cause = "no response within the request timeout (requestTimeout)", "timeout"
    elif isinstance(exc, httpx.TimeoutException):
        what, cause = "connection failed", "timeout"
    else:
        what, cause = "connection failed", "connection_dropped"
    return ProviderError(
        redact(f"{label}: {what}: {type(exc).__name__}: {detail}"),
        retryable=isinstance(exc, _RETRYABLE_TRANSPORT),
        cause=cause,
    )
