"""A region too big for the summary request to be the session's own prefix (a session
made under a larger window, now compacted under a smaller one) is summarised from a
transcript in requests that each fit the window by the provider's count."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.e2e.test_compaction import FACTLESS_SUMMARY
from tests.e2e.test_compaction import start_baton as start_baton  # pins native compaction
from tests.e2e.test_compaction_contract import summary_requests
from tests.fake_llm import FakeLLM, text, tool_call
from tests.fake_llm.records import estimate_tokens

SMALL = 8_192
RATE = 3  # this provider counts three times what Baton estimates


def provider_count(body: Any) -> int:
    return RATE * estimate_tokens(body)


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM(token_estimator=provider_count) as server:
        yield server


def settings(window: int) -> dict[str, Any]:
    return {
        "contextWindow": window,
        "permissions": {"bash": "allow"},
        "compaction": {"auto": False},
    }


@pytest.mark.asyncio
async def test_every_summary_request_fits_the_smaller_window_by_the_providers_count(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    big = await start_baton(settings=settings(65_536))
    sid = await big.new_session()
    for n in range(10):
        name = f"module_{n}.py"
        (workspace / name).write_text(
            "".join(f"def helper_{n}_{i}(value):\n    return value * {i}\n" for i in range(120))
        )
        llm.add(tool_call("read", {"path": name}))
        llm.add(text(f"Read {name}: helper_{n}_7 multiplies by 7. " + "It is a pure helper. " * 40))
        await big.prompt(sid, f"read {name} and say what helper_{n}_7 does")
    big.kill()

    small = await start_baton(settings=settings(SMALL))
    for _ in range(12):
        llm.add(text(FACTLESS_SUMMARY.replace("## Exact facts\nnone", "## Exact facts\n- read")))
    record = await small.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True, record["notes"]
    asked = summary_requests(llm)
    assert len(asked) >= 2, record["notes"]  # the region did not fit one request
    for request in asked:
        answer = request.body.get("max_tokens") or request.body.get("max_output_tokens")
        # The request, its answer and a call for the rest of an answer cut at its cap.
        assert provider_count(request.body) + answer + answer // 2 <= SMALL
    # Each request updates the summary of the ones before; the first reads the oldest part.
    assert "helper_0_7 multiplies" in asked[0].input_text()
    assert "<baton:previous-summary>" in asked[1].input_text()
    assert "- read" in asked[1].input_text()
    assert any("transcript showing" in n for n in record["notes"])
    for name in SECTIONS:
        assert f"## {name}" in record["summary"]
    assert json.dumps(record["ledger"]).count("module_") >= 10  # every read is in the ledger
