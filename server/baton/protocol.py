"""The wire contract, as pydantic models: the single source of truth.

Every JSON-RPC method, result and notification Baton speaks is described here.
Handlers validate their params with these models; `baton schema` exports JSON
Schema from them for the TypeScript client; `docs/protocol.md` is checked
against `METHODS` and `NOTIFICATIONS` by the test suite.

Field names on the wire are camelCase (docs/protocol.md); Python attributes are
snake_case through an alias generator.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

PROTOCOL_VERSION = 1


class WireModel(BaseModel):
    """Base for everything on the wire: camelCase aliases, no unknown fields."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=False,
    )

    @model_serializer(mode="wrap")
    def _omit_absent_optionals(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Optional fields (default None) are left out when None, as `field?` in
        # docs/protocol.md; required fields that may be null (`firstKeptMessageId`) stay.
        data = handler(self)
        if isinstance(data, dict):
            for name, info in type(self).model_fields.items():
                if info.default is None and not info.is_required():
                    for key in (info.alias, name):
                        if key in data and data[key] is None:
                            del data[key]
        return data

    def wire(self) -> dict[str, Any]:
        """The JSON-ready dict, by alias, without absent optional fields."""
        return self.model_dump(mode="json", by_alias=True)


class Empty(WireModel):
    """Params or result with no fields."""


Mode = Literal["build", "plan"]
Role = Literal["user", "assistant", "system"]
StopReason = Literal["end_turn", "cancelled", "max_steps", "refusal", "error"]
Trigger = Literal["manual", "auto", "overflow", "model_switch"]
Strategy = Literal["native", "server", "fresh"]
StrategySetting = Literal["auto", "native", "server"]
PlanStatus = Literal["draft", "awaiting_approval", "approved", "done"]
Author = Literal["agent", "user"]
ToolStatus = Literal["pending", "in_progress", "completed", "failed"]
PermissionKind = Literal["allow_once", "allow_always", "reject_once"]
# What an `allow_always` option covers for the rest of the session: this exact command,
# this one file, this one MCP tool, or every call of the tool's category.
PermissionScope = Literal["command", "path", "tool", "host", "category"]
# Why Baton itself added a user message (absent on the person's own prompts): plan
# feedback wrapped in Baton's instructions, the build order after approval, the continue
# message after a compaction, a pre-compact round's prompt.
MessageOrigin = Literal["feedback", "approval", "continue", "pre_compact"]
# Why a turn or a request failed, as the server classified it (baton/causes.py): the
# words a client titles the error with and the actions it offers follow from it.
ErrorCause = Literal[
    "rate_limit",
    "quota",
    "server_error",
    "connection_dropped",
    "unreachable",
    "timeout",
    "model_not_found",
    "key_refused",
    "key_missing",
    "model_missing",
    "not_configured",
    "local_model",
    "context_overflow",
    "other",
]

NonEmptyId = Annotated[str, Field(min_length=1, max_length=200)]


# --------------------------------------------------------------------------- messages


class TextPart(WireModel):
    type: Literal["text"] = "text"
    text: str


class ReasoningPart(WireModel):
    type: Literal["reasoning"] = "reasoning"
    text: str


class ToolCallPart(WireModel):
    type: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    name: str
    input: dict[str, Any]
    status: ToolStatus
    output: str | None = None


class CompactionScore(WireModel):
    """How much of what Baton tracks a compaction kept in view (docs/compaction.md, "The
    score"): the ledger's entries (files, commands, errors, values, children's work)."""

    # Every entry the ledger tracks.
    facts: int
    # Shown with their details (whole, or their details one line each).
    in_view: int
    # Folded to a line or a count: one `recall` away by the id the view names.
    one_recall: int
    # The view after the compaction, against the model's context window.
    view_tokens: int
    window: int

    def describe(self) -> str:
        """The score in one line, as `baton run` says it."""
        share = self.view_tokens / self.window if self.window else 0.0
        return (
            f"{self.in_view} of {self.facts} tracked facts in view, {self.one_recall} one "
            f"`recall` away; view {self.view_tokens:,} of {self.window:,} tokens ({share:.0%})"
        )


class CompactionPart(WireModel):
    type: Literal["compaction"] = "compaction"
    compaction_id: str
    # Extensions, filled by `baton/session/load` from the compaction's
    # record: the figures `compaction_finished` showed live.
    trigger: Trigger | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    score: CompactionScore | None = None


class PreCompactPart(WireModel):
    """Audit entry of a pre-compact round: which hook asked, with what prompt."""

    type: Literal["pre_compact"] = "pre_compact"
    hook: str
    prompt: str
    trigger: Trigger
    status: Literal["started", "completed", "failed"] = "started"
    error: str | None = None


class LinePosition(WireModel):
    """A position in a text document, as LSP's `Position` (0-based line and character)."""

    line: int = Field(ge=0, le=10_000_000)
    character: int = Field(ge=0, le=10_000_000)


class LineRange(WireModel):
    """A range in a text document, as LSP's `Range`; Baton attaches whole lines."""

    start: LinePosition
    end: LinePosition


class ImagePart(WireModel):
    """Extension: an image the person attached to a prompt, as stored with it.

    The image's bytes are not repeated here; `bytes` is its decoded size.
    """

    type: Literal["image"] = "image"
    mime_type: str
    name: str | None = None
    bytes: int


class AttachmentPart(WireModel):
    """Extension (review issue): editor context attached to a prompt, as the model saw it.

    `path` is workspace-relative (or the URI of an unsaved, untitled buffer); `startLine`
    and `endLine` are 1-based and inclusive, absent for a whole file; `source` says whether
    Baton read the file from disk or used the text of an unsaved editor buffer.
    """

    type: Literal["attachment"] = "attachment"
    uri: str
    path: str
    start_line: int | None = None
    end_line: int | None = None
    source: Literal["disk", "editor"] = "disk"
    text: str
    truncated: bool = False


Part = Annotated[
    TextPart
    | ReasoningPart
    | ToolCallPart
    | CompactionPart
    | PreCompactPart
    | AttachmentPart
    | ImagePart,
    Field(discriminator="type"),
]


CommandSource = Literal["builtin", "skill", "command"]


class MessageCommand(WireModel):
    """A person's `/name arguments`, as typed, on the message it was expanded into."""

    name: str
    arguments: str
    typed: str
    source: CommandSource


class Message(WireModel):
    id: str
    role: Role
    created_at: str
    parts: list[Part]
    compacted: bool = False
    # Extensions (beyond protocol v1; additive): a stream that broke
    # mid-message leaves `incomplete: true`.
    incomplete: bool = False
    # Extension (review issue): `baton/session/revert` took this message back; it is out
    # of the model's view and its file changes were undone.
    reverted: bool = False
    # Extension: set on a user message Baton wrote itself, so clients show
    # it as Baton's instruction rather than as the person's words.
    origin: MessageOrigin | None = None
    # Extension: the person's slash command this message was expanded from; the text part
    # is what the model was sent, `command.typed` what the person wrote.
    command: MessageCommand | None = None


# --------------------------------------------------------------------------- sessions


class SessionInfo(WireModel):
    session_id: str
    title: str
    mode: Mode
    created_at: str
    updated_at: str
    # Extension (delegation): the session that started this one as a `task` child, and
    # the child's agent; null for a top-level session. A default factory, not a default,
    # so the rows carry the null rather than leaving the field out.
    parent_id: str | None = Field(default_factory=lambda: None)
    agent: str | None = Field(default_factory=lambda: None)
    # Extensions, in `baton/session/list` rows: the person's first prompt
    # (its start) and the provider's reported tokens over the session's model requests.
    first_prompt: str | None = None
    usage: SessionUsage | None = None


class SessionNewParams(WireModel):
    mode: Mode = "build"
    title: str | None = Field(default=None, max_length=500)
    # Extension: an existing plan file (workspace-relative) the session carries
    # on from, starting at its first open step.
    plan_path: str | None = Field(default=None, min_length=1, max_length=4096)


class SessionNewResult(WireModel):
    session_id: str


class SessionListResult(WireModel):
    sessions: list[SessionInfo]


class SessionRef(WireModel):
    session_id: NonEmptyId


class SessionUsage(WireModel):
    """Extension: the provider's reported tokens, summed over a session's model requests."""

    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0


class TurnOutcome(WireModel):
    """Extension: how one turn ended, kept so a reopened session shows it
    where it was shown live. `afterMessageId` is the session's last message when the turn
    ended (null when it had none)."""

    after_message_id: str | None = None
    stop_reason: StopReason
    error: str | None = None
    # Extension: what the error was, for a client's title and actions.
    cause: ErrorCause | None = None
    created_at: str


class ShownUpdate(WireModel):
    """Extension: an update a session showed live that is no message and no turn's end
    (a model request's retry, a compaction that gained nothing: `committed` false), kept so
    a reopened session shows it where it was. `afterMessageId` is the session's last
    message then (null when it had none)."""

    after_message_id: str | None = None
    update: ShownUpdateKind
    created_at: str


class SessionLoadResult(WireModel):
    session_id: str
    title: str
    mode: Mode
    messages: list[Message]
    # Extensions (session management issue): token totals, and the provider and model
    # the session's next request goes to (pinned with setModel, else the configured ones).
    usage: SessionUsage | None = None
    provider: str | None = None
    model: str | None = None
    # Extension: how each turn ended, as `turn_ended` said live, in order.
    turns: list[TurnOutcome] = Field(default_factory=list)
    # Extension: the retries and uncommitted compactions shown live, in order.
    notices: list[ShownUpdate] = Field(default_factory=list)


class ContextAttachment(WireModel):
    """Extension (review issue): a file or a selection the person attached to a prompt.

    The server reads `file:` URIs itself, inside the workspace only; `text` is the
    content of an unsaved editor buffer (an untitled one, or a file with unsaved changes)
    and is used instead of the file on disk only when given.
    """

    uri: str = Field(min_length=1, max_length=4096)
    range: LineRange | None = None
    text: str | None = Field(default=None, max_length=2_000_000)


ImageMimeType = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]


