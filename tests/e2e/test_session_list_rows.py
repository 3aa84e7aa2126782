"""`baton/session/list` rows say which session is which: the start of the person's first
prompt (not Baton's own messages), the tokens used, and the last activity."""

from __future__ import annotations

import pytest

from tests.fake_llm import FakeLLM, text, usage
from tests.harness import BatonClient


@pytest.mark.asyncio
async def test_list_rows_carry_the_first_prompt_tokens_and_last_activity(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session()
    empty = await baton.new_session()
    long_prompt = "Add a response cache to the HTTP client,\n keyed by URL " + "and headers " * 30
    llm.add(text("Sure."), usage(input=1200, output=30, cached=1000))
    await baton.prompt(sid, long_prompt)
    llm.add(text("Done."), usage(input=1500, output=40))
    await baton.prompt(sid, "now add tests")

    rows = {s["sessionId"]: s for s in (await baton.request("baton/session/list", {}))["sessions"]}
    row = rows[sid]
    assert row["firstPrompt"].startswith("Add a response cache to the HTTP client, keyed by URL")
    assert len(row["firstPrompt"]) <= 160 and row["firstPrompt"].endswith("…")
    assert (row["usage"]["inputTokens"], row["usage"]["outputTokens"]) == (2700, 70)
    assert row["usage"]["requests"] == 2
    # The same figures the session's own load reports.
    assert row["usage"] == (await baton.load(sid))["usage"]
    assert row["updatedAt"] >= row["createdAt"]
    assert "firstPrompt" not in rows[empty]
    assert rows[empty]["usage"]["requests"] == 0
