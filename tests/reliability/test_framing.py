"""Properties of Baton's frame reader (`baton.faces.lsp.framing`), checked in-process with Hypothesis.

The wire fuzzer (test_bad_input.py) shows the server survives; these show
why: any chunking of valid frames reads back the same bodies, any junk is
followed by a resynchronisation at the next header, memory stays bounded
whatever length a client claims, and an overstated length does not take the
next frame with it.
"""

from __future__ import annotations

import random

from hypothesis import example, given
from hypothesis import strategies as st

from baton.faces.lsp.framing import MAX_LINE, FrameParser, FramingError

bodies = st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=8)
junk = st.binary(max_size=2000).filter(lambda b: b"content-length" not in b.lower())


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_all(parser: FrameParser, data: bytes, cuts: list[int]) -> list[bytes | FramingError]:
    out: list[bytes | FramingError] = []
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        parser.feed(data[start:cut])
        start = max(start, cut)
        while (f := parser.next_frame()) is not None:
            out.append(f)
    return out


@given(bodies, st.lists(st.integers(0, 5000), max_size=20))
def test_any_chunking_reads_the_same_frames(items: list[bytes], cuts: list[int]) -> None:
    data = b"".join(frame(b) for b in items)
    assert read_all(FrameParser(), data, [c % (len(data) + 1) for c in cuts]) == items


@given(junk, st.binary(min_size=1, max_size=200))
def test_junk_then_a_frame_resynchronises(noise: bytes, body: bytes) -> None:
    frames = read_all(FrameParser(), noise + b"\r\n" + frame(body), [])
    assert frames[-1] == body


@given(junk.filter(lambda b: b"\n" not in b), st.binary(min_size=1, max_size=200))
def test_a_header_after_junk_on_the_same_line_starts_a_frame(noise: bytes, body: bytes) -> None:
    assert read_all(FrameParser(), noise + frame(body), [])[-1] == body


@given(
    st.sampled_from([b"1000000000000", b"9" * 5000, b"-5", b"abc", b""]), st.binary(max_size=100)
)
def test_unusable_lengths_are_reported_not_read(length: bytes, body: bytes) -> None:
    parser = FrameParser()
    frames = read_all(
        parser, b"Content-Length: " + length + b"\r\n\r\n" + body + b"\r\n" + frame(b"{}"), []
    )
    assert isinstance(frames[0], FramingError)
    assert frames[-1] == b"{}"


@given(st.binary(max_size=300), st.integers(1, 100), st.binary(min_size=1, max_size=200))
# A cut body ending in a header's name, right before the next frame's header.
@example(b"Content-Length:", 1, b"\x00")
def test_an_overstated_length_gives_the_next_frame_back(
    body: bytes, extra: int, following: bytes
) -> None:
    parser = FrameParser()
    parser.feed(b"Content-Length: %d\r\n\r\n" % (len(body) + extra) + body + frame(following))
    first = parser.next_frame()
    if first is None:
        # The overstatement was longer than the next frame: nothing to resync to yet.
        assert extra > len(frame(following))
        return
    assert isinstance(first, bytes)
    parser.recover(first)  # what the server does when the body does not parse
    rest = []
    while (f := parser.next_frame()) is not None:
        rest.append(f)
    assert following in rest


def test_memory_stays_bounded_on_endless_junk() -> None:
    parser = FrameParser()
    noise = random.Random(7).randbytes(40 * MAX_LINE).replace(b"\n", b" ")
    for i in range(0, len(noise), 1000):
        parser.feed(noise[i : i + 1000])
        while parser.next_frame() is not None:
            pass
        assert len(parser._buf) <= MAX_LINE + 1000
