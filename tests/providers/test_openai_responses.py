"""The Responses API provider against realistic event streams (httpx.MockTransport)."""

from __future__ import annotations

import json
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
    OpaqueItem,
    Reasoning,
    ReasoningDelta,
    RequiredCall,
    ServerCompaction,
    TextDelta,
    ToolCall,
    ToolOutput,
    ToolSpec,
    Usage,
    UserText,
)
from baton.providers.openai_responses import OpenAIResponsesProvider
from baton.providers.retry import StreamBroken

from ._support import (
    API_KEY,
    FakeServer,
    Sleeps,
    broken_sse_response,
    collect,
    collect_until_error,
    identity,
    json_response,
    policy,
    responses_sse,
    sse_response,
)

ME = identity()
REASONING_ITEM = {
    "id": "rs_01",
    "type": "reasoning",
    "summary": [
        {"type": "summary_text", "text": "**Plan**"},
        {"type": "summary_text", "text": "Read the file."},
    ],
    "encrypted_content": "gAAAAABo-opaque==",
}
MESSAGE_ITEM = {
    "id": "msg_01",
    "type": "message",
    "status": "completed",
    "role": "assistant",
    "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": "Let me look."}],
}
CALL_ITEM = {
    "id": "fc_01",
    "type": "function_call",
    "status": "completed",
    "call_id": "call_abc",
    "name": "read",
    "arguments": '{"path":"src/app.py"}',
}
USAGE = {
    "input_tokens": 1200,
    "input_tokens_details": {"cached_tokens": 1024},
    "output_tokens": 80,
    "output_tokens_details": {"reasoning_tokens": 40},
    "total_tokens": 1280,
}


def without_id(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "id"}


def response_obj(status: str = "completed", **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "status": status, "model": "gpt-5.1", **extra}


def full_turn() -> list[dict[str, Any]]:
    added_reasoning = {**REASONING_ITEM, "summary": [], "encrypted_content": None}
    return [
        {"type": "response.created", "response": response_obj("in_progress", output=[])},
        {"type": "response.in_progress", "response": response_obj("in_progress", output=[])},
        {"type": "response.output_item.added", "output_index": 0, "item": added_reasoning},
        {"type": "response.reasoning_summary_part.added", "item_id": "rs_01", "summary_index": 0},
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_01",
            "summary_index": 0,
            "delta": "**Plan**",
        },
        {"type": "response.reasoning_summary_part.added", "item_id": "rs_01", "summary_index": 1},
        {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_01",
            "summary_index": 1,
            "delta": "Read the file.",
        },
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING_ITEM},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {**MESSAGE_ITEM, "status": "in_progress", "content": []},
        },
        {
            "type": "response.content_part.added",
            "item_id": "msg_01",
            "output_index": 1,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        *[
            {
                "type": "response.output_text.delta",
                "item_id": "msg_01",
                "output_index": 1,
                "content_index": 0,
                "delta": piece,
            }
            for piece in ("Let ", "me ", "look.")
        ],
        {
            "type": "response.output_text.done",
            "item_id": "msg_01",
            "output_index": 1,
            "content_index": 0,
            "text": "Let me look.",
        },
        {"type": "response.output_item.done", "output_index": 1, "item": MESSAGE_ITEM},
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": {**CALL_ITEM, "arguments": "", "status": "in_progress"},
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_01",
            "output_index": 2,
            "delta": '{"path":',
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_01",
            "output_index": 2,
            "delta": '"src/app.py"}',
        },
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_01",
            "output_index": 2,
            "arguments": CALL_ITEM["arguments"],
        },
        {"type": "response.output_item.done", "output_index": 2, "item": CALL_ITEM},
        {
            "type": "response.completed",
            "response": response_obj(output=[REASONING_ITEM, MESSAGE_ITEM, CALL_ITEM], usage=USAGE),
        },
    ]


