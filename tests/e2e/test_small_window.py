"""A prompt that fits a small window, and one nudge to look before answering.

Through the real server and the scripted model: a usable window of at most 16k
tokens gets the compact system prompt and tool descriptions, the same in every
request of the session (mode switches included), and a larger one the full
ones. A model that answers a question about the code without a tool call is
asked once to look first; the note is in the session's history; a second
answer without a tool call ends the turn; `agent.nudgeNoTool = false` turns it off.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from baton.agent import prompts
from baton.tools.compact_specs import COMPACT_TOOLS
from tests.conftest import StartBaton
from tests.e2e.test_cache_prefix import assert_appended
from tests.fake_llm import FakeLLM, text, tool_call
from tests.fake_llm.records import RecordedRequest
from tests.harness import BatonClient

QUESTION = "Where is `chunked` defined and what does it return?"


def _descriptions(request: RecordedRequest) -> dict[str, str]:
    out = {}
    for tool in request.tools:
        spec = tool.get("function", tool)
        out[spec["name"]] = spec.get("description", "")
    return out


def _prefix_tokens(request: RecordedRequest) -> int:
    """What the instructions and the tool list cost, at the estimate's 4 characters a token."""
    return (len(request.instructions or "") + len(json.dumps(request.tools))) // 4


async def _three_requests(baton: BatonClient, llm: FakeLLM) -> list[RecordedRequest]:
    """A look, an answer, a mode switch and another answer."""
    sid = await baton.new_session()
    llm.add(tool_call("grep", {"pattern": "def chunked"}))
    llm.add(text("In more.py."))
    await baton.prompt(sid, QUESTION)
    await baton.request("baton/session/setMode", {"sessionId": sid, "mode": "plan"})
    llm.add(text("A plan."))
    await baton.prompt(sid, "Now plan it")
    return llm.model_requests


def _code(workspace: Path) -> None:
    (workspace / "more.py").write_text("def chunked(iterable, n):\n    return iter([])\n")


