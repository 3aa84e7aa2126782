"""Unit tests of the ACP face's pure mappings (tool kinds, titles, diffs, plan entries)."""

from __future__ import annotations

from pathlib import Path

from baton.faces.acp import translate
from baton.faces.acp.commands import parse


def test_tool_kinds() -> None:
    kinds = {
        name: translate.tool_kind(name)
        for name in (
            "read",
            "write",
            "edit",
            "glob",
            "grep",
            "recall",
            "bash",
            "plan_write",
            "plan_exit",
            "web__fetch_url",
            "db__query",
            "mystery",
        )
    }
    assert kinds == {
        "read": "read",
        "write": "edit",
        "edit": "edit",
        "glob": "search",
        "grep": "search",
        "recall": "search",
        "bash": "execute",
        "plan_write": "think",
        "plan_exit": "think",
        "web__fetch_url": "fetch",
        "db__query": "other",
        "mystery": "other",
    }


def test_titles_and_locations(tmp_path: Path) -> None:
    ws = tmp_path.resolve()
    (ws / "a.py").write_text("x\n")
    # A label (baton.labels): one line, its line breaks and spaces shown, not taken or hidden.
    assert (
        translate.tool_title("bash", {"command": "pytest   -q\n -x"}) == "Run `pytest   -q\\n -x`"
    )
    assert (
        translate.tool_title("grep", {"pattern": "TODO", "path": "src"}) == "Search 'TODO' in src"
    )
    [loc] = translate.locations(ws, "read", {"path": "a.py", "offset": 3})
    assert (loc.path, loc.line) == (str(ws / "a.py"), 3)
    # Outside the workspace: no location (and no diff) is shown.
    assert translate.locations(ws, "read", {"path": "../etc/passwd"}) == []
    assert translate.file_diff(ws, "write", {"path": "/etc/x", "content": "y"}) is None


def test_diffs(tmp_path: Path) -> None:
    ws = tmp_path.resolve()
    (ws / "a.py").write_text("one\ntwo\n")
    created = translate.file_diff(ws, "write", {"path": "new.py", "content": "hi\n"})
    assert created is not None and (created.old_text, created.new_text) == (None, "hi\n")
    edited = translate.file_diff(
        ws, "edit", {"path": "a.py", "old_string": "two", "new_string": "2"}
    )
    assert edited is not None and (edited.old_text, edited.new_text) == ("one\ntwo\n", "one\n2\n")
    # An edit that will fail (no match) shows no diff; the tool reports the failure.
    assert (
        translate.file_diff(ws, "edit", {"path": "a.py", "old_string": "zzz", "new_string": "y"})
        is None
    )
    # The editor's buffer is the old text when given.
    buffered = translate.file_diff(
        ws,
        "edit",
        {"path": "a.py", "old_string": "three", "new_string": "3"},
        editor_text="one\nthree\n",
    )
    assert buffered is not None and buffered.new_text == "one\n3\n"
    (ws / "bin.dat").write_bytes(b"\x00\x01")
    assert translate.file_diff(ws, "write", {"path": "bin.dat", "content": "t"}) is None


def test_plan_entries() -> None:
    content = "# Plan\n\n- [x] done\n  - [~] doing\n1. [ ] todo\n* [!] stuck: waiting\nnot a step\n"
    entries = translate.plan_entries(content)
    assert [(e.content, e.status, e.priority) for e in entries] == [
        ("done", "completed", "medium"),
        ("doing", "in_progress", "medium"),
        ("todo", "pending", "medium"),
        ("stuck: waiting", "pending", "medium"),
    ]
    assert entries[3].field_meta == {"baton": {"state": "blocked"}}


def test_command_parsing() -> None:
    assert parse("/compact keep the API notes ") == ("compact", "keep the API notes")
    assert parse("/approve") == ("approve", "")
    assert parse("/unknown thing") is None
    assert parse("please /compact") is None
