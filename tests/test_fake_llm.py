"""Keep the fake honest: the official ``openai`` SDK must parse everything it sends.

Every Baton test trusts ``tests.fake_llm``; if the fake drifted from the real wire
format, those tests would pass against a server that does not exist. So these tests
drive it through the SDK's typed events, its stream accumulators (which check item
identities and ordering), and its exception mapping.
"""

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.fake_llm import (
    FakeLLM,
    compaction,
    cut_after,
    delay,
    error,
    estimate_tokens,
    failed,
    incomplete,
    invalid_tool_args,
    malformed_sse,
    overflow,
    pace,
    rate_limit,
    reasoning,
    refusal,
    reply,
    stall,
    stream_error,
    text,
    tool_call,
    usage,
)

MODEL = "gpt-fake"
READ_TOOL = {
    "type": "function",
    "name": "read",
    "description": "Read a file",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
    "strict": False,
}
CHAT_READ_TOOL = {
    "type": "function",
    "function": {"name": "read", "parameters": READ_TOOL["parameters"]},
}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def client(llm: FakeLLM) -> Iterator[openai.OpenAI]:
    sdk = openai.OpenAI(base_url=llm.base_url, api_key="sk-test-123", max_retries=0, timeout=10)
    yield sdk
    sdk.close()


def types_of(events: list[Any]) -> list[str]:
    return [e.type for e in events]


# --------------------------------------------------------------------------- Responses API


def test_streaming_text_tool_call_and_usage_parse_as_typed_events(
    llm: FakeLLM, client: openai.OpenAI
) -> None:
    llm.add(
        text("Let me ", "look."),
        tool_call("read", {"path": "a.txt"}, call_id="call_1"),
        usage(input=120, output=30, cached=100),
    )
    with client.responses.create(
        model=MODEL, input="open a.txt", tools=[READ_TOOL], stream=True
    ) as stream:
        events = list(stream)

    kinds = types_of(events)
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == [
        "Let me ",
        "look.",
    ]
    assert next(e for e in events if e.type == "response.output_text.done").text == "Let me look."
    assert "response.content_part.added" in kinds and "response.content_part.done" in kinds

    args = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert json.loads(args) == {"path": "a.txt"}
    call = [e.item for e in events if e.type == "response.output_item.done"][1]
    assert call.type == "function_call"
    assert (call.name, call.call_id, call.status) == ("read", "call_1", "completed")
    assert call.id.startswith("fc_")

    final = events[-1].response
    assert final.status == "completed"
    assert final.usage.input_tokens == 120
    assert final.usage.input_tokens_details.cached_tokens == 100
    assert final.usage.output_tokens == 30
    assert final.usage.output_tokens_details.reasoning_tokens == 0
    assert final.usage.total_tokens == 150
    assert [item.type for item in final.output] == ["message", "function_call"]


def test_sdk_stream_accumulator_accepts_the_event_sequence(
    llm: FakeLLM, client: openai.OpenAI
) -> None:
    llm.add(
        reasoning("Check the file first."),
        text("Reading now."),
        tool_call("read", {"path": "b.txt"}),
        tool_call("read", {"path": "c.txt"}),
    )
    with client.responses.stream(model=MODEL, input="hi", tools=[READ_TOOL]) as stream:
        for _ in stream:
            pass
        final = stream.get_final_response()
    assert final.output_text == "Reading now."
    calls = [item for item in final.output if item.type == "function_call"]
    assert [json.loads(c.arguments)["path"] for c in calls] == ["b.txt", "c.txt"]
    assert len({c.call_id for c in calls}) == 2


