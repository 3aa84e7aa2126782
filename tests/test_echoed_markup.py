"""`MarkupFilter`: echoed markup left out of displayed text, however the stream is split."""

from __future__ import annotations

import pytest

from baton.agent.echoed_markup import MarkupFilter


def _shown(text: str, cut: int | None = None) -> tuple[str, list[str]]:
    f = MarkupFilter()
    pieces = [text] if cut is None else [text[i : i + cut] for i in range(0, len(text), cut)]
    out = "".join(f.feed(piece) for piece in pieces) + f.flush()
    return out, f.removed


CASES = [
    ("plain answer, x < 3 and y > 2", "plain answer, x < 3 and y > 2", []),
    ("Here:\n<baton:plan>\n- [ ] a\n</baton:plan>\nDone.", "Here:\n\nDone.", ["<baton:plan>"]),
    (
        'A<tool_response>{"x": 1}</tool_response>B<|im_end|>',
        "AB",
        ["<tool_response>", "<|im_end|>"],
    ),
    ("stray </tool_call> closer", "stray  closer", ["</tool_call>"]),
    (
        'Use:\n<tools>\n{"type": "function", "function": {"name": "read"}}\n</tools>\nok',
        "Use:\n\nok",
        ["<tools>"],
    ),
    ("<b>bold</b> stays", "<b>bold</b> stays", []),
    ("ends with <baton:ledger>never closed", "ends with ", ["<baton:ledger>"]),
    ("ends with <bat", "ends with <bat", []),
    ("a<", "a<", []),
    # A block as `baton.framing` builds it: attributes on its tag, the text inside escaped,
    # so an escaped closing tag in it does not end it early.
    (
        'A<baton:attachment path="src/a b.py" lines="1-2">\nx &lt;/baton:attachment> y\n'
        "</baton:attachment>B",
        "AB",
        ['<baton:attachment path="src/a b.py" lines="1-2">'],
    ),
    (
        "<baton:compaction-instructions>\nkeep\n</baton:compaction-instructions>ok",
        "ok",
        ["<baton:compaction-instructions>"],
    ),
]


@pytest.mark.parametrize(("text", "shown", "removed"), CASES)
def test_markup_blocks_are_left_out_however_the_stream_is_split(
    text: str, shown: str, removed: list[str]
) -> None:
    for cut in [None, 1, 2, 3, 7]:
        assert _shown(text, cut) == (shown, removed), cut
