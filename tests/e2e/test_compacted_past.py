"""A compacted session's past leaves the server's memory (issue 44: memory that stays flat)
and loses nothing by it: its tool outputs come back whole from the store in
`baton/session/load`, through `recall`, after a restart, and in the model's requests again
once the compaction is undone. Through the real server and its restart on the same store.
(tests/store/test_offload.py checks that the payloads did leave memory.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient

SUMMARY = "\n\n".join(f"## {name}\n- {name.lower()}" for name in SECTIONS)
SETTINGS = {"compaction": {"auto": False, "strategy": "native"}}
LINES = 150


def _outputs(loaded: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """call id → (its output, whether its message is compacted), as a client is shown them."""
    return {
        part["toolCallId"]: (part["output"], message["compacted"])
        for message in loaded["messages"]
        for part in message["parts"]
        if part["type"] == "tool_call"
    }


async def _recall(baton: BatonClient, llm: FakeLLM, sid: str, call_id: str) -> str:
    """What `recall` returns for `call_id`, as the model is sent it."""
    llm.add(tool_call("recall", {"call_id": call_id}))
    llm.add(text("Recalled."))
    await baton.prompt(sid, "what did that read return?")
    outputs = llm.model_requests[-1].tool_outputs()
    return next(o for o in outputs.values() if o.startswith("[recall: exact output of read"))


@pytest.mark.asyncio
async def test_old_tool_outputs_come_back_whole_after_leaving_memory(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("".join(f"alpha line {i}\n" for i in range(LINES)))
    baton = await start_baton(settings=SETTINGS)
    sid = await baton.new_session()
    llm.add(tool_call("read", {"path": "notes.txt"}))
    llm.add(text("Read it."))
    await baton.prompt(sid, "read notes.txt")
    llm.add(text("Second answer."))
    await baton.prompt(sid, "second question")
    before = _outputs(await baton.load(sid))
    [(read_id, (original, _))] = before.items()
    assert original.count("alpha line") == LINES

    llm.add(text(SUMMARY))
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True
    # The read is before the cut: the next requests do not carry it.
    llm.add(text("Third answer."))
    await baton.prompt(sid, "third question")
    assert "alpha line 149" not in llm.model_requests[-1].input_text()

    assert _outputs(await baton.load(sid))[read_id] == (original, True)
    assert (await _recall(baton, llm, sid, read_id)).endswith(original)

    # A new process reads the compacted past lazily from the store.
    again = await start_baton(settings=SETTINGS)
    assert _outputs(await again.load(sid))[read_id] == (original, True)
    assert (await _recall(again, llm, sid, read_id)).endswith(original)
    exported = await again.load(sid)
    assert all(
        output == before[call_id][0]
        for call_id, (output, _) in _outputs(exported).items()
        if call_id in before
    )

    # Undone, the compaction brings the whole messages back into the model's view.
    await again.request(
        "baton/session/uncompact", {"sessionId": sid, "compactionId": record["compactionId"]}
    )
    assert _outputs(await again.load(sid))[read_id] == (original, False)
    llm.add(text("ok"))
    await again.prompt(sid, "after undo")
    assert llm.model_requests[-1].tool_outputs()[read_id] == original