class ImageAttachment(WireModel):
    """Extension: an image attached to a prompt, sent to a model that takes images.

    `data` is the image's bytes in base64 (a `data:<mimeType>;base64,` URL is accepted
    too); the server refuses an image over its size limit, bytes that are not the named
    type, and any image for a model that takes none (the local model).
    """

    mime_type: ImageMimeType
    data: str = Field(min_length=1, max_length=16_000_000)
    name: str | None = Field(default=None, max_length=255)


class PromptCommand(WireModel):
    name: str = Field(min_length=1, max_length=200)
    arguments: str = Field(default="", max_length=1_000_000)


class PromptParams(WireModel):
    session_id: NonEmptyId
    text: str = Field(max_length=1_000_000)
    # Extension (review issue): editor context shown to the model with this prompt.
    context: list[ContextAttachment] | None = Field(default=None, max_length=50)
    # Extension: run this slash command (a skill or command file) with `arguments`; `text`
    # is what the person typed. Without it, a `text` of `/name arguments` naming a skill or
    # command is run the same way.
    command: PromptCommand | None = None
    # Extension: images shown to the model with this prompt.
    images: list[ImageAttachment] | None = Field(default=None, max_length=8)


class PromptResult(WireModel):
    stop_reason: StopReason
    error: str | None = None
    # Extension: what the error was (absent without an error).
    cause: ErrorCause | None = None


