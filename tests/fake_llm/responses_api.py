"""Render a ``Reply`` as the OpenAI Responses API does: the SSE event sequence and the
final ``response`` object, plus the standalone ``/responses/compact`` result.

The event order and payloads follow ``openai-python``'s ``response_stream_event.py`` and
are checked against the SDK's own stream accumulator in ``tests/test_fake_llm.py``.
"""

import copy
import json
import time
from dataclasses import dataclass, field
from typing import Any

from .errors import RESPONSES_OVERFLOW_MESSAGE
from .records import item_type
from .registry import Registry, Trigger, usage_numbers
from .script import (
    Compaction,
    Reasoning,
    Refusal,
    Reply,
    StreamError,
    Text,
    ToolCall,
    split_even,
    split_words,
)

Event = dict[str, Any]


@dataclass
class Context:
    """What rendering needs to know about the request being answered."""

    body: dict[str, Any]
    request_index: int
    registry: Registry
    input_tokens: int
    items: list[dict[str, Any]]
    cached_tokens: int = 0  # the common prefix with an earlier request (fake_llm.prefix)
    compaction_trigger: Trigger = "scripted"  # how compaction parts are logged
    auto_compact: bool = False  # prepend a compaction item (threshold passed)


@dataclass
class Rendered:
    events: list[Event]
    response: dict[str, Any]  # the final response object (also the non-streaming body)
    failure: StreamError | None = None


@dataclass
class _Output:
    """Accumulates output items and their events while a reply is rendered."""

    ctx: Context
    events: list[Event] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    output_chars: int = 0
    reasoning_chars: int = 0

    def emit(self, type_: str, **payload: Any) -> None:
        self.events.append({"type": type_, **copy.deepcopy(payload)})

    def add(self, part: Text | Refusal | ToolCall | Reasoning | Compaction) -> None:
        index = len(self.items)
        if isinstance(part, Text | Refusal):
            self.items.append(self._message(part, index))
        elif isinstance(part, ToolCall):
            self.items.append(self._function_call(part, index))
        elif isinstance(part, Reasoning):
            self.items.append(self._reasoning(part, index))
        else:
            self.items.append(self.compaction(part.note, self.ctx.compaction_trigger))

    def compaction(self, note: str | None, trigger: Trigger) -> dict[str, Any]:
        """Compaction items stream as added/done only, no deltas."""
        ctx = self.ctx
        artifact = ctx.registry.new_compaction(trigger, ctx.request_index, note, ctx.items)
        index = len(self.items)
        self.emit("response.output_item.added", output_index=index, item=artifact.item)
        self.emit("response.output_item.done", output_index=index, item=artifact.item)
        return artifact.item

    def _message(self, part: Text | Refusal, index: int) -> dict[str, Any]:
        item_id = self.ctx.registry.new_id("msg")
        added = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "content": [],
            "role": "assistant",
        }
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        full = part.content
        self.output_chars += len(full)
        self.emit("response.output_item.added", output_index=index, item=added)
        if isinstance(part, Text):
            empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            done_part = {**empty, "text": full}
            self.emit("response.content_part.added", **where, part=empty)
            for piece in part.pieces:
                self.emit("response.output_text.delta", **where, delta=piece, logprobs=[])
            self.emit("response.output_text.done", **where, text=full, logprobs=[])
        else:
            empty = {"type": "refusal", "refusal": ""}
            done_part = {"type": "refusal", "refusal": full}
            self.emit("response.content_part.added", **where, part=empty)
            for piece in part.pieces:
                self.emit("response.refusal.delta", **where, delta=piece)
            self.emit("response.refusal.done", **where, refusal=full)
        self.emit("response.content_part.done", **where, part=done_part)
        done = {**added, "status": "completed", "content": [done_part]}
        self.emit("response.output_item.done", output_index=index, item=done)
        return done

    def _function_call(self, part: ToolCall, index: int) -> dict[str, Any]:
        registry = self.ctx.registry
        item_id = registry.new_id("fc")
        call_id = part.call_id or registry.new_id("call")
        added = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call_id,
            "name": part.name,
        }
        self.output_chars += len(part.arguments) + len(part.name)
        self.emit("response.output_item.added", output_index=index, item=added)
        for piece in split_even(part.arguments, part.chunks):
            self.emit(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=index,
                delta=piece,
            )
        self.emit(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=index,
            name=part.name,
            arguments=part.arguments,
        )
        done = {**added, "status": "completed", "arguments": part.arguments}
        self.emit("response.output_item.done", output_index=index, item=done)
        return done

    def _reasoning(self, part: Reasoning, index: int) -> dict[str, Any]:
        """The ``.added`` copy has no ``encrypted_content``: clients must persist ``.done``."""
        ctx = self.ctx
        item_id = ctx.registry.new_id("rs")
        self.emit(
            "response.output_item.added",
            output_index=index,
            item={"id": item_id, "type": "reasoning", "summary": [], "encrypted_content": None},
        )
        for summary_index, summary in enumerate(part.summary):
            where = {"item_id": item_id, "output_index": index, "summary_index": summary_index}
            self.reasoning_chars += len(summary)
            self.emit(
                "response.reasoning_summary_part.added",
                **where,
                part={"type": "summary_text", "text": ""},
            )
            for piece in split_words(summary):
                self.emit("response.reasoning_summary_text.delta", **where, delta=piece)
            self.emit("response.reasoning_summary_text.done", **where, text=summary)
            self.emit(
                "response.reasoning_summary_part.done",
                **where,
                part={"type": "summary_text", "text": summary},
            )
        include = ctx.body.get("include") or []
        secret = ctx.registry.new_secret("rs") if "reasoning.encrypted_content" in include else None
        done = {
            "id": item_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": s} for s in part.summary],
            "encrypted_content": secret,
        }
        self.emit("response.output_item.done", output_index=index, item=done)
        return done


