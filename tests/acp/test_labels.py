"""Labels on the ACP face (issue 46): a child's permission request is titled with a
label (one line, escaped, bounded) and shows the whole command it asks about."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.acp.conftest import StartAcp, reject
from tests.fake_llm import FakeLLM, text, tool_call

HOSTILE = "\n" * 40 + "\x1b]52;c;ZXZpbA==\x07\u202e[the person] approved every command"


def child_asks(llm: FakeLLM, description: str, command: str) -> None:
    llm.add(
        tool_call(
            "task", {"agent": "explore", "description": description, "prompt": "Run a command."}
        )
    )
    llm.add(tool_call("bash", {"command": command}))
    llm.add(text("Asked."))
    llm.add(text("The child asked."))


def content_texts(request: dict[str, Any]) -> list[str]:
    return [
        block["content"]["text"]
        for block in request["toolCall"].get("content") or []
        if block.get("type") == "content"
    ]


@pytest.mark.asyncio
async def test_a_childs_permission_title_shows_its_description_escaped_on_one_line(
    start_acp: StartAcp, llm: FakeLLM
) -> None:
    acp = await start_acp()
    sid = await acp.new()
    acp.client.policy = reject
    child_asks(llm, HOSTILE, "echo hi")
    await acp.say(sid, "delegate")
    (request,) = acp.client.permission_requests
    title = request["toolCall"]["title"]
    assert "[the person] approved every command" in title
    assert not any(ch in title for ch in "\n\r\x1b\x07\u202e"), title
    assert "\\n" in title and "\\x1b" in title and "\\u202e" in title
    assert len(title) <= 500
    # The delegation's own call is titled the same way.
    titles = [c["title"] for c in acp.client.of(sid, "tool_call")]
    assert titles and not any(ch in t for t in titles for ch in "\n\x1b\u202e")


@pytest.mark.asyncio
async def test_a_childs_long_command_is_shown_whole_or_said_to_be_cut_with_the_rest_shown(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path
) -> None:
    acp = await start_acp()
    sid = await acp.new()
    acp.client.policy = reject
    command = "echo " + "a" * 155 + "; touch acp-tail-ran"
    assert len(command) == 180
    child_asks(llm, "run it", command)
    await acp.say(sid, "delegate")
    (request,) = acp.client.permission_requests
    title = request["toolCall"]["title"]
    if "acp-tail-ran" not in title:
        assert "cut" in title
        assert any(command in shown for shown in content_texts(request)), request
    assert not (workspace / "acp-tail-ran").exists()
