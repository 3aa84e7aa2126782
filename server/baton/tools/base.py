"""The tool contract: typed input, a context that knows the workspace, a result with facts.

A tool declares its input as a pydantic model (its JSON Schema is what the
model is offered), whether it is read-only (allowed in plan mode), and returns
a `ToolResult`. `facts` are structured records of what the tool did (a file
read, a file modified, a command and its exit code); the compaction ledger is
built from them by code, never from the model's prose.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from baton.config import Settings
from baton.protocol import (
    EditorFileDiagnostics,
    QuestionRequestParams,
    QuestionResponse,
)
from baton.providers.base import RequiredCall
from baton.store.model import Fact as Fact  # what a tool reports, for the ledger


class ToolInput(BaseModel):
    """Base of tool input models: unknown fields are an error the model can read."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class ToolResult:
    output: str
    is_error: bool = False
    facts: list[Fact] = field(default_factory=list)
    # The turn ends after this tool (plan_exit).
    end_turn: bool = False


class ToolFailure(Exception):
    """A tool could not do what was asked; the message is shown to the model as the output."""


@dataclass(frozen=True)
class Allowed:
    """A yes from the permission gate that carries more than True: for `write`/`edit`,
    the file's text as the person edited the proposal before allowing it."""

    edited_content: str | None = None


class PermissionGate(Protocol):
    async def __call__(
        self, tool: str, tool_call_id: str, input: dict[str, Any], diff: str | None = None
    ) -> bool | Allowed:
        """Ask whether `tool` may run (per config and, if needed, the client). True (or an
        `Allowed`) = allowed; False = refused."""
        ...


class EditorFiles(Protocol):
    """Files as the editor holds them, unsaved changes included (a face whose client offers
    it, e.g. ACP's `fs/*`). The tools still confine paths and refuse binary files first."""

    async def read_text(self, session_id: str, path: Path) -> str | None:
        """The editor's text of `path`; None when the editor does not read files."""
        ...

    async def write_text(self, session_id: str, path: Path, content: str) -> bool:
        """Have the editor write `path`; False when it does not (Baton writes the file)."""
        ...


@dataclass
class TerminalRun:
    """How a command run in the editor's terminal ended."""

    output: str
    exit_code: int | None  # None: killed (by a signal, or after the timeout)
    signal: str | None = None
    timed_out: bool = False


class EditorTerminal(Protocol):
    """Commands run in the editor's terminal, where the person watches them (ACP `terminal/*`)."""

    async def run(
        self,
        session_id: str,
        tool_call_id: str,
        command: str,
        cwd: Path,
        *,
        timeout_s: float,
        output_bytes: int,
        hidden_env: list[str],
    ) -> TerminalRun | None:
        """Run `command` with bash in `cwd`; None when the editor has no terminal.
        `hidden_env` names variables the command must not see (set empty)."""
        ...


class PersonQuestions(Protocol):
    """Asks the person a question with options (the sidebar's card, a terminal prompt)."""

    async def ask(self, request: QuestionRequestParams) -> QuestionResponse | None:
        """The answer; None when it could not be asked or was not answered."""
        ...


class EditorDiagnostics(Protocol):
    """The editor's problems (its language servers'), for a client that offers them."""

    async def diagnostics(self, uris: list[str] | None) -> list[EditorFileDiagnostics] | None:
        """Problems per file URI (`uris`, or every file the editor knows); None when the
        editor did not answer."""
        ...


class PlanFileInfo(Protocol):
    """What a plan tool reports of the plan file (baton.plan.store.PlanRow)."""

    @property
    def path(self) -> str: ...

    @property
    def status(self) -> str: ...


class PlanVersionInfo(Protocol):
    """What a plan tool reports of a written version (baton.plan.store.PlanVersionRow)."""

    @property
    def version(self) -> int: ...


class PlanTools(Protocol):
    """What the plan tools call (baton.plan.service.PlanService); a Protocol, because the
    plan feature's modules import this one."""

    def write(
        self,
        session_id: str,
        content: str,
        tool_call_id: str | None = None,
        *,
        mode: Literal["build", "plan"] = "plan",
    ) -> tuple[PlanFileInfo, PlanVersionInfo]: ...

    def edit(
        self, session_id: str, old: str, new: str, tool_call_id: str | None = None
    ) -> tuple[PlanFileInfo, PlanVersionInfo]: ...

    def edit_result(self, session_id: str, version: int) -> str:
        """What `plan_edit` answers for the version it wrote: the changed lines, the
        version and the next open step."""
        ...

    def show(self, session_id: str) -> tuple[PlanFileInfo, int]: ...

    def submit(self, session_id: str) -> tuple[PlanFileInfo, int]: ...

    def finish(self, session_id: str) -> tuple[PlanFileInfo, int]: ...