class SetModeParams(WireModel):
    session_id: NonEmptyId
    mode: Mode


class SetModeResult(WireModel):
    mode: Mode


class SetModelParams(WireModel):
    session_id: NonEmptyId
    provider: Literal["openai", "openai-compatible", "local", "anthropic"] | None = None
    model: str = Field(min_length=1, max_length=200)


class SetModelResult(WireModel):
    provider: str
    model: str


class SessionRenameParams(WireModel):
    """Extension (`baton/session/rename`)."""

    session_id: NonEmptyId
    title: str = Field(min_length=1, max_length=500)


class SessionForkParams(WireModel):
    """Extension (`baton/session/fork`): a new session with the history up to `messageId`."""

    session_id: NonEmptyId
    message_id: NonEmptyId
    title: str | None = Field(default=None, max_length=500)


class SessionForkResult(WireModel):
    session_id: str
    title: str
    # How many messages the fork starts with, and its copy of the plan (if any).
    messages: int
    plan_path: str | None = None


class SessionExportResult(WireModel):
    """Extension (`baton/session/export`): the session as markdown for an issue or a note."""

    session_id: str
    title: str
    markdown: str


class ModelsListParams(WireModel):
    """Extension (`baton/models/list`): the models of a provider (the session's, or the
    configured one)."""

    session_id: NonEmptyId | None = None
    provider: Literal["openai", "openai-compatible", "local", "anthropic"] | None = None


class ModelInfo(WireModel):
    id: str
    # The window Baton uses for this model: `contextWindow` from config, else the
    # maintained table, else the default.
    context_window: int


class ModelsListResult(WireModel):
    provider: str
    models: list[ModelInfo]
    # The model the session (or, without one, the configuration) uses now.
    current: str | None = None
    # `provider`: listed by the provider (`/v1/models`); `configured`: from settings.
    source: Literal["provider", "configured"]
    # Why the provider's list could not be read (the configured models are listed instead).
    error: str | None = None


class ModelServersParams(WireModel):
    """Extension (`baton/models/servers`): look for OpenAI-compatible servers running on
    this machine's loopback, as `baton model find` does; `ports` defaults to the usual
    ones (Ollama 11434, LM Studio 1234, llama.cpp 8080, vLLM 8000)."""

    ports: Annotated[list[Annotated[int, Field(ge=1, le=65535)]], Field(max_length=16)] | None = (
        None
    )


class FoundModelServer(WireModel):
    port: int
    # What usually listens on the port ("Ollama"), "port N" when nothing is known.
    name: str
    base_url: str
    models: list[str]


class ModelServersResult(WireModel):
    servers: list[FoundModelServer]


class CompactParams(WireModel):
    session_id: NonEmptyId
    instructions: str | None = Field(default=None, max_length=20_000)
    strategy: StrategySetting | None = None
    # Extension: a fresh-context start. No summary model call: the view becomes
    # the person's messages, the ledger and the plan; every earlier message leaves it.
    fresh: bool = False


class UncompactParams(WireModel):
    session_id: NonEmptyId
    compaction_id: NonEmptyId


class RevertParams(WireModel):
    """Extension (review issue): take back the turns from `messageId` onwards."""

    session_id: NonEmptyId
    message_id: NonEmptyId
    force: bool = False
    dry_run: bool = False


RevertAction = Literal["restored", "removed", "unchanged"]
ConflictReason = Literal["modified", "deleted", "created", "changed_between", "unconfirmed"]


class RevertFile(WireModel):
    path: str
    action: RevertAction


class RevertConflictInfo(WireModel):
    path: str
    reason: ConflictReason


class RevertResult(WireModel):
    revert_id: str | None
    message_ids: list[str]
    files: list[RevertFile]
    conflicts: list[RevertConflictInfo] = Field(default_factory=list)
    shell_commands: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    dry_run: bool = False


class ChangesParams(WireModel):
    """Extension (review issue): the files one tool call changed, before and after."""

    session_id: NonEmptyId
    tool_call_id: NonEmptyId


class FileChange(WireModel):
    path: str
    existed_before: bool
    exists_after: bool
    before: str | None = None
    after: str | None = None
    omitted: Literal["binary", "too_large"] | None = None
    reverted: bool = False


class ChangesResult(WireModel):
    changes: list[FileChange]


class ContextItem(WireModel):
    kind: str
    tokens: int


class ContextResult(WireModel):
    tokens: int
    context_window: int
    threshold: int
    items: list[ContextItem]
    # Extension: whether an opaque server-side compaction artifact is in the view.
    server_artifact: bool = False
    # Extension: input tokens of the session's model requests that the provider's prompt
    # cache served (as the provider reported them), and their share of all input tokens
    # (left out before any request reported usage).
    cached_tokens: int = 0
    cache_hit_rate: float | None = None


# --------------------------------------------------------------------------- compaction


class FileTouch(WireModel):
    path: str
    tool: str
    action: Literal["created", "modified", "deleted"]


class RunFailure(WireModel):
    """Extension: one failing run of a command: its first error line and last lines."""

    run: int  # 1-based, among the command's runs
    exit_code: int | None
    error: str


class CommandRun(WireModel):
    command: str
    # The latest run's exit code (None: killed or timed out).
    exit_code: int | None
    # Extension: every run's exit code, oldest first (the latest is `exitCode`).
    exit_codes: list[int | None] = Field(default_factory=list)
    # Extension: every failing run (bounded: the first and the latest ones), oldest first.
    failures: list[RunFailure] = Field(default_factory=list)
    # Extension: what the latest successful run printed, when short (a version, a count,
    # a port), or the lines of it that carry values.
    output: str | None = None


