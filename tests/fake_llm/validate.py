"""The request checks a real server makes and a careless client trips over.

Baton rebuilds history after compaction and pruning; the most likely bugs are a tool
result without its call, a call without its result, or an artifact that was altered or
invented. OpenAI rejects those with HTTP 400, so the fake does too (``strict=True``),
with the same messages, and tests see the failure where it happens.
"""

from collections.abc import Callable
from typing import Any

from .errors import openai_error
from .records import COMPACTION_TYPES, item_type

Problem = dict[str, Any]


def check_responses_input(
    items: list[dict[str, Any]],
    *,
    chained: bool,
    is_known: Callable[[str], bool],
) -> Problem | None:
    """Validate Responses input items; ``chained`` (previous_response_id) relaxes pairing."""
    for position, item in enumerate(items):
        kind = item_type(item)
        if kind == "compaction_trigger" and position != len(items) - 1:
            return openai_error(
                "compaction_trigger must be the final input item.", param=f"input[{position}]"
            )
        if kind in (*COMPACTION_TYPES, "reasoning"):
            secret = item.get("encrypted_content")
            if kind in COMPACTION_TYPES and not isinstance(secret, str):
                return openai_error(
                    f"Missing required parameter: 'input[{position}].encrypted_content'.",
                    code="missing_required_parameter",
                    param=f"input[{position}].encrypted_content",
                )
            if isinstance(secret, str) and not is_known(secret):
                return openai_error(
                    f"The encrypted content for item {item.get('id') or f'input[{position}]'} could not "
                    "be verified. Reason: Encrypted content could not be decrypted or parsed.",
                    code="invalid_encrypted_content",
                )
    if chained:
        return None
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for position, item in enumerate(items):
        kind = item_type(item)
        if kind == "function_call":
            calls[str(item.get("call_id"))] = position
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in calls:
                return openai_error(
                    f"No tool call found for function call output with call_id {call_id}.",
                    param="input",
                )
            answered.add(call_id)
    for call_id in calls:
        if call_id not in answered:
            return openai_error(f"No tool output found for function call {call_id}.", param="input")
    return None


def check_chat_messages(messages: list[dict[str, Any]]) -> Problem | None:
    """Every assistant ``tool_calls`` entry needs a following ``tool`` message, and back."""
    open_ids: list[str] = []
    for position, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_ids:
                return openai_error(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    param=f"messages.[{position}].role",
                )
            open_ids.remove(call_id)
            continue
        if open_ids:
            return _unanswered(open_ids, position)
        if role == "assistant":
            open_ids = [
                str(tc.get("id")) for tc in message.get("tool_calls") or [] if isinstance(tc, dict)
            ]
    if open_ids:
        return _unanswered(open_ids, len(messages))
    return None


def _unanswered(ids: list[str], position: int) -> Problem:
    return openai_error(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(ids),
        param=f"messages.[{position}].role",
    )
