"""Provider faults: Baton retries within its limits, keeps partial output, recovers, reports the rest.

Each scenario scripts one fault on the fake model server, sends a prompt
through the real Baton server, and checks the outcome a person relies on:

* retryable failures (429 with `Retry-After`, 500/502/503, a connection reset
  before the first byte) are retried and the turn ends normally;
* a stream that breaks after text was shown (cut mid-message, a stall longer
  than `requestTimeout`, malformed SSE, an `error` event) is not retried: the
  prompt fails with `-32003` naming what happened, and the partial answer
  stays in the history marked `incomplete`;
* failures that retrying cannot fix (401, a stall before the first byte,
  retries exhausted) are reported at once or after the limit, never with the key;
* invalid tool-call JSON reaches the model as a tool error it can act on;
* a context-overflow error (HTTP 400, in-stream, llama.cpp and vLLM shapes)
  compacts the session and retries the step;
* after every scenario the same session answers the next prompt.

Both wire formats run: the OpenAI Responses provider and Chat Completions.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.fake_llm import (
    FakeLLM,
    cut_after,
    delay,
    error,
    invalid_tool_args,
    malformed_sse,
    overflow,
    rate_limit,
    stall,
    stream_error,
    text,
    tool_call,
)
from tests.harness import TEST_KEY, BatonClient
from tests.reliability.conftest import RecordFigures

SUMMARY = "\n\n".join(f"## {name}\nkept" for name in SECTIONS)
PARTIAL = "The partial answer begins here and goes on"
REQUEST_TIMEOUT = 1.5
RETRIED = {
    "429 with Retry-After",
    "500",
    "502",
    "503",
    "connection reset",
    "503 until retries run out",
}


@dataclass
class Scenario:
    name: str
    replies: list[Any]
    # "recovers": end_turn; "reported": -32003; "tool_error": end_turn after a failed call
    outcome: str
    # Model requests the scenario must take (retries included); an overflow compaction
    # may need no summary request when masking old tool outputs is enough.
    requests: int | tuple[int, ...] | None = None
    mentions: tuple[str, ...] = ()
    partial: bool = False  # a partial answer must be kept, marked incomplete
    compacts: bool = False  # an overflow compaction must run
    max_seconds: float = 20.0
    min_seconds: float = 0.0
    providers: tuple[str, ...] = ("openai", "openai-compatible")


def scenarios() -> list[Scenario]:
    final = text("Recovered answer.")
    long_text = text(PARTIAL + " " + " ".join(f"w{i}" for i in range(40)))
    return [
        Scenario("429 with Retry-After", [rate_limit(1), final], "recovers", 2, min_seconds=0.9),
        Scenario("500", [error(500), final], "recovers", 2),
        Scenario("502", [error(502, "Bad Gateway"), final], "recovers", 2),
        Scenario("503", [error(503), final], "recovers", 2),
        Scenario("connection reset", [[text("x"), cut_after(0)], final], "recovers", 2),
        Scenario(
            "503 until retries run out",
            [error(503), error(503), error(503)],
            "reported",
            3,
            mentions=("503", "gave up after 2 retries"),
        ),
        Scenario("401", [error(401)], "reported", 1, mentions=("401",)),
        Scenario(
            "stream cut mid-message",
            [[long_text, cut_after(8)]],
            "reported",
            1,
            partial=True,
        ),
        Scenario(
            "stall longer than requestTimeout",
            [[long_text, stall(30, after=8)]],
            "reported",
            1,
            mentions=("requestTimeout",),
            partial=True,
            max_seconds=REQUEST_TIMEOUT + 8,
        ),
        Scenario(
            "silence before the first byte",
            [[final, delay(30)]],
            "reported",
            1,
            mentions=("requestTimeout",),
            max_seconds=REQUEST_TIMEOUT + 8,
        ),
        Scenario(
            "malformed SSE after text",
            [[long_text, malformed_sse(after=8)]],
            "reported",
            1,
            mentions=("not JSON",),
            partial=True,
        ),
        Scenario(
            "error event mid-stream",
            [[long_text, stream_error("the model backend fell over", after=8)]],
            "reported",
            1,
            mentions=("fell over",),
            partial=True,
        ),
        Scenario(
            "invalid tool-call JSON",
            [invalid_tool_args("read", '{"path": "README.md"'), final],
            "tool_error",
            2,
        ),
        Scenario(
            "overflow (HTTP 400)", [overflow(), SUMMARY, final], "recovers", (2, 3), compacts=True
        ),
        Scenario(
            "overflow (in stream)",
            [overflow(in_stream=True), SUMMARY, final],
            "recovers",
            (2, 3),
            compacts=True,
            providers=("openai",),
        ),
        Scenario(
            "overflow (llama.cpp shape)",
            [overflow(flavor="llamacpp"), SUMMARY, final],
            "recovers",
            (2, 3),
            compacts=True,
        ),
        Scenario(
            "overflow (vLLM shape)",
            [overflow(flavor="vllm"), SUMMARY, final],
            "recovers",
            (2, 3),
            compacts=True,
        ),
        Scenario(
            "lone surrogate escapes in text and tool arguments",
            [
                [text("half \ud800 a pair"), tool_call("read", {"path": "x\udc00.md"})],
                text("fine \udbff after"),
            ],
            "recovers",
            2,
        ),
    ]


@dataclass
class Tally:
    run: int = 0
    recovered: int = 0
    reported: int = 0
    partial_kept: int = 0
    overflow_compactions: int = 0
    retries: int = 0
    usable_after: int = 0
    failures: list[str] = field(default_factory=list)


async def run_scenario(
    baton: BatonClient, llm: FakeLLM, sid: str, scenario: Scenario, tally: Tally, label: str
) -> None:
    def fail(why: str) -> None:
        tally.failures.append(f"[{label}] {scenario.name}: {why}")

    llm.reset()
    if scenario.compacts:
        # Something an overflow compaction can summarise: the agent's long answers (the
        # person's own words stay in the view verbatim, so they are not that).
        for n in range(3):
            llm.add(text(f"Background notes {n} on the task. " * 150))
            await asyncio.wait_for(baton.prompt(sid, f"notes {n} before {scenario.name}"), 30)
    for reply in scenario.replies:
        if isinstance(reply, list):
            llm.add(*reply)
        else:
            llm.add(text(reply) if isinstance(reply, str) else reply)
    before_requests = len(llm.model_requests)
    before_updates = len(baton.updates(sid))
    prompt_text = f"scenario {scenario.name}"
    started = time.monotonic()
    outcome: str
    message = ""
    try:
        result = await asyncio.wait_for(baton.prompt(sid, prompt_text), 60)
        outcome = "end_turn" if result["stopReason"] == "end_turn" else result["stopReason"]
        message = result.get("error") or ""
    except JsonRpcException as exc:
        outcome, message = f"error {exc.code}", exc.message
    elapsed = time.monotonic() - started
    llm.release()
    tally.run += 1
    requests = len(llm.model_requests) - before_requests
    if scenario.name in RETRIED:
        tally.retries += requests - 1

    expected = {"recovers": "end_turn", "tool_error": "end_turn", "reported": "error -32003"}
    if outcome != expected[scenario.outcome]:
        fail(f"outcome {outcome} ({message}), expected {expected[scenario.outcome]}")
    elif scenario.outcome == "reported":
        tally.reported += 1
    else:
        tally.recovered += 1
    for needle in scenario.mentions:
        if needle.lower() not in message.lower():
            fail(f"the error does not mention {needle!r}: {message!r}")
    if TEST_KEY in message:
        fail("the error carries the API key")
    allowed = (scenario.requests,) if isinstance(scenario.requests, int) else scenario.requests
    if allowed is not None and requests not in allowed:
        fail(f"{requests} model requests, expected {scenario.requests}")
    if elapsed > scenario.max_seconds or elapsed < scenario.min_seconds:
        fail(f"took {elapsed:.1f}s (expected {scenario.min_seconds}-{scenario.max_seconds}s)")

    updates = baton.updates(sid)[before_updates:]
    messages = (await baton.load(sid))["messages"]
    turn = messages[
        max(
            i
            for i, m in enumerate(messages)
            if any(p.get("text") == prompt_text for p in m["parts"])
        ) :
    ]
    if scenario.partial:
        streamed = "".join(u["text"] for u in updates if u["kind"] == "agent_message_chunk")
        kept = [
            m
            for m in turn
            if m["role"] == "assistant"
            and m.get("incomplete")
            and any(p.get("text", "").startswith(PARTIAL[:20]) for p in m["parts"])
        ]
        if not streamed.startswith(PARTIAL[:20]):
            fail(f"no partial text was streamed before the fault: {streamed[:80]!r}")
        elif not kept:
            fail("the partial answer is not in the history marked incomplete")
        else:
            tally.partial_kept += 1
            stored = next(p["text"] for p in kept[0]["parts"] if p["type"] == "text")
            if stored != streamed:
                fail(f"kept {stored[:60]!r}…, the client saw {streamed[:60]!r}…")
    if scenario.compacts:
        started_updates = [u for u in updates if u["kind"] == "compaction_started"]
        if [u["trigger"] for u in started_updates] != ["overflow"]:
            fail(f"compactions started: {started_updates}")
        else:
            tally.overflow_compactions += 1
    if scenario.outcome == "tool_error":
        calls = [u for u in updates if u["kind"] == "tool_call_update" and u["status"] == "failed"]
        if not calls or "JSON" not in (calls[0].get("output") or ""):
            fail(f"the invalid arguments did not come back as a tool error: {calls}")
    if scenario.name.startswith("lone surrogate"):
        texts = [p.get("text", "") for m in turn for p in m["parts"]]
        if "half \ufffd a pair" not in texts or "fine \ufffd after" not in texts:
            fail(f"texts with lone surrogates were not kept: {texts}")

    # The session stays usable.
    llm.reset()
    llm.add(text("Still here."))
    after = await asyncio.wait_for(baton.prompt(sid, f"after {scenario.name}"), 30)
    if after["stopReason"] != "end_turn":
        fail(f"the next prompt ended with {after}")
    else:
        tally.usable_after += 1


@pytest.mark.asyncio
@pytest.mark.timeout(300)
@pytest.mark.parametrize("provider", ["openai", "openai-compatible"])
async def test_provider_faults_are_retried_kept_or_reported(
    provider: str, start_baton: StartBaton, llm: FakeLLM, record_figures: RecordFigures
) -> None:
    settings: dict[str, Any] = {
        "maxRetries": 2,
        "requestTimeout": REQUEST_TIMEOUT,
        "permissions": {"bash": "allow", "write": "allow"},
        "compaction": {"strategy": "native"},
    }
    if provider == "openai-compatible":
        settings.update(provider="openai-compatible", baseUrl=llm.base_url, model="gpt-fake")
    baton = await start_baton(settings=settings)
    sid = await baton.new_session()
    tally = Tally()
    try:
        for scenario in scenarios():
            if provider in scenario.providers:
                await run_scenario(baton, llm, sid, scenario, tally, provider)
    finally:
        record_figures(
            f"provider-faults ({provider})",
            faults=tally.run,
            recovered=tally.recovered,
            reported=tally.reported,
            partial_answers_kept=tally.partial_kept,
            overflow_compactions=tally.overflow_compactions,
            retries=tally.retries,
            session_usable_after=f"{tally.usable_after}/{tally.run}",
            failures=len(tally.failures),
        )
    assert not tally.failures, "\n".join(tally.failures)