class ConfigValues(WireModel):
    """Extension: the key = value lines of a config-like file as the session read it."""

    path: str
    values: list[str] = Field(default_factory=list)


class UnresolvedError(WireModel):
    source: str
    message: str


class ResolvedError(WireModel):
    """Extension: an error a later success resolved (what was tried and failed)."""

    source: str
    message: str
    # What resolved it, when known: the successful run or edit.
    resolved_by: str | None = None


PlanStepState = Literal["open", "in_progress", "blocked", "done"]


class PlanStep(WireModel):
    """Extension: one checklist step (`- [ ]` open, `- [~]` in progress, `- [!]` blocked,
    `- [x]` done); `reason` is a blocked step's reason when its line gives one."""

    text: str
    state: PlanStepState
    reason: str | None = None


class PlanState(WireModel):
    path: str
    status: PlanStatus
    version: int
    # Extension: the plan's checklist steps with their states.
    steps: list[PlanStep] = Field(default_factory=list)


class ChildWork(WireModel):
    """Extension (delegation): the files a `task` child changed and the commands it ran."""

    child_id: str
    files_modified: list[str] = Field(default_factory=list)
    commands: list[CommandRun] = Field(default_factory=list)


class Ledger(WireModel):
    """Facts extracted by code, never by the model; cumulative across compactions."""

    files_read: list[str] = Field(default_factory=list)
    files_modified: list[FileTouch] = Field(default_factory=list)
    commands: list[CommandRun] = Field(default_factory=list)
    errors: list[UnresolvedError] = Field(default_factory=list)
    plan: PlanState | None = None
    # Extension: errors a later success resolved, oldest first.
    resolved_errors: list[ResolvedError] = Field(default_factory=list)
    # Extension: values in config-like files read (*.toml, *.ini, *.env, *.yaml, settings).
    config_values: list[ConfigValues] = Field(default_factory=list)
    # Extension (delegation): what the session's `task` children changed and ran.
    children: list[ChildWork] = Field(default_factory=list)


class PreCompactOutcome(WireModel):
    hook: str
    ran: bool
    error: str | None = None


class ClaimCorrection(WireModel):
    """A summary statement the ledger contradicts, replaced by code before the summary
    was accepted (`compaction/claims.py`)."""

    line: str
    reason: str
    # A file-change claim: the files it named that the ledger records no change to.
    files: list[str] = Field(default_factory=list)


class CompactionRecord(WireModel):
    compaction_id: str
    session_id: str
    trigger: Trigger
    strategy: Strategy
    tokens_before: int
    tokens_after: int
    first_kept_message_id: str | None
    summary: str | None = None
    ledger: Ledger
    pre_compact: list[PreCompactOutcome] = Field(default_factory=list)
    created_at: str
    # Extensions: why a requested strategy was not used, and warnings such as a
    # summary accepted with missing sections.
    notes: list[str] = Field(default_factory=list)
    undone: bool = False
    # Extension: false when nothing could be gained ("nothing to compact", figures in
    # `notes`): no record was stored and the view is unchanged.
    committed: bool = True
    # Extension: the summary statements the ledger contradicted (the notes say so too).
    corrections: list[ClaimCorrection] = Field(default_factory=list)
    # Extension: what stayed in view and what is one `recall` away (native views).
    score: CompactionScore | None = None


class CompactionsResult(WireModel):
    compactions: list[CompactionRecord]


# --------------------------------------------------------------------------- MCP servers

McpStatus = Literal["idle", "starting", "ready", "restarting", "failed", "stopped", "disabled"]


class McpServerInfo(WireModel):
    name: str
    transport: Literal["stdio", "http"]
    enabled: bool
    status: McpStatus
    # Tool names as the model sees them (`<server>__<tool>`).
    tools: list[str] = Field(default_factory=list)
    error: str | None = None


class McpServersResult(WireModel):
    servers: list[McpServerInfo]


# --------------------------------------------------------------------------- plans


class PlanInfo(WireModel):
    path: str
    status: PlanStatus
    version: int
    content: str


class PlanUpdateParams(WireModel):
    session_id: NonEmptyId
    content: str = Field(max_length=2_000_000)
    base_version: int = Field(ge=0)


class PlanUpdateResult(WireModel):
    version: int


class PlanApproveParams(WireModel):
    session_id: NonEmptyId
    start: bool = False
    # Extension: build in a fresh context (no summary model call; the view
    # becomes the person's requests, the ledger and the approved plan).
    fresh: bool = False
    # Extension (delegation): "steps" builds each open step of the plan in a fresh
    # `build` child, in order, Baton (not the model) driving them.
    build: Literal["steps"] | None = None


class PlanApproveResult(WireModel):
    status: PlanStatus
    mode: Mode


AnnotationKind = Literal["comment", "replace", "delete"]


class PlanAnnotation(WireModel):
    """Extension: the person's note on lines of the plan.

    `startLine`/`endLine` are 1-based, inclusive lines of the plan's content as
    `baton/plan/get` returns it; `quote` is the text they selected; `text` is the comment,
    or the replacement for `replace` (absent for `delete`)."""

    kind: AnnotationKind
    start_line: int = Field(ge=1, le=10_000_000)
    end_line: int = Field(ge=1, le=10_000_000)
    quote: str = Field(max_length=200_000)
    text: str | None = Field(default=None, max_length=200_000)

    @model_validator(mode="after")
    def _lines_in_order(self) -> PlanAnnotation:
        if self.end_line < self.start_line:
            raise ValueError("endLine is before startLine")
        if self.kind != "delete" and not (self.text or "").strip():
            raise ValueError(f"a {self.kind} annotation needs text")
        return self