def text_turn(text: str = "Done.", *, usage: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    item = {**MESSAGE_ITEM, "content": [{"type": "output_text", "annotations": [], "text": text}]}
    return [
        {"type": "response.created", "response": response_obj("in_progress")},
        {"type": "response.output_text.delta", "item_id": "msg_01", "delta": text},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": response_obj(usage=usage or USAGE)},
    ]


def make(
    server: FakeServer, sleeps: Sleeps | None = None, **kwargs: Any
) -> OpenAIResponsesProvider:
    return OpenAIResponsesProvider(
        kwargs.pop("identity", ME),
        server.client(),
        api_key=API_KEY,
        retry=policy(sleeps or Sleeps()),
        **kwargs,
    )


def request(**kwargs: Any) -> ModelRequest:
    return ModelRequest(instructions="You are Baton.", items=[UserText("hi")], **kwargs)


@pytest.mark.asyncio
async def test_streams_reasoning_text_and_call_in_order() -> None:
    server = FakeServer(sse_response(responses_sse(full_turn())))
    events = await collect(make(server).stream(request()))

    assert events == [
        ReasoningDelta("**Plan**"),
        ReasoningDelta("\n\n"),
        ReasoningDelta("Read the file."),
        ItemDone(Reasoning("**Plan**\n\nRead the file.", native=Native(ME, REASONING_ITEM))),
        TextDelta("Let "),
        TextDelta("me "),
        TextDelta("look."),
        ItemDone(AssistantText("Let me look.", native=Native(ME, MESSAGE_ITEM))),
        ItemDone(
            ToolCall("call_abc", "read", '{"path":"src/app.py"}', native=Native(ME, CALL_ITEM))
        ),
        Usage(input_tokens=1200, output_tokens=80, cached_tokens=1024, reasoning_tokens=40),
        Finished("tool_calls"),
    ]


@pytest.mark.asyncio
async def test_request_body_and_headers() -> None:
    server = FakeServer(sse_response(responses_sse(text_turn())))
    tool = ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {}}})
    req = ModelRequest(
        instructions="You are Baton.",
        items=[
            UserText("fix the bug"),
            ContextBlock("ledger", "<ledger>\nfiles read: a.py\n</ledger>"),
            AssistantText("Looking."),
            ToolCall("call_1", "read", '{"path":"a.py"}'),
            ToolOutput("call_1", "print('hi')"),
        ],
        tools=[tool],
        max_output_tokens=4096,
        compact_threshold=320_000,
        cache_key="ses_123",
    )
    await collect(make(server).stream(req))

    sent = server.requests[0]
    assert sent.method == "POST"
    assert str(sent.url) == "https://api.openai.com/v1/responses"
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    assert sent.headers["accept"] == "text/event-stream"
    body = server.body()
    assert body == {
        "model": "gpt-5.1",
        "instructions": "You are Baton.",
        "input": [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "fix the bug"}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<ledger>\nfiles read: a.py\n</ledger>"}
                ],
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Looking."}],
            },
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "read",
                "arguments": '{"path":"a.py"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "print('hi')"},
        ],
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "tools": [
            {
                "type": "function",
                "name": "read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {}}},
                "strict": False,
            }
        ],
        "max_output_tokens": 4096,
        "prompt_cache_key": "ses_123",
        "context_management": [{"type": "compaction", "compact_threshold": 320_000}],
    }


@pytest.mark.asyncio
async def test_summary_request_keeps_the_turns_tools_uncallable_and_no_context_management() -> None:
    """The tools stay, so the request is the turn's cached prefix; none can be called."""
    server = FakeServer(sse_response(responses_sse(text_turn())))
    req = request(tools=[ToolSpec("read", "r", {"type": "object"})], purpose="summary")
    await collect(make(server).stream(req))
    body = server.body()
    assert [t["name"] for t in body["tools"]] == ["read"]
    assert body["tool_choice"] == "none"
    assert "context_management" not in body
    assert "max_output_tokens" not in body


