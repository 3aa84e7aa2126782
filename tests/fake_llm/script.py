"""Reply scripts: the parts a test strings together to say what the fake model answers.

A *reply* answers exactly one model request. It is built from *parts*: output parts
(``text``, ``tool_call``, ``reasoning``, ``refusal``, ``compaction``) become output items
in the order given; modifier parts (``usage``, ``delay``, ``pace``, ``incomplete``) and
fault parts (``error``, ``overflow``, ``cut_after``, ``stall``, ``malformed_sse``,
``stream_error``, ``failed``) change how the reply is delivered.

Parts are small frozen dataclasses so a script reads like the conversation it fakes
and can be built once and reused. Nothing here knows about HTTP; ``responses_api`` and
``chat_api`` render a ``Reply`` for their wire format.
"""

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

# --------------------------------------------------------------------------- output parts


@dataclass(frozen=True)
class Text:
    """An assistant message; each piece is streamed as one delta."""

    pieces: tuple[str, ...]

    @property
    def content(self) -> str:
        return "".join(self.pieces)


@dataclass(frozen=True)
class Refusal:
    """An assistant refusal (Responses ``refusal`` content, Chat ``delta.refusal``)."""

    pieces: tuple[str, ...]

    @property
    def content(self) -> str:
        return "".join(self.pieces)


@dataclass(frozen=True)
class ToolCall:
    """A function call; ``arguments`` is the raw JSON string sent on the wire (maybe invalid)."""

    name: str
    arguments: str
    call_id: str | None = None
    chunks: int = 3


@dataclass(frozen=True)
class Reasoning:
    """A reasoning item with summary texts (one summary part per entry); on the Messages
    API a signed ``thinking`` block, or with ``redacted`` a ``redacted_thinking`` one."""

    summary: tuple[str, ...]
    redacted: bool = False


@dataclass(frozen=True)
class Compaction:
    """A ``compaction`` output item; ``note`` is kept in the registry for debugging only."""

    note: str | None = None


OutputPart: TypeAlias = Text | Refusal | ToolCall | Reasoning | Compaction

# --------------------------------------------------------------------------- modifiers and faults


@dataclass(frozen=True)
class Usage:
    """Overrides for the usage block; ``None`` fields keep the estimated value."""

    input: int | None = None
    output: int | None = None
    cached: int | None = None
    reasoning: int | None = None
    total: int | None = None


@dataclass(frozen=True)
class Error:
    """Answer with an HTTP error instead of a model reply."""

    status: int
    body: Any = None  # dict → JSON, str → text/plain, None → OpenAI-shaped default
    headers: Mapping[str, str] = field(default_factory=dict)


OverflowFlavor: TypeAlias = Literal["openai", "llamacpp", "vllm"]


@dataclass(frozen=True)
class Overflow:
    """A context-length error in the shape a real server sends (see ``errors.overflow_error``)."""

    in_stream: bool = False
    flavor: OverflowFlavor = "openai"
    window: int = 128000


@dataclass(frozen=True)
class CutAfter:
    """Drop the TCP connection after ``events`` stream events (no terminating chunk)."""

    events: int


@dataclass(frozen=True)
class Stall:
    """Stop sending for ``seconds`` after ``after`` events (``llm.release()`` ends it early)."""

    seconds: float
    after: int = 3


@dataclass(frozen=True)
class Malformed:
    """Insert one event whose JSON does not parse after ``after`` events."""

    after: int = 2
    payload: str | None = None
    cut: bool = False


@dataclass(frozen=True)
class Delay:
    """Wait before the first byte (status line and headers)."""

    seconds: float


@dataclass(frozen=True)
class Pace:
    """Wait between stream events, so a test can act while a reply is still streaming."""

    seconds: float


@dataclass(frozen=True)
class StreamError:
    """End the stream after ``after`` events with an ``error`` (or ``response.failed``) event."""

    message: str
    code: str | None = "server_error"
    after: int | None = None  # None: right after response.in_progress
    as_failed: bool = False


@dataclass(frozen=True)
class PromptProgress:
    """Chat only: llama.cpp's ``prompt_progress`` chunks before the answer, one per
    ``batch`` prompt tokens read (``cached`` of ``total`` reused), as its server sends them
    when a request asks for ``return_progress``."""

    total: int
    batch: int = 256
    cached: int = 0


