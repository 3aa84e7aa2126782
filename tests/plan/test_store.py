"""PlanStore: file names, front matter, versions, disk edits, confinement."""

from __future__ import annotations

import hashlib
import os
from datetime import date
from pathlib import Path

import pytest

from baton.errors import ConfigError, StorageError
from baton.plan import frontmatter
from baton.plan.naming import file_name, slugify
from baton.plan.store import PlanStore
from baton.store.sessions import SessionStore

DAY = date(2026, 11, 30)


def create(store: PlanStore, sid: str, content: str = "- [ ] a\n", **kw: object) -> Path:
    plan, _ = store.create(
        sid,
        plans_dir=str(kw.get("plans_dir", ".baton/plans")),
        hint=str(kw.get("hint", "Add a login page")),
        content=content,
        author="agent",
        tool_call_id="call_1",
        day=DAY,
    )
    return store.workspace / plan.path


# ------------------------------------------------------------------ naming


@pytest.mark.parametrize(
    ("hint", "slug"),
    [
        ("Add a login page", "add-a-login-page"),
        ("  Fix: the PARSER (again)!  ", "fix-the-parser-again"),
        ("Crème brûlée über alles", "creme-brulee-uber-alles"),
        ("日本語だけ", "plan"),
        ("", "plan"),
        ("word " * 40, "-".join(["word"] * 9)),
        ("x" * 80, "x" * 48),
    ],
)
def test_slugify(hint: str, slug: str) -> None:
    assert slugify(hint) == slug
    assert len(slugify(hint)) <= 48


def test_file_names_are_dated_and_numbered_on_clashes() -> None:
    assert file_name("Add a login page", DAY) == "2026-11-30-add-a-login-page.md"
    assert file_name("Add a login page", DAY, 3) == "2026-11-30-add-a-login-page-3.md"


# ------------------------------------------------------------------ front matter


@pytest.mark.parametrize(
    "content",
    ["- [ ] a\n", "", "\n\nstarts blank\n", "---\nlooks: like front matter\n---\n", "no newline"],
)
def test_front_matter_round_trips_any_content(content: str) -> None:
    text = frontmatter.render(content, status="draft", session_id="ses_1")
    fields, body = frontmatter.split(text)
    assert fields == {"status": "draft", "session": "ses_1"}
    assert body == content


def test_a_file_without_front_matter_is_all_content() -> None:
    assert frontmatter.split("# Plan\n- [ ] a\n") == ({}, "# Plan\n- [ ] a\n")
    assert frontmatter.split("---\nnot closed\n") == ({}, "---\nnot closed\n")
    odd = "---\njust a rule\n---\ntext\n"
    assert frontmatter.split(odd) == ({}, odd)
    assert frontmatter.split("---\r\nstatus: done\r\n---\r\n\r\nx\r\n") == (
        {"status": "done"},
        "x\n",
    )


# ------------------------------------------------------------------ create and write


def test_create_writes_the_file_and_version_one(store: PlanStore, session_id: str) -> None:
    path = create(store, session_id)
    assert path == store.workspace / ".baton/plans/2026-11-30-add-a-login-page.md"
    assert path.read_text() == f"---\nstatus: draft\nsession: {session_id}\n---\n\n- [ ] a\n"
    plan = store.get(session_id)
    assert plan is not None and plan.status == "draft"
    assert plan.path == ".baton/plans/2026-11-30-add-a-login-page.md"
    v1 = store.latest(session_id)
    assert v1 is not None
    assert (v1.version, v1.author, v1.content, v1.tool_call_id) == (
        1,
        "agent",
        "- [ ] a\n",
        "call_1",
    )
    assert v1.sha256 == hashlib.sha256(b"- [ ] a\n").hexdigest()
    assert store.written_by(session_id) == {"call_1": 1}
    with pytest.raises(StorageError):
        create(store, session_id)


def test_same_name_on_the_same_day_gets_a_number(
    store: PlanStore, sessions: SessionStore, session_id: str
) -> None:
    first = create(store, session_id)
    other = sessions.create_session("Add a login page", "plan").id
    (store.workspace / ".baton/plans/2026-11-30-add-a-login-page-2.md").write_text("mine\n")
    second = create(store, other)
    assert first.name == "2026-11-30-add-a-login-page.md"
    assert second.name == "2026-11-30-add-a-login-page-3.md"
    assert (store.workspace / ".baton/plans/2026-11-30-add-a-login-page-2.md").read_text() == (
        "mine\n"
    )