@pytest.mark.asyncio
async def test_tool_call_round_trip_replays_the_output_items_verbatim() -> None:
    """What one request returned is what the next one sends, byte for byte."""
    first = FakeServer(sse_response(responses_sse(full_turn())))
    events = await collect(make(first).stream(request()))
    items = [e.item for e in events if isinstance(e, ItemDone)]
    assert [type(i) for i in items] == [Reasoning, AssistantText, ToolCall]

    second = FakeServer(sse_response(responses_sse(text_turn())))
    history: list[Item] = [UserText("hi"), *items, ToolOutput("call_abc", "x = 1")]
    await collect(make(second).stream(ModelRequest(instructions="", items=history)))
    sent = second.body()["input"]
    # As returned, field for field, minus the server-side id that store=false never kept.
    assert sent[1:4] == [
        without_id(REASONING_ITEM),
        without_id(MESSAGE_ITEM),
        without_id(CALL_ITEM),
    ]
    assert [list(i) for i in sent[1:4]] == [
        [k for k in i if k != "id"] for i in (REASONING_ITEM, MESSAGE_ITEM, CALL_ITEM)
    ]
    assert sent[4] == {"type": "function_call_output", "call_id": "call_abc", "output": "x = 1"}
    raw = second.requests[0].content.decode()
    assert json.dumps(CALL_ITEM["arguments"]) in raw
    assert "gAAAAABo-opaque==" in raw


@pytest.mark.asyncio
async def test_native_content_preserved_exactly() -> None:
    odd = {
        "id": "msg_9",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "annotations": [], "text": "naïve \u2028 😀 \\n  trailing  "}
        ],
        "extra_field_from_the_future": {"nested": [1, 2.5, None, True]},
    }
    server = FakeServer(sse_response(responses_sse(text_turn())))
    item = AssistantText("naïve", native=Native(ME, odd))
    await collect(make(server).stream(ModelRequest(instructions="", items=[item])))
    assert server.body()["input"] == [without_id(odd)]
    raw = server.requests[0].content.decode()
    assert json.dumps(odd["content"], ensure_ascii=False, separators=(",", ":")) in raw


@pytest.mark.asyncio
async def test_ids_are_kept_when_the_server_stores_items() -> None:
    server = FakeServer(sse_response(responses_sse(text_turn())))
    history: list[Item] = [
        Reasoning("", native=Native(ME, REASONING_ITEM)),
        ToolCall("call_abc", "read", "{}", native=Native(ME, CALL_ITEM)),
        ToolOutput("call_abc", "x"),
    ]
    await collect(make(server, store=True).stream(ModelRequest(instructions="", items=history)))
    body = server.body()
    assert body["store"] is True
    assert body["input"][:2] == [REASONING_ITEM, CALL_ITEM]


