"""The file tools: read, write and edit, confined to the workspace.

write and edit show the person a unified diff through the permission gate
before changing anything, call the session's `before_change` hook (per-turn
checkpoints), and write atomically. Each tool returns a `Fact` so that the
compaction ledger knows exactly which files were read and modified.
"""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from baton.tools.base import Allowed, Fact, ToolContext, ToolFailure, ToolInput, ToolResult
from baton.tools.diagnostics import new_problems, problems_deadline, problems_of
from baton.tools.fileio import (
    SNIFF_BYTES,
    atomic_write,
    looks_binary,
    open_regular,
    os_failure,
    read_bytes,
    unified_diff,
)
from baton.tools.policy import permission_denied, refuse_in_plan_mode
from baton.tools.replace import replace_exact
from baton.tools.sandbox import display_path, read_root, resolve_in_workspace
from baton.tools.write_guards import refuse_sketch, strip_wrapping_fence

# Characters of one line that read shows; the rest is replaced by a note.
MAX_LINE_CHARS = 2000
# Characters of one line read looks through (to find where it ends) before it gives
# up on the rest of the file: a file that is one huge line costs this much at most.
MAX_LINE_SCAN_CHARS = 64 * 1024 * 1024
# Characters taken from the file per step while looking for the end of a long line.
_SCAN_STEP = 1 << 16
# Files larger than this are not loaded whole by write and edit (or read from the
# editor's buffer): they would hold memory many times their size (text, diff, copy).
MAX_WHOLE_FILE_BYTES = 16 * 1024 * 1024
# How much of the diff between the model's proposal and the person's edited version the
# model is shown (the rest is cut, and it is told so).
EDITED_DIFF_MAX_LINES = 80
EDITED_DIFF_MAX_CHARS = 4000
# Room kept under settings.tools.max_output_chars for read's closing note.
_NOTE_RESERVE = 300


# Fields carry a description only where the tool's own description and the system
# prompt (paths are relative to the workspace) do not already say it: every word here is
# sent in every request.
class ReadInput(ToolInput):
    path: str
    offset: int | None = Field(None, ge=1, description="1-based.")
    limit: int | None = Field(None, ge=1)


class WriteInput(ToolInput):
    path: str
    content: str


class EditInput(ToolInput):
    path: str
    old_string: str
    new_string: str
    replace_all: bool = False


class ReadTool:
    name: ClassVar[str] = "read"
    description: ClassVar[str] = (
        "Read a text file as `N<tab>line` lines; up to 2000 (offset, limit)."
    )
    input_model: ClassVar[type[ToolInput]] = ReadInput
    read_only: ClassVar[bool] = True

    async def run(self, args: ReadInput, ctx: ToolContext) -> ToolResult:
        root = read_root(ctx.workspace, ctx.read_roots, args.path)
        if root != ctx.workspace:
            # An additional directory: read from disk, confined to that directory.
            return await asyncio.to_thread(self._read, args, ctx, root)
        real = resolve_in_workspace(ctx.workspace, args.path)
        if ctx.files is not None and _size(real) <= MAX_WHOLE_FILE_BYTES:
            data = await _current(ctx, real)
            if data is not None and not looks_binary(data):
                return self._numbered(args, ctx, data.decode("utf-8", errors="replace"))
        return await asyncio.to_thread(self._read, args, ctx)

    def _numbered(self, args: ReadInput, ctx: ToolContext, content: str) -> ToolResult:
        """`read` of text the editor gave (its buffer); the file passed the disk checks."""
        shown = display_path(ctx.workspace, resolve_in_workspace(ctx.workspace, args.path))
        body, note = _numbered_lines(
            io.StringIO(content, newline=None),
            shown=shown,
            offset=args.offset or 1,
            limit=args.limit or ctx.settings.tools.read_max_lines,
            budget=ctx.settings.tools.max_output_chars - _NOTE_RESERVE,
        )
        output = body + (f"\n{note}" if body and note else note)
        return ToolResult(output=output, facts=[Fact(kind="read", path=shown)])

    def _read(self, args: ReadInput, ctx: ToolContext, root: Path | None = None) -> ToolResult:
        ws = root or ctx.workspace
        real = resolve_in_workspace(ws, args.path, must_exist=True)
        # Outside the workspace the path is shown whole.
        shown = display_path(ctx.workspace, real)
        try:
            fd = open_regular(ws, real)
        except FileNotFoundError as exc:
            raise ToolFailure(f"no such file: {args.path}; use glob to find files") from exc
        except OSError as exc:
            raise os_failure(ws, real, exc, "read") from exc

        with open(fd, "rb", closefd=True) as raw:
            head = os.pread(fd, SNIFF_BYTES, 0)
            if looks_binary(head):
                size = os.fstat(fd).st_size
                raise ToolFailure(
                    f"{shown} is a binary file ({size} bytes); read shows only text files"
                )
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None)
            body, note = _numbered_lines(
                text,
                shown=shown,
                offset=args.offset or 1,
                limit=args.limit or ctx.settings.tools.read_max_lines,
                budget=ctx.settings.tools.max_output_chars - _NOTE_RESERVE,
            )
            text.detach()
        output = body + (f"\n{note}" if body and note else note)
        return ToolResult(output=output, facts=[Fact(kind="read", path=shown)])


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _bounded_lines(text: io.TextIOBase) -> Iterator[tuple[str, int, bool]]:
    """Each line of `text` as (its first characters, its length, whether its end was found).

    At most `MAX_LINE_CHARS` + 1 characters of a line are kept, however long it
    is; the rest is read in steps only to find where it ends, and not past
    `MAX_LINE_SCAN_CHARS` (the last line yielded then says its end was not found).
    """
    while head := text.readline(MAX_LINE_CHARS + 1):
        if head.endswith("\n"):
            yield head[:-1], len(head) - 1, True
            continue
        length = len(head)
        while more := text.readline(_SCAN_STEP):
            if more.endswith("\n"):
                length += len(more) - 1
                break
            length += len(more)
            if length > MAX_LINE_SCAN_CHARS:
                yield head, length, False
                return
        yield head, length, True