def test_non_streaming_response(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add(text("plain answer"))
    response = client.responses.create(model=MODEL, input=[{"role": "user", "content": "q"}])
    assert response.output_text == "plain answer"
    assert response.status == "completed"
    assert response.usage is not None
    assert response.usage.input_tokens == estimate_tokens(llm.last.body)


def test_reasoning_summary_and_encrypted_content_only_in_done(
    llm: FakeLLM, client: openai.OpenAI
) -> None:
    llm.add(reasoning("First I think.", "Then I answer."), text("42"))
    with client.responses.create(
        model=MODEL, input="q", stream=True, include=["reasoning.encrypted_content"], store=False
    ) as stream:
        events = list(stream)
    added = next(e.item for e in events if e.type == "response.output_item.added")
    done = next(e.item for e in events if e.type == "response.output_item.done")
    assert added.type == done.type == "reasoning"
    assert added.encrypted_content is None
    assert done.encrypted_content and done.encrypted_content.startswith("enc_")
    assert [s.text for s in done.summary] == ["First I think.", "Then I answer."]
    deltas = "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta")
    assert deltas == "First I think.Then I answer."
    assert events[-1].response.usage.output_tokens_details.reasoning_tokens > 0

    llm.add(reasoning("quietly"), text("again"))  # without the include: no encrypted_content
    response = client.responses.create(model=MODEL, input="q")
    assert response.output[0].type == "reasoning"
    assert response.output[0].encrypted_content is None


def test_refusal_and_incomplete(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add(refusal("I can't help with that."), incomplete("max_output_tokens"))
    with client.responses.create(model=MODEL, input="q", stream=True) as stream:
        events = list(stream)
    assert (
        "".join(e.delta for e in events if e.type == "response.refusal.delta")
        == "I can't help with that."
    )
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == "max_output_tokens"


def test_invalid_tool_args_are_sent_verbatim(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add(invalid_tool_args("read", "{not json"))
    response = client.responses.create(model=MODEL, input="q")
    call = response.output[0]
    assert call.type == "function_call"
    assert call.arguments == "{not json"


# --------------------------------------------------------------------------- compaction


def test_standalone_compact_and_byte_for_byte_replay(llm: FakeLLM, client: openai.OpenAI) -> None:
    history = [
        {"role": "user", "content": "first question"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "first answer"}],
        },
        {"role": "user", "content": [{"type": "input_text", "text": "second question"}]},
    ]
    compacted = client.responses.compact(model=MODEL, input=history, instructions="be brief")
    assert compacted.object == "response.compaction"
    assert compacted.usage.input_tokens > 0
    kinds = [item.type for item in compacted.output]
    assert kinds == ["message", "message", "compaction"]
    artifact = llm.compactions[-1]
    assert artifact.trigger == "standalone"
    assert compacted.output[-1].encrypted_content == artifact.encrypted_content
    assert compacted.output[-1].id == artifact.id
    assert llm.last.route == "responses.compact"
    assert llm.last.source == "default"

    # the SDK types retained user messages as output messages; dump them as sent
    replay = [item.model_dump(exclude_none=True, warnings=False) for item in compacted.output]
    llm.add(text("continuing"))
    response = client.responses.create(
        model=MODEL, input=[*replay, {"role": "user", "content": "next"}]
    )
    assert response.output_text == "continuing"
    assert llm.replayed() == [artifact]
    llm.assert_replayed(artifact)


def test_altered_or_invented_artifacts_are_rejected(llm: FakeLLM, client: openai.OpenAI) -> None:
    client.responses.compact(model=MODEL, input="hello")
    artifact = llm.compactions[-1]
    tampered = {"type": "compaction", "encrypted_content": artifact.encrypted_content + "x"}
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input=[tampered, {"role": "user", "content": "q"}])
    assert caught.value.status_code == 400
    assert caught.value.code == "invalid_encrypted_content"
    assert llm.last.rejected
    with pytest.raises(AssertionError):
        llm.assert_replayed(artifact)
    assert llm.pending == 0  # a rejected request consumes no scripted reply


def test_compaction_trigger_returns_exactly_one_compaction_item(
    llm: FakeLLM, client: openai.OpenAI
) -> None:
    llm.add(text("normal turn"))  # model queue must stay untouched by the trigger request
    items = [{"role": "user", "content": "long history"}, {"type": "compaction_trigger"}]
    with client.responses.create(model=MODEL, input=items, stream=True, store=False) as stream:
        events = list(stream)
    kinds = types_of(events)
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    output = events[-1].response.output
    assert [item.type for item in output] == ["compaction"]
    assert llm.compactions[-1].trigger == "trigger"
    assert llm.last.kind == "compact"
    assert llm.pending == 1