@pytest.mark.asyncio
async def test_a_small_window_gets_the_compact_prompt_for_the_whole_session(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    _code(workspace)
    baton = await start_baton(settings={"contextWindow": 16_384})
    requests = await _three_requests(baton, llm)
    assert len(requests) == 3
    first = requests[0]
    assert first.instructions is not None
    assert first.instructions.startswith(prompts.SYSTEM_COMPACT.format(workspace=workspace))
    described = _descriptions(first)
    assert described["read"] == COMPACT_TOOLS["read"][0]
    assert described["plan_write"] == COMPACT_TOOLS["plan_write"][0]
    # One prefix for the whole session: each request appends to the one before.
    for previous, current in itertools.pairwise(requests):
        assert_appended(previous, current)


@pytest.mark.asyncio
async def test_a_larger_window_gets_the_full_prompt_and_the_compact_one_saves_much_of_it(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, home: Path
) -> None:
    _code(workspace)
    full = await start_baton(settings={"contextWindow": 32_768})
    requests = await _three_requests(full, llm)
    first = requests[0]
    assert first.instructions is not None
    assert first.instructions.startswith(prompts.SYSTEM.format(workspace=workspace))
    assert prompts.SYSTEM_COMPACT.splitlines()[1] not in first.instructions
    read = _descriptions(first)["read"]
    assert read != COMPACT_TOOLS["read"][0] and "offset" in read
    for previous, current in itertools.pairwise(requests):
        assert_appended(previous, current)

    # The same session start in an 8k window, and with the choice forced either way.
    small = await start_baton(settings={"contextWindow": 8_192})
    await _three_requests(small, llm)
    compact = llm.model_requests[3]
    assert compact.instructions is not None
    assert compact.instructions.startswith(prompts.SYSTEM_COMPACT.format(workspace=workspace))
    saved = _prefix_tokens(first) - _prefix_tokens(compact)
    print(
        f"\ninstructions + tools: full {_prefix_tokens(first)} tokens, compact "
        f"{_prefix_tokens(compact)} tokens ({saved} saved, "
        f"{saved / _prefix_tokens(first):.0%})"
    )
    # The full prompt and tools were cut down too (schema wording and
    # `additionalProperties` gone; issue 49's shorter descriptions), so the compact variant
    # now saves about 25% of a smaller prefix (991 of 1,327 by the fake's count; it saved
    # 40%+ before).
    assert _prefix_tokens(compact) < 0.75 * _prefix_tokens(first)

    never = await start_baton(
        settings={"contextWindow": 8_192, "agent": {"compactPrompt": "never"}}
    )
    await _three_requests(never, llm)
    assert llm.model_requests[6].instructions == first.instructions
    assert llm.model_requests[6].tools == first.tools


def _notes(baton: BatonClient, sid: str) -> list[dict[str, Any]]:
    return baton.updates(sid, "note")


@pytest.mark.asyncio
async def test_an_answer_without_looking_gets_one_nudge_and_a_second_ends_the_turn(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    _code(workspace)
    sid = await baton.new_session()
    llm.add(text("It is in chunked.py and returns a list."))
    llm.add(text("It is in chunked.py."))
    result = await baton.prompt(sid, QUESTION)
    assert result["stopReason"] == "end_turn"
    requests = llm.model_requests
    assert len(requests) == 2
    # The nudge is the last thing the second request says, after the first answer; it
    # names what the question names, and that step must call a tool.
    nudge = prompts.NUDGE_NO_TOOL + "\n[Start by searching for `chunked` with `grep`.]"
    assert requests[1].texts("user")[-1] == nudge
    assert requests[0].get("tool_choice") is None
    assert requests[1].get("tool_choice") == "required"
    assert_appended(requests[0], requests[1])
    [note] = _notes(baton, sid)
    assert (note["reason"], note["text"]) == ("no_tool", nudge)
    # Recorded: the session replays it as a system message between the two answers.
    messages = (await baton.load(sid))["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "system", "assistant"]
    assert messages[2]["id"] == note["messageId"]
    assert messages[2]["parts"][0]["text"] == nudge

    # Once per turn, not once per session: the next question may be nudged again.
    llm.add(text("Still chunked.py."))
    llm.add(tool_call("grep", {"pattern": "def chunked"}))
    llm.add(text("In more.py."))
    await baton.prompt(sid, "What does chunked return?")
    assert len(_notes(baton, sid)) == 2
    assert len(llm.model_requests) == 5


@pytest.mark.asyncio
async def test_the_nudge_leads_to_a_look(baton: BatonClient, llm: FakeLLM, workspace: Path) -> None:
    _code(workspace)
    sid = await baton.new_session()
    llm.add(text("In chunked.py."))
    llm.add(tool_call("grep", {"pattern": "def chunked"}))
    llm.add(text("In more.py, line 1."))
    await baton.prompt(sid, QUESTION)
    assert len(llm.model_requests) == 3
    assert "more.py:1:" in next(iter(llm.model_requests[2].tool_outputs().values()))
    assert len(_notes(baton, sid)) == 1
    # Once it looked, the model is free to answer: only the nudged step required a call.
    assert [r.get("tool_choice") for r in llm.model_requests] == [None, "required", None]


@pytest.mark.asyncio
async def test_no_nudge_when_it_looked_when_it_is_not_a_code_question_or_nothing_to_read(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session()
    # An empty workspace: nothing to look at.
    llm.add(text("There is no code here."))
    await baton.prompt(sid, QUESTION)
    _code(workspace)
    # Not a question about the code.
    llm.add(text("hello"))
    await baton.prompt(sid, "Reply with one word: hello")
    # It looked, then answered.
    llm.add(tool_call("read", {"path": "more.py"}))
    llm.add(text("It returns an empty iterator."))
    await baton.prompt(sid, QUESTION)
    assert len(llm.model_requests) == 4
    assert _notes(baton, sid) == []


@pytest.mark.asyncio
async def test_the_nudge_is_a_setting(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    _code(workspace)
    baton = await start_baton(settings={"agent": {"nudgeNoTool": False}})
    sid = await baton.new_session()
    llm.add(text("In chunked.py."))
    result = await baton.prompt(sid, QUESTION)
    assert result["stopReason"] == "end_turn"
    assert len(llm.model_requests) == 1
    assert _notes(baton, sid) == []
    assert [m["role"] for m in (await baton.load(sid))["messages"]] == ["user", "assistant"]


@pytest.mark.asyncio
async def test_an_empty_answer_after_looking_is_asked_once_for_words(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    _code(workspace)
    sid = await baton.new_session()
    # The small model's habit: it looks, then echoes the template's tool markup.
    llm.add(tool_call("grep", {"pattern": "def chunked"}))
    llm.add(text("<tools></tools>"))
    llm.add(text("In more.py, line 1."))
    result = await baton.prompt(sid, QUESTION)
    assert result["stopReason"] == "end_turn"
    assert len(llm.model_requests) == 3
    assert llm.model_requests[2].texts("user")[-1] == prompts.EMPTY_ANSWER
    assert_appended(llm.model_requests[1], llm.model_requests[2])
    [note] = _notes(baton, sid)
    assert (note["reason"], note["text"]) == ("empty_answer", prompts.EMPTY_ANSWER)
    assert "In more.py, line 1." in baton.streamed_text(sid)

    # Once per turn: a second empty answer ends it.
    llm.add(tool_call("read", {"path": "more.py"}))
    llm.add(text("<tools></tools>"))
    llm.add(text("<|im_end|>"))
    await baton.prompt(sid, "What does `chunked` return?")
    assert len(llm.model_requests) == 6
    assert [n["reason"] for n in _notes(baton, sid)] == ["empty_answer", "empty_answer"]
