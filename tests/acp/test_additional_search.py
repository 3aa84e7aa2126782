"""glob and grep over a session's additional directories, through the real `baton acp`:
a search of the whole workspace covers them too, an absolute pattern or path inside
one searches it alone, what comes from one is shown by its absolute path, and nothing
outside them (a `..`, a symbolic link out) is listed or shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.acp.conftest import StartAcp
from tests.fake_llm import FakeLLM, text, tool_call


def outputs(acp: Any, sid: str) -> list[str]:
    """Each finished tool call's output, in order."""
    return [
        u.get("rawOutput") or ""
        for u in acp.client.of(sid, "tool_call_update")
        if u.get("status") in ("completed", "failed")
    ]


@pytest.mark.asyncio
async def test_glob_and_grep_search_the_additional_directories(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    (shared / "docs").mkdir(parents=True)
    (shared / "api.md").write_text("SHARED-NOTES: the API\n")
    (shared / "docs" / "guide.md").write_text("SHARED-NOTES: the guide\n")
    private = tmp_path / "private"
    private.mkdir()
    (private / "secret.md").write_text("SHARED-NOTES: PRIVATE\n")
    # Links out of the additional directory: a file and a folder.
    (shared / "leak.md").symlink_to(private / "secret.md")
    (shared / "out").symlink_to(private)
    (workspace / "notes.md").write_text("SHARED-NOTES: in the workspace\n")
    root = shared.resolve()

    acp = await start_acp()
    new = await acp.client.raw(
        "session/new",
        {"cwd": str(workspace), "mcpServers": [], "additionalDirectories": [str(shared)]},
    )
    sid = new["sessionId"]
    llm.add(tool_call("glob", {"pattern": "**/*.md"}))
    llm.add(tool_call("grep", {"pattern": "SHARED-NOTES"}))
    llm.add(tool_call("grep", {"pattern": "SHARED-NOTES", "path": str(shared / "docs")}))
    llm.add(tool_call("glob", {"pattern": f"{shared}/**/*.md"}))
    llm.add(tool_call("glob", {"pattern": f"{shared}/../private/*.md"}))
    llm.add(tool_call("grep", {"pattern": "PRIVATE", "path": str(shared / "out")}))
    llm.add(tool_call("read", {"path": f"{root}/docs/guide.md"}))
    llm.add(text("Done."))
    await acp.say(sid, "search the notes")
    glob_all, grep_all, grep_docs, glob_shared, glob_up, grep_link, read = outputs(acp, sid)

    # The whole workspace's search covers the additional directory, its files shown by
    # their absolute paths; the links out of it are not listed.
    assert sorted(glob_all.splitlines()) == sorted(
        ["notes.md", f"{root}/api.md", f"{root}/docs/guide.md"]
    )
    assert grep_all.splitlines() == [
        "notes.md:1: SHARED-NOTES: in the workspace",
        f"{root}/api.md:1: SHARED-NOTES: the API",
        f"{root}/docs/guide.md:1: SHARED-NOTES: the guide",
    ]
    # A path or pattern inside it searches it alone.
    assert grep_docs.splitlines() == [f"{root}/docs/guide.md:1: SHARED-NOTES: the guide"]
    assert sorted(glob_shared.splitlines()) == [f"{root}/api.md", f"{root}/docs/guide.md"]
    # Nothing outside it: not by `..`, not through a link.
    assert "escapes the workspace" in glob_up
    assert "PRIVATE" not in grep_link
    assert not any("PRIVATE" in o or "secret" in o for o in outputs(acp, sid))
    # What a search shows, `read` takes as it is.
    assert "SHARED-NOTES: the guide" in read
    # Still read-only: the search wrote nothing anywhere.
    assert sorted(p.name for p in shared.iterdir()) == ["api.md", "docs", "leak.md", "out"]


@pytest.mark.asyncio
async def test_without_additional_directories_searches_stay_in_the_workspace(
    start_acp: StartAcp, llm: FakeLLM, workspace: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "api.md").write_text("SHARED-NOTES\n")
    acp = await start_acp()
    sid = await acp.new()
    llm.add(tool_call("grep", {"pattern": "SHARED-NOTES"}))
    llm.add(tool_call("grep", {"pattern": "SHARED-NOTES", "path": str(shared)}))
    llm.add(text("Done."))
    await acp.say(sid, "search")
    in_workspace, outside = outputs(acp, sid)
    assert in_workspace == "no matches for SHARED-NOTES in ."
    assert "escapes the workspace" in outside