def test_compaction_trigger_can_be_scripted_to_fail(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add_compact(error(500))
    with pytest.raises(openai.InternalServerError):
        client.responses.create(
            model=MODEL, input=[{"role": "user", "content": "x"}, {"type": "compaction_trigger"}]
        )
    with pytest.raises(openai.BadRequestError, match="final input item"):
        client.responses.create(
            model=MODEL, input=[{"type": "compaction_trigger"}, {"role": "user", "content": "x"}]
        )


def test_context_management_threshold_compacts_mid_stream(
    llm: FakeLLM, client: openai.OpenAI
) -> None:
    big = [{"role": "user", "content": "word " * 400}]
    management = [{"type": "compaction", "compact_threshold": 100}]
    llm.add(text("after compaction"))
    with client.responses.create(
        model=MODEL, input=big, context_management=management, stream=True
    ) as stream:
        events = list(stream)
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [item.type for item in done] == ["compaction", "message"]
    assert not any(
        e.type.endswith(".delta") and getattr(e, "output_index", None) == 0 for e in events
    )
    assert llm.compactions[-1].trigger == "auto"
    assert llm.last.compactions == [llm.compactions[-1]]

    llm.add(text("small"))
    small = [{"role": "user", "content": "hi"}]
    response = client.responses.create(model=MODEL, input=small, context_management=management)
    assert [item.type for item in response.output] == ["message"]


def test_scripted_in_stream_compaction(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add(compaction("summary of turns 1-3"), text("done"))
    response = client.responses.create(model=MODEL, input="q")
    assert [item.type for item in response.output] == ["compaction", "message"]
    assert llm.compactions[-1].note == "summary of turns 1-3"


# --------------------------------------------------------------------------- Chat Completions


def test_chat_streaming_with_tool_calls_through_the_sdk(
    llm: FakeLLM, client: openai.OpenAI
) -> None:
    llm.add(
        reasoning("hmm"),
        text("Sure."),
        tool_call("read", {"path": "a.txt"}),
        tool_call("read", {"path": "b.txt"}),
        usage(input=50, output=7),
    )
    stream = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "read two files"}],
        tools=[CHAT_READ_TOOL],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "Sure."
    fragments: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            entry = fragments.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] += call.id or ""
            entry["name"] += (call.function.name or "") if call.function else ""
            entry["arguments"] += (call.function.arguments or "") if call.function else ""
    assert [json.loads(f["arguments"])["path"] for f in fragments.values()] == ["a.txt", "b.txt"]
    assert all(f["id"].startswith("call_") and f["name"] == "read" for f in fragments.values())
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == ["tool_calls"]
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (50, 7)


