"""How Baton frames what it adds to the model's context, so that no text inside can pass for Baton.

Every block Baton builds (`<baton:plan>`, `<baton:requests>`, `<baton:ledger>`,
`<baton:summary>`, `<baton:attachment …>`, skill bodies, child results, …) is made
with `block()`. Its body goes through `neutralise()`, which turns anything that could
read as a tag of Baton's (`<baton:…>`, `</baton:…>`, in any case or spacing) or as the
chat template's own markup (`<|im_start|>`, `<tool_call>`, …) into a visibly escaped
form: `&lt;baton:…`. Text from the workspace can then say anything, but it cannot
end the block it is in or begin another one.

Inside a block, Baton's own entries start at the line's first column (`- `,
`[person] `); `entry()` indents every further line of an entry's text, so a line
of workspace text can never stand at the first column and read as an entry of
Baton's. Values that are meant to be one line (file names, command lines, tool
names) go through `inline()`, which shows control characters and newlines as
escapes, so a file name cannot become lines of its own.

The escaping is deterministic: the same text frames the same way in every
request, so framing never breaks the provider's cached prefix.
"""

from __future__ import annotations

import re

# An opening angle bracket, or a look-alike a model reads as one (full-width, small form).
_LT = "[<\uff1c\ufe64]"
# Space a model reads past: white space and the invisible format characters.
_GAP = "[\\s\u200b-\u200f\u2060\ufeff]*"
# `<baton:`, `</baton:`, `< / BATON :` … : whatever a model could read as a Baton tag.
_BATON_TAG = re.compile(rf"{_LT}({_GAP}/?{_GAP})(baton{_GAP}:)", re.IGNORECASE)
# The chat templates' markup: special tokens and the tool-call tags they render.
_TEMPLATE_TAG = re.compile(
    rf"{_LT}({_GAP}/?{_GAP})"
    r"(\|[a-z_]+\|?|tool_call\b|tool_response\b|tools\b|function_calls\b)",
    re.IGNORECASE,
)
# Every character a model or a renderer may take for the end of a line: each one
# `str.splitlines` knows (CR LF as one).
_LINE_BREAK = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")
_NAME = re.compile(r"[a-z][a-z0-9_-]*")
_ATTR_NAME = re.compile(r"[a-z][a-z0-9_-]*")


def neutralise(text: str) -> str:
    """`text` with every tag-like sequence of Baton's or the chat template's escaped."""
    text = _BATON_TAG.sub(lambda m: "&lt;" + m.group(1) + m.group(2), text)
    return _TEMPLATE_TAG.sub(lambda m: "&lt;" + m.group(1) + m.group(2), text)


def inline(text: str) -> str:
    """`text` as one line: newlines, tabs and other control characters shown as escapes."""

    def escape(match: re.Match[str]) -> str:
        char = match.group(0)
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\u{ord(char):04x}")

    return neutralise(_CONTROL.sub(escape, text))


def lines(text: str) -> list[str]:
    """`text`'s lines, split at every line break (`\\n`, `\\r`, `\\r\\n`, U+2028,
    U+2029, U+0085, `\\v`, `\\f`, …): what a Unicode reader or a model takes for a line
    is a line here too, so indenting by these lines leaves none at the first column.
    Unlike `str.splitlines`, a trailing break leaves an empty last line."""
    return _LINE_BREAK.sub("\n", text).split("\n")


def one_break(text: str) -> str:
    """`text` with every line break as `\\n`."""
    return _LINE_BREAK.sub("\n", text)


def entry(text: str, indent: str = "  ") -> str:
    """`text` as one entry's text: its first line as it is, every further line indented."""
    first, *rest = lines(neutralise(text))
    return "\n".join([first, *(indent + line if line.strip() else "" for line in rest)])


def indented(text: str, indent: str = "  ") -> str:
    """`text` neutralised with every line indented (blank lines left empty): a quoted
    text inside a block, no line of which can pass for one of Baton's."""
    return "\n".join(indent + line if line.strip() else "" for line in lines(neutralise(text)))


def attribute(value: str) -> str:
    """`value` as a double-quoted attribute value that cannot end the tag it is in."""
    escaped = inline(value).replace("&", "&amp;").replace('"', "&quot;")
    return '"' + escaped.replace("<", "&lt;").replace(">", "&gt;") + '"'


def block(
    name: str, body: str, attrs: dict[str, str] | None = None, *, trusted: bool = False
) -> str:
    """One Baton block: `<baton:name …>`, the body, `</baton:name>`.

    The body is neutralised unless `trusted` says every character of it is
    Baton's own (text Baton composed entirely itself, with every outside value
    already passed through `inline`, `entry` or `neutralise`).
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a block name: {name!r}")
    opening = f"<baton:{name}"
    for key, value in (attrs or {}).items():
        if not _ATTR_NAME.fullmatch(key):
            raise ValueError(f"not an attribute name: {key!r}")
        opening += f" {key}={attribute(value)}"
    # Only blank lines are trimmed: a body's first line may be indented (an attached range).
    # One line break everywhere: a CR or U+2028 in a body is a line to the model too.
    body = one_break(body).strip("\n")
    text = body if trusted else neutralise(body)
    return f"{opening}>\n{text}\n</baton:{name}>"
