"""What Baton sends keeps its prefix: each request is the one before it plus what happened.

Through the real server and the scripted model (which records every request),
a plan edit, a plan tick, a mode switch, an approval and an edit the person
makes to the plan file leave every earlier input item byte-identical, with the
same instructions and tool list, in the next request.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartBaton
from tests.e2e.test_plans import turn_ended
from tests.fake_llm import FakeLLM, text, tool_call
from tests.fake_llm.prefix import shared
from tests.fake_llm.records import RecordedRequest
from tests.harness import BatonClient

PLAN = """# Login page

Goal: a login form with password checks.

- [ ] Add the login form in src/login.py
- [ ] Validate the password
- [ ] Write tests
""" + "".join(f"- [ ] Check case {n} in src/login.py and tests/test_login.py\n" for n in range(30))


def reuse(previous: RecordedRequest, current: RecordedRequest) -> float:
    """The part of `previous` that `current` repeats as its prefix (1.0: append-only)."""
    return shared(previous.segments, current.segments).chars / previous.segments.chars


def assert_appended(previous: RecordedRequest, current: RecordedRequest) -> None:
    """`current` starts with exactly what `previous` sent."""
    assert current.instructions == previous.instructions
    assert current.tools == previous.tools
    assert current.items[: len(previous.items)] == previous.items
    assert len(current.items) > len(previous.items)


async def plan_and_build(baton: BatonClient, llm: FakeLLM, workspace: Path) -> dict[str, Any]:
    """Plan (write, two revisions, submit), approve, build with two ticks and a mode switch."""
    sid = await baton.new_session(mode="plan", title="Login page")
    llm.add(tool_call("read", {"path": "README.md"}))
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Drafted."))
    await baton.prompt(sid, "Plan a login page")
    plan_start = 0
    llm.add(tool_call("plan_edit", {"old_string": "Write tests", "new_string": "Write form tests"}))
    llm.add(text("Refined."))
    await baton.prompt(sid, "Be precise about the tests")
    llm.add(
        tool_call(
            "plan_edit",
            {"old_string": "- [ ] Validate the password\n", "new_string": "- [ ] Validate it\n"},
        ),
        tool_call("plan_exit", {}),
    )
    await baton.prompt(sid, "Shorter, then submit")
    last_plan = len(llm.model_requests) - 1

    llm.add(tool_call("write", {"path": "src/login.py", "content": "def login(): ...\n"}))
    llm.add(tool_call("plan_edit", {"old_string": "- [ ] Add the", "new_string": "- [x] Add the"}))
    llm.add(tool_call("bash", {"command": "true"}))
    llm.add(
        tool_call("plan_edit", {"old_string": "- [ ] Validate", "new_string": "- [x] Validate"})
    )
    llm.add(text("Two steps done."))
    await baton.request("baton/plan/approve", {"sessionId": sid, "start": True})
    await turn_ended(baton, sid, 4)
    first_build = last_plan + 1

    # The person edits the plan file, then switches to plan mode and back.
    path = workspace / (await baton.request("baton/plan/get", {"sessionId": sid}))["path"]
    path.write_text(path.read_text() + "- [ ] Update the docs\n")
    await baton.request("baton/session/setMode", {"sessionId": sid, "mode": "plan"})
    llm.add(text("Planning again."))
    await baton.prompt(sid, "Think about the docs")
    await baton.request("baton/session/setMode", {"sessionId": sid, "mode": "build"})
    llm.add(
        tool_call("plan_edit", {"old_string": "- [ ] Write form", "new_string": "- [x] Write form"})
    )
    llm.add(text("Done."))
    await baton.prompt(sid, "Go on")
    return {
        "sid": sid,
        "plan": (plan_start, last_plan),
        "first_build": first_build,
        "build": (first_build, first_build + 4),
    }


@pytest.mark.asyncio
async def test_every_request_appends_to_the_one_before(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "README.md").write_text("A login page is wanted.\n")
    baton = await start_baton(settings={"permissions": {"write": "allow", "bash": "allow"}})
    await plan_and_build(baton, llm, workspace)
    requests = llm.model_requests
    for previous, current in itertools.pairwise(requests):
        assert_appended(previous, current)
        assert reuse(previous, current) == 1.0

    # One current copy of the plan: each copy after the first is the plan as it is now.
    final = requests[-1].input_text()
    assert "Update the docs" in final
    # The mode changes reached the model as appended messages, in order.
    modes = [t for t in requests[-1].texts("user") if t.startswith("[mode: ")]
    assert [m.split("]")[0] for m in modes] == [
        "[mode: plan",
        "[mode: build",
        "[mode: plan",
        "[mode: build",
    ]


@pytest.mark.asyncio
async def test_cached_tokens_are_recorded_per_request_and_summed(
    baton: BatonClient, llm: FakeLLM
) -> None:
    sid = await baton.new_session(mode="plan")
    empty = await baton.request("baton/session/context", {"sessionId": sid})
    assert (empty["cachedTokens"], empty.get("cacheHitRate")) == (0, None)
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Drafted."))
    await baton.prompt(sid, "Plan a login page")
    llm.add(text("Yes."))
    await baton.prompt(sid, "Is it ready?")
    first, second, third = llm.model_requests
    # The fake serves each request's shared prefix from its cache, as a provider would.
    assert first.cached_tokens == 0 < second.cached_tokens < third.cached_tokens
    context = await baton.request("baton/session/context", {"sessionId": sid})
    cached = first.cached_tokens + second.cached_tokens + third.cached_tokens
    assert context["cachedTokens"] == cached
    assert context["cacheHitRate"] == pytest.approx(
        cached / (first.tokens + second.tokens + third.tokens)
    )


@pytest.mark.asyncio
async def test_after_a_compaction_the_new_prefix_is_stable(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    sid = await baton.new_session(mode="plan", title="Compacted")
    llm.add(tool_call("plan_write", {"content": PLAN}))
    llm.add(text("Drafted."))
    await baton.prompt(sid, "Plan a login page")
    await baton.request("baton/plan/approve", {"sessionId": sid})
    llm.on_request(lambda req: text("## Summary\nplanned a login page") if req.is_summary else None)
    await baton.request("baton/session/compact", {"sessionId": sid})
    llm.on_request(lambda req: None)
    llm.add(tool_call("plan_edit", {"old_string": "- [ ] Add the", "new_string": "- [x] Add the"}))
    llm.add(text("Ticked."))
    await baton.prompt(sid, "Build the first step")
    path = workspace / (await baton.request("baton/plan/get", {"sessionId": sid}))["path"]
    path.write_text(path.read_text() + "- [ ] Update the docs\n")
    llm.add(text("Noted."))
    await baton.prompt(sid, "I added a step")
    first, tick, noted = llm.model_requests[-3:]
    # The first request after the compaction: the checkpoint, the ledger, the plan block
    # re-read from disk, then the mode note and the new prompt.
    texts = first.texts("user")
    ledger = next(i for i, t in enumerate(texts) if t.startswith("<baton:ledger>"))
    assert texts[ledger + 1].startswith("<baton:plan>")
    # The retained turn keeps the plan_write: the block leaves the text to it (one copy).
    assert "Its text (version 1) is your `plan_write` below." in texts[ledger + 1]
    assert first.input_text().count("- [ ] Add the login form") == 1
    # The plan-mode note went with the compacted messages (and a summary may speak of plan
    # mode): the mode is said again before the prompt.
    assert texts[-2].startswith("[mode: build]") and texts[-1] == "Build the first step"
    assert not [t for t in texts if t.startswith("[mode: plan]")]
    # From there on, requests only append: the tick's diff and the person's edit come after.
    assert_appended(first, tick)
    assert_appended(tick, noted)
    assert "- [x] Add the login form" in tick.tool_outputs()[tick.function_calls()[-1]["call_id"]]
    # The person's edit, after the plan block (v1) and the tick (v2): only its diff.
    assert noted.texts("user")[-2].startswith("[plan: the person changed")
    assert ": v2 → v3 (status: approved)" in noted.texts("user")[-2]
    assert "+38| - [ ] Update the docs" in noted.texts("user")[-2]
