"""Logging to stderr, with every line passed through a redactor for credentials."""

from __future__ import annotations

import logging
import os
import re
import sys
import threading

_KEY_PATTERNS = [
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-.=]{8,}"),
    re.compile(r"(?i)(\"?(?:api[_-]?key|authorization)\"?\s*[:=]\s*\"?)[^\s\",}]{6,}"),
]
_secrets: set[str] = set()
_lock = threading.Lock()
REDACTED = "[REDACTED]"


def register_secret(value: str) -> None:
    """Make `value` unprintable in logs from now on."""
    if value and len(value) >= 6:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern in _KEY_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redact(text)
        if clean != message or record.args:
            record.msg, record.args = clean, None
        return True


class _RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class ExpectedRpcErrors(logging.Filter):
    """Drop pygls's tracebacks for errors Baton answers on purpose (bad params, unknown
    session, busy): they are the client's mistakes, reported to it, not server faults.
    Internal errors (-32603) still log with their traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        code = getattr(exc, "code", None)
        return not (isinstance(code, int) and code != -32603 and hasattr(exc, "message"))


def setup_logging(level: str | None = None) -> None:
    """Send logs to stderr (never stdout: stdout carries JSON-RPC), redacted."""
    level = level or os.environ.get("BATON_LOG_LEVEL", "INFO")
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    root.addHandler(handler)
    root.setLevel(level.upper())
    # pygls logs whole message bodies at INFO; they can hold prompts and keys.
    for noisy in ("pygls", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(ExpectedRpcErrors())