class PlanRequestChangesParams(WireModel):
    session_id: NonEmptyId
    # May be empty only when annotations say what to change.
    feedback: str = Field(max_length=200_000)
    # Extension: line-by-line annotations, sent with `feedback` as one message.
    annotations: list[PlanAnnotation] | None = Field(default=None, max_length=500)

    @model_validator(mode="after")
    def _says_something(self) -> PlanRequestChangesParams:
        if not self.feedback.strip() and not self.annotations:
            raise ValueError("feedback is empty and there are no annotations")
        return self


class PlanStatusResult(WireModel):
    status: PlanStatus


class PlanListEntry(WireModel):
    """Extension: one plan file of the workspace (`plans.dir`)."""

    path: str
    title: str
    status: PlanStatus
    version: int
    steps_done: int
    steps_total: int
    # The session that last had this plan (None: no session of this store did).
    last_session_id: str | None
    last_session_title: str | None
    updated_at: str


class PlanListSkipped(WireModel):
    """A `.md` file under `plans.dir` that is not offered as a plan, and why (too large,
    not text, unreadable); too large is said from its size, without reading it."""

    path: str
    reason: str


class PlanListResult(WireModel):
    plans: list[PlanListEntry]
    skipped: list[PlanListSkipped] = Field(default_factory=list)


class PlanAttachParams(WireModel):
    """Extension: attach an existing plan file (workspace-relative)."""

    session_id: NonEmptyId
    path: str = Field(min_length=1, max_length=4096)


class PlanAttachResult(WireModel):
    path: str
    status: PlanStatus
    version: int


class PlanVersion(WireModel):
    version: int
    author: Author
    created_at: str
    sha256: str


class PlanHistoryResult(WireModel):
    versions: list[PlanVersion]


class PlanGetVersionParams(WireModel):
    """Extension (`baton/plan/getVersion`): one stored version, for history diffs."""

    session_id: NonEmptyId
    version: int = Field(ge=1)


class PlanVersionContent(WireModel):
    """A stored plan version with its text (content only, without the front matter)."""

    version: int
    content: str
    author: Author
    created_at: str
    sha256: str


# --------------------------------------------------------------------------- auth


class AuthSetParams(WireModel):
    provider: Literal["openai", "openai-compatible", "local", "anthropic"]
    api_key: str = Field(min_length=1, max_length=4096, repr=False)


# --------------------------------------------------------------------------- workspace trust

# Who decided: the editor (initializationOptions.workspaceTrusted or setTrust), the
# terminal (`baton trust` or the question of `baton run`), or nobody (not trusted).
TrustSource = Literal["editor", "cli", "none"]


class WorkspaceTrustResult(WireModel):
    trusted: bool
    source: TrustSource
    # What the workspace has that is not in force now, each with why (settings of
    # .baton/config.toml, plugins in .baton/plugins/, workspace entry points).
    ignored: list[str] = Field(default_factory=list)


class SetTrustParams(WireModel):
    # Strict: "true" or 1 is a client bug, answered -32602, not a decision.
    trusted: bool = Field(strict=True)


# --------------------------------------------------------------------------- the store


class StoreCheckResult(WireModel):
    path: str
    ok: bool
    # False: no session was ever stored in this workspace (nothing to check).
    exists: bool
    # What SQLite's integrity check and a read of the sessions found (empty when ok).
    problems: list[str] = Field(default_factory=list)
    # Sessions that could be listed (None: not even that).
    sessions: int | None = None
    size_bytes: int = 0
    # The way out when not ok: `baton doctor --repair` (or `baton/store/repair`).
    fix: str | None = None


class RecoveredSession(WireModel):
    session_id: str
    title: str
    messages: int
    # The session's own row was lost and was made anew ("Recovered session").
    recreated: bool = False


class StoreRepairResult(WireModel):
    path: str
    # Where the damaged store was kept, whole and unchanged (nothing is deleted).
    backup_path: str
    sessions: list[RecoveredSession]
    messages: int
    # Per table: rows saved; stretches of damaged pages skipped; rows left out of the new
    # store because what they belong to was lost; rows too garbled for the schema.
    rows_saved: dict[str, int] = Field(default_factory=dict)
    damaged_regions: dict[str, int] = Field(default_factory=dict)
    rows_left_out: dict[str, int] = Field(default_factory=dict)
    rows_invalid: dict[str, int] = Field(default_factory=dict)
    unreadable_tables: list[str] = Field(default_factory=list)
    # The new store's own check.
    check: StoreCheckResult


# --------------------------------------------------------------------------- updates


class AgentMessageChunk(WireModel):
    kind: Literal["agent_message_chunk"] = "agent_message_chunk"
    text: str


class AgentThoughtChunk(WireModel):
    kind: Literal["agent_thought_chunk"] = "agent_thought_chunk"
    text: str


class ToolCallStarted(WireModel):
    kind: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    name: str
    input: dict[str, Any]
    status: Literal["pending"] = "pending"


class ToolCallUpdate(WireModel):
    kind: Literal["tool_call_update"] = "tool_call_update"
    tool_call_id: str
    status: Literal["in_progress", "completed", "failed"]
    output: str | None = None


class ModeUpdate(WireModel):
    kind: Literal["mode"] = "mode"
    mode: Mode


class UsageUpdate(WireModel):
    kind: Literal["usage"] = "usage"
    tokens: int
    context_window: int
    # Extensions: the provider's reported figures for the last request.
    input_tokens: int | None = None
    cached_tokens: int | None = None
    output_tokens: int | None = None


class CompactionStarted(WireModel):
    kind: Literal["compaction_started"] = "compaction_started"
    trigger: Trigger
    strategy: Strategy


