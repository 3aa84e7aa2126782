"""A scripted OpenAI-compatible server for Baton's tests.

Baton runs as a separate process and talks HTTP, so its tests need a real server whose
every answer they control. ``FakeLLM`` is one: uvicorn on 127.0.0.1 (ephemeral port) in
a background thread, speaking the Responses API (streaming and not, with server-side
compaction), Chat Completions, Anthropic's Messages API (``/v1/messages``: signed
thinking, tool use, prompt-cache breakpoints, compaction blocks; see ``messages_api``),
and ``/v1/models``.

Start and stop::

    from tests.fake_llm import FakeLLM, text, tool_call

    with FakeLLM() as llm:                    # or: async with FakeLLM() as llm
        env = {**os.environ, **llm.env()}      # OPENAI_BASE_URL=llm.base_url, OPENAI_API_KEY
        ...                                    # start Baton with env; llm.stop() on exit

``FakeLLM(models=("gpt-fake", "gpt-fake-mini"), api_key=None, strict=True,
auto_compact=True, token_estimator=estimate_tokens)``. With ``api_key`` set, requests
without ``Authorization: Bearer <api_key>`` get OpenAI's 401.

Scripting — one reply per model request, consumed in order::

    llm.add(text("Reading it."), tool_call("read", {"path": "a.txt"}))   # one reply
    llm.add(reasoning("Plan first."), text("Done."), usage(input=900, output=12))
    llm.script([text("a"), [tool_call("glob", {"pattern": "*"})], text("b")])
    llm.on_request(lambda req: text("again") if req.tool_outputs() else None)

* ``llm.add(*parts) -> Reply`` queues one reply (or pass one ``Reply``);
  ``llm.script(iterable)`` queues many (each a Reply, a part, or a list of parts).
* ``llm.on_request(fn)``: when the queue is empty, ``fn(request)`` answers (a reply,
  a part, a list of parts, or None for the default). ``request`` is a
  ``RecordedRequest`` and reads like the JSON body (``req["input"]``, ``req.get(...)``).
  Exceptions in ``fn`` answer 500 and are re-raised when the ``with`` block exits.
* Queue and handler empty → the reply is ``text("ok")`` and the request is listed in
  ``llm.unscripted``; ``llm.pending`` counts unconsumed scripted replies.
* ``llm.add_compact(*parts)`` scripts the next *compaction* request
  (``/v1/responses/compact`` or a ``compaction_trigger`` request) on its own queue;
  unscripted ones succeed with one fresh compaction item. Put ``error(...)`` there to
  make compaction fail, or output parts without ``compaction()`` to send a bad result.
* ``llm.reset()`` clears queues, handler, recordings and the artifact log;
  ``llm.release()`` ends current stalls early.

Output parts (rendered as output items, in order; several of each allowed):

* ``text(*pieces, chunks=None)``: a message; one piece streams word by word, several
  pieces are the exact deltas, ``chunks=n`` splits evenly.
* ``tool_call(name, arguments=dict|str|None, *, call_id=None, chunks=3)``: a function
  call (``fc_…``/``call_…`` ids); ``invalid_tool_args(name, raw="{not json")``.
* ``reasoning(*summary)``: a reasoning item; ``encrypted_content`` only when the request
  ``include``s ``reasoning.encrypted_content`` (and only in ``output_item.done``).
* ``refusal(*pieces)``; ``compaction(note=None)``: an in-stream compaction item.

Modifiers and faults (at most one of each per reply):

* ``usage(input=None, output=None, *, cached=None, reasoning=None, total=None)``.
* ``error(status, body=None, headers=None)`` (dict → JSON, str → text, None → OpenAI's
  shape for that status); ``rate_limit(retry_after=1)`` is a 429 with ``Retry-After``.
* ``overflow(*, in_stream=False, flavor="openai"|"llamacpp"|"vllm", window=128000)``:
  the context-length error (400; ``in_stream`` → ``response.failed`` on a Responses
  stream, code ``context_length_exceeded``).
* ``prompt_progress(total, *, batch=256, cached=0)`` (Chat): llama.cpp's
  ``prompt_progress`` chunks, one per ``batch`` tokens, before the answer.
* ``cut_after(n_events)``: drop the socket after n events (non-streaming: half a body).
* ``stall(seconds, *, after=3)``: go silent mid-stream, then carry on.
* ``malformed_sse(*, after=2, payload=None, cut=False)``: one event whose JSON is broken.
* ``stream_error(message, *, code="server_error", after=None)``: an ``error`` event;
  ``failed(code, message, *, after=None)``: a ``response.failed`` event; both end the
  stream. ``incomplete(reason="max_output_tokens")``: ``response.incomplete`` /
  ``finish_reason: "length"``.
* ``delay(seconds)`` before the first byte; ``pace(seconds)`` between events.

Compaction: a ``compaction_trigger`` final input item is answered with exactly one
compaction item; ``context_management: [{type: "compaction", compact_threshold: N}]``
makes the fake emit a compaction item before the answer when the estimated input
tokens exceed N (``auto_compact=False`` disables); ``/v1/responses/compact`` returns
the retained user messages then the artifact. Every artifact's ``encrypted_content``
is an opaque ``enc_cmp_<hmac>`` the fake recognises: ``llm.compactions`` lists them
(``CompactionArtifact``: id, encrypted_content, trigger, request_index, source_items),
``llm.replayed(req)`` says which a request sent back unchanged, and
``llm.assert_replayed(artifact=None, request=None)`` asserts a byte-for-byte replay.
With ``strict=True`` (default) the fake answers 400 as OpenAI does to unknown or altered
``encrypted_content`` (``invalid_encrypted_content``), a tool output without its call,
a call without its output (Responses and Chat), and a misplaced ``compaction_trigger``.

Messages API (``POST /v1/messages``, ``messages_api``): the same parts render as content
blocks (``reasoning`` → a signed ``thinking`` block, ``redacted_thinking()`` → a
``redacted_thinking`` one, ``tool_call`` → ``tool_use`` with streamed ``input_json_delta``,
``compaction(note)`` → a ``compaction`` block whose content is ``note``, ``refusal`` →
stop reason ``refusal``, ``incomplete`` → ``max_tokens``); errors take Anthropic's shape
(``overloaded()`` is the 529). A ``compact_20260112`` edit past its trigger adds a
compaction block; a ``compaction: {type: summarize}`` request is a compaction request
(``kind == "compact"``) answered with one block alone. ``llm.anthropic`` holds the
signatures and blocks handed out and the prompt cache; ``RecordedRequest.blocks(type)``,
``anthropic_usage`` and ``anthropic_compactions`` read a request and its answer. The key
may come as ``Authorization: Bearer`` or ``x-api-key``.

Recordings: ``llm.requests`` (all, in order), ``llm.model_requests``,
``llm.compact_requests``, ``llm.last`` (latest model/compaction request),
``llm.wait_for_requests(n, timeout=10, kind="model")`` (and ``_async``). A
``RecordedRequest`` has ``index, method, path, headers`` (lower-case names),
``raw, body, route, kind, source, reply, status, rejected, compactions`` and helpers
``header(name)``, ``authorization``, ``api_key``, ``model``, ``stream``, ``tokens``,
``instructions``, ``tools``, ``tool_names``, ``items`` (Responses input items or Chat
messages), ``find(type)``, ``messages(role)``, ``texts(role)``, ``last_user_text()``,
``input_text()``, ``function_calls()``, ``tool_outputs()``, ``compaction_items()``,
``compaction_trigger``, ``compact_threshold``.

Token estimate (``estimate_tokens(body)``): ceil(len(json.dumps(input or messages)) / 4)
plus ceil(len(instructions) / 4); output tokens are the output characters / 4. Usage
overrides replace any of these.
"""

from .records import CompactionArtifact, RecordedRequest, estimate_tokens
from .script import (
    Reply,
    compaction,
    cut_after,
    delay,
    error,
    failed,
    incomplete,
    invalid_tool_args,
    malformed_sse,
    overflow,
    overloaded,
    pace,
    prompt_progress,
    rate_limit,
    reasoning,
    redacted_thinking,
    refusal,
    reply,
    stall,
    stream_error,
    text,
    tool_call,
    usage,
)
from .server import FakeLLM

__all__ = [
    "CompactionArtifact",
    "FakeLLM",
    "RecordedRequest",
    "Reply",
    "compaction",
    "cut_after",
    "delay",
    "error",
    "estimate_tokens",
    "failed",
    "incomplete",
    "invalid_tool_args",
    "malformed_sse",
    "overflow",
    "overloaded",
    "pace",
    "prompt_progress",
    "rate_limit",
    "reasoning",
    "redacted_thinking",
    "refusal",
    "reply",
    "stall",
    "stream_error",
    "text",
    "tool_call",
    "usage",
]