class RecallReader(Protocol):
    """What the `recall` tool reads (baton.compaction.recall.RecallSource)."""

    def recall(
        self, session_id: str, *, call_id: str | None, query: str | None, offset: int = 0
    ) -> str: ...


@dataclass
class ToolServices:
    """The features behind some tools, the same for every call (`baton.features` makes them;
    a face whose editor offers files or a terminal adds those)."""

    plan: PlanTools | None = None
    recall: RecallReader | None = None
    # Reads and writes through the editor (its unsaved buffers); None: the disk only.
    files: EditorFiles | None = None
    # Runs bash in the editor's terminal; None: Baton's own shell.
    terminal: EditorTerminal | None = None
    # Asks the person a question (the `question` tool is offered only with it).
    questions: PersonQuestions | None = None
    # The editor's problems (the `diagnostics` tool, and the problems after an edit).
    diagnostics: EditorDiagnostics | None = None


@dataclass
class ToolContext:
    session_id: str
    tool_call_id: str
    workspace: Path  # resolved, absolute
    mode: Literal["build", "plan"]
    settings: Settings
    ask_permission: PermissionGate
    # Services the plan tools need (None where plans are unavailable).
    plan: PlanTools | None = None
    # What compaction hid, for the `recall` tool.
    recall: RecallReader | None = None
    # Sends a JSON-RPC notification to the client (plan_show).
    notify: Callable[[str, dict[str, Any]], None] | None = None
    # Called with the files a tool is about to change, before it changes them
    # (per-turn checkpoints).
    before_change: Callable[[list[Path]], Awaitable[None]] | None = None
    # Called with the same files once changed (the checkpoint records what Baton left,
    # so a later revert can tell an outside edit from Baton's own).
    after_change: Callable[[list[Path]], Awaitable[None]] | None = None
    # Reads and writes through the editor (its unsaved buffers); None: the disk only.
    files: EditorFiles | None = None
    # Runs bash in the editor's terminal; None: Baton's own shell.
    terminal: EditorTerminal | None = None
    # Shows a running tool's output so far to the person (live output); None: not shown.
    progress: Callable[[str], None] | None = None
    # The call this one was held to (`Turn.require_tools`), None when the model chose freely.
    required: RequiredCall | None = None
    # Directories outside the workspace `read` may read by absolute path (an editor's
    # additional workspace roots); read-only unless also in `write_roots`.
    read_roots: tuple[Path, ...] = ()
    # Those of `read_roots` the person let Baton change (write and edit; each change asks).
    write_roots: tuple[Path, ...] = ()
    # Asks the person a question; None: no one to ask.
    questions: PersonQuestions | None = None
    # The editor's problems; None: the client does not offer them.
    diagnostics: EditorDiagnostics | None = None
    # Frames outside text as one of Baton's blocks (`baton.agent.framing.block`: name, body,
    # attributes), so nothing in it can end the block or pass for Baton's; None: not given.
    frame: Callable[[str, str, dict[str, str]], str] | None = None
    # A `task` child's parent session and agent (its question is labelled with them).
    parent_id: str | None = None
    agent: str | None = None


class Tool(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[ToolInput]]
    read_only: ClassVar[bool]  # allowed in plan mode

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        """`args` is an instance of `input_model`. Raise ToolFailure for expected errors."""
        ...


@runtime_checkable
class ModalTool(Tool, Protocol):
    """A tool that says which modes it runs in (`plan_exit`: plan only), instead of the
    default (read-only tools in every mode, the others in build mode)."""

    modes: ClassVar[tuple[str, ...]]


def truncate(text: str, limit: int) -> str:
    """Cut `text` to `limit` characters, keeping head and tail, saying how much was cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    return (
        text[:head]
        + f"\n\n[... {cut} characters cut of {len(text)}; narrow the request to see them ...]\n\n"
        + text[-tail:]
    )
