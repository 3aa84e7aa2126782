"""The YAML front matter of a `SKILL.md` or a command file, read without a YAML library.

Skill files use a small, flat subset of YAML: `key: value` lines, values plain
or quoted (`'…'` with `''` for a quote, `"…"` with backslash escapes), block
scalars (`>` folded, `|` literal) and plain values continued on indented lines,
`true`/`false`. Lists and mappings (`allowed-tools: [a, b]`, `metadata:`) are
kept as their raw text: Baton does not use them. Anything else is an error
that names the line, so the person can fix the file.
"""

from __future__ import annotations

import re

FENCE = "---"
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "r": "\r", "0": "\0"}


class FrontmatterError(ValueError):
    """Why a file's front matter cannot be read (the message names the line)."""


Value = str | bool


def split(text: str, *, required: bool) -> tuple[dict[str, Value], str]:
    """(fields, body) of a file. Without a front matter block the file is all body,
    unless `required` (a `SKILL.md` must name and describe its skill)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != FENCE:
        if required:
            raise FrontmatterError("no front matter: the file must start with a `---` line")
        return {}, text
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip() == FENCE)
    except StopIteration:
        raise FrontmatterError("the front matter has no closing `---` line") from None
    fields = parse(lines[1:end], first_line=2)
    return fields, "\n".join(lines[end + 1 :]).strip("\n")


def parse(lines: list[str], *, first_line: int = 1) -> dict[str, Value]:
    fields: dict[str, Value] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        number = first_line + i
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            raise FrontmatterError(f"line {number}: indented line outside a value")
        key, sep, rest = line.partition(":")
        key = key.strip()
        if not sep or not _KEY.fullmatch(key):
            raise FrontmatterError(f"line {number}: expected `key: value`, got {line.strip()!r}")
        if key in fields:
            raise FrontmatterError(f"line {number}: `{key}` is given twice")
        # The value's continuation: every following indented (or blank) line.
        more: list[str] = []
        while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
            more.append(lines[i])
            i += 1
        while more and not more[-1].strip():
            more.pop()
        fields[key] = _value(rest.strip(), more, number)
    return fields


def _value(head: str, more: list[str], number: int) -> Value:
    if head[:1] in (">", "|"):
        indicator = head.rstrip("+-0123456789 ")
        if indicator not in (">", "|") or _comment_free(head[1:]).strip(" +-0123456789"):
            raise FrontmatterError(f"line {number}: unexpected text after the block indicator")
        return _block(head[0], more)
    if head[:1] in ('"', "'"):
        text = " ".join([head, *(m.strip() for m in more)]).strip()
        return _quoted(text, number)
    if head[:1] in ("[", "{") or (not head and more and more[0].strip().startswith("-")):
        # A list or mapping: kept as its raw text.
        return "\n".join([head, *more]).strip()
    if not head and more and ":" in more[0]:
        return "\n".join(more).strip()
    text = " ".join(part for part in [_comment_free(head), *(m.strip() for m in more)] if part)
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    return text.strip()


def _comment_free(text: str) -> str:
    """A plain value without its trailing ` # comment`."""
    at = text.find(" #")
    return text if at < 0 else text[:at].rstrip()


def _block(style: str, more: list[str]) -> str:
    indents = [len(m) - len(m.lstrip()) for m in more if m.strip()]
    indent = min(indents) if indents else 0
    rows = [m[indent:] if m.strip() else "" for m in more]
    if style == "|":
        return "\n".join(rows)
    # Folded: lines of a paragraph join with a space, a blank line stays a newline.
    out: list[str] = []
    for row in rows:
        if not row:
            out.append("\n")
        elif out and out[-1] != "\n":
            out.append(" " + row)
        else:
            out.append(row)
    return "".join(out).strip()


def _quoted(text: str, number: int) -> str:
    quote = text[0]
    out: list[str] = []
    i = 1
    while i < len(text):
        char = text[i]
        if quote == "'" and char == "'":
            if text[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return _after_quote("".join(out), text[i + 1 :], number)
        if quote == '"' and char == "\\" and i + 1 < len(text):
            code = text[i + 1]
            if code not in _ESCAPES:
                raise FrontmatterError(f"line {number}: unknown escape `\\{code}`")
            out.append(_ESCAPES[code])
            i += 2
            continue
        if quote == '"' and char == '"':
            return _after_quote("".join(out), text[i + 1 :], number)
        out.append(char)
        i += 1
    raise FrontmatterError(f"line {number}: the quoted value has no closing {quote}")


def _after_quote(value: str, rest: str, number: int) -> str:
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        raise FrontmatterError(f"line {number}: unexpected text after the quoted value: {rest!r}")
    return value
