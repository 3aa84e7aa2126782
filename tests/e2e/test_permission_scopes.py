"""What each "Always allow" answer grants, through the real server: this exact command,
this one file, or the whole category, each named in words; protected paths never."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from baton.agent.grants import Grants
from tests.fake_llm import FakeLLM, text, tool_call
from tests.harness import BatonClient


def answers(*option_ids: str) -> Any:
    chosen = iter(option_ids)
    return lambda _: {"outcome": {"optionId": next(chosen)}}


def offered(request: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(o["optionId"], o.get("name", ""), o.get("scope")) for o in request["options"]]


@pytest.mark.asyncio
async def test_always_allow_this_command_covers_only_that_command(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = answers("allow_always_command", "reject_once")
    llm.add(tool_call("bash", {"command": "echo one >> log.txt"}))
    llm.add(tool_call("bash", {"command": "echo one >> log.txt"}))
    llm.add(tool_call("bash", {"command": "echo two >> log.txt"}))
    llm.add(text("done"))
    await baton.prompt(await baton.new_session(), "log things")
    assert (workspace / "log.txt").read_text() == "one\none\n"
    commands = [r["toolCall"]["input"]["command"] for r in baton.permission_requests]
    assert commands == ["echo one >> log.txt", "echo two >> log.txt"]
    assert offered(baton.permission_requests[0]) == [
        ("allow_once", "Allow once", None),
        ("allow_always_command", "Always allow `echo one >> log.txt` in this session", "command"),
        ("allow_always", "Always allow every command in this session", "category"),
        ("reject_once", "Reject", None),
    ]


@pytest.mark.asyncio
async def test_always_allow_every_command_is_the_category(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    baton.permission_policy = answers("allow_always")
    llm.add(tool_call("bash", {"command": "echo one > one.txt"}))
    llm.add(tool_call("bash", {"command": "echo two > two.txt"}))
    llm.add(text("done"))
    await baton.prompt(await baton.new_session(), "make two files")
    assert (workspace / "two.txt").read_text() == "two\n"
    assert len(baton.permission_requests) == 1


@pytest.mark.asyncio
async def test_always_allow_changes_to_a_file_covers_that_file_only(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / "notes").mkdir()
    baton.permission_policy = answers("allow_always_path", "reject_once")
    llm.add(tool_call("write", {"path": "notes/a.txt", "content": "1\n"}))
    # The same file by another spelling, then changed by edit: covered.
    llm.add(tool_call("write", {"path": "./notes/../notes/a.txt", "content": "2\n"}))
    llm.add(tool_call("edit", {"path": "notes/a.txt", "old_string": "2", "new_string": "3"}))
    llm.add(tool_call("write", {"path": "notes/b.txt", "content": "b\n"}))
    llm.add(text("done"))
    sid = await baton.new_session()
    await baton.prompt(sid, "write notes")
    assert (workspace / "notes" / "a.txt").read_text() == "3\n"
    assert not (workspace / "notes" / "b.txt").exists()
    paths = [r["toolCall"]["input"]["path"] for r in baton.permission_requests]
    assert paths == ["notes/a.txt", "notes/b.txt"]
    assert offered(baton.permission_requests[0])[1:3] == [
        ("allow_always_path", "Always allow changes to notes/a.txt in this session", "path"),
        ("allow_always", "Always allow every file change in this session", "category"),
    ]
    # Grants belong to the session: a new one asks again.
    baton.permission_policy = answers("reject_once")
    llm.add(tool_call("write", {"path": "notes/a.txt", "content": "4\n"}))
    llm.add(text("refused"))
    await baton.prompt(await baton.new_session(), "again")
    assert (workspace / "notes" / "a.txt").read_text() == "3\n"
    assert len(baton.permission_requests) == 3


@pytest.mark.asyncio
async def test_no_always_answer_covers_a_protected_path(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    (workspace / ".vscode").mkdir()
    (workspace / "settings-link.json").symlink_to(workspace / ".vscode" / "settings.json")
    # A client that answers "always" though none was offered: once, and nothing remembered.
    baton.permission_policy = answers(
        "allow_always_path", "allow_always_path", "allow_always", "reject_once"
    )
    llm.add(tool_call("write", {"path": ".vscode/settings.json", "content": "{}\n"}))
    llm.add(tool_call("write", {"path": ".vscode/settings.json", "content": "{ }\n"}))
    llm.add(tool_call("write", {"path": "settings-link.json", "content": "{1}\n"}))
    llm.add(tool_call("write", {"path": ".vscode/tasks.json", "content": "{}\n"}))
    llm.add(text("done"))
    await baton.prompt(await baton.new_session(), "configure")
    assert len(baton.permission_requests) == 4
    for request in baton.permission_requests:
        assert request["reason"]
        assert [o["kind"] for o in request["options"]] == ["allow_once", "reject_once"]
    assert (workspace / ".vscode" / "settings.json").read_text() == "{1}\n"
    assert not (workspace / ".vscode" / "tasks.json").exists()


def test_grants_offer_the_narrowest_first_and_name_what_they_grant(tmp_path: Path) -> None:
    grants = Grants()
    long = "pytest -q " + "tests/test_a_rather_long_module_name.py " * 3
    [command, category] = grants.options(tmp_path, "bash", {"command": long})
    assert command.name == "Always allow this exact command in this session"
    assert category.name == "Always allow every command in this session"
    [tool, every] = grants.options(tmp_path, "github__create_issue", {"title": "x"})
    assert (tool.option_id, tool.scope) == ("allow_always_tool", "tool")
    assert tool.name == "Always allow github__create_issue in this session"
    assert every.name == "Always allow every MCP tool in this session"
    assert grants.grant(tmp_path, "allow_always_tool", "github__create_issue", {})
    assert grants.covers(tmp_path, "github__create_issue", {})
    assert not grants.covers(tmp_path, "github__delete_repo", {})
    # An option that does not fit the call grants nothing.
    assert not grants.grant(tmp_path, "allow_always_path", "bash", {"command": "ls"})
    assert not grants.grant(tmp_path, "allow_always_command", "write", {"path": "a"})
    assert grants == Grants(tools={"github__create_issue"})