class CompactionFinished(WireModel):
    kind: Literal["compaction_finished"] = "compaction_finished"
    compaction: CompactionRecord


class CompactionFailed(WireModel):
    kind: Literal["compaction_failed"] = "compaction_failed"
    error: str


class UserMessageUpdate(WireModel):
    """Extension: a user message the server added (plan feedback, approval, continue), or
    the person's slash command: `command` says what they typed, `text` what the agent was
    sent (clients show the command as typed with `text` one click away, as in history)."""

    kind: Literal["user_message"] = "user_message"
    message_id: str
    text: str
    origin: MessageOrigin | None = None
    command: MessageCommand | None = None
    # The person's own message, sent while the agent worked (baton/session/queue): how it
    # was delivered (`steer`, `after_turn`, or `idle`: it started the turn).
    queued: Literal["steer", "after_turn", "idle"] | None = None


class NoteUpdate(WireModel):
    """Extension: a note Baton appended to the history for the model (stored as a `system`
    message); `reason` says why: `no_tool` when the model answered a question about the
    code without looking and is asked to look first; `empty_answer` when, after using
    tools, it ended the turn with nothing to show (only echoed markup) and is asked once
    to answer in words."""

    kind: Literal["note"] = "note"
    message_id: str
    text: str
    reason: Literal["no_tool", "empty_answer"]


class McpServerUpdate(WireModel):
    """Extension: an MCP server started, failed, crashed or came back."""

    kind: Literal["mcp_server"] = "mcp_server"
    server: str
    status: McpStatus
    tools: list[str] = Field(default_factory=list)
    error: str | None = None


class ModelProgress(WireModel):
    """Extension: the model is loading, or reading its prompt, before it answers.

    Sent by providers that report it (the local model); `done`/`total` are prompt
    tokens read so far and in all, `cached` of them reused from the cache."""

    kind: Literal["model_progress"] = "model_progress"
    phase: Literal["loading", "reading"]
    done: int | None = None
    total: int | None = None
    cached: int | None = None


class WorkspaceTrustUpdate(WireModel):
    """Extension: said once per session when the workspace is not trusted and something of
    it is ignored: what, and how to trust it."""

    kind: Literal["workspace_trust"] = "workspace_trust"
    trusted: bool
    source: TrustSource
    ignored: list[str] = Field(default_factory=list)
    message: str


class CommandInfo(WireModel):
    """One slash command: a built-in, a skill (`SKILL.md`) or a command file."""

    name: str
    description: str
    source: CommandSource
    argument_hint: str | None = None
    # skills and command files: whose folder it came from, and the file.
    origin: Literal["person", "workspace"] | None = None
    path: str | None = None
    # Frontmatter `model` and `agent` (the command runs as a child of that agent).
    model: str | None = None
    agent: str | None = None
    # Whether the model may load it itself (`skill` tool); false with
    # `disable-model-invocation: true`, and for built-ins and command files.
    model_invocable: bool = False


class CommandsListParams(WireModel):
    session_id: str | None = None


class CommandsListResult(WireModel):
    commands: list[CommandInfo]
    # Files that could not be read (path: reason) and names defined twice.
    problems: list[str] = Field(default_factory=list)


class SkillsUpdate(WireModel):
    """Extension: the slash commands changed (a skill or command file was added, changed or
    removed, or trust changed), or a session sees them for the first time; with what could
    not be read."""

    kind: Literal["skills"] = "skills"
    commands: list[CommandInfo]
    problems: list[str] = Field(default_factory=list)


ChildStatus = Literal["running", "done", "failed", "cancelled", "max_steps"]


class ChildStep(WireModel):
    """Which step of a plan a child builds (`baton/plan/approve {build: "steps"}`): 1-based."""

    index: int
    total: int


class ChildUpdate(WireModel):
    """Extension (delegation): on the parent's stream, a `task` child started, changed its
    current tool, or ended. `callId` is the parent's `task` tool call (for a step of
    `build: "steps"`, Baton's own id for the step); `tokens` the child's input and output
    tokens so far."""

    kind: Literal["child"] = "child"
    call_id: str
    child_id: str
    agent: str
    description: str
    status: ChildStatus
    current_tool: str | None = None
    tokens: int = 0
    step: ChildStep | None = None


class ModelRetry(WireModel):
    """Extension: a model request failed with a retryable error (a rate
    limit, a server error, a dropped connection) and is sent again after
    `delaySeconds`; `attempt` of `maxRetries`, `reason` the provider's error, `status`
    its HTTP status when it had one. Cancelling the session stops the wait."""

    kind: Literal["model_retry"] = "model_retry"
    attempt: int
    max_retries: int
    delay_seconds: float
    reason: str
    status: int | None = None


# When a message the person sends while the agent works reaches the model: at the next
# step boundary of the running turn (`steer`), or as the next turn once it ends.
QueueDelivery = Literal["steer", "after_turn"]


class QueuedPrompt(WireModel):
    id: str
    text: str
    delivery: QueueDelivery


class QueueParams(WireModel):
    """Extension (`baton/session/queue`): say something while the agent works."""

    session_id: NonEmptyId
    text: Annotated[str, Field(min_length=1, max_length=100_000)]
    delivery: QueueDelivery = "steer"


class QueueResult(WireModel):
    # What waits now, oldest first.
    queued: list[QueuedPrompt]
    # The session was idle: the text started a turn at once instead of waiting.
    started: bool = False


class UnqueueParams(WireModel):
    """Extension (`baton/session/unqueue`): take back a message that has not reached the
    model yet."""

    session_id: NonEmptyId
    id: NonEmptyId


class QueueUpdate(WireModel):
    """Extension: what waits to reach the model changed (queued, delivered, taken back)."""

    kind: Literal["queue"] = "queue"
    queued: list[QueuedPrompt]