def _numbered_lines(
    text: io.TextIOBase, *, shown: str, offset: int, limit: int, budget: int
) -> tuple[str, str]:
    """Lines offset.. of `text` numbered (`N<tab>line`, no padding: a read costs little more than
    the text), and a note on what was left out.

    Memory stays within the output budget whatever the line lengths.
    """
    out: list[str] = []
    used = 0
    lineno = 0
    for line, length, ended in _bounded_lines(text):
        lineno += 1
        if not ended:
            endless = (
                f"[{shown}: line {lineno} goes on past {MAX_LINE_SCAN_CHARS} characters; "
                "the rest of the file was not read]"
            )
            if lineno < offset:
                raise ToolFailure(f"offset {offset} is past what read can reach: {endless}")
            if len(out) < limit:
                entry = f"{lineno}\t{line[:MAX_LINE_CHARS]} [... line cut]"
                out.append(entry)
            return "\n".join(out), endless
        if lineno < offset:
            continue
        if len(out) >= limit:
            return "\n".join(out), (
                f"[{shown}: lines {offset}-{lineno - 1} shown; more follow, "
                f"continue with offset={lineno}]"
            )
        if length > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" [... line cut: {length} characters]"
        entry = f"{lineno}\t{line}"
        if out and used + len(entry) + 1 > budget:
            return "\n".join(out), (
                f"[{shown}: output limit reached after line {lineno - 1}; "
                f"continue with offset={lineno}]"
            )
        out.append(entry)
        used += len(entry) + 1
    if lineno == 0:
        return "", f"[{shown} is empty]"
    if lineno < offset:
        raise ToolFailure(f"offset {offset} is past the end of {shown}, which has {lineno} lines")
    return "\n".join(out), ""


class WriteTool:
    name: ClassVar[str] = "write"
    description: ClassVar[str] = "Create or overwrite a file (and its folders)."
    input_model: ClassVar[type[ToolInput]] = WriteInput
    read_only: ClassVar[bool] = False

    async def run(self, args: WriteInput, ctx: ToolContext) -> ToolResult:
        refuse_in_plan_mode(self.name, ctx)
        ws = change_root(args.path, ctx)
        real = resolve_in_workspace(ws, args.path, for_write=True)
        shown = display_path(ctx.workspace, real)
        old = await _current(ctx, real, ws)
        content = strip_wrapping_fence(args.content, real.suffix)
        new = content.encode("utf-8")
        if old == new:
            return ToolResult(output=f"{shown} already has this content; nothing was written")
        if old is not None:
            refuse_sketch(shown, old.decode("utf-8", errors="replace"), content)
        diff = _diff_for(shown, old, content)
        unfenced = (
            "; the markdown fence around the content was left out"
            if content != args.content
            else ""
        )
        return await _apply_change(
            ctx,
            self.name,
            args,
            real,
            shown,
            old,
            new,
            diff,
            lambda created: (
                f"{'created' if created else 'wrote'} {shown} ({_line_count(new)} lines{unfenced})"
            ),
            root=ws,
        )


