"""glob and grep: matching, ordering, skipped directories, caps, and symlinks."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import baton.tools.search as search
from baton.tools.base import ToolFailure
from baton.tools.ripgrep import rg_binary, run_rg
from baton.tools.sandbox import SandboxError
from baton.tools.search import GlobInput, GlobTool, GrepInput, GrepTool
from baton.tools.walk import expand_braces, match_segments


def _touch(path: Path, text: str = "", mtime: float | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


async def _glob(ctx: Any, pattern: str) -> list[str]:
    result = await GlobTool().run(GlobInput(pattern=pattern), ctx)
    assert not result.is_error
    return result.output.splitlines()


async def _grep(ctx: Any, pattern: str, **kw: Any) -> str:
    result = await GrepTool().run(GrepInput(pattern=pattern, **kw), ctx)
    assert not result.is_error
    output: str = result.output
    return output


# ----------------------------------------------------------------------------- glob


def test_brace_expansion_and_segment_matching() -> None:
    assert expand_braces("*.{ts,tsx}") == ["*.ts", "*.tsx"]
    assert expand_braces("{a,b{c,d}}/x") == ["a/x", "bc/x", "bd/x"]
    assert expand_braces("lit{x}.{a,b}") == ["lit{x}.a", "lit{x}.b"]
    assert match_segments(["**", "*.py"], ["a", "b", "c.py"])
    assert match_segments(["**", "*.py"], ["c.py"])
    assert match_segments(["src", "**"], ["src", "x", "y"])
    assert not match_segments(["*.py"], ["a", "c.py"])
    assert match_segments(["a", "**", "b", "*.txt"], ["a", "b", "x.txt"])


@pytest.mark.asyncio
async def test_glob_newest_first(workspace: Path, ctx: Any) -> None:
    _touch(workspace / "old.py", mtime=1_000_000)
    _touch(workspace / "pkg" / "new.py", mtime=3_000_000)
    _touch(workspace / "pkg" / "deep" / "mid.py", mtime=2_000_000)
    _touch(workspace / "notes.txt")
    assert await _glob(ctx, "**/*.py") == ["pkg/new.py", "pkg/deep/mid.py", "old.py"]


@pytest.mark.asyncio
async def test_glob_star_is_one_level(workspace: Path, ctx: Any) -> None:
    _touch(workspace / "top.py")
    _touch(workspace / "pkg" / "inner.py")
    assert await _glob(ctx, "*.py") == ["top.py"]
    assert await _glob(ctx, "pkg/*.py") == ["pkg/inner.py"]
    assert await _glob(ctx, "./pkg/*.py") == ["pkg/inner.py"]
    assert await _glob(ctx, "pkg/inner.py") == ["pkg/inner.py"]


@pytest.mark.asyncio
async def test_glob_braces_and_dotfiles(workspace: Path, ctx: Any) -> None:
    _touch(workspace / "a.ts", mtime=2)
    _touch(workspace / "b.tsx", mtime=1)
    _touch(workspace / ".github" / "workflows" / "ci.yml")
    assert await _glob(ctx, "*.{ts,tsx}") == ["a.ts", "b.tsx"]
    assert await _glob(ctx, "**/*.yml") == [".github/workflows/ci.yml"]


@pytest.mark.asyncio
async def test_glob_skips_heavy_dirs(workspace: Path, ctx: Any) -> None:
    for d in (".git", "node_modules", ".venv", "__pycache__", "src/__pycache__"):
        _touch(workspace / d / "x.py")
    _touch(workspace / "src" / "x.py")
    assert await _glob(ctx, "**/*.py") == ["src/x.py"]
    # Naming the directory explicitly still works.
    assert await _glob(ctx, "node_modules/*.py") == ["node_modules/x.py"]


@pytest.mark.asyncio
async def test_glob_caps_results(
    workspace: Path, ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "GLOB_MAX_RESULTS", 5)
    for i in range(8):
        _touch(workspace / f"f{i}.txt")
    lines = await _glob(ctx, "*.txt")
    assert len(lines) == 6
    assert "5 of 8 matches shown" in lines[-1]


@pytest.mark.asyncio
async def test_glob_no_match_hint(workspace: Path, ctx: Any) -> None:
    _touch(workspace / "pkg" / "inner.py")
    [line] = await _glob(ctx, "*.py")
    assert line.startswith("no files match *.py") and "**/*.py" in line
    [line] = await _glob(ctx, "pkg")
    assert 'pkg is a directory, list it with "pkg/*"' in line
    # The workspace's own folder name in front of a pattern (it is `ws` here).
    [line] = await _glob(ctx, "ws/*")
    assert (
        line
        == 'no files match ws/*; paths are relative to the workspace, which is ws/ itself: try "*"'
    )


@pytest.mark.asyncio
async def test_glob_never_follows_symlinks_out(workspace: Path, outside: Path, ctx: Any) -> None:
    (outside / "deep").mkdir()
    (outside / "deep" / "leak.txt").write_text("x")
    (workspace / "out_file.txt").symlink_to(outside / "secret.txt")
    (workspace / "out_dir").symlink_to(outside)
    (workspace / "dangling.txt").symlink_to(outside / "missing.txt")
    _touch(workspace / "mine.txt")
    (workspace / "alias.txt").symlink_to("mine.txt")
    assert sorted(await _glob(ctx, "**/*.txt")) == ["alias.txt", "mine.txt"]
    assert sorted(await _glob(ctx, "**/*")) == ["alias.txt", "mine.txt"]
    with pytest.raises(SandboxError):
        await _glob(ctx, "out_dir/*.txt")


@pytest.mark.asyncio
async def test_glob_escapes(workspace: Path, outside: Path, ctx: Any) -> None:
    _touch(workspace / "a.txt")
    for pattern in ("../*", "a/../../*", str(outside / "*")):
        with pytest.raises(SandboxError, match="escapes the workspace"):
            await _glob(ctx, pattern)
    assert await _glob(ctx, str(workspace / "*.txt")) == ["a.txt"]
    with pytest.raises(ToolFailure, match="empty"):
        await _glob(ctx, " ")


# ----------------------------------------------------------------------------- grep


@pytest.mark.asyncio
async def test_grep_format_and_include(workspace: Path, ctx: Any) -> None:
    _touch(workspace / "src" / "a.py", "import os\ndef main():\n    return os.getcwd()\n")
    _touch(workspace / "src" / "b.txt", "os is here too\n")
    out = await _grep(ctx, r"\bos\b", include="*.py")
    assert out.splitlines() == ["src/a.py:1: import os", "src/a.py:3:     return os.getcwd()"]
    both = await _grep(ctx, r"\bos\b")
    assert "src/b.txt:1: os is here too" in both
    assert await _grep(ctx, "^def", path="src") == "src/a.py:2: def main():"
    assert await _grep(ctx, "os", path="src/b.txt") == "src/b.txt:1: os is here too"
    assert await _grep(ctx, "(?i)IMPORT", include="*.{py,ts}") == "src/a.py:1: import os"


@pytest.mark.asyncio
async def test_grep_anchors_and_no_match(workspace: Path, ctx: Any) -> None:
    _touch(workspace / "a.txt", "first\nsecond end\n")
    assert await _grep(ctx, "end$") == "a.txt:2: second end"
    assert await _grep(ctx, r"\Asecond") == "a.txt:2: second end"
    assert (await _grep(ctx, "absent")).startswith("no matches for absent in .")


@pytest.mark.asyncio
async def test_grep_invalid_regex(workspace: Path, ctx: Any) -> None:
    with pytest.raises(ToolFailure, match="invalid regular expression"):
        await _grep(ctx, "foo(")


@pytest.mark.asyncio
async def test_grep_skips_binary_large_and_heavy_dirs(
    workspace: Path, ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "blob.bin").write_bytes(b"needle\x00\x01")
    _touch(workspace / "node_modules" / "x.js", "needle\n")
    _touch(workspace / ".git" / "config", "needle\n")
    _touch(workspace / "big.txt", "needle\n" + "x" * 200)
    _touch(workspace / "ok.txt", "needle\n")
    monkeypatch.setattr(search, "GREP_MAX_FILE_BYTES", 100)
    out = await _grep(ctx, "needle")
    assert out.splitlines() == ["ok.txt:1: needle", "[1 files over 2 MB were not searched]"]


@pytest.mark.asyncio
async def test_grep_caps_matches_and_long_lines(
    workspace: Path, ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "GREP_MAX_MATCHES", 3)
    _touch(workspace / "a.txt", "hit\n" * 10 + "hit" + "y" * 1000 + "\n")
    lines = (await _grep(ctx, "hit")).splitlines()
    assert len(lines) == 4
    assert "stopped after 3 matches" in lines[-1]
    monkeypatch.setattr(search, "GREP_MAX_MATCHES", 100)
    long_line = (await _grep(ctx, "hity")).splitlines()[0]
    assert long_line.endswith("[...]") and len(long_line) < 330


@pytest.mark.asyncio
async def test_grep_never_reads_through_symlinks_out(
    workspace: Path, outside: Path, ctx: Any
) -> None:
    (workspace / "out_file.txt").symlink_to(outside / "secret.txt")
    (workspace / "out_dir").symlink_to(outside)
    _touch(workspace / "mine.txt", "SECRET of mine\n")
    (workspace / "alias.txt").symlink_to("mine.txt")
    out = await _grep(ctx, "SECRET")
    assert "TOP SECRET" not in out
    assert out.splitlines() == ["alias.txt:1: SECRET of mine", "mine.txt:1: SECRET of mine"]
    for path in ("out_file.txt", "out_dir", "..", str(outside)):
        with pytest.raises(SandboxError):
            await _grep(ctx, "SECRET", path=path)


@pytest.mark.asyncio
async def test_grep_path_must_exist(ctx: Any) -> None:
    with pytest.raises(SandboxError, match="no such file"):
        await _grep(ctx, "x", path="missing")


# ----------------------------------------------------------------------------- ripgrep runs


def _rg_children() -> list[int]:
    """Live rg processes whose parent is this test process."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        if fields.get("Name", "").strip() == "rg" and fields.get("PPid", "").strip() == str(
            os.getpid()
        ):
            found.append(int(entry))
    return found


