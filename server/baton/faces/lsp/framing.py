"""LSP base-protocol framing that survives any byte stream.

pygls's reader trusts its client. A `Content-Length` of 10**12 makes it
allocate that much at once (the process dies); one too large for a C integer
ends its read loop (the server goes deaf); and a frame it does not recognise
exactly (a lower-case header, junk before a header, a body shorter or longer
than its length, bare `\\n` line ends) makes it drop the messages that follow.
Baton reads frames with `FrameParser` instead and answers what cannot be read:

* header names are case-insensitive, `\\r\\n` or `\\n` ends a line, and a
  header found at the end of a junk line still starts a frame (so the
  stream resynchronises at the next `Content-Length`);
* a header block without a valid length, or with one over `MAX_BODY`, gets an
  `id: null` error and its bytes are scanned for the next header instead of
  being read (memory stays bounded whatever length a client claims);
* a body that does not parse gets `-32700`; if a header starts inside it,
  its length was overstated and reading resumes at that header, so the next
  message is not lost with it.

The serve loop is the same shape as pygls's `run_async`, fed with chunks from
stdio or a TCP stream.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from baton.faces.lsp.protocol import BatonProtocol

log = logging.getLogger(__name__)

# Larger than any message Baton accepts (a prompt is at most 1,000,000
# characters, a plan 2,000,000), with room for JSON escapes.
MAX_BODY = 64 * 1024 * 1024
# A header line is short; junk longer than this is dropped as it streams in.
MAX_LINE = 8 * 1024
CHUNK = 64 * 1024

_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*([^\r\n]*?)[ \t]*\r?\n\Z", re.IGNORECASE)
_HEADER_START = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
# Enough of a line's tail to hold a whole `Content-Length: <digits>` header.
_HEADER_TAIL = 64


@dataclass(frozen=True)
class FramingError:
    """A frame that cannot be read; answered with an `id: null` error."""

    message: str


Frame = bytes | FramingError


class FrameParser:
    """Incremental parser: `feed` bytes, then take frames with `next_frame` until None."""

    def __init__(self, max_body: int = MAX_BODY) -> None:
        self._buf = bytearray()
        # Changeable while reading: the TCP face allows only a small frame until a
        # connection has authenticated (baton.lsp.tcp).
        self.max_body = max_body
        self._length: int | None = None  # from the header block being read
        self._invalid: str | None = None  # why the block's length cannot be used
        self._headers = False  # the block has at least one line
        self._body: int | None = None  # reading a body of this many bytes

    def feed(self, data: bytes) -> None:
        self._buf += data

    def next_frame(self) -> Frame | None:
        while True:
            if self._body is not None:
                if len(self._buf) < self._body:
                    return None
                body = bytes(self._buf[: self._body])
                del self._buf[: self._body]
                self._body = None
                return body
            end = self._buf.find(b"\n")
            if end < 0:
                if len(self._buf) > MAX_LINE:
                    # Junk without a line end: keep only what could begin a header.
                    del self._buf[: len(self._buf) - _HEADER_TAIL]
                return None
            line = bytes(self._buf[: end + 1])
            del self._buf[: end + 1]
            if line.strip():
                self._header_line(line)
                continue
            frame = self._end_of_headers()
            if frame is not None:
                return frame

    def recover(self, body: bytes) -> None:
        """`body` did not parse: if a header starts inside it, resume reading there.

        A length larger than the body it announced swallows the start of the
        next frame; this gives those bytes back.
        """
        # The header may straddle the body's end: look at the bytes after it too.
        ahead = body + bytes(self._buf[:_HEADER_TAIL])
        match = _HEADER_START.search(ahead)
        if match is not None and match.start() < len(body):
            self._buf[:0] = body[match.start() :]

    def _header_line(self, line: bytes) -> None:
        # The last header on the line: junk before it (a cut body that itself ends in
        # "Content-Length:") belongs to the frame that was given up.
        starts = [m.start() for m in _HEADER_START.finditer(line)]
        match = _HEADER.match(line, starts[-1]) if starts else None
        if match is None:
            self._headers = True  # another header (Content-Type), or junk
            return
        if match.start() > 0:
            # Junk before the header on the same line: a new frame starts here.
            self._length = self._invalid = None
        self._headers = True
        value = match.group(1)
        if not value.isdigit() or not value.isascii():
            self._length, self._invalid = None, f"invalid Content-Length {value[:40]!r}"
        elif len(value) > 18 or int(value) > self.max_body:
            shown = value[:20].decode() + ("..." if len(value) > 20 else "")
            self._length = None
            self._invalid = (
                f"message too large: Content-Length {shown} is over the limit of "
                f"{self.max_body} bytes; its bytes are skipped"
            )
        else:
            self._length, self._invalid = int(value), None

    def _end_of_headers(self) -> Frame | None:
        length, invalid, headers = self._length, self._invalid, self._headers
        self._length = self._invalid = None
        self._headers = False
        if length is not None:
            self._body = length
            return None
        if invalid is not None:
            return FramingError(invalid)
        if headers:
            return FramingError("a header block without Content-Length; its body is skipped")
        return None  # a stray blank line


async def serve(
    protocol: BatonProtocol,
    read_chunk: Callable[[], Awaitable[bytes]],
    stop_event: threading.Event,
    parser: FrameParser | None = None,
) -> None:
    """Read frames until end of input (or `exit`), handing each message to `protocol`."""
    from baton.faces.lsp.protocol import INVALID_REQUEST, PARSE_ERROR

    parser = parser or FrameParser()
    while not stop_event.is_set():
        chunk = await read_chunk()
        if not chunk:
            break
        parser.feed(chunk)
        while (frame := parser.next_frame()) is not None:
            if isinstance(frame, FramingError):
                log.warning("framing error: %s", frame.message)
                protocol.reply_error(None, INVALID_REQUEST, f"Invalid Request: {frame.message}")
                continue
            try:
                # Strict UTF-8 first: json.loads(bytes) would let encoded surrogates through.
                message = json.loads(frame.decode("utf-8"), object_hook=protocol.structure_message)
            except (ValueError, RecursionError) as exc:
                # ValueError covers malformed JSON and invalid UTF-8.
                parser.recover(frame)
                reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
                protocol.reply_error(None, PARSE_ERROR, f"Parse error: {reason}")
                continue
            try:
                protocol.handle_message(message)
            except Exception as exc:
                log.exception("unable to handle a message")
                if isinstance(message, dict) and "method" in message and "id" in message:
                    protocol.reply_error(
                        message["id"], -32603, f"internal error: {type(exc).__name__}: {exc}"
                    )