class EditTool:
    name: ClassVar[str] = "edit"
    description: ClassVar[str] = (
        "Replace old_string (exact; once unless replace_all) with new_string. Read the file first."
    )
    input_model: ClassVar[type[ToolInput]] = EditInput
    read_only: ClassVar[bool] = False

    async def run(self, args: EditInput, ctx: ToolContext) -> ToolResult:
        refuse_in_plan_mode(self.name, ctx)
        if args.old_string == "":
            raise ToolFailure("old_string is empty; to create or replace a whole file use write")
        if args.old_string == args.new_string:
            raise ToolFailure("old_string and new_string are identical; there is nothing to change")
        ws = change_root(args.path, ctx)
        real = resolve_in_workspace(ws, args.path, must_exist=True, for_write=True)
        shown = display_path(ctx.workspace, real)
        old = await _current(ctx, real, ws)
        if old is None:
            raise ToolFailure(f"no such file: {args.path}; use write to create it")
        if looks_binary(old):
            raise ToolFailure(f"{shown} is a binary file; edit changes only text files")
        try:
            text = old.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolFailure(
                f"{shown} is not valid UTF-8 text; edit changes only UTF-8 files"
            ) from exc
        new_text, count, line = replace_exact(
            text, args.old_string, args.new_string, args.replace_all, shown
        )
        diff = unified_diff(shown, text, new_text)
        new = new_text.encode("utf-8")
        times = "1 occurrence" if count == 1 else f"{count} occurrences"
        return await _apply_change(
            ctx,
            self.name,
            args,
            real,
            shown,
            old,
            new,
            diff,
            lambda _created: (
                f"edited {shown}: replaced {times} (first at line {line}); "
                f"the file now has {_line_count(new)} lines"
            ),
            root=ws,
        )


def change_root(path: str, ctx: ToolContext) -> Path:
    """The directory a write or edit of `path` is confined to: the workspace, or an
    additional directory the person let Baton change; one they did not is refused with
    why, not as an escape."""
    root = read_root(ctx.workspace, ctx.read_roots, path)
    if root != ctx.workspace and root not in ctx.write_roots:
        raise ToolFailure(
            f"{path} is in an additional directory the editor opened, which is read-only "
            "for Baton (the person can allow changes there with `baton trust`); change files "
            "inside the workspace"
        )
    return root


async def _current(ctx: ToolContext, real: Path, root: Path | None = None) -> bytes | None:
    """A file's content as the model should see it: the editor's buffer where the face
    offers one (a text file that exists on disk), the disk otherwise (None: no file).

    Files over `MAX_WHOLE_FILE_BYTES` are refused rather than loaded."""
    size = _size(real)
    if size > MAX_WHOLE_FILE_BYTES:
        raise ToolFailure(
            f"{display_path(ctx.workspace, real)} is too large to change with write or edit "
            f"({size} bytes; the limit is {MAX_WHOLE_FILE_BYTES}); use bash (sed, a script) "
            "for a file this size"
        )
    root = root or ctx.workspace
    data = await asyncio.to_thread(read_bytes, root, real, MAX_WHOLE_FILE_BYTES)
    if data is None or ctx.files is None or looks_binary(data) or root != ctx.workspace:
        return data
    text = await ctx.files.read_text(ctx.session_id, real)
    return data if text is None else text.encode("utf-8")


def _diff_for(shown: str, old: bytes | None, new_text: str) -> str:
    if old is not None and looks_binary(old):
        return (
            f"--- a/{shown}\n+++ b/{shown}\n"
            f"(binary file of {len(old)} bytes replaced by {len(new_text)} characters of text)\n"
        )
    old_text = None if old is None else old.decode("utf-8", errors="replace")
    return unified_diff(shown, old_text, new_text)


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