@dataclass(frozen=True)
class Incomplete:
    """Finish as incomplete (Responses ``response.incomplete``, Chat ``finish_reason: length``)."""

    reason: str = "max_output_tokens"


Modifier: TypeAlias = (
    Usage
    | Error
    | Overflow
    | CutAfter
    | Stall
    | Malformed
    | Delay
    | Pace
    | StreamError
    | Incomplete
    | PromptProgress
)
Part: TypeAlias = OutputPart | Modifier

# --------------------------------------------------------------------------- the reply


@dataclass(frozen=True)
class Reply:
    """Everything the fake needs to answer one request. Build it with ``reply(*parts)``."""

    output: tuple[OutputPart, ...] = ()
    usage: Usage | None = None
    error: Error | None = None
    overflow: Overflow | None = None
    cut_after: int | None = None
    stall: Stall | None = None
    malformed: Malformed | None = None
    delay: float = 0.0
    pace: float = 0.0
    stream_error: StreamError | None = None
    incomplete: Incomplete | None = None
    prompt_progress: PromptProgress | None = None

    @property
    def fails_before_stream(self) -> bool:
        """True when the answer is an HTTP error, not a 200 stream."""
        return self.error is not None or (self.overflow is not None and not self.overflow.in_stream)


ReplyLike: TypeAlias = Reply | Part | Sequence[Part]

_SINGLE = {
    Usage: "usage",
    Error: "error",
    Overflow: "overflow",
    CutAfter: "cut_after",
    Stall: "stall",
    Malformed: "malformed",
    StreamError: "stream_error",
    Incomplete: "incomplete",
    PromptProgress: "prompt_progress",
}


def reply(*parts: Part) -> Reply:
    """Combine parts into one reply; raises ``ValueError`` on contradictions a test never means."""
    output: list[OutputPart] = []
    fields: dict[str, Any] = {}
    for part in parts:
        if isinstance(part, Text | Refusal | ToolCall | Reasoning | Compaction):
            output.append(part)
        elif isinstance(part, Delay):
            fields["delay"] = fields.get("delay", 0.0) + part.seconds
        elif isinstance(part, Pace):
            fields["pace"] = part.seconds
        elif type(part) in _SINGLE:
            name = _SINGLE[type(part)]
            if name in fields:
                raise ValueError(f"a reply takes at most one {name}() part")
            fields[name] = part
        else:
            raise TypeError(f"not a reply part: {part!r}")
    if isinstance(fields.get("cut_after"), CutAfter):
        fields["cut_after"] = fields["cut_after"].events
    built = Reply(output=tuple(output), **fields)
    if built.error is not None and built.overflow is not None:
        raise ValueError("error() and overflow() are both HTTP errors; pick one")
    if built.fails_before_stream and output:
        raise ValueError("an HTTP error reply carries no output parts")
    return built


