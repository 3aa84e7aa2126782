"""The fake's Messages API checked against the official `anthropic` SDK, and Baton's
headers against the SDK's: what the fake answers the SDK parses, streamed and not."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx
import pytest
from anthropic._constants import ANTHROPIC_API_VERSION

from baton.providers.anthropic_messages import ANTHROPIC_VERSION, auth_headers
from tests.fake_llm import (
    FakeLLM,
    compaction,
    overloaded,
    rate_limit,
    reasoning,
    redacted_thinking,
    stream_error,
    text,
    tool_call,
)

KEY = "sk-ant-sdk-check-0123456789"
TOOLS = [{"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}]


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(models=("claude-sonnet-4-6",), api_key=KEY) as fake:
        yield fake


def sdk(llm: FakeLLM) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=llm.url, max_retries=0)


def test_baton_sends_the_key_and_version_as_the_sdk_does(llm: FakeLLM) -> None:
    llm.add(text("hi"))
    sdk(llm).messages.create(
        model="claude-sonnet-4-6", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    )
    seen = llm.last.headers
    sdk_auth = {k: v for k, v in seen.items() if k in ("authorization", "x-api-key")}
    baton = {k.lower(): v for k, v in auth_headers(KEY).items()}
    assert {k: v for k, v in baton.items() if k != "anthropic-version"} == sdk_auth
    assert ANTHROPIC_VERSION == ANTHROPIC_API_VERSION == seen["anthropic-version"]


def test_a_non_streamed_answer_parses_with_thinking_text_tool_use_and_cache_usage(
    llm: FakeLLM,
) -> None:
    llm.add(reasoning("plan"), text("Reading."), tool_call("read", {"path": "a"}))
    message = sdk(llm).messages.create(
        model="claude-sonnet-4-6",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2000},
        system=[{"type": "text", "text": "sys " * 300, "cache_control": {"type": "ephemeral"}}],
        tools=TOOLS,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "read a"}],
    )
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    thinking = message.content[0]
    assert thinking.type == "thinking" and thinking.signature and thinking.thinking == "plan"
    call = message.content[2]
    assert call.type == "tool_use" and call.input == {"path": "a"}
    assert message.stop_reason == "tool_use"
    assert message.usage.cache_creation_input_tokens and message.usage.cache_read_input_tokens == 0

    # The same tools and system again read them from the cache.
    llm.add(text("ok"))
    again = sdk(llm).messages.create(
        model="claude-sonnet-4-6",
        max_tokens=4000,
        tools=TOOLS,  # type: ignore[arg-type]
        system=[{"type": "text", "text": "sys " * 300, "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": "read b"}],
    )
    assert again.usage.cache_read_input_tokens and again.usage.cache_read_input_tokens > 0


def test_the_stream_accumulates_in_the_sdk_to_the_same_blocks(llm: FakeLLM) -> None:
    llm.add(
        reasoning("think it over"),
        redacted_thinking(),
        text("Answer."),
        tool_call("read", {"path": "b"}),
    )
    with sdk(llm).messages.stream(
        model="claude-sonnet-4-6",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2000},
        tools=TOOLS,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "go"}],
    ) as stream:
        streamed_text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert streamed_text == "Answer."
    assert [b.type for b in final.content] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert final.content[0].signature  # type: ignore[union-attr]
    assert final.content[3].input == {"path": "b"}  # type: ignore[union-attr]
    assert final.stop_reason == "tool_use"

    # Sent back as the SDK gives them, the fake accepts them.
    llm.add(text("done"))
    sdk(llm).messages.create(
        model="claude-sonnet-4-6",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2000},
        tools=TOOLS,  # type: ignore[arg-type]
        messages=[
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in final.content],
            },  # type: ignore[misc]
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": final.content[3].id, "content": "B"}
                ],
            },  # type: ignore[union-attr]
        ],
    )
    assert llm.last.status == 200, llm.last.rejected


def test_compaction_blocks_parse_in_the_beta_sdk_streamed_and_on_demand(llm: FakeLLM) -> None:
    client = sdk(llm)
    llm.add(compaction("what happened"), text("continuing"))
    with client.beta.messages.stream(
        model="claude-sonnet-4-6",
        max_tokens=1000,
        betas=["compact-2026-01-12"],
        context_management={
            "edits": [
                {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50000}}
            ]
        },
        messages=[{"role": "user", "content": "long"}],
    ) as stream:
        final = stream.get_final_message()
    block = final.content[0]
    assert block.type == "compaction" and block.content == "what happened" and block.signature

    summary = client.beta.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=1000,
        betas=["compact-2026-09-04"],
        compaction={"type": "summarize"},
        messages=[{"role": "user", "content": "long"}],
    )
    assert [b.type for b in summary.content] == ["compaction"]
    assert summary.stop_reason == "compaction"
    assert llm.last.kind == "compact"


def test_errors_parse_as_the_sdks_own_exceptions(llm: FakeLLM) -> None:
    client = sdk(llm)
    llm.add(rate_limit(retry_after=3))
    with pytest.raises(anthropic.RateLimitError) as limited:
        client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert limited.value.response.headers["retry-after"] == "3"
    assert limited.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    llm.add(overloaded())
    with pytest.raises(anthropic.InternalServerError) as busy:
        client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert busy.value.status_code == 529
    assert busy.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    llm.add(stream_error("Overloaded", code="overloaded_error"))
    with (
        pytest.raises(anthropic.APIStatusError, match="Overloaded"),
        client.messages.stream(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        ) as stream,
    ):
        stream.get_final_message()
    wrong = anthropic.Anthropic(api_key="sk-ant-wrong-000000000", base_url=llm.url, max_retries=0)
    with pytest.raises(anthropic.AuthenticationError):
        wrong.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])


def test_the_fake_refuses_what_the_api_refuses(llm: FakeLLM) -> None:
    body = {
        "model": "m",
        "max_tokens": 5,
        "messages": [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "made up", "signature": "sig_forged"}],
            },
        ],
    }
    response = httpx.post(f"{llm.url}/v1/messages", json=body, headers={"x-api-key": KEY})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    marks = [
        {"type": "text", "text": f"t{i}", "cache_control": {"type": "ephemeral"}} for i in range(5)
    ]
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": marks}]}
    response = httpx.post(f"{llm.url}/v1/messages", json=body, headers={"x-api-key": KEY})
    assert response.status_code == 400 and "maximum of 4" in response.json()["error"]["message"]
