"""What the fake saw: recorded requests, compaction artifacts, and the token estimate.

Tests assert on what Baton *sent* far more than on what the fake answered, so a
``RecordedRequest`` reads the same way for both wire formats: ``items`` are Responses
input items or Chat messages, and the text helpers look through both shapes.
"""

import functools
import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from .prefix import Segments, segments
from .script import Reply

Route = Literal[
    "responses", "responses.compact", "chat.completions", "messages", "models", "unknown"
]
Kind = Literal["model", "compact", "other"]
Source = Literal["script", "handler", "default", ""]

COMPACTION_TYPES = ("compaction", "compaction_summary")
# The opening words of the summary prompts sent on the turn's own prefix (compaction/summary.py:
# IN_PLACE, CONTINUE; the fake imports nothing of Baton, tests/test_fake_llm.py checks them).
SUMMARY_PROMPTS = ("[Baton] Stop working on the task", "[Baton] Your summary stopped")


def estimate_tokens(body: Any) -> int:
    """The fake's input-token count: ceil(len(json.dumps(input)) / 4), plus the same for
    ``instructions`` (Responses) — Chat system prompts are already inside ``messages``.

    Deliberately crude and public, so a context-size test can compute the same number.
    """
    if not isinstance(body, dict):
        return 0
    payload = body["messages"] if "messages" in body else body.get("input", "")
    chars = len(json.dumps(payload, ensure_ascii=False))
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        chars += len(instructions)
    return math.ceil(chars / 4)


