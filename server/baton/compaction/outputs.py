"""What the ledger keeps of a tool's output: the lines that carry the facts.

Pure text functions (no session, no I/O), so each is unit-tested on real
shapes of output: a traceback, a pytest run, `pip show`, `npm ls`, a TOML file.

* `error_excerpt`: a failing run's first error line, both sides of a failed
  comparison (at most 4 lines: `Expected:`/`Received:`, `left:`/`right:`),
  and its last lines. The
  message of an error sits at the *end* of its line (`E   TypeError: ...
  'NoneType' and 'int'`), after locations, so a line that must be cut keeps its
  end.
* `value_excerpt`: a short output whole (a version, a count, a port), or the
  lines of a longer one that carry values.
* `config_values`: the `key = value` lines of a config-like file as it was read.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

# Baton's own closing lines of a shell result (`[exit code 1]`, `[timed out …]`).
_MARKER = re.compile(r"^\[(?:exit code -?\d+|killed by signal .*|timed out .*|background .*)\]$")
# A line that states an error (not a location, not the traceback's header); a
# runner's status word (jest's `FAIL  tests/x.test.js`) is one too, but a weaker one.
_MESSAGE = (
    r"\b\w*(?:Error|Exception|Warning|Failure)\b\s*[:(]"
    r"|^E\s{2,}"
    r"|\b(?:error|fatal|panic(?:ked)?)\b(?:\[\w+\])?:"
    r"|No such file or directory|command not found|not found|Permission denied"
    r"|\b[A-Z]{1,4}\d{2,5}\b"
)
_ERROR_LINE = re.compile(_MESSAGE + r"|\bFAILED\b|\bFAIL\b")
_ERROR_MESSAGE = re.compile(_MESSAGE)
_HEADER = re.compile(r"^Traceback \(most recent call last\):$")
# Both sides of a failed comparison: jest's `Expected:` / `Received:`, cargo's
# `left:` / `right:` (and its `assertion ... failed`), testify's `expected:` / `actual  :`,
# pytest's further `E` lines (`E    +  where 49 = total([])`). One side alone misleads.
_COMPARED = re.compile(
    r"^\s*(?:[-+]\s+)?(?:expected|received|actual|left|right|got|want(?:ed)?)\b[\w ]{0,20}?\s*:"
    r"|\bassertion\b.*\bfailed\b"
    r"|^E\s{2,}\S",
    re.I,
)
# A line that carries a value worth keeping from a longer output.
_VALUE_LINE = re.compile(
    r"\bv?\d+\.\d+(?:\.\d+)?(?:[-.+\w]*)?\b"  # a version
    r"|:\d{2,5}\b|\bport\b"  # a port
    r"|\b\d+\s+(?:passed|failed|errors?|warnings?|skipped|tests?|files?|packages?|items?)\b",
    re.I,
)
ERROR_CHARS = 400
LINE_CHARS = 200
TAIL_LINES = 2
COMPARED_LINES = 4
COMPARED_CHARS = 100
SHORT_LINES = 4
SHORT_CHARS = 320
VALUE_LINES = 4
# Config-like files: by suffix, by name, or a settings module.
CONFIG_SUFFIXES = frozenset(
    {".toml", ".ini", ".cfg", ".env", ".yaml", ".yml", ".properties", ".conf"}
)
CONFIG_NAMES = frozenset({".env", "settings.py", "config.py", "configuration.py"})
MAX_CONFIG_VALUES = 24
VALUE_CHARS = 160
# A numbered line as `read` shows it ("    12\tport = 8080").
_NUMBERED = re.compile(r"^\s*\d+\t")
_SECTION = re.compile(r"^\s*\[([^\]\n]{1,80})\]\s*$")
_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][\w.-]{0,80})\s*(=|:)\s*(\S.*?)\s*$")


# Rules of `=` or `-` around a verdict ("===== 1 failed, 3 passed in 0.05s =====").
_RULE = re.compile(r"^[=\-_*~#\s]{3,}|[=\-_*~#\s]{3,}$")


def _lines(output: str) -> list[str]:
    out = []
    for raw in output.splitlines():
        line = _RULE.sub("", raw.rstrip()) if raw.strip(" =-_*~#") else ""
        if line.strip() and not _MARKER.match(line.strip()):
            out.append(line)
    return out


def _end(line: str, limit: int) -> str:
    """A line cut to `limit` from its start: the end holds the message."""
    line = line.strip()
    return line if len(line) <= limit else "…" + line[-(limit - 1) :]


def error_excerpt(output: str, limit: int = ERROR_CHARS) -> str:
    """The first error line, the lines after it that hold both sides of a failed
    comparison, then the last lines (the verdict), within `limit`."""
    lines = _lines(output)
    if not lines:
        return "(no output)"
    errors = [
        i for i, line in enumerate(lines) if _ERROR_LINE.search(line) and not _HEADER.match(line)
    ]
    first = errors[0] if errors else None
    # A status line (`FAIL  tests/x.test.js`) may come before the message: both are kept.
    message = next((i for i in errors if _ERROR_MESSAGE.search(lines[i])), None)
    tail = list(range(max(0, len(lines) - TAIL_LINES), len(lines)))
    head = [i for i in dict.fromkeys([first, message]) if i is not None and i not in tail]
    compared = [
        i
        for i in range(first + 1 if first is not None else 0, len(lines))
        if i not in tail and _COMPARED.search(lines[i])
    ][:COMPARED_LINES]
    while True:
        text = _joined(lines, head, compared, tail)
        if len(text) <= limit or not (compared or len(head) > 1):
            break
        # The message and the verdict come first, then the comparison, then the status.
        if compared:
            compared.pop()
        else:
            head.pop(0)
    return text if len(text) <= limit else _end(text, limit)


def _joined(lines: list[str], head: list[int], compared: list[int], tail: list[int]) -> str:
    """The picked lines in output order, `…` where lines were left out between them."""
    out: list[str] = []
    last = None
    for i in sorted(set(head + compared + tail)):
        if last is not None and i > last + 1 and out[-1] != "…":
            out.append("…")
        out.append(
            _start(lines[i], COMPARED_CHARS) if i in compared else _end(lines[i], LINE_CHARS)
        )
        last = i
    return " / ".join(out)


def _start(line: str, limit: int) -> str:
    """A value line cut to `limit` from its end: its label and the value's start stay."""
    line = line.strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def value_excerpt(output: str) -> str | None:
    """A short output whole; from a longer one, the lines that carry values (or None)."""
    lines = _lines(output)
    if not lines:
        return None
    whole = " / ".join(line.strip() for line in lines)
    if len(lines) <= SHORT_LINES and len(whole) <= SHORT_CHARS:
        return whole
    values = [line.strip() for line in lines if _VALUE_LINE.search(line)]
    if not values:
        return None
    shown = values[:VALUE_LINES]
    more = len(values) - len(shown)
    text = " / ".join(_end(v, LINE_CHARS // 2) for v in shown)
    return text + (f" / … {more} more" if more > 0 else "")


def is_config(path: str) -> bool:
    name = PurePosixPath(path).name.lower()
    suffix = PurePosixPath(name).suffix
    return (
        suffix in CONFIG_SUFFIXES
        or name in CONFIG_NAMES
        or name.startswith(".env")
        or (suffix == ".py" and "settings" in path.lower())
    )


def config_values(path: str, output: str) -> list[str]:
    """`key = value` lines of a config-like file's read output (section-prefixed)."""
    if not is_config(path):
        return []
    python = path.endswith(".py")
    out: list[str] = []
    section = ""
    # YAML nesting: (indent, key) of the open blocks above the current line.
    parents: list[tuple[int, str]] = []
    for raw in output.splitlines():
        line = _NUMBERED.sub("", raw, count=1)
        if not line.strip() or line.lstrip().startswith(("#", ";", "//")):
            continue
        header = _SECTION.match(line)
        if header and not python:
            section = f"[{header.group(1).strip()}] "
            continue
        match = _ASSIGN.match(line)
        indent = len(line) - len(line.lstrip())
        while parents and parents[-1][0] >= indent:
            parents.pop()
        if match is None:
            bare = line.strip()
            if bare.endswith(":") and _ASSIGN.match(bare + " x"):
                parents.append((indent, bare[:-1]))
            continue
        key, sign, value = match.groups()
        if python and (sign != "=" or not key.isupper()):
            continue  # a settings module's constants, not its code
        if value in ("{", "[", "(", "|", ">"):
            continue  # a nested block opens: its keys follow
        prefix = "".join(f"{k}." for _, k in parents)
        entry = f"{section}{prefix}{line.strip()}"  # as written: `KEY=value` stays so
        out.append(entry if len(entry) <= VALUE_CHARS else entry[: VALUE_CHARS - 1] + "…")
        if len(out) >= MAX_CONFIG_VALUES:
            break
    return out
