"""Skills and slash commands end to end: the real server, the scripted model.

Skill folders (`.baton/skills`, `.agents/skills`, `.claude/skills`), command files
(`.claude/commands`, `.opencode/command(s)`), the person's own folder; the catalog
at the head of the instructions; the `skill` tool; a compaction keeping a loaded
skill; `/name arguments` from the person; trust; malformed files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartBaton
from tests.e2e.test_compaction import FULL_SUMMARY
from tests.fake_llm import FakeLLM, text, tool_call
from tests.fake_llm.records import RecordedRequest
from tests.harness import BatonClient

BODY_MARK = "OKAPI-4471"


def skill(root: Path, folder: str, name: str, description: str, body: str = "") -> Path:
    path = root / folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\n"
        + (body or f"# {name}\n\nSteps of {name} ({BODY_MARK}-{name}).\n")
    )
    return path


def command(root: Path, folder: str, name: str, body: str, front: str = "") -> Path:
    path = root / folder / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((f"---\n{front}---\n" if front else "") + body)
    return path


def person_folder(home: Path) -> Path:
    return home / "config" / "baton"


async def commands(baton: BatonClient, sid: str | None = None) -> dict[str, Any]:
    params = {"sessionId": sid} if sid else {}
    result: dict[str, Any] = await baton.request("baton/commands/list", params)
    return result


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in result["commands"]}


def skill_enum(request: RecordedRequest) -> list[str]:
    for tool in request.tools:
        fn = tool.get("function", tool)
        if fn.get("name") == "skill":
            enum: list[str] = fn["parameters"]["properties"]["name"]["enum"]
            return enum
    return []


def catalog_of(request: RecordedRequest) -> str:
    instructions = request.instructions or ""
    start = instructions.index("<baton:skills>")
    return instructions[start : instructions.index("</baton:skills>") + len("</baton:skills>")]


@pytest.mark.asyncio
async def test_discovery_in_every_folder_and_the_person_wins_a_clash(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    # The workspace sits in a git repository whose root is its parent.
    (tmp_path / ".git").mkdir()
    skill(workspace, ".baton/skills", "deploy", "Deploy the service to staging")
    skill(workspace, ".agents/skills", "release", "Cut a release")
    skill(workspace, ".claude/skills", "review-checklist", "Review a change")
    skill(tmp_path, ".agents/skills", "from-root", "A skill at the git root")
    command(workspace, ".claude/commands", "fix-issue", "Fix issue $1 now.\n")
    command(workspace, ".opencode/command", "lint", "Run the linter.\n")
    command(workspace, ".opencode/commands", "docs", "Write docs.\n", "description: Docs\n")
    skill(person_folder(home), "skills", "shared", "The person's own shared skill")
    skill(workspace, ".baton/skills", "shared", "The workspace's shared skill")
    command(person_folder(home), "commands", "mine", "My own command.\n")

    baton = await start_baton()
    listed = by_name(await commands(baton))
    assert {"compact", "plan", "approve", "undo", "context", "review", "changes", "new"} <= set(
        listed
    )
    for name in ("deploy", "release", "review-checklist", "from-root", "shared"):
        assert listed[name]["source"] == "skill", name
        assert listed[name]["modelInvocable"] is True
    for name in ("fix-issue", "lint", "docs", "mine"):
        assert listed[name]["source"] == "command", name
        assert listed[name]["modelInvocable"] is False
    assert listed["docs"]["description"] == "Docs"
    assert listed["lint"]["description"] == "Run the linter."
    assert listed["shared"]["origin"] == "person"
    assert listed["shared"]["description"] == "The person's own shared skill"
    assert listed["mine"]["origin"] == "person"
    assert listed["deploy"]["origin"] == "workspace"
    clash = [x for x in (await commands(baton))["problems"] if "/shared" in x]
    assert len(clash) == 1 and ".baton/skills/shared/SKILL.md is not" in clash[0]

    # The model's catalog: skills only, names and descriptions, no body.
    sid = await baton.new_session()
    llm.add(text("ok"))
    await baton.prompt(sid, "hello")
    request = llm.model_requests[-1]
    catalog = catalog_of(request)
    assert "- deploy: Deploy the service to staging" in catalog
    assert "- shared: The person's own shared skill" in catalog
    assert "fix-issue" not in catalog and "lint" not in catalog
    assert BODY_MARK not in request.input_text()
    assert skill_enum(request) == sorted(
        ["deploy", "from-root", "release", "review-checklist", "shared"]
    )
    # The session was told of the commands, with the clash, once.
    updates = baton.updates(sid, "skills")
    assert len(updates) == 1
    assert {c["name"] for c in updates[0]["commands"]} >= {"deploy", "fix-issue"}
    assert any("/shared" in x for x in updates[0]["problems"])


@pytest.mark.asyncio
async def test_an_untrusted_workspace_offers_none_of_its_skills(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, home: Path
) -> None:
    skill(workspace, ".baton/skills", "deploy", "Deploy the service")
    command(workspace, ".claude/commands", "fix-issue", "Fix issue $1.\n")
    skill(person_folder(home), "skills", "mine", "The person's own skill")
    baton = await start_baton(trusted=False)
    listed = by_name(await commands(baton))
    assert "deploy" not in listed and "fix-issue" not in listed
    assert listed["mine"]["source"] == "skill"
    trust = await baton.request("baton/workspace/trust")
    assert any(".baton/skills/deploy/SKILL.md" in x for x in trust["ignored"])
    assert any(".claude/commands/fix-issue.md" in x for x in trust["ignored"])

    sid = await baton.new_session()
    llm.add(text("plain text"))
    await baton.prompt(sid, "/fix-issue 12")
    request = llm.model_requests[-1]
    assert skill_enum(request) == ["mine"]
    assert "deploy" not in catalog_of(request)
    # Not a command here: the prompt goes to the model as typed.
    assert request.last_user_text() == "/fix-issue 12"
    notice = baton.updates(sid, "workspace_trust")
    assert notice and any("deploy" in x for x in notice[0]["ignored"])

    # Trusted by the editor, live: the workspace's skills and commands count from now on.
    await baton.request("baton/workspace/setTrust", {"trusted": True})
    listed = by_name(await commands(baton))
    assert listed["deploy"]["source"] == "skill" and listed["fix-issue"]["source"] == "command"
    llm.add(text("fixing"))
    await baton.prompt(sid, "/fix-issue 12")
    request = llm.model_requests[-1]
    assert request.last_user_text() == "Fix issue 12."
    assert skill_enum(request) == ["deploy", "mine"]


@pytest.mark.asyncio
async def test_a_skill_enters_only_when_loaded_and_a_second_load_adds_nothing(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    path = skill(workspace, ".baton/skills", "deploy", "Deploy the service to staging")
    (path.parent / "scripts").mkdir()
    (path.parent / "scripts" / "run.sh").write_text("echo deploy\n")
    (path.parent / "checklist.md").write_text("- check\n")
    sid = await baton.new_session()
    llm.add(tool_call("skill", {"name": "deploy"}))
    llm.add(tool_call("skill", {"name": "deploy"}))
    llm.add(tool_call("skill", {"name": "deploy", "file": "scripts/run.sh"}))
    llm.add(text("deployed"))
    await baton.prompt(sid, "deploy it")
    first, second, third, fourth = llm.model_requests[-4:]
    mark = f"{BODY_MARK}-deploy"
    assert mark not in first.input_text()
    outputs = list(second.tool_outputs().values())
    assert outputs[-1].startswith('<baton:skill name="deploy">')
    assert mark in outputs[-1]
    assert "- checklist.md" in outputs[-1] and "- scripts/run.sh" in outputs[-1]
    assert ".baton/skills/deploy" in outputs[-1]
    again = list(third.tool_outputs().values())[-1]
    assert "already loaded" in again and mark not in again
    assert fourth.input_text().count(mark) == 1
    assert "echo deploy" in list(fourth.tool_outputs().values())[-1]
    # The head of the request did not change across the loads: the prefix holds.
    assert first.instructions == fourth.instructions
    assert first.tools == fourth.tools
    # An unknown name is refused with the names there are.
    llm.add(tool_call("skill", {"name": "nope"}))
    llm.add(text("ok"))
    await baton.prompt(sid, "more")
    refused = list(llm.model_requests[-1].tool_outputs().values())[-1]
    assert "deploy" in refused and ("nope" in refused or "enum" in refused.lower())


@pytest.mark.asyncio
async def test_a_compaction_keeps_a_loaded_skill_verbatim(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(
        settings={"compaction": {"strategy": "native", "keepRecentTokens": 1500}}
    )
    skill(workspace, ".baton/skills", "deploy", "Deploy the service to staging")
    (workspace / "notes.txt").write_text("alpha line of the notes file\n" * 400)
    mark = f"{BODY_MARK}-deploy"
    sid = await baton.new_session()
    llm.add(tool_call("skill", {"name": "deploy"}))
    llm.add(text("loaded"))
    await baton.prompt(sid, "deploy it")
    loaded = list(llm.model_requests[-1].tool_outputs().values())[-1]
    for round_ in range(3):
        for n in range(3):
            llm.add(tool_call("read", {"path": "notes.txt"}))
            llm.add(text(f"Read it, pass {n}."))
            await baton.prompt(sid, f"read the notes, pass {n}")
        llm.on_request(lambda req: text(FULL_SUMMARY) if req.is_summary else None)
        record = await baton.request("baton/session/compact", {"sessionId": sid})
        llm.on_request(lambda req: None)
        assert record["committed"] is True, record
        llm.add(text(f"after {round_}"))
        await baton.prompt(sid, f"go on {round_}")
        request = llm.model_requests[-1]
        blocks = [t for t in request.texts("user") if t.startswith('<baton:skill name="deploy">')]
        assert blocks == [loaded], round_
        assert request.input_text().count(mark) == 1
    # Loading it again in the compacted view adds nothing: it is in view.
    llm.add(tool_call("skill", {"name": "deploy"}))
    llm.add(text("ok"))
    await baton.prompt(sid, "load it again")
    assert "already loaded" in list(llm.model_requests[-1].tool_outputs().values())[-1]
    context = await baton.request("baton/session/context", {"sessionId": sid})
    kinds = {item["kind"] for item in context["items"]}
    assert {"skills", "skills_loaded"} <= kinds


@pytest.mark.asyncio
async def test_arguments_expand_once_and_the_transcript_keeps_what_was_typed(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"agent": {"nudgeNoTool": False}})
    command(
        workspace,
        ".claude/commands",
        "fix",
        "Tell a story of $1 in $2; all: $ARGUMENTS; missing: $3.\n",
        "description: Tell a story\nargument-hint: <issue> <file>\n",
    )
    command(workspace, ".claude/commands", "plain", "Say hello to the team.\n")
    skill(workspace, ".baton/skills", "deploy", "Deploy", "Deploy to $1 now.\n")
    sid = await baton.new_session()
    typed = '/fix "$1 and $ARGUMENTS" main.py'
    llm.add(text("fixed"))
    await baton.prompt(sid, typed)
    sent = llm.model_requests[-1].last_user_text()
    assert sent == (
        'Tell a story of $1 and $ARGUMENTS in main.py; all: "$1 and $ARGUMENTS" main.py; missing: $3.'
    )
    llm.add(text("looked"))
    await baton.prompt(sid, "/plain the tests too")
    assert llm.model_requests[-1].last_user_text() == (
        "Say hello to the team.\n\nArguments: the tests too"
    )
    # A skill typed as a command arrives framed, its arguments expanded, and counts as loaded.
    llm.add(tool_call("skill", {"name": "deploy"}))
    llm.add(text("deployed"))
    await baton.request(
        "baton/session/prompt",
        {
            "sessionId": sid,
            "text": "/deploy prod",
            "command": {"name": "deploy", "arguments": "prod"},
        },
    )
    request = llm.model_requests[-2]
    assert (
        request.last_user_text()
        == '<baton:skill name="deploy">\nDeploy to prod now.\n</baton:skill>'
    )
    assert "already loaded" in list(llm.model_requests[-1].tool_outputs().values())[-1]

    loaded = await baton.load(sid)
    prompts = [m for m in loaded["messages"] if m["role"] == "user"]
    assert prompts[0]["command"] == {
        "name": "fix",
        "arguments": '"$1 and $ARGUMENTS" main.py',
        "typed": typed,
        "source": "command",
    }
    assert prompts[0]["parts"][0]["text"] == sent
    assert prompts[2]["command"]["source"] == "skill"
    # Live too: each command's message is announced with what was typed and what was sent,
    # so a client shows the expansion one click away before any reload; a plain prompt is not.
    live = baton.updates(sid, "user_message")
    assert [u["command"]["typed"] for u in live] == [typed, "/plain the tests too", "/deploy prod"]
    assert [u["messageId"] for u in live] == [prompts[0]["id"], prompts[1]["id"], prompts[2]["id"]]
    assert live[0]["text"] == sent and "origin" not in live[0]
    sessions = await baton.request("baton/session/list", {})
    assert sessions["sessions"][0]["title"] == typed
    listed = by_name(await commands(baton))
    assert listed["fix"]["argumentHint"] == "<issue> <file>"
    # An explicit command that does not exist is refused, and nothing is stored.
    error = await baton.error(
        "baton/session/prompt",
        {"sessionId": sid, "text": "/nope", "command": {"name": "nope"}},
    )
    assert error.code == -32602 and "nope" in str(error)
    assert len((await baton.load(sid))["messages"]) == len(loaded["messages"])


@pytest.mark.asyncio
async def test_a_malformed_skill_is_reported_and_the_others_load_and_changes_count_next_turn(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    skill(workspace, ".baton/skills", "good", "A good skill")
    broken = workspace / ".baton" / "skills" / "broken" / "SKILL.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("---\nname: broken\ndescription: never closed\n\nbody\n")
    wrong = workspace / ".baton" / "skills" / "misnamed" / "SKILL.md"
    wrong.parent.mkdir(parents=True)
    wrong.write_text("---\nname: other\ndescription: x\n---\nbody\n")
    result = await commands(baton)
    listed = by_name(result)
    assert "good" in listed and "broken" not in listed and "misnamed" not in listed
    problems = result["problems"]
    assert any(str(broken) in x and "no closing `---`" in x for x in problems), problems
    assert any(str(wrong) in x and "differs from its folder" in x for x in problems), problems

    sid = await baton.new_session()
    llm.add(text("ok"))
    await baton.prompt(sid, "hi")
    [update] = baton.updates(sid, "skills")
    assert any(str(broken) in x for x in update["problems"])
    assert skill_enum(llm.model_requests[-1]) == ["good"]
    before = llm.model_requests[-1]

    # Fixed on disk, and a new one added: both count from the next turn.
    broken.write_text("---\nname: broken\ndescription: fixed now\n---\nbody\n")
    skill(workspace, ".agents/skills", "added", "Added later")
    llm.add(text("ok"))
    await baton.prompt(sid, "again")
    after = llm.model_requests[-1]
    assert skill_enum(after) == ["added", "broken", "good"]
    assert "- added: Added later" in catalog_of(after)
    assert catalog_of(before) != catalog_of(after)
    updates = baton.updates(sid, "skills")
    assert len(updates) == 2 and not any(str(broken) in x for x in updates[1]["problems"])
    # Nothing changed: the next turn's head is byte for byte the same.
    llm.add(text("ok"))
    await baton.prompt(sid, "and again")
    assert llm.model_requests[-1].instructions == after.instructions
    assert len(baton.updates(sid, "skills")) == 2


@pytest.mark.asyncio
async def test_disable_model_invocation_keeps_the_slash_command_only(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    path = workspace / ".baton" / "skills" / "secret" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        "---\nname: secret\ndescription: Only for the person\n"
        "disable-model-invocation: true\n---\nDo $ARGUMENTS quietly.\n"
    )
    skill(workspace, ".baton/skills", "open", "For anyone")
    listed = by_name(await commands(baton))
    assert listed["secret"]["modelInvocable"] is False
    sid = await baton.new_session()
    llm.add(text("ok"))
    await baton.prompt(sid, "/secret the thing")
    request = llm.model_requests[-1]
    assert skill_enum(request) == ["open"]
    assert "secret" not in catalog_of(request)
    assert "Do the thing quietly." in (request.last_user_text() or "")
    # The model cannot load it by name either.
    llm.add(tool_call("skill", {"name": "secret"}))
    llm.add(text("ok"))
    await baton.prompt(sid, "load secret")
    output = list(llm.model_requests[-1].tool_outputs().values())[-1]
    assert "quietly" not in output
    assert json.dumps(output)  # a readable refusal


@pytest.mark.asyncio
async def test_a_commands_model_runs_its_turn_only(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings={"model": "main-model", "agent": {"nudgeNoTool": False}})
    command(
        workspace,
        ".claude/commands",
        "quick",
        "Say hi to $1.\n",
        "description: Quick hello\nmodel: small-model\nagent: helper\n",
    )
    listed = by_name(await commands(baton))
    assert (listed["quick"]["model"], listed["quick"]["agent"]) == ("small-model", "helper")
    sid = await baton.new_session()
    llm.add(text("hi"))
    await baton.prompt(sid, "/quick Ada")
    assert llm.model_requests[-1].model == "small-model"
    llm.add(text("plain"))
    await baton.prompt(sid, "and now")
    assert llm.model_requests[-1].model == "main-model"


@pytest.mark.asyncio
async def test_a_command_with_an_agent_runs_as_a_task_child_of_that_agent(
    baton: BatonClient, llm: FakeLLM, workspace: Path
) -> None:
    front = "description: Find where a name is defined\nagent: explore\n"
    command(workspace, ".claude/commands", "scout", "Find where $ARGUMENTS is defined.", front)
    llm.add(text("Hello."))
    sid = await baton.new_session()
    await baton.prompt(sid, "earlier words of the parent")  # history the child must not see
    llm.add(text("FLAG-77 is defined in config.py, line 3."))
    llm.add(text("The explore child found it in config.py."))
    result = await baton.request(
        "baton/session/prompt", {"sessionId": sid, "text": "/scout FLAG-77"}
    )
    assert result["stopReason"] == "end_turn"

    child, parent = llm.model_requests[-2], llm.model_requests[-1]
    # The child's first request: the expansion as its task, none of the parent's words,
    # and no tool that writes (an explore child).
    assert "Find where FLAG-77 is defined." in child.input_text()
    assert "earlier words of the parent" not in child.input_text()
    assert "write" not in child.tool_names and "task" not in child.tool_names
    # The parent: the person's message as typed, then Baton's task call and its result.
    assert "/scout FLAG-77" in parent.texts("user")
    assert "Find where FLAG-77 is defined." not in parent.texts("user")
    (output,) = parent.tool_outputs().values()
    assert output.startswith("<baton:task-result") and "config.py, line 3" in output
    rows = (await baton.request("baton/session/list", {}))["sessions"]
    assert [r["agent"] for r in rows if r["parentId"] == sid] == ["explore"]
