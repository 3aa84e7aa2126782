"""Render a ``Reply`` as Chat Completions does (the ``openai-compatible`` provider's wire).

Streaming is ``data: {chunk}`` lines ending with ``data: [DONE]``: a role chunk, content /
reasoning / refusal deltas, tool-call fragments keyed by ``index`` (id, type and name
only in the first fragment), a finish chunk, and a usage chunk with empty ``choices``
when ``stream_options.include_usage`` is set. Reasoning goes in ``reasoning_content``
(llama.cpp, vLLM, DeepSeek); compaction parts have no Chat form and are skipped.
"""

import json
import time
from dataclasses import dataclass
from typing import Any

from .registry import Registry, usage_numbers
from .script import (
    PromptProgress,
    Reasoning,
    Refusal,
    Reply,
    Text,
    ToolCall,
    split_even,
    split_words,
)

Chunk = dict[str, Any]
MALFORMED = 'data: {"choices": [{"index": 0, "delta": {"content": "oops\n\n'


@dataclass
class Rendered:
    chunks: list[bytes]  # encoded SSE lines, including the final [DONE]
    completion: dict[str, Any]  # the non-streaming body


def _usage(numbers: dict[str, int]) -> dict[str, Any]:
    return {
        "prompt_tokens": numbers["input"],
        "completion_tokens": numbers["output"],
        "total_tokens": numbers["total"],
        "prompt_tokens_details": {"cached_tokens": numbers["cached"], "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": numbers["reasoning"],
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _finish_reason(reply: Reply) -> str:
    if reply.incomplete is not None:
        return "content_filter" if reply.incomplete.reason == "content_filter" else "length"
    return "tool_calls" if any(isinstance(p, ToolCall) for p in reply.output) else "stop"


def _progress_chunks(base: dict[str, Any], progress: PromptProgress) -> list[Chunk]:
    """llama.cpp's shape: an empty assistant delta carrying `prompt_progress`."""
    out: list[Chunk] = []
    done = progress.cached
    while True:
        done = min(progress.total, done + progress.batch) if out else done
        out.append(
            {
                **base,
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}],
                "prompt_progress": {
                    "total": progress.total,
                    "cache": progress.cached,
                    "processed": done,
                    "time_ms": 0,
                },
            }
        )
        if done >= progress.total:
            return out


def render(
    body: dict[str, Any], reply: Reply, registry: Registry, input_tokens: int, cached: int = 0
) -> Rendered:
    completion_id = registry.new_id("chatcmpl").replace("_", "-", 1)
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model") or "gpt-fake",
        "system_fingerprint": "fp_fake",
    }
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "", "refusal": None}]
    content, refusal_text, thinking = [], [], []
    calls: list[dict[str, Any]] = []
    output_chars = reasoning_chars = 0
    for part in reply.output:
        if isinstance(part, Text):
            deltas += [{"content": p} for p in part.pieces]
            content.append(part.content)
            output_chars += len(part.content)
        elif isinstance(part, Refusal):
            deltas += [{"refusal": p} for p in part.pieces]
            refusal_text.append(part.content)
            output_chars += len(part.content)
        elif isinstance(part, Reasoning):
            for summary in part.summary:
                deltas += [{"reasoning_content": p} for p in split_words(summary)]
                thinking.append(summary)
                reasoning_chars += len(summary)
        elif isinstance(part, ToolCall):
            index = len(calls)
            call_id = part.call_id or registry.new_id("call")
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": part.name, "arguments": part.arguments},
                }
            )
            first = {
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": part.name, "arguments": ""},
            }
            deltas.append({"tool_calls": [first]})
            for piece in split_even(part.arguments, part.chunks):
                deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            output_chars += len(part.arguments) + len(part.name)

    numbers = usage_numbers(reply, input_tokens, output_chars, reasoning_chars, cached)
    finish = _finish_reason(reply)
    extra = {"usage": None} if include_usage else {}
    chunks: list[Chunk] = [
        {
            **base,
            "choices": [{"index": 0, "delta": d, "logprobs": None, "finish_reason": None}],
            **extra,
        }
        for d in deltas
    ]
    if reply.prompt_progress is not None:
        chunks[1:1] = _progress_chunks(base, reply.prompt_progress)
    chunks.append(
        {
            **base,
            "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}],
            **extra,
        }
    )
    if include_usage:
        chunks.append({**base, "choices": [], "usage": _usage(numbers)})
    encoded = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks]

    if reply.stream_error is not None:
        failure = reply.stream_error
        cut = 1 if failure.after is None else max(0, min(failure.after, len(encoded)))
        error = {
            "error": {
                "message": failure.message,
                "type": "server_error",
                "param": None,
                "code": failure.code,
            }
        }
        encoded = [*encoded[:cut], f"data: {json.dumps(error)}\n\n".encode()]
    else:
        encoded.append(b"data: [DONE]\n\n")

    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(content) if content or not calls else None,
        "refusal": "".join(refusal_text) or None,
        "annotations": [],
    }
    if thinking:
        message["reasoning_content"] = "\n".join(thinking)
    if calls:
        message["tool_calls"] = calls
    completion = {
        **base,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": _usage(numbers),
    }
    return Rendered(chunks=encoded, completion=completion)