def base_response(ctx: Context, response_id: str) -> dict[str, Any]:
    """The ``response`` object as ``response.created`` shows it; request fields echoed."""
    body = ctx.body
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": body.get("model") or "gpt-fake",
        "output": [],
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": None,
        "user": None,
        "metadata": body.get("metadata") or {},
    }


def usage_block(numbers: dict[str, int]) -> dict[str, Any]:
    return {
        "input_tokens": numbers["input"],
        "input_tokens_details": {"cached_tokens": numbers["cached"], "cache_write_tokens": 0},
        "output_tokens": numbers["output"],
        "output_tokens_details": {"reasoning_tokens": numbers["reasoning"]},
        "total_tokens": numbers["total"],
    }


def _failure(reply: Reply) -> StreamError | None:
    if reply.stream_error is not None:
        return reply.stream_error
    if reply.overflow is not None and reply.overflow.in_stream:
        return StreamError(
            RESPONSES_OVERFLOW_MESSAGE, code="context_length_exceeded", as_failed=True
        )
    return None


def render(ctx: Context, reply: Reply) -> Rendered:
    """The full event list (sequence-numbered) and the final response object."""
    response = base_response(ctx, ctx.registry.new_id("resp"))
    out = _Output(ctx)
    out.emit("response.created", response=response)
    out.emit("response.in_progress", response=response)
    if ctx.auto_compact and not any(isinstance(p, Compaction) for p in reply.output):
        out.items.append(out.compaction(None, "auto"))
    for part in reply.output:
        out.add(part)

    numbers = usage_numbers(
        reply, ctx.input_tokens, out.output_chars, out.reasoning_chars, ctx.cached_tokens
    )
    final = {**response, "status": "completed", "output": out.items, "usage": usage_block(numbers)}
    events = out.events
    failure = _failure(reply)
    if failure is not None:
        cut = 2 if failure.after is None else max(0, min(failure.after, len(events)))
        events = events[:cut]
        if failure.as_failed:
            error = {"code": failure.code, "message": failure.message}
            final = {**response, "status": "failed", "error": error}
            events.append({"type": "response.failed", "response": copy.deepcopy(final)})
        else:
            events.append(
                {"type": "error", "code": failure.code, "message": failure.message, "param": None}
            )
    elif reply.incomplete is not None:
        final = {
            **final,
            "status": "incomplete",
            "incomplete_details": {"reason": reply.incomplete.reason},
        }
        events.append({"type": "response.incomplete", "response": copy.deepcopy(final)})
    else:
        events.append({"type": "response.completed", "response": copy.deepcopy(final)})
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return Rendered(events=events, response=final, failure=failure)


def sse(event: Event) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


MALFORMED = 'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": "oops\n\n'


def retained_user_messages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The user messages a standalone compaction keeps verbatim, in item form."""
    kept = []
    for item in items:
        if item_type(item) == "message" and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                content = [{"type": "input_text", "text": content}]
            kept.append({"type": "message", "role": "user", "content": content})
    return kept


def render_compact(ctx: Context, reply: Reply) -> dict[str, Any]:
    """The ``/v1/responses/compact`` result: retained user messages, then the artifact."""
    out = _Output(ctx)
    for part in reply.output or (Compaction(),):
        out.add(part)
    numbers = usage_numbers(reply, ctx.input_tokens, sum(len(json.dumps(i)) for i in out.items), 0)
    return {
        "id": ctx.registry.new_id("resp"),
        "created_at": int(time.time()),
        "object": "response.compaction",
        "output": retained_user_messages(ctx.items) + out.items,
        "usage": usage_block(numbers),
    }