def test_chat_stream_accumulator_and_non_streaming(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add(text("Hello there"), tool_call("read", {"path": "x"}))
    with client.chat.completions.stream(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Hello there"
    assert message.tool_calls and message.tool_calls[0].function.name == "read"

    llm.add(text("non-streamed"))
    completion = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )
    assert completion.choices[0].message.content == "non-streamed"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.total_tokens > 0


def test_chat_tool_pairing_is_validated(llm: FakeLLM, client: openai.OpenAI) -> None:
    orphan = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "call_x", "content": "out"},
    ]
    with pytest.raises(openai.BadRequestError, match="preceeding message with 'tool_calls'"):
        client.chat.completions.create(model=MODEL, messages=orphan)
    call = {"id": "call_y", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    unanswered = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    with pytest.raises(openai.BadRequestError, match="call_y"):
        client.chat.completions.create(model=MODEL, messages=unanswered)
    answered = [*unanswered, {"role": "tool", "tool_call_id": "call_y", "content": "file body"}]
    client.chat.completions.create(model=MODEL, messages=answered)
    assert llm.last.tool_outputs() == {"call_y": "file body"}
    assert llm.last.function_calls() == [{"call_id": "call_y", "name": "read", "arguments": "{}"}]


def test_responses_tool_pairing_is_validated(llm: FakeLLM, client: openai.OpenAI) -> None:
    call = {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "contents"}
    with pytest.raises(openai.BadRequestError, match="No tool output found"):
        client.responses.create(model=MODEL, input=[{"role": "user", "content": "q"}, call])
    with pytest.raises(openai.BadRequestError, match="No tool call found"):
        client.responses.create(model=MODEL, input=[{"role": "user", "content": "q"}, output])
    client.responses.create(model=MODEL, input=[{"role": "user", "content": "q"}, call, output])
    assert llm.last.tool_outputs() == {"call_1": "contents"}
    # chained requests only send new items, so pairing is not checked
    client.responses.create(model=MODEL, input=[output], previous_response_id="resp_prev")


# --------------------------------------------------------------------------- errors and faults


def test_error_statuses_surface_as_sdk_exceptions(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add(rate_limit(retry_after=1))
    llm.add(
        error(
            503,
            {"error": {"message": "overloaded", "type": "server_error", "code": None}},
            headers={"Retry-After": "2"},
        )
    )
    llm.add(error(500, "plain text failure"))
    with pytest.raises(openai.RateLimitError) as limited:
        client.responses.create(model=MODEL, input="q", stream=True)
    assert limited.value.status_code == 429
    assert limited.value.response.headers["retry-after"] == "1"
    assert limited.value.code == "rate_limit_exceeded"
    with pytest.raises(openai.InternalServerError) as overloaded:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "q"}])
    assert overloaded.value.status_code == 503
    assert overloaded.value.response.headers["retry-after"] == "2"
    assert overloaded.value.body == {"message": "overloaded", "type": "server_error", "code": None}
    with pytest.raises(openai.InternalServerError) as plain:
        client.responses.create(model=MODEL, input="q")
    assert plain.value.response.text == "plain text failure"


def test_overflow_shapes(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.script(
        [overflow(), overflow(window=1000), overflow(flavor="llamacpp"), overflow(in_stream=True)]
    )
    with pytest.raises(openai.BadRequestError) as responses_style:
        client.responses.create(model=MODEL, input="q")
    assert responses_style.value.code == "context_length_exceeded"
    assert "exceeds the context window" in responses_style.value.message
    with pytest.raises(openai.BadRequestError) as chat_style:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "q"}])
    assert chat_style.value.code == "context_length_exceeded"
    assert "maximum context length is 1000 tokens" in chat_style.value.message
    with pytest.raises(openai.BadRequestError) as llamacpp:
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "q"}])
    assert (
        isinstance(llamacpp.value.body, dict)
        and llamacpp.value.body["type"] == "exceed_context_size_error"
    )
    with client.responses.create(model=MODEL, input="q", stream=True) as stream:
        events = list(stream)
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.code == "context_length_exceeded"


