"""A damaged store is survivable: a clear error naming the file, and a way out.

A page of the store is overwritten the way a bad disk or an interrupted copy
leaves it. The real server keeps serving what is readable and answers what is
not with "store damaged" (-32013) naming the file and `baton doctor --repair`;
`baton doctor` says what is wrong; the repair (from the running server or the
terminal) keeps the damaged file, byte for byte, beside the store and recovers
every row that was not on a damaged page into a new store the server goes on
with. A repair is refused, changing nothing, while another process has the
store open.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from baton.store.repair import repair_store
from tests.conftest import StartBaton
from tests.fake_llm import FakeLLM, text
from tests.harness import TEST_KEY, server_env, stop_client
from tests.reliability.conftest import SEED, RecordFigures, size
from tests.reliability.store_check import db_path

DAMAGED = -32013
MARKER = "MARKER-ON-THE-DAMAGED-PAGE"


def checkpoint(path: Path) -> None:
    """Move everything committed into the main file (the server is stopped)."""
    with closing(sqlite3.connect(str(path))) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def page_size(path: Path) -> int:
    head = path.read_bytes()[:100]
    size_ = int.from_bytes(head[16:18], "big")
    return 65536 if size_ == 1 else size_


def damage_pages_holding(path: Path, needle: bytes) -> list[int]:
    """Overwrite the b-tree header of every page that holds `needle` (as a bad sector
    would); returns the page numbers (1-based)."""
    data = bytearray(path.read_bytes())
    size_ = page_size(path)
    pages = sorted({i // size_ for i in _find_all(data, needle)})
    assert pages, "the marker is not in the store's main file"
    for page in pages:
        start = page * size_
        data[start : start + 12] = b"\xff" * 12
    path.write_bytes(bytes(data))
    return [p + 1 for p in pages]


def _find_all(data: bytearray, needle: bytes) -> list[int]:
    found, at = [], data.find(needle)
    while at != -1:
        found.append(at)
        at = data.find(needle, at + 1)
    return found


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def texts(loaded: dict[str, Any]) -> list[str]:
    return [
        part.get("text", "")
        for message in loaded["messages"]
        for part in message["parts"]
        if part.get("type") == "text"
    ]


def doctor(
    workspace: Path, home: Path, llm: FakeLLM, *args: str
) -> subprocess.CompletedProcess[str]:
    env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, None)
    return subprocess.run(
        [sys.executable, "-m", "baton", "doctor", *args],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.asyncio
async def test_a_damaged_page_is_named_and_repaired_by_the_running_server(
    start_baton: StartBaton,
    llm: FakeLLM,
    workspace: Path,
    home: Path,
    record_figures: RecordFigures,
) -> None:
    a = await start_baton()
    first = await a.new_session(title="before")
    damaged = await a.new_session(title="damaged")
    last = await a.new_session(title="after")
    llm.on_request(lambda req: text("noted"))
    await a.prompt(first, "the first session's question")
    # Rows too big to share a page keep the damage to the marker's own session.
    await a.prompt(damaged, "damaged session: first words")
    await a.prompt(damaged, "padding " * 450)
    await a.prompt(damaged, f"{MARKER} " + "x" * 3300)
    await a.prompt(damaged, "padding " * 450)
    await a.prompt(damaged, "damaged session: last words")
    await a.prompt(last, "the last session's question")
    before = {sid: await a.load(sid) for sid in (first, damaged, last)}
    await stop_client(a)

    store = db_path(workspace)
    checkpoint(store)
    pages = damage_pages_holding(store, MARKER.encode())
    damaged_digest = digest(store)

    checked = doctor(workspace, home, llm)
    assert checked.returncode == 1
    assert str(store) in checked.stdout and "baton doctor --repair" in checked.stdout

    b = await start_baton()
    # What is readable is served; what is not says which file and what to do.
    assert len((await b.request("baton/session/list", {}))["sessions"]) == 3
    assert await b.load(first) == before[first]
    error = await b.error("baton/session/load", {"sessionId": damaged})
    assert error.code == DAMAGED
    assert str(store) in error.message and "baton doctor --repair" in error.message
    prompt_error = await b.error("baton/session/prompt", {"sessionId": damaged, "text": "hi"})
    assert prompt_error.code == DAMAGED
    check = await b.request("baton/store/check", {})
    assert check["ok"] is False and check["problems"] and check["fix"] == "baton doctor --repair"
    assert check["path"] == str(store)
    assert digest(store) == damaged_digest, "reporting the damage changed the store"

    repaired = await b.request("baton/store/repair", {})
    assert repaired["check"]["ok"] is True
    backup = Path(repaired["backupPath"])
    assert backup.parent == store.parent and digest(backup) == damaged_digest
    assert {s["sessionId"] for s in repaired["sessions"]} == {first, damaged, last}
    assert repaired["damagedRegions"], repaired

    # The same server goes on with the new store: untouched sessions are whole, the
    # damaged one lost only what was on the damaged page, and it takes new turns.
    assert await b.load(first) == before[first]
    assert await b.load(last) == before[last]
    after = await b.load(damaged)
    kept = texts(after)
    assert "damaged session: first words" in kept and "damaged session: last words" in kept
    assert not any(MARKER in t for t in kept)
    assert len(after["messages"]) == len(before[damaged]["messages"])
    answer = await b.prompt(damaged, "still there?")
    assert answer["stopReason"] == "end_turn"
    assert texts(await b.load(damaged))[-2:] == ["still there?", "noted"]
    assert (await b.request("baton/store/check", {}))["ok"] is True

    now_by_id = {m["id"]: m["parts"] for m in after["messages"]}
    lost = sum(1 for m in before[damaged]["messages"] if now_by_id.get(m["id"]) != m["parts"])
    record_figures(
        "damaged store",
        damaged_pages=len(pages),
        sessions_recovered=f"{len(repaired['sessions'])}/3",
        damaged_session_messages_with_lost_parts=f"{lost}/{len(before[damaged]['messages'])}",
        other_sessions_identical="2/2",
        backup_identical=True,
    )


@pytest.mark.asyncio
async def test_a_file_that_is_not_a_store_is_named_and_repaired_from_the_terminal(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, home: Path
) -> None:
    a = await start_baton()
    await a.new_session(title="gone")
    await stop_client(a)
    store = db_path(workspace)
    checkpoint(store)
    store.write_bytes(b"this is not what sqlite wrote\n" * 400)

    b = await start_baton()
    error = await b.error("baton/session/list", {})
    assert str(store) in error.message and "baton doctor --repair" in error.message
    listed = doctor(workspace, home, llm, "--json")
    assert listed.returncode == 1 and json.loads(listed.stdout)["ok"] is False
    await stop_client(b)

    fixed = doctor(workspace, home, llm, "--repair")
    assert fixed.returncode == 0, fixed.stderr
    assert "kept the damaged store" in fixed.stdout and "new store: ok" in fixed.stdout
    backups = list(store.parent.glob("baton.db.damaged-*"))
    assert [p.read_bytes() for p in backups if not p.name.endswith(("-wal", "-shm"))] == [
        b"this is not what sqlite wrote\n" * 400
    ]
    c = await start_baton()
    assert (await c.request("baton/session/list", {}))["sessions"] == []
    assert await c.new_session(title="fresh")
    assert doctor(workspace, home, llm).returncode == 0


@pytest.mark.asyncio
async def test_repair_is_refused_while_another_process_has_the_store_open(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path, home: Path
) -> None:
    a = await start_baton()
    await a.new_session(title="open elsewhere")
    store = db_path(workspace)
    before = digest(store)
    refused = doctor(workspace, home, llm, "--repair")
    # The store is whole: there is nothing to repair, and it says so.
    assert refused.returncode == 0 and "nothing to repair" in refused.stdout
    await stop_client(a)

    checkpoint(store)
    damage_pages_holding(store, b"open elsewhere")
    b = await start_baton()
    await b.request("baton/store/check", {})
    before = digest(store)
    refused = doctor(workspace, home, llm, "--repair")
    assert refused.returncode == 1
    assert f"pid {b.pid}" in refused.stderr and "nothing was changed" in refused.stderr
    assert digest(store) == before
    assert list(store.parent.glob("baton.db.damaged-*")) == []


def test_every_row_off_the_damaged_pages_is_recovered(
    tmp_path: Path, record_figures: RecordFigures
) -> None:
    """The salvage walk on a larger table, damage at random pages: every row that was
    not on a damaged page is in the new store."""
    from baton.store.db import Database

    rng = random.Random(SEED)
    path = tmp_path / "baton.db"
    db = Database(path)
    rows = size(3000, 30000)
    with db.transaction() as conn:
        conn.execute(
            "INSERT INTO sessions (id, title, mode, created_at, updated_at)"
            " VALUES ('s', 't', 'build', 'now', 'now')"
        )
        for i in range(rows):
            conn.execute(
                "INSERT INTO messages (id, session_id, role, kind, created_at, meta)"
                " VALUES (?, 's', 'user', 'prompt', 'now', ?)",
                (f"m{i:06d}", json.dumps({"row": f"R{i:06d}R", "pad": "p" * rng.randint(0, 300)})),
            )
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()

    data = bytearray(path.read_bytes())
    size_ = page_size(path)
    needle = b'"row": "R'
    at_row = {
        at: int(data[at + len(needle) : at + len(needle) + 6]) for at in _find_all(data, needle)
    }
    leaf_pages = sorted({at // size_ for at in at_row})
    targets = set(rng.sample(leaf_pages[1:-1], 3))
    on_damaged = {row for at, row in at_row.items() if at // size_ in targets}
    for page in targets:
        data[page * size_ : page * size_ + 12] = b"\xff" * 12
    path.write_bytes(bytes(data))

    report = repair_store(path)
    with closing(sqlite3.connect(str(path))) as conn:
        saved = {
            int(json.loads(meta)["row"][1:7])
            for (meta,) in conn.execute("SELECT meta FROM messages").fetchall()
        }
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    expected = set(range(rows)) - on_damaged
    assert saved == expected
    assert report.damaged_regions["messages"] >= 1
    record_figures(
        "damaged store",
        salvage_rows=rows,
        salvage_damaged_pages=len(targets),
        salvage_rows_on_damaged_pages=len(on_damaged),
        salvage_rows_off_damaged_pages_recovered=f"{len(saved & expected)}/{len(expected)}",
    )