@pytest.mark.asyncio
async def test_rg_is_killed_on_cancel_and_on_timeout(workspace: Path) -> None:
    # rg blocks opening a FIFO no one writes: a search that never ends on its own.
    os.mkfifo(workspace / "stuck")
    args = ["--no-config", "--json", "--regexp", "x", "--", "stuck"]
    task = asyncio.ensure_future(run_rg(args, str(workspace), lambda _: True))
    for _ in range(100):
        if _rg_children():
            break
        await asyncio.sleep(0.02)
    assert _rg_children()
    task.cancel()
    began = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - began < 2
    assert _rg_children() == []
    run = await run_rg(args, str(workspace), lambda _: True, time_limit=0.3)
    assert run.timed_out
    assert _rg_children() == []


def test_rg_binary_comes_from_this_environment() -> None:
    path = rg_binary()
    assert os.access(path, os.X_OK)
    assert Path(path).resolve().is_relative_to(Path(sys.prefix).resolve())


@pytest.mark.asyncio
async def test_gitignore_is_respected_unless_the_path_names_it(workspace: Path, ctx: Any) -> None:
    (workspace / ".git").mkdir()
    _touch(workspace / ".gitignore", "build/\n*.log\n")
    _touch(workspace / "build" / "out.py", "needle\n")
    _touch(workspace / "run.log", "needle\n")
    _touch(workspace / "src.py", "needle\n")
    assert await _glob(ctx, "**/*.py") == ["src.py"]
    assert await _grep(ctx, "needle") == "src.py:1: needle"
    assert await _glob(ctx, "build/*.py") == ["build/out.py"]
    assert await _grep(ctx, "needle", path="build") == "build/out.py:1: needle"
