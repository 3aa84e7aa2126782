"""Start-up: the attrs code cache that keeps `baton serve` quick to answer `initialize`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import REPO, BatonClient, server_env

IMPORT_THROUGH_CACHE = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from baton.faces.lsp.attrs_code_cache import import_lsprotocol\n"
    "stats = import_lsprotocol(Path(sys.argv[1]))\n"
    "import lsprotocol.types as t\n"
    "p = t.Position(line=1, character=2)\n"
    "assert p == t.Position(1, 2) and p != t.Position(1, 3) and p.character == 2, p\n"
    "print(json.dumps(stats))\n"
)


def _import(cache_dir: Path, home: Path) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_THROUGH_CACHE, str(cache_dir)],
        env=server_env(home, None, None),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return dict(json.loads(done.stdout))


def _cache_files(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("attrs-code-*.marshal"))


def test_second_import_compiles_nothing(home: Path) -> None:
    cache_dir = home / "cache" / "baton"
    first = _import(cache_dir, home)
    assert first["hits"] == 0 and first["misses"] > 100
    [cache] = _cache_files(cache_dir)
    assert cache.stat().st_mode & 0o077 == 0  # private to the user

    second = _import(cache_dir, home)
    assert second == {"hits": first["misses"], "misses": 0}


def test_corrupt_cache_is_rebuilt(home: Path) -> None:
    cache_dir = home / "cache" / "baton"
    _import(cache_dir, home)
    [cache] = _cache_files(cache_dir)
    cache.write_bytes(b"\x00not marshal data")
    os.chmod(cache, 0o600)

    rebuilt = _import(cache_dir, home)
    assert rebuilt["hits"] == 0 and rebuilt["misses"] > 100
    assert _import(cache_dir, home)["misses"] == 0


def test_a_damaged_cache_is_not_loaded(home: Path) -> None:
    cache_dir = home / "cache" / "baton"
    _import(cache_dir, home)
    [cache] = _cache_files(cache_dir)
    blob = bytearray(cache.read_bytes())
    blob[len(blob) // 2] ^= 0x01  # one flipped bit, deep inside some code object
    cache.write_bytes(bytes(blob))

    assert _import(cache_dir, home)["hits"] == 0
    assert _import(cache_dir, home)["misses"] == 0  # rebuilt whole


def test_cache_others_can_write_is_not_trusted(home: Path) -> None:
    cache_dir = home / "cache" / "baton"
    _import(cache_dir, home)
    [cache] = _cache_files(cache_dir)
    os.chmod(cache, 0o666)

    assert _import(cache_dir, home)["hits"] == 0
    # Replaced by a private file the next start can use.
    assert cache.stat().st_mode & 0o077 == 0
    assert _import(cache_dir, home)["misses"] == 0


def test_unwritable_cache_dir_still_starts(home: Path) -> None:
    cache_dir = home / "cache" / "baton"
    cache_dir.parent.mkdir(parents=True)
    cache_dir.write_text("a file where the directory should be")

    stats = _import(cache_dir, home)
    assert stats["misses"] > 100
    assert cache_dir.read_text() == "a file where the directory should be"


@pytest.mark.asyncio
async def test_server_fills_the_cache_in_the_user_cache_dir(baton: BatonClient, home: Path) -> None:
    listed = await baton.request("baton/session/list", {})
    assert listed["sessions"] == []
    [cache] = _cache_files(home / "cache" / "baton")
    # The next start of the server (or anything importing through the cache) compiles nothing.
    assert _import(cache.parent, home)["misses"] == 0