DIFFERENT_IDENTITIES = [
    pytest.param(identity(model="gpt-5.1-mini"), id="other-model"),
    pytest.param(identity(base_url="https://proxy.example/v1"), id="other-base-url"),
    pytest.param(identity(auth_kind="none"), id="other-auth"),
    pytest.param(identity(provider="openai-compatible"), id="other-provider"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize("other", DIFFERENT_IDENTITIES)
async def test_native_items_of_another_identity_are_not_replayed(other: Any) -> None:
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": "ENC"}
    history: list[Item] = [
        OpaqueItem(Native(other, compaction)),
        UserText("hi"),
        Reasoning("thinking", native=Native(other, REASONING_ITEM)),
        AssistantText("Let me look.", native=Native(other, MESSAGE_ITEM)),
        ToolCall("call_abc", "read", '{"path":"src/app.py"}', native=Native(other, CALL_ITEM)),
        ToolOutput("call_abc", "x"),
    ]
    server = FakeServer(sse_response(responses_sse(text_turn())))
    await collect(make(server).stream(ModelRequest(instructions="", items=history)))
    sent = server.body()["input"]
    assert sent == [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Let me look."}],
        },
        {
            "type": "function_call",
            "call_id": "call_abc",
            "name": "read",
            "arguments": '{"path":"src/app.py"}',
        },
        {"type": "function_call_output", "call_id": "call_abc", "output": "x"},
    ]
    raw = server.requests[0].content.decode()
    assert "rs_01" not in raw and "ENC" not in raw and "fc_01" not in raw


@pytest.mark.asyncio
async def test_same_identity_opaque_item_replayed_and_reasoning_without_content_dropped() -> None:
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": "ENC"}
    bare_reasoning = {"id": "rs_02", "type": "reasoning", "summary": []}
    history: list[Item] = [
        OpaqueItem(Native(ME, compaction)),
        Reasoning("", native=Native(ME, bare_reasoning)),
        Reasoning("no native"),
        UserText("go on"),
    ]
    server = FakeServer(sse_response(responses_sse(text_turn())))
    await collect(make(server).stream(ModelRequest(instructions="", items=history)))
    sent = server.body()["input"]
    assert sent[0] == without_id(compaction)
    assert len(sent) == 2 and sent[1]["role"] == "user"


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["compaction", "compaction_summary"])
async def test_server_compaction_item_is_reported(kind: str) -> None:
    artifact = {"type": kind, "id": "cmp_9", "encrypted_content": "ZZZ", "created_by": None}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response_obj("in_progress")},
        {"type": "response.output_item.added", "output_index": 0, "item": artifact},
        {"type": "response.output_item.done", "output_index": 0, "item": artifact},
        *text_turn()[1:],
    ]
    server = FakeServer(sse_response(responses_sse(events)))
    out = await collect(make(server).stream(request(compact_threshold=1000)))
    assert out[0] == ServerCompaction(OpaqueItem(Native(ME, artifact)))
    assert out[-1] == Finished("stop")


@pytest.mark.asyncio
async def test_invalid_json_arguments_pass_through_raw() -> None:
    bad = {**CALL_ITEM, "arguments": '{"path": "a.py",'}
    events: list[dict[str, Any]] = [
        {"type": "response.output_item.done", "output_index": 0, "item": bad},
        {"type": "response.completed", "response": response_obj(usage=USAGE)},
    ]
    server = FakeServer(sse_response(responses_sse(events)))
    out = await collect(make(server).stream(request()))
    assert out[0] == ItemDone(ToolCall("call_abc", "read", '{"path": "a.py",', Native(ME, bad)))
    assert out[-1] == Finished("tool_calls")


@pytest.mark.asyncio
async def test_incomplete_for_max_output_tokens_finishes_with_length() -> None:
    events: list[dict[str, Any]] = [
        *text_turn("partial")[:-1],
        {
            "type": "response.incomplete",
            "response": response_obj(
                "incomplete", incomplete_details={"reason": "max_output_tokens"}, usage=USAGE
            ),
        },
    ]
    server = FakeServer(sse_response(responses_sse(events)))
    out = await collect(make(server).stream(request()))
    assert isinstance(out[-2], Usage)
    assert out[-1] == Finished("length")


@pytest.mark.asyncio
async def test_refusal_is_text_and_finishes_with_refusal() -> None:
    refusal_item = {
        "id": "msg_r",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
    }
    events: list[dict[str, Any]] = [
        {"type": "response.refusal.delta", "item_id": "msg_r", "delta": "I can't help with that."},
        {"type": "response.output_item.done", "output_index": 0, "item": refusal_item},
        {"type": "response.completed", "response": response_obj(usage=USAGE)},
    ]
    server = FakeServer(sse_response(responses_sse(events)))
    out = await collect(make(server).stream(request()))
    assert out[0] == TextDelta("I can't help with that.")
    assert out[1] == ItemDone(AssistantText("I can't help with that.", Native(ME, refusal_item)))
    assert out[-1] == Finished("refusal")


