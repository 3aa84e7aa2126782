"""read, write and edit: output format, limits, permission, checkpoints, atomicity."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from baton.tools.base import Fact, ToolFailure
from baton.tools.files import (
    EditInput,
    EditTool,
    ReadInput,
    ReadTool,
    WriteInput,
    WriteTool,
)
from baton.tools.sandbox import SandboxError

# ----------------------------------------------------------------------------- read


async def _read(ctx: Any, path: str, **kw: Any) -> Any:
    return await ReadTool().run(ReadInput(path=path, **kw), ctx)


@pytest.mark.asyncio
async def test_read_numbers_lines_like_cat_n(workspace: Path, ctx: Any) -> None:
    (workspace / "f.txt").write_text("alpha\nbeta\n")
    result = await _read(ctx, "f.txt")
    assert result.output == "1\talpha\n2\tbeta"
    assert not result.is_error
    assert result.facts == [Fact(kind="read", path="f.txt")]


@pytest.mark.asyncio
async def test_read_offset_and_limit(workspace: Path, ctx: Any) -> None:
    (workspace / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await _read(ctx, "f.txt", offset=3, limit=2)
    lines = result.output.splitlines()
    assert lines[:2] == ["3\tline 3", "4\tline 4"]
    assert "continue with offset=5" in lines[2]
    tail = await _read(ctx, "f.txt", offset=9)
    assert tail.output == "9\tline 9\n10\tline 10"


@pytest.mark.asyncio
async def test_read_default_limit_is_the_setting(workspace: Path, make_ctx: Any) -> None:
    (workspace / "f.txt").write_text("x\n" * 50)
    ctx = make_ctx(settings={"tools": {"readMaxLines": 10}})
    result = await _read(ctx, "f.txt")
    assert result.output.count("\tx") == 10
    assert "continue with offset=11" in result.output


@pytest.mark.asyncio
async def test_read_offset_past_end(workspace: Path, ctx: Any) -> None:
    (workspace / "f.txt").write_text("a\nb\n")
    with pytest.raises(ToolFailure, match=r"past the end of f.txt, which has 2 lines"):
        await _read(ctx, "f.txt", offset=5)


@pytest.mark.asyncio
async def test_read_empty_file(workspace: Path, ctx: Any) -> None:
    (workspace / "e.txt").write_text("")
    result = await _read(ctx, "e.txt")
    assert "is empty" in result.output


@pytest.mark.asyncio
async def test_read_refuses_binary(workspace: Path, ctx: Any) -> None:
    (workspace / "b.bin").write_bytes(b"\x89PNG\x00\x00\x01binary")
    with pytest.raises(ToolFailure, match="binary file"):
        await _read(ctx, "b.bin")


@pytest.mark.asyncio
async def test_read_refuses_directory_with_glob_hint(workspace: Path, ctx: Any) -> None:
    (workspace / "src").mkdir()
    with pytest.raises(ToolFailure, match="directory; use glob"):
        await _read(ctx, "src")


@pytest.mark.asyncio
async def test_read_missing_file(ctx: Any) -> None:
    with pytest.raises(ToolFailure, match="no such file"):
        await _read(ctx, "nope.txt")


@pytest.mark.asyncio
async def test_read_caps_long_lines_and_total_output(workspace: Path, make_ctx: Any) -> None:
    (workspace / "wide.txt").write_text("y" * 5000 + "\nshort\n")
    ctx = make_ctx()
    result = await _read(ctx, "wide.txt")
    assert "line cut: 5000 characters" in result.output
    assert len(result.output) < 2200

    (workspace / "many.txt").write_text(("z" * 100 + "\n") * 100)
    small = make_ctx(settings={"tools": {"maxOutputChars": 1000}})
    result = await _read(small, "many.txt")
    assert len(result.output) <= 1000
    assert "output limit reached" in result.output
    assert "continue with offset=" in result.output


@pytest.mark.asyncio
async def test_read_through_symlink_out_is_refused(
    workspace: Path, outside: Path, ctx: Any
) -> None:
    (workspace / "link").symlink_to(outside / "secret.txt")
    (workspace / "dir").symlink_to(outside)
    for path in ("link", "dir/secret.txt", str(outside / "secret.txt"), "../outside/secret.txt"):
        with pytest.raises(SandboxError):
            await _read(ctx, path)


@pytest.mark.asyncio
async def test_read_crlf_shows_clean_lines(workspace: Path, ctx: Any) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await _read(ctx, "w.txt")
    assert result.output == "1\tone\n2\ttwo"


# ----------------------------------------------------------------------------- write


def _leftovers(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if name.startswith(".baton-")]


@pytest.mark.asyncio
async def test_write_creates_file_and_parents(workspace: Path, ctx: Any, gate: Any) -> None:
    result = await WriteTool().run(WriteInput(path="a/b/new.txt", content="hello\n"), ctx)
    assert not result.is_error, result.output
    assert (workspace / "a" / "b" / "new.txt").read_text() == "hello\n"
    assert result.facts == [Fact(kind="modified", path="a/b/new.txt", action="created")]
    assert "created a/b/new.txt" in result.output
    [(tool, call_id, data, diff)] = gate.calls
    assert (tool, call_id) == ("write", "call-1")
    assert data == {"path": "a/b/new.txt", "content": "hello\n"}
    assert diff is not None
    assert "--- /dev/null" in diff and "+++ b/a/b/new.txt" in diff and "+hello" in diff
    assert _leftovers(workspace / "a" / "b") == []


@pytest.mark.asyncio
async def test_write_diff_shows_old_to_new(workspace: Path, ctx: Any, gate: Any) -> None:
    (workspace / "f.txt").write_text("old line\nsame\n")
    result = await WriteTool().run(WriteInput(path="f.txt", content="new line\nsame\n"), ctx)
    assert result.facts == [Fact(kind="modified", path="f.txt", action="modified")]
    diff = gate.calls[0][3]
    assert "--- a/f.txt" in diff and "+++ b/f.txt" in diff
    assert "-old line" in diff and "+new line" in diff and " same" in diff


@pytest.mark.asyncio
async def test_write_denied_changes_nothing(workspace: Path, ctx: Any, gate: Any) -> None:
    gate.allow = False
    (workspace / "f.txt").write_text("keep\n")
    calls: list[list[Path]] = []

    async def before(paths: list[Path]) -> None:
        calls.append(paths)

    ctx.before_change = before
    result = await WriteTool().run(WriteInput(path="f.txt", content="changed\n"), ctx)
    assert result.is_error
    assert result.output.startswith("permission denied:")
    assert (workspace / "f.txt").read_text() == "keep\n"
    new = await WriteTool().run(WriteInput(path="sub/new.txt", content="x"), ctx)
    assert new.is_error
    assert not (workspace / "sub").exists()
    assert calls == []
    assert result.facts == []


@pytest.mark.asyncio
async def test_write_calls_before_change_before_writing(workspace: Path, make_ctx: Any) -> None:
    (workspace / "f.txt").write_text("v1\n")
    seen: list[tuple[list[Path], str]] = []

    async def before(paths: list[Path]) -> None:
        seen.append((paths, (workspace / "f.txt").read_text()))

    ctx = make_ctx(before_change=before)
    await WriteTool().run(WriteInput(path="f.txt", content="v2\n"), ctx)
    assert seen == [([workspace / "f.txt"], "v1\n")]
    assert (workspace / "f.txt").read_text() == "v2\n"


@pytest.mark.asyncio
async def test_write_is_refused_in_plan_mode(workspace: Path, make_ctx: Any, gate: Any) -> None:
    ctx = make_ctx(mode="plan")
    with pytest.raises(ToolFailure, match=r"not available in plan mode.*plan_edit"):
        await WriteTool().run(WriteInput(path="f.txt", content="x"), ctx)
    assert gate.calls == []
    assert not (workspace / "f.txt").exists()


@pytest.mark.asyncio
async def test_write_outside_is_refused_before_asking(
    workspace: Path, outside: Path, ctx: Any, gate: Any
) -> None:
    (workspace / "d").symlink_to(outside)
    (workspace / "dangling").symlink_to(outside / "planted.txt")
    for path in ("../x.txt", "d/new.txt", "dangling", str(outside / "y.txt")):
        with pytest.raises(SandboxError):
            await WriteTool().run(WriteInput(path=path, content="pwned"), ctx)
    assert gate.calls == []
    assert sorted(os.listdir(outside)) == ["secret.txt"]


@pytest.mark.asyncio
async def test_write_through_inside_symlink_keeps_the_link(workspace: Path, ctx: Any) -> None:
    (workspace / "real.txt").write_text("a\n")
    (workspace / "alias.txt").symlink_to("real.txt")
    result = await WriteTool().run(WriteInput(path="alias.txt", content="b\n"), ctx)
    assert result.facts[0].path == "real.txt"
    assert (workspace / "alias.txt").is_symlink()
    assert (workspace / "real.txt").read_text() == "b\n"


@pytest.mark.asyncio
async def test_write_keeps_permission_bits(workspace: Path, ctx: Any) -> None:
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    await WriteTool().run(WriteInput(path="run.sh", content="#!/bin/sh\necho hi\n"), ctx)
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


@pytest.mark.asyncio
async def test_write_same_content_is_a_no_op(workspace: Path, ctx: Any, gate: Any) -> None:
    (workspace / "f.txt").write_text("same")
    result = await WriteTool().run(WriteInput(path="f.txt", content="same"), ctx)
    assert "nothing was written" in result.output
    assert gate.calls == []


@pytest.mark.asyncio
async def test_failed_write_leaves_old_file_and_no_temp(
    workspace: Path, ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "f.txt").write_text("old\n")

    def broken_replace(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(ToolFailure, match="No space left"):
        await WriteTool().run(WriteInput(path="f.txt", content="new\n"), ctx)
    assert (workspace / "f.txt").read_text() == "old\n"
    assert _leftovers(workspace) == []


@pytest.mark.asyncio
async def test_change_during_permission_prompt_is_not_clobbered(
    workspace: Path, ctx: Any, gate: Any
) -> None:
    target = workspace / "f.txt"
    target.write_text("v1\n")
    gate.on_ask = lambda: target.write_text("edited by the user\n")
    with pytest.raises(ToolFailure, match="changed while waiting for permission"):
        await WriteTool().run(WriteInput(path="f.txt", content="v2\n"), ctx)
    assert target.read_text() == "edited by the user\n"


# ----------------------------------------------------------------------------- edit


async def _edit(ctx: Any, path: str, old: str, new: str, replace_all: bool = False) -> Any:
    args = EditInput(path=path, old_string=old, new_string=new, replace_all=replace_all)
    return await EditTool().run(args, ctx)


@pytest.mark.asyncio
async def test_edit_replaces_once_with_diff(workspace: Path, ctx: Any, gate: Any) -> None:
    (workspace / "m.py").write_text("a = 1\nb = 2\n")
    result = await _edit(ctx, "m.py", "b = 2", "b = 3")
    assert not result.is_error, result.output
    assert (workspace / "m.py").read_text() == "a = 1\nb = 3\n"
    assert "first at line 2" in result.output
    assert result.facts == [Fact(kind="modified", path="m.py", action="modified")]
    [(tool, _, data, diff)] = gate.calls
    assert tool == "edit"
    assert data["old_string"] == "b = 2"
    assert "-b = 2" in diff and "+b = 3" in diff
    assert _leftovers(workspace) == []


@pytest.mark.asyncio
async def test_edit_missing_old_string(workspace: Path, ctx: Any) -> None:
    (workspace / "m.py").write_text("a = 1\n")
    with pytest.raises(ToolFailure, match=r"old_string not found in m.py; read the file again"):
        await _edit(ctx, "m.py", "zzz", "y")


@pytest.mark.asyncio
async def test_edit_ambiguous_and_replace_all(workspace: Path, ctx: Any) -> None:
    (workspace / "m.py").write_text("x\nx\nx\n")
    with pytest.raises(ToolFailure, match=r"found 3 times.*replace_all"):
        await _edit(ctx, "m.py", "x", "y")
    assert (workspace / "m.py").read_text() == "x\nx\nx\n"
    result = await _edit(ctx, "m.py", "x", "y", replace_all=True)
    assert "3 occurrences" in result.output
    assert (workspace / "m.py").read_text() == "y\ny\ny\n"


@pytest.mark.asyncio
async def test_edit_same_strings_and_empty_old(workspace: Path, ctx: Any) -> None:
    (workspace / "m.py").write_text("x\n")
    with pytest.raises(ToolFailure, match="identical"):
        await _edit(ctx, "m.py", "x", "x")
    with pytest.raises(ToolFailure, match="empty"):
        await _edit(ctx, "m.py", "", "y")


@pytest.mark.asyncio
async def test_edit_missing_file_and_binary(workspace: Path, ctx: Any) -> None:
    with pytest.raises(ToolFailure, match="no such file"):
        await _edit(ctx, "nope.py", "a", "b")
    (workspace / "b.bin").write_bytes(b"a\x00b")
    with pytest.raises(ToolFailure, match="binary"):
        await _edit(ctx, "b.bin", "a", "b")


@pytest.mark.asyncio
async def test_edit_denied_changes_nothing(workspace: Path, ctx: Any, gate: Any) -> None:
    gate.allow = False
    (workspace / "m.py").write_text("a\n")
    result = await _edit(ctx, "m.py", "a", "b")
    assert result.is_error and result.output.startswith("permission denied:")
    assert (workspace / "m.py").read_text() == "a\n"


@pytest.mark.asyncio
async def test_edit_refused_in_plan_mode(workspace: Path, make_ctx: Any) -> None:
    (workspace / "m.py").write_text("a\n")
    with pytest.raises(ToolFailure, match="edit is not available in plan mode"):
        await _edit(make_ctx(mode="plan"), "m.py", "a", "b")


@pytest.mark.asyncio
async def test_edit_crlf_file_with_lf_old_string(workspace: Path, ctx: Any) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await _edit(ctx, "w.txt", "one\ntwo", "uno\ndos")
    assert (workspace / "w.txt").read_bytes() == b"uno\r\ndos\r\nthree\r\n"


# ----------------------------------------------------------------------------- elided writes

STATS = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(10))


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "elision", ["...", "# ... rest of the code ...", "# existing code", "    # rest unchanged"]
)
async def test_write_that_would_cut_a_file_to_a_sketch_is_refused(
    workspace: Path, ctx: Any, gate: Any, elision: str
) -> None:
    (workspace / "stats.py").write_text(STATS)
    sketch = f"def f0(x):\n    return 0.0\n\n{elision}\n"
    with pytest.raises(ToolFailure) as refused:
        await WriteTool().run(WriteInput(path="stats.py", content=sketch), ctx)
    message = str(refused.value)
    assert f"line 4 of the new content is a placeholder ({elision.strip()!r})" in message
    assert "would shrink from 40 to 4 lines" in message and "use edit" in message
    assert (workspace / "stats.py").read_text() == STATS
    assert gate.calls == []  # the person is not even asked


@pytest.mark.asyncio
async def test_ellipses_the_file_already_had_or_a_growing_file_are_written(
    workspace: Path, ctx: Any, gate: Any
) -> None:
    stub = "class P(Protocol):\n    def f(self) -> int:\n        ...\n\n    def g(self) -> str:\n        ...\n"
    (workspace / "p.pyi").write_text(stub)
    shorter = "class P(Protocol):\n    def f(self) -> int:\n        ...\n"
    result = await WriteTool().run(WriteInput(path="p.pyi", content=shorter), ctx)
    assert not result.is_error and (workspace / "p.pyi").read_text() == shorter

    (workspace / "notes.md").write_text("one\n")
    longer = "one\n...\ntwo\n"
    result = await WriteTool().run(WriteInput(path="notes.md", content=longer), ctx)
    assert not result.is_error and (workspace / "notes.md").read_text() == longer

    new = await WriteTool().run(WriteInput(path="new.py", content="...\n"), ctx)
    assert not new.is_error and (workspace / "new.py").read_text() == "...\n"


@pytest.mark.asyncio
async def test_a_markdown_fence_around_a_whole_file_is_left_out(
    workspace: Path, ctx: Any, gate: Any
) -> None:
    fenced = "```python\ndef mean(v):\n    return sum(v) / len(v)\n```\n"
    result = await WriteTool().run(WriteInput(path="stats.py", content=fenced), ctx)
    assert (workspace / "stats.py").read_text() == "def mean(v):\n    return sum(v) / len(v)\n"
    assert "the markdown fence around the content was left out" in result.output
    assert "```" not in gate.calls[0][3]  # the diff the person approves is what is written

    # Markdown keeps its fences; a file with several blocks is not one wrapped block.
    await WriteTool().run(WriteInput(path="README.md", content=fenced), ctx)
    assert (workspace / "README.md").read_text() == fenced
    two = "```\na\n```\ntext\n```\nb\n```\n"
    await WriteTool().run(WriteInput(path="x.cfg", content=two), ctx)
    assert (workspace / "x.cfg").read_text() == two


@pytest.mark.asyncio
async def test_a_path_that_repeats_the_workspace_folder_gets_a_hint(
    workspace: Path, ctx: Any
) -> None:
    (workspace / "stats.py").write_text("x = 1\n")
    with pytest.raises(SandboxError) as missing:
        await _read(ctx, f"{workspace.name}/stats.py")
    assert str(missing.value) == (
        f"no such file or directory: {workspace.name}/stats.py; paths are relative to the"
        f" workspace, which is {workspace.name}/ itself: did you mean stats.py?"
    )
    with pytest.raises(SandboxError) as other:
        await _read(ctx, "elsewhere/stats.py")
    assert str(other.value).endswith("use glob to find files")


# ----------------------------------------------------------------------------- read roots


@pytest.mark.asyncio
async def test_read_roots_are_read_by_absolute_path_and_never_written(
    workspace: Path, outside: Path, root: Path, ctx: Any
) -> None:
    import dataclasses

    shared = root / "shared"
    shared.mkdir()
    (shared / "api.md").write_text("notes\n")
    # A link inside the root that leads out of it stays refused.
    (shared / "leak.txt").symlink_to(outside / "secret.txt")
    with_roots = dataclasses.replace(ctx, read_roots=(shared,))

    result = await _read(with_roots, str(shared / "api.md"))
    assert result.output == "1\tnotes"
    assert result.facts == [Fact(kind="read", path=str(shared / "api.md"))]
    with pytest.raises(SandboxError, match="symbolic link"):
        await _read(with_roots, str(shared / "leak.txt"))
    with pytest.raises(SandboxError, match="escapes the workspace"):
        await _read(with_roots, str(outside / "secret.txt"))
    # Without the root, the same read is an escape.
    with pytest.raises(SandboxError, match="escapes the workspace"):
        await _read(ctx, str(shared / "api.md"))
    for change in (
        WriteTool().run(WriteInput(path=str(shared / "api.md"), content="x\n"), with_roots),
        EditTool().run(
            EditInput(path=str(shared / "api.md"), old_string="notes", new_string="x"),
            with_roots,
        ),
    ):
        with pytest.raises(ToolFailure, match="read-only"):
            await change
    assert (shared / "api.md").read_text() == "notes\n"


@pytest.mark.asyncio
async def test_write_roots_take_changes_confined_and_unchecked_by_undo(
    workspace: Path, outside: Path, root: Path, ctx: Any, gate: Any
) -> None:
    import dataclasses

    shared = root / "shared"
    shared.mkdir()
    (shared / "leak").symlink_to(outside)
    checkpointed: list[list[Path]] = []

    async def record(paths: list[Path]) -> None:
        checkpointed.append(paths)

    writable = dataclasses.replace(
        ctx, read_roots=(shared,), write_roots=(shared,), before_change=record
    )
    result = await WriteTool().run(
        WriteInput(path=str(shared / "sub" / "new.txt"), content="hi\n"), writable
    )
    assert (shared / "sub" / "new.txt").read_text() == "hi\n"
    assert "not checkpointed" in result.output
    assert checkpointed == []  # the workspace's checkpoints hold workspace files only
    assert gate.calls and gate.calls[-1][0] == "write"
    with pytest.raises(SandboxError, match="symbolic link"):
        await WriteTool().run(
            WriteInput(path=str(shared / "leak" / "x.txt"), content="x"), writable
        )
    assert not (outside / "x.txt").exists()
