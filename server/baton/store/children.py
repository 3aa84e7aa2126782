"""A `task` child's messages as the store holds them: its final message, and the whole of
it for `recall` of the parent's task call (the result the parent was given is cut)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from baton.store.model import SessionRow, StoredMessage

# The key of a child's prompt message's meta naming the parent's task call it answers.
TASK_CALL_META = "taskCallId"


def final_message(messages: Iterable[StoredMessage], call_id: str | None = None) -> str:
    """The child's last answer: the text of its last model step with text, after the
    prompt of task call `call_id` (and before the next task's prompt) when given."""
    text = ""
    inside = call_id is None
    for message in messages:
        if message.role == "user" and TASK_CALL_META in message.meta:
            if inside and call_id is not None:
                break
            inside = call_id is None or message.meta[TASK_CALL_META] == call_id
            text = ""
            continue
        if inside and message.role == "assistant" and message.text().strip():
            text = message.text()
    return text.strip()


def call_messages(messages: Iterable[StoredMessage], call_id: str) -> list[StoredMessage]:
    """The messages of one task call of a child: from the prompt of call `call_id` to the
    next task's prompt (a resumed child's earlier calls are not this call's work)."""
    found: list[StoredMessage] = []
    inside = False
    for message in messages:
        if message.role == "user" and TASK_CALL_META in message.meta:
            if inside:
                break
            inside = message.meta[TASK_CALL_META] == call_id
        if inside:
            found.append(message)
    return found


class ChildStore(Protocol):
    """What the whole final message is read from (baton.store.sessions.SessionStore)."""

    def children_of(self, session_id: str) -> list[SessionRow]: ...

    def load_messages(self, session_id: str) -> list[StoredMessage]: ...


def whole_final_message(
    store: ChildStore, parent_id: str, messages: Iterable[StoredMessage], call_id: str
) -> str | None:
    """The whole final message of the child that `task` call `call_id` of `parent_id`
    ran; None when `call_id` is not a task call there."""
    is_task = any(
        part.tool_call_id == call_id and part.name == "task"
        for message in messages
        for part in message.tool_calls()
    )
    if not is_task:
        return None
    for child in store.children_of(parent_id):
        child_messages = store.load_messages(child.id)
        if any(m.meta.get(TASK_CALL_META) == call_id for m in child_messages):
            return final_message(child_messages, call_id)
    return None