@pytest.mark.asyncio
async def test_response_failed_raises_with_the_message() -> None:
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response_obj("in_progress")},
        {
            "type": "response.failed",
            "response": response_obj(
                "failed", error={"code": "invalid_prompt", "message": "Invalid prompt: nope"}
            ),
        },
    ]
    server = FakeServer(sse_response(responses_sse(events)))
    _, exc = await collect_until_error(make(server).stream(request()))
    assert isinstance(exc, ProviderError) and not isinstance(exc, StreamBroken)
    assert "Invalid prompt: nope" in exc.message
    assert len(server.requests) == 1


@pytest.mark.asyncio
async def test_failed_with_context_length_exceeded_is_overflow() -> None:
    events: list[dict[str, Any]] = [
        {
            "type": "response.failed",
            "response": response_obj(
                "failed",
                error={
                    "code": "context_length_exceeded",
                    "message": "Your input exceeds the context window of this model.",
                },
            ),
        }
    ]
    server = FakeServer(sse_response(responses_sse(events)))
    _, exc = await collect_until_error(make(server).stream(request()))
    assert isinstance(exc, ProviderError) and exc.overflow and not exc.retryable


@pytest.mark.asyncio
async def test_error_event_before_output_is_retried_when_retryable() -> None:
    error = {"type": "error", "code": "server_error", "message": "The server had an error"}
    sleeps = Sleeps()
    server = FakeServer(
        sse_response(responses_sse([error])), sse_response(responses_sse(text_turn()))
    )
    out = await collect(make(server, sleeps).stream(request()))
    assert out[-1] == Finished("stop")
    assert len(server.requests) == 2 and len(sleeps.delays) == 1


@pytest.mark.asyncio
async def test_stream_broken_mid_message_keeps_partial_and_does_not_retry() -> None:
    first = responses_sse(text_turn("Half an ans")[:2])
    server = FakeServer(broken_sse_response(first), sse_response(responses_sse(text_turn())))
    events, exc = await collect_until_error(make(server).stream(request()))
    assert events == [TextDelta("Half an ans")]
    assert isinstance(exc, StreamBroken) and isinstance(exc, ProviderError)
    assert not exc.retryable
    assert "stream broke" in exc.message
    assert len(server.requests) == 1


@pytest.mark.asyncio
async def test_stream_that_ends_early_without_output_is_retried() -> None:
    truncated = responses_sse(text_turn()[:1])  # response.created, then the connection closes
    sleeps = Sleeps()
    server = FakeServer(sse_response(truncated), sse_response(responses_sse(text_turn("ok"))))
    out = await collect(make(server, sleeps).stream(request()))
    assert TextDelta("ok") in out
    assert len(server.requests) == 2


@pytest.mark.asyncio
async def test_stream_that_ends_early_after_output_is_broken() -> None:
    truncated = responses_sse(text_turn()[:2])
    server = FakeServer(sse_response(truncated))
    events, exc = await collect_until_error(make(server).stream(request()))
    assert events == [TextDelta("Done.")]
    assert isinstance(exc, StreamBroken)
    assert "ended before the response completed" in exc.message


@pytest.mark.asyncio
async def test_items_taken_from_completed_response_when_done_events_are_missing() -> None:
    events: list[dict[str, Any]] = [
        {"type": "response.output_text.delta", "item_id": "msg_01", "delta": "Let me look."},
        {
            "type": "response.completed",
            "response": response_obj(output=[MESSAGE_ITEM, CALL_ITEM], usage=USAGE),
        },
    ]
    server = FakeServer(sse_response(responses_sse(events)))
    out = await collect(make(server).stream(request()))
    assert [type(e).__name__ for e in out] == [
        "TextDelta",
        "ItemDone",
        "ItemDone",
        "Usage",
        "Finished",
    ]
    assert out[-1] == Finished("tool_calls")