class TurnEnded(WireModel):
    """Extension: a turn ended; lets clients that did not send the prompt finish their view."""

    kind: Literal["turn_ended"] = "turn_ended"
    stop_reason: StopReason
    error: str | None = None
    cause: ErrorCause | None = None


Update = Annotated[
    AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStarted
    | ToolCallUpdate
    | ModeUpdate
    | UsageUpdate
    | CompactionStarted
    | CompactionFinished
    | CompactionFailed
    | UserMessageUpdate
    | NoteUpdate
    | TurnEnded
    | QueueUpdate
    | McpServerUpdate
    | ModelProgress
    | ModelRetry
    | WorkspaceTrustUpdate
    | SkillsUpdate
    | ChildUpdate,
    Field(discriminator="kind"),
]


# What a reopened session shows that was live only (`SessionLoadResult.notices`).
ShownUpdateKind = Annotated[ModelRetry | CompactionFinished, Field(discriminator="kind")]


class SessionUpdateNotification(WireModel):
    session_id: str
    update: Update
    # Extension (delegation): set when `sessionId` is a `task` child: its parent session.
    parent_id: str | None = None


class PlanDidChangeNotification(WireModel):
    session_id: str
    path: str
    version: int
    status: PlanStatus
    author: Author


class PlanShowNotification(WireModel):
    session_id: str
    path: str
    version: int


class PermissionToolCall(WireModel):
    tool_call_id: str
    name: str
    input: dict[str, Any]


class PermissionOption(WireModel):
    option_id: str
    kind: PermissionKind
    name: str | None = None
    # Extension: what an `allow_always` option grants (its `name` says it in
    # words); absent on the other kinds.
    scope: PermissionScope | None = None


class PermissionRequestParams(WireModel):
    session_id: str
    tool_call: PermissionToolCall
    options: list[PermissionOption]
    # Extension (review issue): a unified diff of the change a write/edit would make.
    diff: str | None = None
    # Extension (trust issue): why this request is asked even though the permission is
    # "allow" or was answered "Always allow" (a protected path); "Always allow" is then
    # not offered.
    reason: str | None = None
    # Extension (delegation): the request comes from a `task` child (`sessionId`): its
    # parent session and its agent.
    parent_id: str | None = None
    agent: str | None = None


class SelectedOutcome(WireModel):
    model_config = ConfigDict(extra="ignore")
    option_id: str
    # Extension (review issue): with an allow option for `write`/`edit`, the file's whole
    # text as the person left it after editing the proposal (keeping or undoing hunks,
    # typing their own); the tool writes exactly this and tells the model how it differs
    # from its proposal. Ignored with a reject option and for other tools.
    edited_content: str | None = None


class PermissionResponse(WireModel):
    model_config = ConfigDict(extra="ignore")
    outcome: SelectedOutcome | Literal["cancelled"]


# --------------------------------------------------------------------------- method table


class MethodSpec:
    """One JSON-RPC method: its params and result models and a one-line summary."""

    def __init__(
        self,
        params: type[WireModel],
        result: type[BaseModel] | None,
        summary: str,
        *,
        nullable_result: bool = False,
    ) -> None:
        self.params = params
        self.result = result
        self.summary = summary
        self.nullable_result = nullable_result


METHODS: dict[str, MethodSpec] = {
    "baton/session/new": MethodSpec(SessionNewParams, SessionNewResult, "Create a session."),
    "baton/session/list": MethodSpec(Empty, SessionListResult, "List the workspace's sessions."),
    "baton/session/load": MethodSpec(SessionRef, SessionLoadResult, "Full history of a session."),
    "baton/session/prompt": MethodSpec(PromptParams, PromptResult, "Run one turn."),
    "baton/session/setMode": MethodSpec(SetModeParams, SetModeResult, "Switch plan/build mode."),
    "baton/session/setModel": MethodSpec(SetModelParams, SetModelResult, "Pin provider/model."),
    "baton/session/compact": MethodSpec(CompactParams, CompactionRecord, "Compact now."),
    "baton/session/compactions": MethodSpec(SessionRef, CompactionsResult, "List compactions."),
    "baton/session/uncompact": MethodSpec(
        UncompactParams, CompactionRecord, "Undo a compaction's view."
    ),
    "baton/session/context": MethodSpec(SessionRef, ContextResult, "What the model is sent next."),
    "baton/session/revert": MethodSpec(
        RevertParams, RevertResult, "Undo the file changes of turns and take them back."
    ),
    "baton/session/changes": MethodSpec(
        ChangesParams, ChangesResult, "Before and after of the files a tool call changed."
    ),
    "baton/plan/get": MethodSpec(SessionRef, PlanInfo, "The current plan.", nullable_result=True),
    "baton/plan/update": MethodSpec(PlanUpdateParams, PlanUpdateResult, "Write the plan (user)."),
    "baton/plan/approve": MethodSpec(PlanApproveParams, PlanApproveResult, "Approve the plan."),
    "baton/plan/requestChanges": MethodSpec(
        PlanRequestChangesParams, PlanStatusResult, "Send plan feedback."
    ),
    "baton/plan/history": MethodSpec(SessionRef, PlanHistoryResult, "List plan versions."),
    "baton/plan/getVersion": MethodSpec(
        PlanGetVersionParams, PlanVersionContent, "One plan version with its text."
    ),
    "baton/plan/list": MethodSpec(Empty, PlanListResult, "The workspace's plan files."),
    "baton/plan/attach": MethodSpec(
        PlanAttachParams, PlanAttachResult, "Attach a plan file to a session."
    ),
    "baton/auth/set": MethodSpec(AuthSetParams, Empty, "Hold an API key in memory."),
    "baton/session/rename": MethodSpec(SessionRenameParams, SessionInfo, "Rename a session."),
    "baton/session/delete": MethodSpec(SessionRef, Empty, "Delete a session."),
    "baton/session/fork": MethodSpec(
        SessionForkParams, SessionForkResult, "A new session with the history up to a message."
    ),
    "baton/session/export": MethodSpec(SessionRef, SessionExportResult, "The session as markdown."),
    "baton/session/queue": MethodSpec(
        QueueParams, QueueResult, "Queue a message while the agent works (or start a turn)."
    ),
    "baton/session/unqueue": MethodSpec(
        UnqueueParams, QueueResult, "Take back a queued message that has not reached the model."
    ),
    "baton/models/list": MethodSpec(ModelsListParams, ModelsListResult, "Models to choose from."),
    "baton/models/servers": MethodSpec(
        ModelServersParams, ModelServersResult, "Model servers running on this machine."
    ),
    "baton/mcp/servers": MethodSpec(Empty, McpServersResult, "Configured MCP servers."),
    "baton/workspace/trust": MethodSpec(
        Empty, WorkspaceTrustResult, "Whether the workspace is trusted, by whom, what is ignored."
    ),
    "baton/workspace/setTrust": MethodSpec(
        SetTrustParams, WorkspaceTrustResult, "The editor's trust decision, taking effect now."
    ),
    "baton/commands/list": MethodSpec(
        CommandsListParams, CommandsListResult, "Slash commands: built-ins, skills, command files."
    ),
    "baton/store/check": MethodSpec(Empty, StoreCheckResult, "Check the session store."),
    "baton/store/repair": MethodSpec(
        Empty, StoreRepairResult, "Keep a damaged store aside; recover what is readable."
    ),
}


