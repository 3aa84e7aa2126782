"""The `anthropic` provider against the loopback fake of the Messages API (real HTTP)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from baton.config import AnthropicSettings
from baton.errors import ProviderError
from baton.providers.anthropic_messages import (
    ANTHROPIC_VERSION,
    COMPACT_BETA,
    ON_DEMAND_COMPACT_BETA,
    AnthropicMessagesProvider,
)
from baton.providers.base import (
    AssistantText,
    Finished,
    Item,
    ItemDone,
    ModelRequest,
    Native,
    OpaqueItem,
    ProviderIdentity,
    Reasoning,
    ReasoningDelta,
    Route,
    ServerCompaction,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolOutput,
    ToolSpec,
    Usage,
    UserText,
)
from baton.providers.retry import RetryPolicy
from tests.fake_llm import (
    FakeLLM,
    error,
    incomplete,
    overloaded,
    rate_limit,
    reasoning,
    redacted_thinking,
    refusal,
    stream_error,
    text,
    tool_call,
)

KEY = "sk-ant-test-SECRET-0123456789"
TOOLS = [
    ToolSpec(
        "read", "Read a file " * 40, {"type": "object", "properties": {"path": {"type": "string"}}}
    ),
    ToolSpec(
        "grep", "Search files " * 40, {"type": "object", "properties": {"q": {"type": "string"}}}
    ),
]
INSTRUCTIONS = "You are Baton's coding agent. " * 60


def identity(base: str, model: str = "claude-sonnet-4-6") -> ProviderIdentity:
    return ProviderIdentity("anthropic", model, Route(base, "api_key"))


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def collect(provider: AnthropicMessagesProvider, request: ModelRequest) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


def done_items(events: list[StreamEvent]) -> list[Any]:
    return [e.item for e in events if isinstance(e, ItemDone)]


pytestmark = pytest.mark.asyncio


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(models=("claude-sonnet-4-6", "claude-haiku-4-5"), api_key=KEY) as fake:
        yield fake


def make(llm: FakeLLM, **options: Any) -> tuple[AnthropicMessagesProvider, Sleeps]:
    sleeps = Sleeps()
    provider = AnthropicMessagesProvider(
        identity(llm.url),
        httpx.AsyncClient(),
        api_key=KEY,
        options=AnthropicSettings(**options),
        retry=RetryPolicy(sleep=sleeps, jitter=lambda: 0.0),
        owns_client=True,
    )
    return provider, sleeps


def request(items: list[Item], **kw: Any) -> ModelRequest:
    return ModelRequest(instructions=INSTRUCTIONS, items=items, tools=TOOLS, **kw)


async def test_streams_thinking_text_and_a_tool_call_as_native_parts(llm: FakeLLM) -> None:
    provider, _ = make(llm, thinking_budget=2048)
    llm.add(
        reasoning("Look at the file first."),
        text("Reading it."),
        tool_call("read", {"path": "a.py"}),
    )
    events = await collect(provider, request([UserText("what is in a.py?")]))
    await provider.aclose()

    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Reading it."
    assert (
        "".join(e.text for e in events if isinstance(e, ReasoningDelta))
        == "Look at the file first."
    )
    thought, said, call = done_items(events)
    assert isinstance(thought, Reasoning) and thought.native is not None
    assert thought.native.item["signature"].startswith("sig_")
    assert isinstance(said, AssistantText) and said.native is not None
    assert isinstance(call, ToolCall) and json.loads(call.arguments) == {"path": "a.py"}
    assert call.native is not None and call.native.item["input"] == {"path": "a.py"}
    assert events[-1] == Finished("tool_calls")
    sent = llm.last
    assert sent.header("anthropic-version") == ANTHROPIC_VERSION
    assert sent.api_key == KEY
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert sent["max_tokens"] == 16_000 + 2048
    assert sent["system"][0]["text"] == INSTRUCTIONS
    assert [t["name"] for t in sent["tools"]] == ["read", "grep"]


async def test_a_thinking_tool_loop_of_twenty_steps_replays_every_signature_unchanged(
    llm: FakeLLM,
) -> None:
    provider, _ = make(llm, thinking_budget=1024)
    items: list[Item] = [UserText("walk the tree")]
    signatures: list[str] = []
    for step in range(20):
        if step == 7:
            llm.add(redacted_thinking(), tool_call("grep", {"q": f"s{step}"}))
        else:
            llm.add(reasoning(f"step {step}: next"), tool_call("read", {"path": f"f{step}"}))
        events = await collect(provider, request(items))
        for item in done_items(events):
            items.append(item)
            if isinstance(item, Reasoning):
                assert item.native is not None
                signatures.append(item.native.item.get("signature") or item.native.item["data"])
            if isinstance(item, ToolCall):
                items.append(ToolOutput(item.call_id, f"contents {step}"))
    llm.add(text("done"))
    await collect(provider, request(items))
    await provider.aclose()

    assert all(r.status == 200 for r in llm.model_requests), [r.rejected for r in llm.requests]
    last = llm.last
    sent = [b.get("signature") or b.get("data") for b in last.blocks() if "thinking" in b["type"]]
    assert sent == signatures and len(sent) == 20
    # Byte for byte: each replayed block is the one the stream built.
    replayed = [b for b in last.blocks() if b["type"] == "thinking"]
    natives = [
        i.native.item
        for i in items
        if isinstance(i, Reasoning) and i.native.item["type"] == "thinking"
    ]  # type: ignore[union-attr]
    assert [json.dumps({k: v for k, v in b.items() if k != "cache_control"}) for b in replayed] == [
        json.dumps(n) for n in natives
    ]


async def test_an_altered_signature_is_refused_as_the_api_does(llm: FakeLLM) -> None:
    provider, _ = make(llm, thinking_budget=1024)
    llm.add(reasoning("think"), tool_call("read", {"path": "x"}))
    items: list[Item] = [UserText("go")]
    events = await collect(provider, request(items))
    for item in done_items(events):
        if isinstance(item, Reasoning):
            assert item.native is not None
            item = Reasoning(
                item.text, Native(item.native.identity, {**item.native.item, "thinking": "edited"})
            )
        items.append(item)
    items.append(ToolOutput(items[-1].call_id, "ok"))  # type: ignore[union-attr]
    with pytest.raises(ProviderError, match="Invalid `signature`"):
        await collect(provider, request(items))
    await provider.aclose()


async def test_another_identity_gets_canonical_blocks_without_thinking_or_compaction(
    llm: FakeLLM,
) -> None:
    provider, _ = make(llm)
    other = identity(llm.url, "claude-haiku-4-5")
    items: list[Item] = [
        OpaqueItem(Native(other, {"type": "compaction", "content": "old", "signature": "x"})),
        UserText("hello"),
        Reasoning(
            "hidden", Native(other, {"type": "thinking", "thinking": "hidden", "signature": "x"})
        ),
        AssistantText("hi", Native(other, {"type": "text", "text": "hi"})),
        ToolCall("toolu_1", "read", '{"path": "a"}', Native(other, {"type": "tool_use"})),
        ToolOutput("toolu_1", "A"),
    ]
    llm.add(text("ok"))
    await collect(provider, request(items))
    await provider.aclose()
    sent = llm.last
    assert sent.status == 200, sent.rejected
    kinds = [b["type"] for b in sent.blocks()]
    assert kinds == ["text", "text", "tool_use", "tool_result"]
    assert sent.blocks("tool_use")[0]["input"] == {"path": "a"}


async def test_usage_counts_cache_reads_and_writes_and_breakpoints_move_forward(
    llm: FakeLLM,
) -> None:
    provider, _ = make(llm)
    items: list[Item] = [UserText("first question " * 50)]
    usages: list[Usage] = []
    for turn in range(3):
        llm.add(text(f"answer {turn} " * 30))
        events = await collect(provider, request(items))
        usages.append(next(e for e in events if isinstance(e, Usage)))
        items.extend(done_items(events))
        items.append(UserText(f"follow-up {turn} " * 20))
    await provider.aclose()
    first, second, third = usages
    assert first.cached_tokens == 0 and first.cache_write_tokens > 0
    for later in (second, third):
        assert later.cached_tokens / later.input_tokens > 0.8
        assert later.cache_write_tokens > 0
    for sent in llm.model_requests:
        marks = [
            b for b in (*sent.tools, *sent["system"], *sent.blocks()) if b.get("cache_control")
        ]
        assert 1 <= len(marks) <= 4
        assert sent.blocks()[-1]["cache_control"] == {"type": "ephemeral"}


async def test_one_hour_ttl_is_sent_on_every_breakpoint(llm: FakeLLM) -> None:
    provider, _ = make(llm, cache_ttl="1h")
    llm.add(text("ok"))
    await collect(provider, request([UserText("hi")]))
    await provider.aclose()
    sent = llm.last
    marks = [
        b["cache_control"]
        for b in (*sent.tools, *sent["system"], *sent.blocks())
        if "cache_control" in b
    ]
    assert marks and all(m == {"type": "ephemeral", "ttl": "1h"} for m in marks)


async def test_rate_limit_waits_as_retry_after_says_and_overloaded_is_retried(llm: FakeLLM) -> None:
    provider, sleeps = make(llm)
    llm.add(rate_limit(retry_after=7))
    llm.add(overloaded())
    llm.add(stream_error("Overloaded", code="overloaded_error"))
    llm.add(text("finally"))
    events = await collect(provider, request([UserText("hi")]))
    await provider.aclose()
    assert [i.text for i in done_items(events)] == ["finally"]
    assert sleeps.delays[0] == 7.0
    assert len(sleeps.delays) == 3
    assert [r.status for r in llm.model_requests] == [429, 529, 200, 200]


async def test_an_invalid_request_is_reported_with_the_apis_words_and_not_retried(
    llm: FakeLLM,
) -> None:
    provider, sleeps = make(llm)
    llm.add(
        error(
            400,
            {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "max_tokens: too large"},
            },
        )
    )
    with pytest.raises(ProviderError) as caught:
        await collect(provider, request([UserText("hi")]))
    await provider.aclose()
    assert "max_tokens: too large" in caught.value.message
    assert "invalid_request_error" in caught.value.message
    assert sleeps.delays == []
    assert KEY not in caught.value.message


async def test_server_compaction_in_stream_and_on_demand(llm: FakeLLM) -> None:
    provider, _ = make(llm)
    llm.add(text("carry on"))
    events = await collect(provider, request([UserText("x " * 100)], compact_threshold=10))
    sent = llm.last
    assert COMPACT_BETA in (sent.header("anthropic-beta") or "")
    edit = sent["context_management"]["edits"][0]
    # The API's floor for the trigger.
    assert edit == {
        "type": "compact_20260112",
        "trigger": {"type": "input_tokens", "value": 50_000},
    }
    assert not any(isinstance(e, ServerCompaction) for e in events)

    trigger = OpaqueItem(Native(provider.identity, {"type": "compaction_trigger"}))
    events = await collect(provider, request([UserText("y " * 100), trigger]))
    sent = llm.last
    assert sent["compaction"] == {"type": "summarize"}
    assert ON_DEMAND_COMPACT_BETA in (sent.header("anthropic-beta") or "")
    assert all(b["type"] != "compaction_trigger" for b in sent.blocks())
    compacted = [e for e in events if isinstance(e, ServerCompaction)]
    assert len(compacted) == 1
    block = compacted[0].item.native.item
    assert block["type"] == "compaction" and block["content"]

    # Replayed first, unchanged, to the same identity: the fake checks the signature.
    llm.add(text("after"))
    await collect(provider, request([compacted[0].item, UserText("next")]))
    await provider.aclose()
    assert llm.last.status == 200, llm.last.rejected
    first = {k: v for k, v in llm.last.blocks()[0].items() if k != "cache_control"}
    assert first == block


async def test_context_editing_is_off_by_default_and_a_setting_turns_it_on(llm: FakeLLM) -> None:
    provider, _ = make(llm)
    llm.add(text("ok"))
    await collect(provider, request([UserText("hi")]))
    await provider.aclose()
    assert llm.last.get("context_management") is None
    assert llm.last.header("anthropic-beta") is None

    provider, _ = make(llm, context_editing=True, thinking_budget=1024)
    llm.add(text("ok"))
    await collect(provider, request([UserText("hi")], compact_threshold=120_000))
    await provider.aclose()
    edits = llm.last["context_management"]["edits"]
    assert [e["type"] for e in edits] == [
        "clear_thinking_20251015",
        "clear_tool_uses_20250919",
        "compact_20260112",
    ]
    assert edits[1]["trigger"] == {"type": "input_tokens", "value": 100_000}
    betas = (llm.last.header("anthropic-beta") or "").split(",")
    assert set(betas) == {"compact-2026-01-12", "context-management-2025-06-27"}

    # A summary request carries no edits: it must see what the turn saw.
    provider, _ = make(llm, context_editing=True)
    llm.add(text("summary"))
    await collect(provider, request([UserText("hi")], purpose="summary"))
    await provider.aclose()
    assert llm.last.get("context_management") is None
    assert llm.last["tool_choice"] == {"type": "none"}


async def test_a_prompt_too_long_is_an_overflow_and_not_retried(llm: FakeLLM) -> None:
    from tests.fake_llm import overflow

    provider, sleeps = make(llm)
    llm.add(overflow(window=200_000))
    with pytest.raises(ProviderError) as caught:
        await collect(provider, request([UserText("hi")]))
    await provider.aclose()
    assert caught.value.overflow and not caught.value.retryable
    assert "prompt is too long" in caught.value.message
    assert sleeps.delays == []


async def test_an_empty_text_block_is_not_sent_back(llm: FakeLLM) -> None:
    provider, _ = make(llm)
    me = provider.identity
    items: list[Item] = [
        UserText("hi"),
        AssistantText("", Native(me, {"type": "text", "text": ""})),
        AssistantText("there", Native(me, {"type": "text", "text": "there"})),
        UserText("and?"),
    ]
    llm.add(text("ok"))
    await collect(provider, request(items))
    await provider.aclose()
    assert llm.last.status == 200, llm.last.rejected
    assert [b["text"] for b in llm.last.blocks()] == ["hi", "there", "and?"]


async def test_a_step_that_adds_more_than_twenty_blocks_still_reads_the_previous_request(
    llm: FakeLLM,
) -> None:
    """The API looks back only twenty blocks from a breakpoint: the mark on the end of
    what an earlier request wrote makes the read independent of that."""
    provider, _ = make(llm)
    items: list[Item] = [UserText("read everything " * 40)]
    llm.add(text("ok"))
    await collect(provider, request(items))
    first = llm.last.anthropic_usage
    written = first["cache_creation_input_tokens"]
    for n in range(15):  # 15 calls and 15 results: 30 blocks more
        items.append(ToolCall(f"toolu_{n}", "read", json.dumps({"path": f"f{n}"})))
    items.extend(ToolOutput(f"toolu_{n}", f"file {n}") for n in range(15))
    llm.add(text("read them"))
    await collect(provider, request(items))
    await provider.aclose()
    second = llm.last
    assert second.status == 200, second.rejected
    assert abs(second.anthropic_usage["cache_read_input_tokens"] - written) <= 1
    marked = [b for b in second.blocks() if b.get("cache_control")]
    assert len(marked) == 2 and marked[0]["text"].startswith("read everything")


async def test_thinking_waits_for_the_end_of_a_tool_call_made_without_it(llm: FakeLLM) -> None:
    """A forced step has no thinking; the API refuses thinking on while continuing its
    call, so the continuation goes without, and thinking returns with the next turn."""
    from baton.providers.base import AnyTool

    provider, _ = make(llm, thinking_budget=1024)
    items: list[Item] = [UserText("look first")]
    llm.add(tool_call("read", {"path": "a"}))
    events = await collect(provider, request(items, require_tool=AnyTool()))
    assert "thinking" not in llm.last.body and llm.last["tool_choice"] == {"type": "any"}
    call = next(i for i in done_items(events) if isinstance(i, ToolCall))
    items += [call, ToolOutput(call.call_id, "A")]
    llm.add(text("A says A."))
    await collect(provider, request(items))
    assert llm.last.status == 200, llm.last.rejected
    assert "thinking" not in llm.last.body
    items += [AssistantText("A says A."), UserText("and now?")]
    llm.add(reasoning("new turn"), text("ok"))
    await collect(provider, request(items))
    await provider.aclose()
    assert llm.last["thinking"]["type"] == "enabled"


async def test_another_providers_call_ids_are_made_acceptable_and_stay_paired(
    llm: FakeLLM,
) -> None:
    provider, _ = make(llm)
    items: list[Item] = [
        UserText("hi"),
        ToolCall("call:0/a.b", "read", '{"path": "a"}'),
        ToolOutput("call:0/a.b", "A"),
    ]
    llm.add(text("ok"))
    await collect(provider, request(items))
    await provider.aclose()
    assert llm.last.status == 200, llm.last.rejected
    assert llm.last.blocks("tool_use")[0]["id"] == "call_0_a_b"
    assert llm.last.blocks("tool_result")[0]["tool_use_id"] == "call_0_a_b"


@pytest.mark.parametrize(
    ("parts", "finish"),
    [
        ((text("done"),), "stop"),
        ((tool_call("read", {"path": "a"}),), "tool_calls"),
        ((refusal("I can't help with that."),), "refusal"),
        ((text("partial"), incomplete()), "length"),
    ],
)
async def test_stop_reasons_map_to_batons(llm: FakeLLM, parts: Any, finish: str) -> None:
    provider, _ = make(llm)
    llm.add(*parts)
    events = await collect(provider, request([UserText("hi")]))
    await provider.aclose()
    assert isinstance(events[-2], Usage)
    assert events[-1] == Finished(finish)  # type: ignore[arg-type]