@pytest.mark.asyncio
async def test_model_without_encrypted_reasoning_is_asked_again_without_include() -> None:
    rejected = json_response(
        {
            "error": {
                "message": "Encrypted content is not supported with this model.",
                "type": "invalid_request_error",
                "param": "include",
                "code": None,
            }
        },
        status=400,
    )
    server = FakeServer(
        rejected,
        sse_response(responses_sse(text_turn())),
        sse_response(responses_sse(text_turn())),
    )
    provider = make(server, identity=identity(model="gpt-4o"))
    out = await collect(provider.stream(request()))
    assert out[-1] == Finished("stop")
    assert "include" in server.body(0) and "include" not in server.body(1)
    await collect(provider.stream(request()))  # remembered: asked without it straight away
    assert len(server.requests) == 3 and "include" not in server.body(2)


@pytest.mark.asyncio
async def test_invalid_replayed_artifact_is_an_error_not_a_model_limitation() -> None:
    rejected = json_response(
        {
            "error": {
                "message": "The encrypted content for item rs_1 could not be verified.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_encrypted_content",
            }
        },
        status=400,
    )
    server = FakeServer(rejected, sse_response(responses_sse(text_turn())))
    provider = make(server)
    with pytest.raises(ProviderError) as caught:
        await collect(provider.stream(request()))
    assert caught.value.status == 400
    assert len(server.requests) == 1, "no silent retry without the include"
    await collect(provider.stream(request()))
    assert "include" in server.body(1), "encrypted reasoning is still asked for"


@pytest.mark.asyncio
async def test_compact_endpoint() -> None:
    compacted = [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "fix the bug"}],
        },
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "ENC==", "created_by": None},
    ]
    server = FakeServer(
        json_response(
            {
                "id": "cmp_resp_1",
                "created_at": 1770000000,
                "object": "response.compaction",
                "output": compacted,
                "usage": USAGE,
            }
        )
    )
    req = ModelRequest(
        instructions="You are Baton.",
        items=[UserText("fix the bug"), AssistantText("ok")],
        tools=[ToolSpec("read", "r", {"type": "object"})],
        cache_key="ses_1",
    )
    output, usage = await make(server).compact(req)
    assert output == compacted
    assert usage == Usage(1200, 80, 1024, 40)
    sent = server.requests[0]
    assert str(sent.url) == "https://api.openai.com/v1/responses/compact"
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    body = server.body()
    assert set(body) == {"model", "input", "instructions", "prompt_cache_key"}
    assert body["model"] == "gpt-5.1" and body["prompt_cache_key"] == "ses_1"
    assert len(body["input"]) == 2


@pytest.mark.asyncio
async def test_compact_retries_and_reports_errors() -> None:
    sleeps = Sleeps()
    server = FakeServer(
        json_response({"error": {"message": "overloaded"}}, status=503),
        json_response({"error": {"message": "bad model", "code": "model_not_found"}}, status=404),
    )
    with pytest.raises(ProviderError) as info:
        await make(server, sleeps).compact(request())
    assert info.value.status == 404 and "bad model" in info.value.message
    assert len(sleeps.delays) == 1


def test_repr_hides_the_key() -> None:
    provider = OpenAIResponsesProvider(ME, httpx.AsyncClient(), api_key=API_KEY)
    assert API_KEY not in repr(provider) and API_KEY not in str(provider)


def test_a_named_required_tool_is_that_tools_choice() -> None:
    server = FakeServer(sse_response(responses_sse(full_turn())))
    tools = [ToolSpec("read", "r", {"type": "object"}), ToolSpec("edit", "e", {"type": "object"})]
    body = make(server).build_body(request(tools=tools, require_tool=RequiredCall("edit")))
    assert body["tool_choice"] == {"type": "function", "name": "edit"}
    assert make(server).build_body(request(tools=tools, require_tool=AnyTool()))["tool_choice"] == (
        "required"
    )
