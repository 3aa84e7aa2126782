"""Markup a model echoes into its answer, kept out of what a person is shown.

Small models copy what they see in their prompt: Baton's context blocks
(`<baton:plan>…</baton:plan>`, `<baton:ledger>`), the chat template's tool
markup (`<tools>`, its list of tool definitions, `<tool_call>`, `<tool_response>`) and its special tokens
(`<|im_end|>`). None of it is an answer. `MarkupFilter` removes such blocks
from streamed text as it arrives, holding back only what may still turn out
to be one. It filters what is displayed; the session keeps the text as the
model wrote it (what was sent stays what was sent).
"""

from __future__ import annotations

import re

# A complete tag: an opening or closing block tag, or a special token.
# A block tag may carry attributes (`<baton:attachment path="…">`); what `baton.framing`
# put inside a block is escaped (`&lt;/baton:plan>`), so it never ends the block early.
_TAG = re.compile(
    r'<(/?)(tool_call|tool_response|tools|baton:[a-z][a-z0-9_-]*)(?:\s+[a-z_-]+="[^"<>]*")*>'
    r"|<\|[a-z_]+\|>"
)
# What may still grow into a tag (no `>` yet).
_PARTIAL = re.compile(
    r'</?(?:[a-z_]*(?::[a-z0-9_-]*(?:\s+[a-z_-]*(?:=(?:"[^"<>]*"?)?)?)*)?|\|[a-z_]*\|?)$'
)
_MAX_TAG = 400  # a block tag with its attributes (an attached file's path)


class MarkupFilter:
    """Streams text through, leaving out echoed markup blocks and tokens."""

    def __init__(self) -> None:
        self._pending = ""  # text not yet shown: may be (part of) a tag
        self._inside: str | None = None  # the block being dropped, e.g. "baton:plan"
        self.removed: list[str] = []  # the tags left out, in order (first of each block)

    def feed(self, text: str) -> str:
        self._pending += text
        shown: list[str] = []
        while self._pending:
            if self._inside is not None:
                end = f"</{self._inside}>"
                at = self._pending.find(end)
                if at < 0:
                    # Keep only what could be the start of the closing tag.
                    self._pending = self._pending[-(len(end) - 1) :]
                    break
                self._pending = self._pending[at + len(end) :]
                self._inside = None
                continue
            at = self._pending.find("<")
            if at < 0:
                shown.append(self._pending)
                self._pending = ""
                break
            shown.append(self._pending[:at])
            rest = self._pending[at:]
            match = _TAG.match(rest)
            if match is not None:
                self._pending = rest[match.end() :]
                self.removed.append(match.group(0))
                closing, name = match.group(1), match.group(2)
                if name and not closing:
                    self._inside = name
                continue
            close = rest.find(">")
            if (close < 0 or close > _MAX_TAG) and len(rest) < _MAX_TAG and _PARTIAL.match(rest):
                self._pending = rest  # may still become a tag: wait for more
                break
            shown.append("<")
            self._pending = rest[1:]
        return "".join(shown)

    def flush(self) -> str:
        """The end of the answer: what was held back and is not markup after all."""
        rest, self._pending = self._pending, ""
        if self._inside is not None:  # an unclosed block: all of it was markup
            self._inside = None
            return ""
        return rest


def shown_text(text: str) -> str:
    """`text` as a person is shown it: without echoed markup blocks and tokens."""
    markup = MarkupFilter()
    return markup.feed(text) + markup.flush()
