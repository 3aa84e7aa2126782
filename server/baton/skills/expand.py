"""Arguments of a slash command: `$ARGUMENTS`, `$1`…`$9`, or appended.

`/name a "b c" d` has the arguments `a "b c" d` (`$ARGUMENTS`) and the words
`a`, `b c`, `d` (`$1`, `$2`, `$3`, counted from 1, quotes grouping as in a
shell). The body is scanned once, so an argument that itself holds `$1` is
inserted as it is and never expanded again. A `$N` with no Nth argument is
left as written; `$ARGUMENTS` with none is empty. A body without any
placeholder gets the arguments appended, so they are never lost.
"""

from __future__ import annotations

import re
import shlex

_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])(?![0-9])")
APPENDED = "\n\nArguments: {arguments}"


def words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words
        return arguments.split()


def expand(body: str, arguments: str) -> str:
    arguments = arguments.strip()
    if not _PLACEHOLDER.search(body):
        return body + APPENDED.format(arguments=arguments) if arguments else body
    positional = words(arguments)

    def replace(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return positional[index] if index < len(positional) else match.group(0)

    return _PLACEHOLDER.sub(replace, body)


def parse_command(text: str) -> tuple[str, str] | None:
    """`("name", "the arguments")` for `/name the arguments`; None when `text` is not one."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, rest = stripped[1:].partition(" ")
    name, _, more = name.partition("\n")
    rest = (more + " " + rest if more else rest).strip()
    if not name or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        return None
    return name, rest