async def _apply_change(
    ctx: ToolContext,
    tool: str,
    args: ToolInput,
    real: Path,
    shown: str,
    old: bytes | None,
    new: bytes,
    diff: str,
    describe: Callable[[bool], str],
    root: Path | None = None,
) -> ToolResult:
    """Ask permission with the diff, re-check the file, checkpoint, then write atomically.

    The gate is asked with the tool's own name ("write" or "edit", as the client
    shows the call); both fall under settings.permissions.write.
    `describe(created)` words the result for the model. `root` is an additional
    directory the change is confined to (outside the workspace: not checkpointed, so
    the result says `/undo` leaves it; written on disk, not through the editor).
    """
    root = root or ctx.workspace
    inside = root == ctx.workspace
    allowed = await ctx.ask_permission(
        tool, ctx.tool_call_id, args.model_dump(exclude_none=True), diff
    )
    if not allowed:
        return permission_denied(f"writing {shown}")
    # The person may have edited the file while the prompt was open; the approved
    # diff would then no longer describe the change.
    if await _current(ctx, real, root) != old:
        raise ToolFailure(
            f"{shown} changed while waiting for permission; nothing was written. "
            "Read it again and redo the change."
        )
    edited = allowed.edited_content if isinstance(allowed, Allowed) else None
    proposed = new
    if edited is not None:
        new = edited.encode("utf-8")
        if len(new) > MAX_WHOLE_FILE_BYTES:
            raise ToolFailure(
                f"the person's edited version of {shown} is {len(new)} bytes, over the "
                f"{MAX_WHOLE_FILE_BYTES}-byte limit of write and edit; nothing was written"
            )
        if new == proposed:
            edited = None  # accepted as proposed: nothing to tell
        elif new == old:
            return ToolResult(
                output=(
                    f"the person undid every change you proposed to {shown} before accepting, "
                    "so nothing was written; the file is as it was. Do not make the same "
                    "change again; ask the person if it is unclear what they want."
                )
            )
    # The editor's problems before the change: those are not news after it.
    deadline = problems_deadline(ctx)
    before = await problems_of(ctx, real, deadline) if old is not None else []
    if inside and ctx.before_change is not None:
        await ctx.before_change([real])
    # An existing text file goes through the editor when it offers writes (its buffer
    # stays in step); a new file is created here, inside the workspace.
    through_editor = (
        inside
        and ctx.files is not None
        and old is not None
        and not looks_binary(old)
        and await ctx.files.write_text(ctx.session_id, real, new.decode("utf-8"))
    )
    created = False if through_editor else await asyncio.to_thread(atomic_write, root, real, new)
    if inside and ctx.after_change is not None:
        await ctx.after_change([real])
    output = (
        describe(created)
        if edited is None
        else edited_notice(shown, proposed.decode("utf-8", errors="replace"), edited, created)
    )
    if not inside:
        output += " (outside the workspace: not checkpointed, so /undo does not restore it)"
    if before is not None:
        output += await new_problems(ctx, real, before, deadline)
    return ToolResult(
        output=output,
        facts=[Fact(kind="modified", path=shown, action="created" if created else "modified")],
    )


def edited_notice(shown: str, proposed: str, written: str, created: bool) -> str:
    """What the model reads when the person changed its proposal before accepting it: that
    its own text did not land, and a compact diff from its proposal to what was written."""
    verb = "created" if created else "wrote"
    diff_lines = unified_diff(shown, proposed, written).splitlines(keepends=True)
    # The header names the two sides in words instead of a/ and b/.
    body = diff_lines[2:] if len(diff_lines) >= 2 else diff_lines
    shown_lines: list[str] = []
    used = 0
    for line in body:
        if len(shown_lines) >= EDITED_DIFF_MAX_LINES or used + len(line) > EDITED_DIFF_MAX_CHARS:
            if not shown_lines:  # one huge line: its start, marked
                shown_lines.append(line[: EDITED_DIFF_MAX_CHARS // 2] + " [... line cut]\n")
            break
        shown_lines.append(line)
        used += len(line)
    cut = len(body) - len(shown_lines)
    diff = "".join(shown_lines)
    if not diff.endswith("\n"):
        diff += "\n"
    if cut:
        diff += f"[... diff cut: {cut} more lines; read {shown} to see what it holds ...]\n"
    lines = _line_count(written.encode("utf-8"))
    return (
        f"{verb} {shown} ({lines} lines) with the person's version: they changed your "
        "proposal before accepting it, so the file does not hold exactly what you proposed. "
        f"The differences (--- your proposal, +++ what {shown} now holds):\n"
        f"--- proposed/{shown}\n+++ written/{shown}\n{diff}"
        "Take the file as it is now; do not re-apply what the person removed or changed."
    )