def to_reply(value: ReplyLike) -> Reply:
    """Accept a Reply, a single part, or a sequence of parts."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, Sequence):
        return reply(*value)
    return reply(value)


def to_replies(values: Iterable[ReplyLike]) -> list[Reply]:
    return [to_reply(v) for v in values]


# --------------------------------------------------------------------------- builders

_WORDS = re.compile(r"\s*\S+|\s+")


def split_words(content: str) -> tuple[str, ...]:
    """Split so that each delta is a word with its leading space, as real streams do."""
    return tuple(_WORDS.findall(content))


def split_even(content: str, count: int) -> tuple[str, ...]:
    """Split into ``count`` nearly equal non-empty pieces (fewer when the text is shorter)."""
    count = max(1, min(count, len(content)))
    if not content:
        return ("",)
    size, extra = divmod(len(content), count)
    pieces, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        pieces.append(content[start:end])
        start = end
    return tuple(pieces)


def _pieces(parts: tuple[str, ...], chunks: int | None) -> tuple[str, ...]:
    if len(parts) > 1:
        if chunks is not None:
            raise ValueError("give either several pieces or chunks=, not both")
        return parts
    content = parts[0] if parts else ""
    if chunks is None:
        return split_words(content) or ("",)
    return split_even(content, chunks)


def text(*pieces: str, chunks: int | None = None) -> Text:
    """``text("hello world")`` streams word by word; ``text("hel", "lo")`` streams exactly
    those deltas; ``text("hello", chunks=1)`` sends one delta."""
    return Text(_pieces(pieces, chunks))


def refusal(*pieces: str, chunks: int | None = None) -> Refusal:
    return Refusal(_pieces(pieces, chunks))


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    call_id: str | None = None,
    chunks: int = 3,
) -> ToolCall:
    """A function call. A mapping is JSON-encoded compactly (as models emit it); a string
    is sent verbatim. ``call_id`` defaults to a fresh ``call_…`` id."""
    raw = (
        arguments
        if isinstance(arguments, str)
        else json.dumps(dict(arguments or {}), separators=(",", ":"))
    )
    return ToolCall(name=name, arguments=raw, call_id=call_id, chunks=chunks)


def invalid_tool_args(name: str, raw: str = "{not json", *, call_id: str | None = None) -> ToolCall:
    """A function call whose arguments string is not valid JSON."""
    return ToolCall(name=name, arguments=raw, call_id=call_id)


def reasoning(*summary: str) -> Reasoning:
    """A reasoning item; each argument is one summary part. Its ``encrypted_content`` is
    generated (and registered) when the request asked for ``reasoning.encrypted_content``."""
    return Reasoning(summary=summary)


def redacted_thinking() -> Reasoning:
    """Messages API only: a ``redacted_thinking`` block (opaque ``data``)."""
    return Reasoning((), redacted=True)


def overloaded() -> Error:
    """HTTP 529, the Messages API's ``overloaded_error``."""
    return Error(529)


def compaction(note: str | None = None) -> Compaction:
    """A compaction output item (in-stream on /v1/responses, or the artifact of a
    compaction request scripted with ``llm.add_compact``)."""
    return Compaction(note=note)


def usage(
    input: int | None = None,
    output: int | None = None,
    *,
    cached: int | None = None,
    reasoning: int | None = None,
    total: int | None = None,
) -> Usage:
    return Usage(input=input, output=output, cached=cached, reasoning=reasoning, total=total)


def error(status: int, body: Any = None, headers: Mapping[str, str] | None = None) -> Error:
    """An HTTP error. ``body`` as dict (JSON), str (text/plain) or None (OpenAI-shaped default)."""
    return Error(status=status, body=body, headers=dict(headers or {}))


def rate_limit(retry_after: float | None = 1) -> Error:
    """A 429 ``rate_limit_exceeded`` with a ``Retry-After`` header (seconds)."""
    headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
    return Error(status=429, body=None, headers=headers)


def overflow(
    *, in_stream: bool = False, flavor: OverflowFlavor = "openai", window: int = 128000
) -> Overflow:
    """The context-length error: HTTP 400 by default; ``in_stream=True`` sends it as
    ``response.failed`` on /v1/responses (Chat Completions has no in-stream form: 400)."""
    return Overflow(in_stream=in_stream, flavor=flavor, window=window)


def cut_after(events: int) -> CutAfter:
    return CutAfter(events)


def stall(seconds: float, *, after: int = 3) -> Stall:
    return Stall(seconds=seconds, after=after)


def malformed_sse(*, after: int = 2, payload: str | None = None, cut: bool = False) -> Malformed:
    return Malformed(after=after, payload=payload, cut=cut)


def prompt_progress(total: int, *, batch: int = 256, cached: int = 0) -> PromptProgress:
    return PromptProgress(total=total, batch=batch, cached=cached)


def delay(seconds: float) -> Delay:
    return Delay(seconds)


def pace(seconds: float) -> Pace:
    return Pace(seconds)


def stream_error(
    message: str = "An error occurred while processing your request.",
    *,
    code: str | None = "server_error",
    after: int | None = None,
) -> StreamError:
    """A mid-stream ``error`` event (Chat: a ``data: {"error": …}`` chunk), then the stream ends."""
    return StreamError(message=message, code=code, after=after)


def failed(
    code: str = "server_error",
    message: str = "The model failed to generate a response.",
    *,
    after: int | None = None,
) -> StreamError:
    """A ``response.failed`` event carrying ``response.error``, then the stream ends."""
    return StreamError(message=message, code=code, after=after, as_failed=True)


def incomplete(reason: str = "max_output_tokens") -> Incomplete:
    return Incomplete(reason)
