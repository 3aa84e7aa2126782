"""The Chat Completions provider: message shaping and stream assembly (httpx.MockTransport)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from baton.errors import ProviderError
from baton.providers.base import (
    AnyTool,
    AssistantText,
    ContextBlock,
    Finished,
    Item,
    ItemDone,
    ModelRequest,
    Native,
    NoTool,
    OpaqueItem,
    Reasoning,
    ReasoningDelta,
    RequiredCall,
    TextDelta,
    ToolCall,
    ToolOutput,
    ToolSpec,
    Usage,
    UserText,
)
from baton.providers.openai_chat import OpenAIChatProvider, to_chat_messages
from baton.providers.retry import StreamBroken

from ._support import (
    FakeServer,
    HangingStream,
    Sleeps,
    broken_sse_response,
    chat_sse,
    collect,
    collect_until_error,
    identity,
    json_response,
    policy,
    sse_response,
)

ME = identity("openai-compatible", "qwen2.5-coder:7b", "http://localhost:11434/v1", "none")
TOOLS = [
    ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
    ToolSpec("bash", "Run a command", {"type": "object", "properties": {"command": {}}}),
]


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1770000000,
        "model": "qwen2.5-coder:7b",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }


def usage_chunk(prompt: int = 500, completion: int = 20, cached: int = 0) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def text_chunks(*pieces: str, finish: str = "stop") -> list[dict[str, Any]]:
    return [
        chunk({"role": "assistant", "content": ""}),
        *[chunk({"content": p}) for p in pieces],
        chunk({}, finish),
    ]


def make(server: FakeServer, sleeps: Sleeps | None = None, **kwargs: Any) -> OpenAIChatProvider:
    return OpenAIChatProvider(ME, server.client(), retry=policy(sleeps or Sleeps()), **kwargs)


def request(**kwargs: Any) -> ModelRequest:
    kwargs.setdefault("tools", TOOLS)
    return ModelRequest(instructions="You are Baton.", items=[UserText("hi")], **kwargs)


def test_messages_merge_users_group_calls_and_drop_provider_items() -> None:
    other = identity()
    items: list[Item] = [
        OpaqueItem(Native(other, {"type": "compaction", "encrypted_content": "E"})),
        ContextBlock("summary", "<summary>earlier work</summary>"),
        ContextBlock("plan", "<plan>1. fix</plan>"),
        UserText("go on"),
        Reasoning("hmm", native=Native(other, {"type": "reasoning"})),
        AssistantText("Reading both."),
        ToolCall("c1", "read", '{"path":"a.py"}'),
        ToolCall("c2", "read", '{"path":"b.py"}'),
        ToolOutput("c1", "A"),
        ToolOutput("c2", "B"),
        ToolCall("c3", "bash", ""),
        ToolOutput("c3", "ok"),
        AssistantText("Done."),
        UserText("thanks"),
    ]
    assert to_chat_messages("sys", items) == [
        {"role": "system", "content": "sys"},
        {
            "role": "user",
            "content": "<summary>earlier work</summary>\n\n<plan>1. fix</plan>\n\ngo on",
        },
        {
            "role": "assistant",
            "content": "Reading both.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a.py"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"b.py"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "A"},
        {"role": "tool", "tool_call_id": "c2", "content": "B"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c3", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c3", "content": "ok"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "thanks"},
    ]


@pytest.mark.asyncio
async def test_request_body() -> None:
    server = FakeServer(sse_response(chat_sse(text_chunks("hi"))))
    await collect(make(server).stream(request(max_output_tokens=512)))
    sent = server.requests[0]
    assert str(sent.url) == "http://localhost:11434/v1/chat/completions"
    assert "authorization" not in sent.headers
    body = server.body()
    assert body["model"] == "qwen2.5-coder:7b"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 512
    assert body["messages"] == [
        {"role": "system", "content": "You are Baton."},
        {"role": "user", "content": "hi"},
    ]
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a file",
            "parameters": TOOLS[0].parameters,
        },
    }


@pytest.mark.asyncio
async def test_summary_request_has_no_tools_and_parses_no_calls() -> None:
    text = '```json\n{"name": "read", "arguments": {"path": "a"}}\n```'
    server = FakeServer(sse_response(chat_sse(text_chunks(text))))
    out = await collect(make(server).stream(request(purpose="summary")))
    assert "tools" not in server.body()
    assert ItemDone(AssistantText(text)) in out


@pytest.mark.asyncio
async def test_llamacpp_summary_request_renders_the_turns_tools_and_offers_none() -> None:
    """llama.cpp renders tools inside the system message: without them a summary
    request shares only the instructions with the turn before it."""
    text = '```json\n{"name": "read", "arguments": {"path": "a"}}\n```'
    server = FakeServer(sse_response(chat_sse(text_chunks(text))))
    turn = make(server, llamacpp=True).build_body(request())
    out = await collect(make(server, llamacpp=True).stream(request(purpose="summary")))
    body = server.body()
    assert body["tools"] == turn["tools"] and body["messages"] == turn["messages"]
    assert body["tool_choice"] == "none"
    assert ItemDone(AssistantText(text)) in out  # a call written in a summary is text


@pytest.mark.asyncio
async def test_streams_reasoning_text_and_fragmented_parallel_calls() -> None:
    chunks = [
        chunk({"role": "assistant", "content": None, "reasoning_content": "Need "}),
        chunk({"reasoning_content": "both files."}),
        chunk({"content": "Reading."}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "read", "arguments": ""},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path":'}}]}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path":"b.py"}'},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"a.py"}'}}]}),
        chunk({}, "tool_calls"),
        usage_chunk(500, 20, cached=256),
    ]
    server = FakeServer(sse_response(chat_sse(chunks)))
    out = await collect(make(server).stream(request()))
    assert out == [
        ReasoningDelta("Need "),
        ReasoningDelta("both files."),
        TextDelta("Reading."),
        ItemDone(Reasoning("Need both files.")),
        ItemDone(AssistantText("Reading.")),
        ItemDone(ToolCall("call_a", "read", '{"path":"a.py"}')),
        ItemDone(ToolCall("call_b", "read", '{"path":"b.py"}')),
        Usage(input_tokens=500, output_tokens=20, cached_tokens=256),
        Finished("tool_calls"),
    ]


@pytest.mark.asyncio
async def test_openrouter_style_reasoning_field() -> None:
    chunks = [chunk({"reasoning": "think"}), *text_chunks("answer")]
    server = FakeServer(sse_response(chat_sse(chunks)))
    out = await collect(make(server).stream(request()))
    assert out[0] == ReasoningDelta("think")
    assert ItemDone(Reasoning("think")) in out


@pytest.mark.asyncio
async def test_invalid_json_arguments_pass_through_raw() -> None:
    chunks = [
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "c1", "function": {"name": "read", "arguments": "{'path': "}}
                ]
            }
        ),
        chunk({}, "tool_calls"),
    ]
    server = FakeServer(sse_response(chat_sse(chunks)))
    out = await collect(make(server).stream(request()))
    assert out == [ItemDone(ToolCall("c1", "read", "{'path': ")), Finished("tool_calls")]


@pytest.mark.asyncio
async def test_no_usage_reported_means_no_usage_event() -> None:
    server = FakeServer(sse_response(chat_sse(text_chunks("Hel", "lo"))))
    out = await collect(make(server).stream(request()))
    assert out == [
        TextDelta("Hel"),
        TextDelta("lo"),
        ItemDone(AssistantText("Hello")),
        Finished("stop"),
    ]


@pytest.mark.asyncio
async def test_length_finish() -> None:
    server = FakeServer(sse_response(chat_sse([*text_chunks("cut", finish="length")])))
    out = await collect(make(server).stream(request()))
    assert out[-1] == Finished("length")


@pytest.mark.asyncio
async def test_calls_without_index_and_server_finishing_with_stop() -> None:
    """Ollama-like: whole calls in one chunk, no index, finish_reason "stop"."""
    chunks = [
        chunk(
            {
                "tool_calls": [
                    {"id": "c1", "function": {"name": "read", "arguments": {"path": "a"}}},
                    {"id": "c2", "function": {"name": "bash", "arguments": {"command": "ls"}}},
                ]
            }
        ),
        chunk({}, "stop"),
    ]
    server = FakeServer(sse_response(chat_sse(chunks)))
    out = await collect(make(server).stream(request()))
    assert out == [
        ItemDone(ToolCall("c1", "read", '{"path": "a"}')),
        ItemDone(ToolCall("c2", "bash", '{"command": "ls"}')),
        Finished("tool_calls"),
    ]


QWEN_ANSWER = (
    "I'll read the file first.\n\n"
    '```json\n{"name": "read", "arguments": {"path": "src/app.py"}}\n```'
)


@pytest.mark.asyncio
async def test_text_tool_calls_are_parsed_after_streaming() -> None:
    pieces = [QWEN_ANSWER[:20], QWEN_ANSWER[20:45], QWEN_ANSWER[45:]]
    server = FakeServer(sse_response(chat_sse([*text_chunks(*pieces), usage_chunk()])))
    out = await collect(make(server).stream(request()))
    deltas = "".join(e.text for e in out if isinstance(e, TextDelta))
    # The prose streams; the call's JSON is held back, then dropped as a call.
    assert deltas == "I'll read the file first.\n\n"
    done = [e.item for e in out if isinstance(e, ItemDone)]
    assert done[0] == AssistantText("I'll read the file first.")
    call = done[1]
    assert isinstance(call, ToolCall)
    assert (call.name, call.arguments) == ("read", '{"path": "src/app.py"}')
    assert call.call_id.startswith("call_")
    assert isinstance(out[-2], Usage)
    assert out[-1] == Finished("tool_calls")


@pytest.mark.asyncio
async def test_structured_call_wins_over_text() -> None:
    chunks = [
        chunk({"content": QWEN_ANSWER}),
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "c9", "function": {"name": "bash", "arguments": "{}"}}
                ]
            }
        ),
        chunk({}, "tool_calls"),
    ]
    server = FakeServer(sse_response(chat_sse(chunks)))
    out = await collect(make(server).stream(request()))
    done = [e.item for e in out if isinstance(e, ItemDone)]
    assert done == [AssistantText(QWEN_ANSWER), ToolCall("c9", "bash", "{}")]


@pytest.mark.asyncio
async def test_text_tool_calls_can_be_turned_off() -> None:
    server = FakeServer(sse_response(chat_sse(text_chunks(QWEN_ANSWER))))
    out = await collect(make(server, text_tool_calls=False).stream(request()))
    assert [e.item for e in out if isinstance(e, ItemDone)] == [AssistantText(QWEN_ANSWER)]
    assert out[-1] == Finished("stop")


@pytest.mark.asyncio
async def test_error_chunk_mid_stream_raises() -> None:
    """OpenRouter reports upstream failures as a data chunk with `error`."""
    chunks = [{"error": {"code": 502, "message": "Upstream provider went away"}}]
    server = FakeServer(sse_response(chat_sse(chunks, done=False)))
    _, exc = await collect_until_error(make(server).stream(request()))
    assert isinstance(exc, ProviderError)
    assert "Upstream provider went away" in exc.message


@pytest.mark.asyncio
async def test_finish_without_done_is_complete_but_nothing_is_broken() -> None:
    server = FakeServer(sse_response(chat_sse(text_chunks("ok"), done=False)))
    out = await collect(make(server).stream(request()))
    assert out[-1] == Finished("stop")


@pytest.mark.asyncio
async def test_cut_stream_after_text_is_broken() -> None:
    server = FakeServer(sse_response(chat_sse(text_chunks("partial")[:2], done=False)))
    events, exc = await collect_until_error(make(server).stream(request()))
    assert events == [TextDelta("partial")]
    assert isinstance(exc, StreamBroken)


@pytest.mark.asyncio
async def test_connection_reset_mid_stream_is_broken() -> None:
    first = chat_sse(text_chunks("par")[:2], done=False)
    server = FakeServer(broken_sse_response(first))
    events, exc = await collect_until_error(make(server).stream(request()))
    assert events == [TextDelta("par")]
    assert isinstance(exc, StreamBroken) and "stream broke" in exc.message
    assert len(server.requests) == 1


@pytest.mark.asyncio
async def test_server_without_stream_options_is_asked_again_without_them() -> None:
    rejected = json_response(
        {"error": {"message": "Unrecognized request argument supplied: stream_options"}},
        status=400,
    )
    server = FakeServer(rejected, sse_response(chat_sse(text_chunks("ok"))))
    out = await collect(make(server).stream(request()))
    assert out[-1] == Finished("stop")
    assert "stream_options" in server.body(0) and "stream_options" not in server.body(1)


@pytest.mark.asyncio
async def test_extra_body_is_sent() -> None:
    server = FakeServer(sse_response(chat_sse(text_chunks("ok"))))
    provider = make(server, extra_body={"temperature": 0.2, "seed": 42})
    await collect(provider.stream(request()))
    body = server.body()
    assert body["temperature"] == 0.2 and body["seed"] == 42


@pytest.mark.asyncio
async def test_abandoning_the_stream_closes_the_connection() -> None:
    hanging = HangingStream(chat_sse(text_chunks("first")[:2], done=False))
    server = FakeServer(
        httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=hanging)
    )
    stream = make(server).stream(request())
    assert await anext(stream) == TextDelta("first")
    await stream.aclose()  # type: ignore[attr-defined]
    assert hanging.closed


@pytest.mark.asyncio
async def test_cancelling_the_consumer_closes_the_connection() -> None:
    hanging = HangingStream(chat_sse(text_chunks("first")[:2], done=False))
    server = FakeServer(
        httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=hanging)
    )
    got: list[object] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for event in make(server).stream(request()):
            got.append(event)
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert got == [TextDelta("first")]
    assert hanging.closed


@pytest.mark.asyncio
async def test_base_url_can_differ_from_the_identity_route() -> None:
    """The embedded model keeps the identity route "local" but listens on a real port."""
    local = identity("local", "qwen", "local", "none")
    server = FakeServer(sse_response(chat_sse(text_chunks("ok"))))
    provider = OpenAIChatProvider(
        local, server.client(), base_url="http://127.0.0.1:5123/v1", retry=policy(Sleeps())
    )
    await collect(provider.stream(request()))
    assert str(server.requests[0].url) == "http://127.0.0.1:5123/v1/chat/completions"
    assert provider.identity == local


def test_a_required_tool_call_is_tool_choice_or_for_llamacpp_a_schema_of_the_calls() -> None:
    server = FakeServer(sse_response(chat_sse(text_chunks("ok"))))
    asked = request(tools=TOOLS, require_tool=AnyTool())
    assert "tool_choice" not in make(server).build_body(request(tools=TOOLS))
    assert make(server).build_body(asked)["tool_choice"] == "required"
    body = make(server, llamacpp=True).build_body(asked)
    assert "tool_choice" not in body
    # Exactly one call of an offered tool, with that tool's own arguments.
    assert body["json_schema"] == {
        "oneOf": [
            {
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": t.parameters},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for t in TOOLS
        ]
    }
    # A step without tools (a summary) never requires one.
    summary = request(tools=TOOLS, require_tool=AnyTool(), purpose="summary")
    assert "json_schema" not in make(server, llamacpp=True).build_body(summary)


def test_a_named_required_tool_is_that_tools_choice_or_a_schema_of_its_calls_only() -> None:
    server = FakeServer(sse_response(chat_sse(text_chunks("ok"))))
    asked = request(tools=TOOLS, require_tool=RequiredCall("bash"))
    assert make(server).build_body(asked)["tool_choice"] == {
        "type": "function",
        "function": {"name": "bash"},
    }
    schema = make(server, llamacpp=True).build_body(asked)["json_schema"]
    assert [option["properties"]["name"] for option in schema["oneOf"]] == [{"const": "bash"}]
    # A name the step does not offer requires any offered tool (a turn names only offered ones).
    unknown = request(tools=TOOLS, require_tool=RequiredCall("plan_write"))
    assert make(server).build_body(unknown)["tool_choice"] == "required"
    assert len(make(server, llamacpp=True).build_body(unknown)["json_schema"]["oneOf"]) == 2


def test_a_step_held_to_no_tool_keeps_the_tools_and_may_call_none() -> None:
    server = FakeServer(sse_response(chat_sse(text_chunks("ok"))))
    held = request(tools=TOOLS, require_tool=NoTool())
    for provider in (make(server), make(server, llamacpp=True)):
        body = provider.build_body(held)
        # The tools stay (the request is the prefix the engine has cached); none is callable.
        assert [t["function"]["name"] for t in body["tools"]] == [t.name for t in TOOLS]
        assert body["tool_choice"] == "none" and "json_schema" not in body


def test_a_required_call_narrows_its_arguments_in_the_llamacpp_schema_only() -> None:
    server = FakeServer(sse_response(chat_sse(text_chunks("ok"))))
    lines = ["    # TODO: guard", "    return total / count"]
    asked = request(tools=TOOLS, require_tool=RequiredCall("read", {"path": {"enum": lines}}))
    [option] = make(server, llamacpp=True).build_body(asked)["json_schema"]["oneOf"]
    assert option["properties"]["name"] == {"const": "read"}
    # Merged over the tool's own schema for this call; the tool offered is unchanged.
    assert option["properties"]["arguments"]["properties"]["path"] == {
        "type": "string",
        "enum": lines,
    }
    assert TOOLS[0].parameters["properties"]["path"] == {"type": "string"}
    body = make(server, llamacpp=True).build_body(asked)
    assert body["tools"][0]["function"]["parameters"] == TOOLS[0].parameters
    # Where the schema is not enforced, the call is the tool's choice, by name.
    assert make(server).build_body(asked)["tool_choice"] == {
        "type": "function",
        "function": {"name": "read"},
    }
