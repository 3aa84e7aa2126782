"""Unit tests of the review core: the revert plan over a chain of changes, and attachments."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from baton import protocol as p
from baton.agent.attachments import render_attachment, resolve_attachments
from baton.errors import InvalidParams
from baton.review.service import plan_revert
from baton.review.store import ChangeRow, sha256
from baton.store.model import StoredAttachment, part_from_json

V0, V1, V2, VX = b"v0\n", b"v1\n", b"v2\n", b"outside\n"


def row(
    seq: int,
    message: str | None,
    before: bytes | None,
    after: bytes | None,
    *,
    path: str = "f.txt",
    confirmed: bool = True,
    revert: str | None = None,
) -> ChangeRow:
    return ChangeRow(
        seq=seq,
        session_id="s",
        message_id=message,
        tool_call_id=None if revert else f"call_{seq}",
        revert_id=revert,
        path=path,
        before_sha256=sha256(before) if before is not None else None,
        confirmed=confirmed,
        after_sha256=sha256(after) if after is not None and confirmed else None,
        created_dirs=["new"] if before is None else [],
    )


def disk(files: dict[str, bytes | None]) -> Callable[[str], bytes | None]:
    return files.get


def test_the_target_is_the_content_before_the_first_reverted_change() -> None:
    rows = [row(1, "m1", V0, V1), row(2, "m2", V1, V2)]
    plan = plan_revert(rows, {"m1", "m2"}, disk({"f.txt": V2}))
    (item,) = plan.files
    assert (item.target_sha256, item.action, item.conflict) == (sha256(V0), "restored", None)
    # Reverting only the later turn restores the earlier turn's result.
    (item,) = plan_revert(rows, {"m2"}, disk({"f.txt": V2})).files
    assert item.target_sha256 == sha256(V1)
    # A file no reverted message touched is not in the plan.
    assert plan_revert(rows, {"m3"}, disk({"f.txt": V2})).files == []


def test_a_created_file_is_removed_with_the_directories_the_write_made() -> None:
    rows = [row(1, "m1", None, V1, path="new/f.txt")]
    (item,) = plan_revert(rows, {"m1"}, disk({"new/f.txt": V1})).files
    assert (item.action, item.target_sha256, item.created_dirs) == ("removed", None, ["new"])


@pytest.mark.parametrize(
    ("now", "reason"),
    [(VX, "modified"), (None, "deleted")],
)
def test_a_file_changed_outside_baton_since_its_last_change_conflicts(
    now: bytes | None, reason: str
) -> None:
    plan = plan_revert([row(1, "m1", V0, V1)], {"m1"}, disk({"f.txt": now}))
    assert [c.model_dump() for c in plan.conflicts] == [{"path": "f.txt", "reason": reason}]


def test_a_file_recreated_after_baton_removed_it_conflicts() -> None:
    # Baton's revert removed it (after = absent); something made it again.
    rows = [row(1, "m1", V0, V1), row(2, None, V1, None, revert="rev_1")]
    (item,) = plan_revert(rows, {"m1"}, disk({"f.txt": VX})).files
    assert item.conflict == "created"


def test_an_edit_between_two_reverted_turns_breaks_the_chain() -> None:
    rows = [row(1, "m1", V0, V1), row(2, "m2", VX, V2)]
    (item,) = plan_revert(rows, {"m1", "m2"}, disk({"f.txt": V2})).files
    assert item.conflict == "changed_between"


def test_an_interrupted_change_is_unconfirmed_unless_the_file_is_back_already() -> None:
    rows = [row(1, "m1", V0, None, confirmed=False)]
    (item,) = plan_revert(rows, {"m1"}, disk({"f.txt": V1})).files
    assert item.conflict == "unconfirmed"
    (item,) = plan_revert(rows, {"m1"}, disk({"f.txt": V0})).files
    assert (item.action, item.conflict) == ("unchanged", None)


def test_earlier_reverts_continue_the_chain() -> None:
    # m1: v0→v1, m2: v1→v2, revert of m2: v2→v1, m3: v1→v2. Reverting from m1 restores v0.
    rows = [
        row(1, "m1", V0, V1),
        row(2, "m2", V1, V2),
        row(3, None, V2, V1, revert="rev_1"),
        row(4, "m3", V1, V2),
    ]
    (item,) = plan_revert(rows, {"m1", "m3"}, disk({"f.txt": V2})).files
    assert (item.target_sha256, item.conflict) == (sha256(V0), None)


# --------------------------------------------------------------------------- attachments


def _attach(workspace: Path, **fields: object) -> dict[str, Any]:
    """The attachment as stored (its JSON)."""
    (part,) = resolve_attachments(workspace, [p.ContextAttachment.model_validate(fields)])
    return part.to_json()


def _rendered(stored: dict[str, Any]) -> str:
    part = part_from_json("attachment", stored)
    assert isinstance(part, StoredAttachment)
    return render_attachment(part)


def test_attachments_take_whole_lines_and_label_them(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"one\r\ntwo\r\nthree\r\nfour\r\n")
    rng = {"start": {"line": 1, "character": 2}, "end": {"line": 3, "character": 0}}
    data = _attach(tmp_path, uri=(tmp_path / "a.py").as_uri(), range=rng)
    assert (data["text"], data["startLine"], data["endLine"]) == ("two\nthree", 2, 3)
    assert _rendered(data) == (
        '<baton:attachment path="a.py" lines="2-3">\ntwo\nthree\n</baton:attachment>'
    )
    # A range ending mid-line keeps that line; past the end is clamped.
    rng = {"start": {"line": 2, "character": 0}, "end": {"line": 9, "character": 3}}
    assert _attach(tmp_path, uri="a.py", range=rng)["text"] == "three\nfour"


def test_attachments_are_refused_outside_the_workspace_and_for_binary_files(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "bin.dat").write_bytes(b"\x00\x01")
    (ws / "link").symlink_to(tmp_path)
    for uri, message in [
        ("../x", "path escapes the workspace"),
        ("link/x", "escapes the workspace through a symbolic link"),
        ("bin.dat", "is a binary file"),
        (".", "is a directory"),
        ("file://otherhost/x", "another host"),
    ]:
        with pytest.raises(InvalidParams) as info:
            _attach(ws, uri=uri)
        assert message in info.value.message, (uri, info.value.message)


def test_a_long_attachment_is_cut_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 150_000)
    data = _attach(tmp_path, uri="big.txt")
    assert data["truncated"] is True and len(str(data["text"])) == 100_000
    assert _rendered(data).endswith(
        "[... attachment cut at 100000 characters; read the file for the rest]\n</baton:attachment>"
    )
