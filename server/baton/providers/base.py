"""What every provider speaks: canonical conversation items in, stream events out.

The context builder produces a `ModelRequest` of canonical `Item`s; a provider
turns it into its wire format, streams the answer back as `StreamEvent`s and
raises `baton.errors.ProviderError` when it fails. Provider-specific state
(OpenAI reasoning with encrypted content, compaction artifacts) travels in an
item's `native` field together with the `ProviderIdentity` that produced it,
and is replayed only to that same identity.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class Route:
    """Where requests go and how they authenticate; part of an artifact's identity."""

    base_url: str
    auth_kind: Literal["api_key", "none"]


@dataclass(frozen=True)
class ProviderIdentity:
    provider: str  # "openai" | "openai-compatible" | "local" | "anthropic"
    model: str
    route: Route

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "baseUrl": self.route.base_url,
            "authKind": self.route.auth_kind,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> ProviderIdentity:
        return ProviderIdentity(
            provider=data["provider"],
            model=data["model"],
            route=Route(base_url=data["baseUrl"], auth_kind=data["authKind"]),
        )


@dataclass(frozen=True)
class Native:
    """A provider's own item, stored verbatim, replayable only to `identity`."""

    identity: ProviderIdentity
    item: dict[str, Any]


# ----------------------------------------------------------------------------- items


@dataclass(frozen=True)
class ImageInput:
    """An image shown to the model with a user message: its bytes in base64."""

    mime_type: str
    data: str

    def data_url(self) -> str:
        return f"data:{self.mime_type};base64,{self.data}"


@dataclass
class UserText:
    text: str
    kind: Literal["user_text"] = "user_text"
    # Images sent with the text, after it, to a model that takes them.
    images: tuple[ImageInput, ...] = ()


@dataclass
class ContextBlock:
    """Baton's own blocks (summary, ledger, plan, attachments), sent as user-role text."""

    name: str
    text: str
    kind: Literal["context_block"] = "context_block"


@dataclass
class AssistantText:
    text: str
    native: Native | None = None
    kind: Literal["assistant_text"] = "assistant_text"


@dataclass
class Reasoning:
    text: str
    native: Native | None = None
    kind: Literal["reasoning"] = "reasoning"


@dataclass
class ToolCall:
    call_id: str
    name: str
    arguments: str  # the JSON text exactly as the model wrote it
    native: Native | None = None
    kind: Literal["tool_call"] = "tool_call"

    def __post_init__(self) -> None:
        # Half a surrogate pair, escaped in the arguments, would decode to a string
        # that cannot be stored, counted or sent again: the only change ever made.
        if "\\u" in self.arguments and SURROGATE_ESCAPE.search(self.arguments):
            try:
                decoded = json.loads(self.arguments)
            except ValueError:
                return
            cleaned = replace_lone_surrogates(decoded)
            if cleaned != decoded:
                self.arguments = json.dumps(cleaned, ensure_ascii=False)