# ----------------------------------------------------------------------------- question

QUESTION_MIN_OPTIONS = 2
QUESTION_MAX_OPTIONS = 6


class QuestionOption(WireModel):
    label: str = Field(min_length=1, max_length=80)
    description: str | None = Field(None, max_length=300)


class QuestionRequestParams(WireModel):
    """Server → client (`baton/question/request`): the model asks the person one question
    (the `question` tool). A `task` child's question carries the child's `sessionId` and
    its `parentId`."""

    session_id: str
    tool_call_id: str
    question: str
    options: list[QuestionOption]
    multiple: bool = False
    allow_text: bool = False
    parent_id: str | None = None
    agent: str | None = None


class QuestionResponse(WireModel):
    model_config = ConfigDict(extra="ignore")
    outcome: Literal["answered", "cancelled"]
    # The chosen options' labels (one unless `multiple`); may be empty with `text`.
    labels: list[str] = Field(default_factory=list)
    # The person's own words, when `allowText`.
    text: str | None = None


# ----------------------------------------------------------------------------- editor diagnostics


class EditorDiagnosticsParams(WireModel):
    """Server → client (`baton/editor/diagnostics`): the editor's problems for `uris`
    (file URIs), or for every file it knows of when absent. Asked only of a client that
    announced `initializationOptions.capabilities.diagnostics: true`."""

    uris: list[str] | None = None


class EditorFileDiagnostics(WireModel):
    model_config = ConfigDict(extra="ignore")
    uri: str
    # LSP `Diagnostic`s as the editor holds them (range, severity, message, source, code).
    diagnostics: list[dict[str, Any]]


class EditorDiagnosticsResult(WireModel):
    model_config = ConfigDict(extra="ignore")
    items: list[EditorFileDiagnostics]


# Client → server notifications.
CLIENT_NOTIFICATIONS: dict[str, type[WireModel]] = {
    "baton/session/cancel": SessionRef,
}

# Server → client notifications and requests.
NOTIFICATIONS: dict[str, type[WireModel]] = {
    "baton/session/update": SessionUpdateNotification,
    "baton/plan/didChange": PlanDidChangeNotification,
    "baton/plan/show": PlanShowNotification,
}
SERVER_REQUESTS: dict[str, tuple[type[WireModel], type[WireModel]]] = {
    "baton/permission/request": (PermissionRequestParams, PermissionResponse),
    "baton/question/request": (QuestionRequestParams, QuestionResponse),
    "baton/editor/diagnostics": (EditorDiagnosticsParams, EditorDiagnosticsResult),
}


def json_schema() -> dict[str, Any]:
    """One JSON Schema document with a definition per wire model, for code generators."""
    models: dict[str, type[BaseModel]] = {}
    for spec in METHODS.values():
        models[spec.params.__name__] = spec.params
        if spec.result is not None:
            models[spec.result.__name__] = spec.result
    for model in CLIENT_NOTIFICATIONS.values():
        models[model.__name__] = model
    for model in NOTIFICATIONS.values():
        models[model.__name__] = model
    for params, result in SERVER_REQUESTS.values():
        models[params.__name__] = params
        models[result.__name__] = result
    models["Message"] = Message
    from pydantic.json_schema import models_json_schema

    _, schema = models_json_schema(
        [(m, "validation") for m in models.values()],
        ref_template="#/$defs/{model}",
        title="Baton protocol",
    )
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["x-baton-protocol-version"] = PROTOCOL_VERSION
    schema["x-methods"] = {
        name: {
            "params": spec.params.__name__,
            "result": spec.result.__name__ if spec.result else None,
            "nullableResult": spec.nullable_result,
            "summary": spec.summary,
        }
        for name, spec in METHODS.items()
    }
    schema["x-notifications"] = {name: m.__name__ for name, m in NOTIFICATIONS.items()}
    schema["x-client-notifications"] = {
        name: m.__name__ for name, m in CLIENT_NOTIFICATIONS.items()
    }
    return schema