def test_versions_count_up_and_status_lives_in_the_front_matter(
    store: PlanStore, session_id: str
) -> None:
    path = create(store, session_id)
    _, v2 = store.write(session_id, "- [x] a\n", author="agent", tool_call_id="call_2")
    assert v2.version == 2
    plan = store.set_status(session_id, "awaiting_approval")
    assert plan.status == "awaiting_approval"
    assert frontmatter.split(path.read_text()) == (
        {"status": "awaiting_approval", "session": session_id},
        "- [x] a\n",
    )
    # A status change is not a new version.
    assert [v.version for v in store.versions(session_id)] == [1, 2]
    assert store.version(session_id, 1) is not None
    assert store.version(session_id, 1).content == "- [ ] a\n"  # type: ignore[union-attr]
    assert store.version(session_id, 7) is None


# ------------------------------------------------------------------ disk edits


def test_an_edit_on_disk_becomes_a_user_version(store: PlanStore, session_id: str) -> None:
    path = create(store, session_id)
    assert store.sync(session_id) is None
    path.write_text(path.read_text() + "- [ ] b\n")
    v2 = store.sync(session_id)
    assert v2 is not None
    assert (v2.version, v2.author, v2.content, v2.tool_call_id) == (
        2,
        "user",
        "- [ ] a\n- [ ] b\n",
        None,
    )
    assert store.sync(session_id) is None


def test_front_matter_edits_alone_are_not_versions(store: PlanStore, session_id: str) -> None:
    path = create(store, session_id)
    path.write_text(path.read_text().replace("status: draft", "status: done"))
    assert store.sync(session_id) is None
    assert store.get(session_id).status == "draft"  # type: ignore[union-attr]


def test_a_file_without_its_front_matter_keeps_its_content(
    store: PlanStore, session_id: str
) -> None:
    path = create(store, session_id)
    path.write_text("- [ ] a\n")  # the person removed the block, nothing else
    assert store.sync(session_id) is None
    store.set_status(session_id, "approved")
    assert path.read_text().startswith("---\nstatus: approved\n")


def test_a_missing_file_keeps_the_last_version_and_is_written_again(
    store: PlanStore, session_id: str
) -> None:
    path = create(store, session_id)
    path.unlink()
    plan = store.get(session_id)
    assert plan is not None
    assert store.read_content(plan) is None
    assert store.sync(session_id) is None
    store.write(session_id, "- [ ] again\n", author="agent")
    assert frontmatter.split(path.read_text())[1] == "- [ ] again\n"


def test_crlf_files_from_the_editor_compare_equal(store: PlanStore, session_id: str) -> None:
    path = create(store, session_id, content="- [ ] a\n- [ ] b\n")
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert store.sync(session_id) is None


# ------------------------------------------------------------------ confinement


@pytest.mark.parametrize("plans_dir", ["../outside", "/tmp", "sub/../../x"])
def test_plans_dir_escaping_the_workspace_is_refused(
    store: PlanStore, session_id: str, plans_dir: str
) -> None:
    with pytest.raises(ConfigError, match=r"plans\.dir"):
        create(store, session_id, plans_dir=plans_dir)
    assert store.get(session_id) is None


def test_plans_dir_through_a_link_out_of_the_workspace_is_refused(
    store: PlanStore, session_id: str, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, store.workspace / "plans")
    with pytest.raises(ConfigError, match="symbolic link"):
        create(store, session_id, plans_dir="plans")
    assert list(outside.iterdir()) == []


def test_a_plan_file_swapped_for_a_link_is_not_followed(
    store: PlanStore, session_id: str, tmp_path: Path
) -> None:
    path = create(store, session_id)
    secret = tmp_path / "secret.md"
    secret.write_text("secret\n")
    path.unlink()
    os.symlink(secret, path)
    with pytest.raises(ConfigError):
        store.sync(session_id)
    with pytest.raises(ConfigError):
        store.write(session_id, "- [ ] b\n", author="agent")
    assert secret.read_text() == "secret\n"


def test_a_failed_file_write_leaves_no_version(store: PlanStore, session_id: str) -> None:
    (store.workspace / ".baton").write_text("a file where the directory should be\n")
    with pytest.raises((StorageError, ConfigError)):
        create(store, session_id)
    assert store.get(session_id) is None
    assert store.versions(session_id) == []


def test_plans_dir_may_be_the_workspace_itself(store: PlanStore, session_id: str) -> None:
    path = create(store, session_id, plans_dir=".")
    assert path.parent == store.workspace