def test_stream_error_and_failed(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add(text("partial answer"), stream_error("boom", code="server_error", after=5))
    llm.add(text("x"), failed("server_error", "model crashed"))
    with client.responses.create(model=MODEL, input="q", stream=True) as stream:
        events = list(stream)
    assert len(events) == 6
    assert events[-1].type == "error"
    assert (events[-1].code, events[-1].message) == ("server_error", "boom")
    with client.responses.create(model=MODEL, input="q", stream=True) as stream:
        events = list(stream)
    assert types_of(events) == ["response.created", "response.in_progress", "response.failed"]
    assert events[-1].response.error.message == "model crashed"


def test_cut_after_drops_the_connection(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add(text("one two three four"), cut_after(4))
    seen: list[Any] = []
    with pytest.raises(openai.APIConnectionError):  # noqa: SIM117 - iterate inside the raises block
        with client.responses.create(model=MODEL, input="q", stream=True) as stream:
            seen.extend(stream)
    assert len(seen) == 4

    llm.add(text("body"), cut_after(0))
    with pytest.raises(openai.APIConnectionError):
        client.responses.create(model=MODEL, input="q")


def test_stall_hits_the_client_timeout_and_release_ends_it(
    llm: FakeLLM, client: openai.OpenAI
) -> None:
    llm.add(text("slow answer"), stall(30, after=3))
    impatient = client.with_options(timeout=0.3)
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):  # noqa: SIM117
        with impatient.responses.create(model=MODEL, input="q", stream=True) as stream:
            list(stream)
    assert time.monotonic() - started < 5

    llm.add(text("resumes"), stall(30, after=2))
    threading.Timer(0.2, llm.release).start()
    with client.responses.create(model=MODEL, input="q", stream=True) as stream:
        events = list(stream)
    assert events[-1].type == "response.completed"


def test_malformed_sse_breaks_json_parsing(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add(text("hello"), malformed_sse(after=2))
    with pytest.raises(json.JSONDecodeError):  # noqa: SIM117
        with client.responses.create(model=MODEL, input="q", stream=True) as stream:
            list(stream)
    # a lenient reader skipping the bad event still sees a complete stream
    llm.add(text("hello"), malformed_sse(after=2))
    raw = httpx.post(
        f"{llm.base_url}/responses", json={"model": MODEL, "input": "q", "stream": True}
    ).text
    assert raw.count("event: ") == 10
    assert raw.rstrip().endswith("}") and "response.completed" in raw


def test_delay_and_pace(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.add(text("late"), delay(0.3))
    started = time.monotonic()
    client.responses.create(model=MODEL, input="q")
    assert time.monotonic() - started >= 0.3
    llm.add(text("a b c d"), pace(0.02))
    started = time.monotonic()
    with client.responses.create(model=MODEL, input="q", stream=True) as stream:
        list(stream)
    assert time.monotonic() - started >= 0.02 * 10


# --------------------------------------------------------------------------- scripting, recording, lifecycle


def test_default_reply_recorded_and_handler(llm: FakeLLM, client: openai.OpenAI) -> None:
    assert client.responses.create(model=MODEL, input="q").output_text == "ok"
    assert llm.unscripted == [llm.last]

    def loop(request: Any) -> Any:
        done = request.tool_outputs()
        if len(done) < 2:
            return tool_call("read", {"path": f"f{len(done)}.txt"})
        return text(f"read {len(done)} files")

    llm.on_request(loop)
    items: list[Any] = [{"role": "user", "content": "go"}]
    while True:
        response = client.responses.create(model=MODEL, input=items)
        items += [item.model_dump(exclude_none=True) for item in response.output]
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            break
        items += [
            {"type": "function_call_output", "call_id": c.call_id, "output": "data"} for c in calls
        ]
    assert response.output_text == "read 2 files"
    assert [r.source for r in llm.model_requests] == ["default", "handler", "handler", "handler"]


def test_handler_errors_fail_the_test_on_exit() -> None:
    def broken(request: Any) -> Any:
        raise ValueError("bug in test handler")

    with pytest.raises(RuntimeError, match="on_request handler raised"), FakeLLM() as llm:
        llm.on_request(broken)
        status = httpx.post(
            f"{llm.base_url}/responses", json={"model": MODEL, "input": "q"}
        ).status_code
        assert status == 500


def test_recording_headers_and_input_helpers(llm: FakeLLM, client: openai.OpenAI) -> None:
    client.responses.create(
        model=MODEL,
        instructions="You are Baton.",
        input=[
            {"role": "user", "content": "please read"},
            {
                "type": "function_call",
                "call_id": "call_9",
                "name": "read",
                "arguments": '{"path":"a"}',
            },
            {"type": "function_call_output", "call_id": "call_9", "output": "FILE BODY"},
        ],
        tools=[READ_TOOL],
    )
    req = llm.last
    assert req.authorization == "Bearer sk-test-123"
    assert req.api_key == "sk-test-123"
    assert req["model"] == MODEL and req.model == MODEL
    assert req.instructions == "You are Baton."
    assert req.tool_names == ["read"]
    assert req.last_user_text() == "please read"
    assert [i["call_id"] for i in req.find("function_call")] == ["call_9"]
    assert "FILE BODY" in req.input_text() and "You are Baton." in req.input_text()
    assert req.tokens == estimate_tokens(req.body)
    assert req.status == 200


def test_script_accepts_parts_lists_and_replies(llm: FakeLLM, client: openai.OpenAI) -> None:
    llm.script([text("a"), [text("b"), usage(output=99)], reply(text("c"))])
    assert llm.pending == 3
    outputs = [client.responses.create(model=MODEL, input="q") for _ in range(3)]
    assert [o.output_text for o in outputs] == ["a", "b", "c"]
    assert outputs[1].usage is not None and outputs[1].usage.output_tokens == 99
    with pytest.raises(ValueError):
        reply(error(500), text("contradiction"))
    llm.add(text("dropped"))
    llm.reset()
    assert (llm.pending, llm.requests) == (0, [])


def test_models_endpoint_and_required_api_key() -> None:
    with FakeLLM(api_key="sk-right", models=["m1", "m2"]) as llm:
        good = openai.OpenAI(base_url=llm.base_url, api_key="sk-right", max_retries=0)
        assert [m.id for m in good.models.list()] == ["m1", "m2"]
        assert good.models.retrieve("m2").id == "m2"
        bad = openai.OpenAI(base_url=llm.base_url, api_key="sk-wrong-key-123", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as caught:
            bad.responses.create(model="m1", input="q")
        assert caught.value.status_code == 401
        assert "sk-wrong" not in caught.value.message


def test_concurrent_requests_each_consume_one_reply(llm: FakeLLM) -> None:
    llm.script([text(f"r{i}") for i in range(8)])
    results: list[str] = []

    def call() -> None:
        body = httpx.post(
            f"{llm.base_url}/responses", json={"model": MODEL, "input": "q"}, timeout=5
        ).json()
        results.append(body["output"][0]["content"][0]["text"])

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [f"r{i}" for i in range(8)]
    assert len(llm.wait_for_requests(8, timeout=1)) == 8


def test_starts_fast_and_stops_promptly_even_while_streaming() -> None:
    started = time.monotonic()
    llm = FakeLLM().start()
    assert time.monotonic() - started < 1
    llm.add(text("never finishes"), stall(60, after=2))
    outcome: list[BaseException] = []

    def consume() -> None:
        try:
            httpx.post(
                f"{llm.base_url}/responses",
                json={"model": MODEL, "input": "q", "stream": True},
                timeout=30,
            )
        except httpx.HTTPError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=consume, daemon=True)
    worker.start()
    llm.wait_for_requests(1)
    stopping = time.monotonic()
    llm.stop()
    assert time.monotonic() - stopping < 2
    worker.join(timeout=2)
    assert not worker.is_alive()
    assert isinstance(outcome[0], httpx.RemoteProtocolError)  # the stream was cut, not finished


@pytest.mark.asyncio
async def test_async_usage_with_the_async_sdk() -> None:
    async with FakeLLM() as llm:
        llm.add(text("async hello"))
        sdk = openai.AsyncOpenAI(base_url=llm.base_url, api_key="sk-a", max_retries=0)
        stream = await sdk.responses.create(model=MODEL, input="q", stream=True)
        deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
        assert "".join(deltas) == "async hello"
        seen = await llm.wait_for_requests_async(1)
        assert seen[0].stream
        await sdk.close()
        await asyncio.sleep(0)


def test_the_fake_knows_the_summary_prompts_by_their_opening_words() -> None:
    # The fake imports nothing of Baton: its copy of the prompts' opening words must stay
    # what Baton sends, or a summary request would be served as a turn.
    from baton.compaction import summary
    from tests.fake_llm.records import SUMMARY_PROMPTS

    assert [
        summary.IN_PLACE.startswith(SUMMARY_PROMPTS[0]),
        summary.CONTINUE.startswith(SUMMARY_PROMPTS[1]),
    ] == [True, True]