def content_text(content: Any) -> str:
    """Text of a message ``content`` (string, or list of parts with ``text``/``refusal``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, dict):
                value = part.get("text", part.get("refusal"))
                if isinstance(value, str):
                    out.append(value)
            elif isinstance(part, str):
                out.append(part)
        return "".join(out)
    return ""


def item_type(item: Any) -> str:
    """Responses items may omit ``type`` for messages (EasyInputMessage); Chat messages have none."""
    if not isinstance(item, dict):
        return ""
    kind = item.get("type")
    if isinstance(kind, str):
        return kind
    return "message" if "role" in item else ""


@dataclass(frozen=True)
class CompactionArtifact:
    """One compaction item the fake handed out; recognised when replayed later."""

    id: str
    encrypted_content: str
    trigger: Literal["auto", "scripted", "trigger", "standalone"]
    request_index: int
    note: str | None
    source_items: tuple[Any, ...]

    @property
    def item(self) -> dict[str, Any]:
        return {
            "type": "compaction",
            "id": self.id,
            "encrypted_content": self.encrypted_content,
            "created_by": None,
        }


@dataclass
class RecordedRequest:
    """One HTTP request as received. Reads like its JSON body too: ``req["model"]``."""

    index: int
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    raw: bytes
    body: Any
    route: Route
    kind: Kind
    source: Source = ""
    reply: Reply | None = None
    status: int = 0
    rejected: str | None = None
    compactions: list[CompactionArtifact] = field(
        default_factory=list
    )  # artifacts made while answering
    # Input tokens repeating an earlier request's prefix (fake_llm.prefix), as reported.
    cached_tokens: int = 0
    # Messages API: the compaction blocks handed out in the answer.
    anthropic_compactions: list[dict[str, Any]] = field(default_factory=list)
    # Messages API: the usage reported (input, cache read and cache creation tokens).
    anthropic_usage: dict[str, int] = field(default_factory=dict)

    # ---- dict-like view of the body
    def __getitem__(self, key: str) -> Any:
        return self.body[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(self.body, dict) and key in self.body

    def get(self, key: str, default: Any = None) -> Any:
        return self.body.get(key, default) if isinstance(self.body, dict) else default

    @functools.cached_property
    def segments(self) -> Segments:
        """The request as a prompt cache sees it (instructions, tools, items)."""
        return segments(self.body)

    # ---- request metadata
    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def authorization(self) -> str | None:
        return self.header("authorization")

    @property
    def api_key(self) -> str | None:
        """The Bearer key, or Anthropic's ``x-api-key``."""
        auth = self.authorization or ""
        if auth.lower().startswith("bearer "):
            return auth[7:]
        return self.header("x-api-key")

    @property
    def model(self) -> str | None:
        value = self.get("model")
        return value if isinstance(value, str) else None

    @property
    def stream(self) -> bool:
        return bool(self.get("stream"))

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.body)

    @property
    def instructions(self) -> str | None:
        """Responses ``instructions``, or the joined Chat system/developer messages."""
        if self.route == "chat.completions":
            parts = [
                content_text(m.get("content"))
                for m in self.items
                if m.get("role") in ("system", "developer")
            ]
            return "\n".join(parts) if parts else None
        if self.route == "messages":
            system = self.get("system")
            if isinstance(system, list):
                return "".join(content_text([b]) for b in system) or None
            return system if isinstance(system, str) else None
        value = self.get("instructions")
        return value if isinstance(value, str) else None

    @property
    def tools(self) -> list[dict[str, Any]]:
        tools = self.get("tools") or []
        return [t for t in tools if isinstance(t, dict)]

    @property
    def tool_names(self) -> list[str]:
        names = []
        for tool in self.tools:
            fn = tool.get("function")
            name = fn.get("name") if isinstance(fn, dict) else tool.get("name")
            if isinstance(name, str):
                names.append(name)
        return names

    @property
    def is_summary(self) -> bool:
        """A compaction's summary request: no tools, or the turn's tools with none callable
        (sent so the request is the turn's cached prefix, llama.cpp and Responses) under
        Baton's summary prompt; a turn's step held to no tool (`NoTool`) is not one."""
        if not self.tools:
            return True
        if self.get("tool_choice") not in ("none", {"type": "none"}):
            return False
        return (self.last_user_text() or "").startswith(SUMMARY_PROMPTS)

    @property
    def compaction_trigger(self) -> bool:
        items = self.items
        return bool(items) and item_type(items[-1]) == "compaction_trigger"

    @property
    def compact_threshold(self) -> int | None:
        for entry in self.get("context_management") or []:
            if isinstance(entry, dict) and entry.get("type") == "compaction":
                value = entry.get("compact_threshold")
                return value if isinstance(value, int) else None
        return None

    # ---- input items
    @property
    def items(self) -> list[dict[str, Any]]:
        """Responses input items (a string input becomes one user message) or Chat messages."""
        if self.route in ("chat.completions", "messages"):
            messages = self.get("messages") or []
            return [m for m in messages if isinstance(m, dict)]
        value = self.get("input")
        if isinstance(value, str):
            return [{"role": "user", "content": value}]
        return [i for i in value or [] if isinstance(i, dict)]

    def find(self, type_: str) -> list[dict[str, Any]]:
        """Items of one type (``message`` matches items without ``type``)."""
        return [i for i in self.items if item_type(i) == type_]

    def messages(self, role: str | None = None) -> list[dict[str, Any]]:
        msgs = self.find("message") if self.route == "responses" else self.items
        return [m for m in msgs if role is None or m.get("role") == role]

    def texts(self, role: str | None = None) -> list[str]:
        return [content_text(m.get("content")) for m in self.messages(role)]

    def last_user_text(self) -> str | None:
        texts = self.texts("user")
        return texts[-1] if texts else None

    def function_calls(self) -> list[dict[str, Any]]:
        """``{call_id, name, arguments}`` for every call in the history, any format."""
        if self.route == "messages":
            return [
                {
                    "call_id": b.get("id"),
                    "name": b.get("name"),
                    "arguments": json.dumps(b.get("input")),
                }
                for b in self.blocks("tool_use")
            ]
        if self.route == "chat.completions":
            calls = []
            for m in self.items:
                for tc in m.get("tool_calls") or []:
                    fn = tc.get("function") or {}
                    calls.append(
                        {
                            "call_id": tc.get("id"),
                            "name": fn.get("name"),
                            "arguments": fn.get("arguments"),
                        }
                    )
            return calls
        return [
            {"call_id": i.get("call_id"), "name": i.get("name"), "arguments": i.get("arguments")}
            for i in self.find("function_call")
        ]

    def blocks(self, type_: str | None = None) -> list[dict[str, Any]]:
        """Messages API: every content block of every message (of one type), in order."""
        out = []
        for message in self.items:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and (type_ is None or block.get("type") == type_):
                    out.append(block)
        return out

    def tool_outputs(self) -> dict[str, str]:
        """call_id → output text for every tool result in the history, either format."""
        if self.route == "messages":
            return {
                b.get("tool_use_id", ""): content_text(b.get("content"))
                for b in self.blocks("tool_result")
            }
        if self.route == "chat.completions":
            return {
                m.get("tool_call_id", ""): content_text(m.get("content"))
                for m in self.items
                if m.get("role") == "tool"
            }
        return {
            i.get("call_id", ""): content_text(i.get("output"))
            for i in self.find("function_call_output")
        }

    def compaction_items(self) -> list[dict[str, Any]]:
        if self.route == "messages":
            return self.blocks("compaction")
        return [i for i in self.items if item_type(i) in COMPACTION_TYPES]

    def input_text(self) -> str:
        """All readable text of the input: instructions, messages, tool arguments and outputs."""
        chunks = [self.instructions or ""] if self.route != "chat.completions" else []
        for item in self.items:
            kind = item_type(item)
            if kind == "message":
                chunks.append(content_text(item.get("content")))
                for tc in item.get("tool_calls") or []:
                    chunks.append(str((tc.get("function") or {}).get("arguments", "")))
            elif kind == "function_call":
                chunks.append(str(item.get("arguments", "")))
            elif kind == "function_call_output":
                chunks.append(content_text(item.get("output")))
        return "\n".join(c for c in chunks if c)

    def __repr__(self) -> str:
        return f"<RecordedRequest #{self.index} {self.method} {self.path} {self.kind}/{self.source or '-'} → {self.status}>"