# A JSON escape of a UTF-16 surrogate (`\\ud800`); a valid pair decodes to one character.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def replace_lone_surrogates(value: Any) -> Any:
    """`value` (decoded JSON) with every lone surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [replace_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {replace_lone_surrogates(k): replace_lone_surrogates(v) for k, v in value.items()}
    return value


@dataclass
class ToolOutput:
    call_id: str
    output: str
    kind: Literal["tool_output"] = "tool_output"


@dataclass
class OpaqueItem:
    """A provider item with no canonical meaning (a server compaction artifact).

    Providers other than `native.identity`'s never see it.
    """

    native: Native
    kind: Literal["opaque"] = "opaque"


Item = UserText | ContextBlock | AssistantText | Reasoning | ToolCall | ToolOutput | OpaqueItem


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object


@dataclass(frozen=True)
class AnyTool:
    """The step must call a tool, any of those offered (the look-first step after a
    nudge, session/nudge.py)."""


@dataclass(frozen=True)
class RequiredCall:
    """The step must call this tool (a step that needs exactly one, as each of `baton
    demo`'s steps does), some of its arguments maybe narrowed for that step: a JSON
    schema per argument, merged over the tool's own (`baton demo`: the edit's
    `old_string` one of the lines of the function being changed, so that a small model
    chooses where to edit among text that is there, and writes the new code itself).
    Only a provider that constrains the call's text (llama.cpp's JSON schema) can apply
    the narrowing; the others name the tool (`tool_choice`)."""

    name: str
    narrowed: dict[str, dict[str, Any]] = field(default_factory=dict)
    # For a `task` call: what the steps of the child it starts are held to, as the
    # parent's are (`baton demo`: the explore child's read, grep, then its answer).
    child: tuple[StepChoice, ...] = ()

    def apply(self, spec: ToolSpec) -> ToolSpec:
        properties = dict(spec.parameters.get("properties", {}))
        for key, schema in self.narrowed.items():
            properties[key] = {**properties.get(key, {}), **schema}
        return ToolSpec(spec.name, spec.description, {**spec.parameters, "properties": properties})


@dataclass(frozen=True)
class NoTool:
    """The step answers in words: the tools stay in the request (its cached prefix holds)
    but none may be called (`tool_choice: "none"`). `baton demo`'s explore child answers
    so after its read and grep: a small model left free called a third tool instead."""


# What a caller may hold one of a turn's steps to (`Turn.require_tools`).
StepChoice = RequiredCall | NoTool
# Which call a step must make; None on a request: the model chooses (or calls nothing).
ToolChoice = AnyTool | RequiredCall | NoTool


@dataclass(frozen=True)
class Sampling:
    """Explicit sampling for a request (compaction summaries set it; turns use the
    provider's defaults). Each provider sends the fields its API supports:
    `openai-compatible` temperature, top_p, frequency and presence penalties;
    `local` (llama.cpp) those and `repeat_penalty`; `openai` (Responses) none,
    because its reasoning models reject sampling parameters (docs/compaction.md)."""

    temperature: float | None = None
    top_p: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    repeat_penalty: float | None = None  # llama.cpp only

    def chat_fields(self, *, llamacpp: bool = False) -> dict[str, float]:
        fields = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "frequency_penalty": self.frequency_penalty,
            "presence_penalty": self.presence_penalty,
        }
        if llamacpp:
            fields["repeat_penalty"] = self.repeat_penalty
        return {k: v for k, v in fields.items() if v is not None}


@dataclass
class ModelRequest:
    instructions: str
    items: list[Item]
    tools: list[ToolSpec] = field(default_factory=list)
    # "turn": a normal agent step; "summary": a compaction summary (no tools).
    purpose: Literal["turn", "summary"] = "turn"
    max_output_tokens: int | None = None
    # Responses API only: server-side compaction threshold in tokens, when enabled.
    compact_threshold: int | None = None
    # A stable key for provider prompt caching (the session id).
    cache_key: str | None = None
    # Explicit sampling (summaries); None: the provider's defaults.
    sampling: Sampling | None = None
    # The call the step must make: `tool_choice: "required"` (AnyTool) or naming the tool
    # (RequiredCall), or for llama.cpp a JSON schema of the calls, narrowed where the
    # RequiredCall says. None: the model chooses.
    require_tool: ToolChoice | None = None

    def required_tools(self) -> list[ToolSpec]:
        """The tools a required call may be one of (all of them unless one is named),
        narrowed as a RequiredCall says."""
        required = self.require_tool
        if isinstance(required, RequiredCall):
            return [required.apply(t) for t in self.tools if t.name == required.name] or self.tools
        return self.tools


# ----------------------------------------------------------------------------- events


@dataclass
class TextDelta:
    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass
class ReasoningDelta:
    text: str
    kind: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass
class ItemDone:
    """A finished output item, in order; what the agent loop stores."""

    item: AssistantText | Reasoning | ToolCall | OpaqueItem
    kind: Literal["item_done"] = "item_done"


@dataclass
class Usage:
    input_tokens: int
    output_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    # Input tokens written to the prompt cache (Anthropic bills them above the input price).
    cache_write_tokens: int = 0
    kind: Literal["usage"] = "usage"


@dataclass
class ServerCompaction:
    """The server compacted mid-stream (Responses `context_management`): `item` is the
    compaction output item and `window` every item the next request must start with."""

    item: OpaqueItem
    kind: Literal["server_compaction"] = "server_compaction"


@dataclass
class Finished:
    reason: Literal["stop", "tool_calls", "length", "refusal", "content_filter"]
    kind: Literal["finished"] = "finished"


@dataclass
class Progress:
    """Work before the first token: the model loading, or the prompt being read.

    A server that reports how far it has read the prompt (llama.cpp's
    `prompt_progress`) gives `done` and `total` prompt tokens, `cached` of them
    reused from its cache; on a CPU this phase can take minutes.
    """

    phase: Literal["loading", "reading"]
    done: int | None = None
    total: int | None = None
    cached: int | None = None
    kind: Literal["progress"] = "progress"


StreamEvent = TextDelta | ReasoningDelta | ItemDone | Usage | ServerCompaction | Finished | Progress


class Provider(Protocol):
    """A configured model endpoint. Instances are cheap; `aclose` releases connections."""

    identity: ProviderIdentity

    @property
    def summary_keeps_tools(self) -> bool:
        """Whether a summary request is sent with the turn's tools (with `tool_choice`
        none, never offered): True where the provider's cached prefix holds the tools
        (llama.cpp renders them in the prompt; OpenAI's prompt cache matches them), so
        the summary request is the turn's cached prefix."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one model response. Raises `ProviderError` (after retries) on failure.

        Text deltas are yielded as they arrive; each finished output item is
        yielded as `ItemDone` in output order; `Usage` and `Finished` come last.
        Cancelling the consuming task closes the HTTP stream.
        """
        ...

    async def aclose(self) -> None: ...
