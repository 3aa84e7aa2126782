"""Who wrote a user-role message, as Baton labels it wherever it quotes one to a model.

A top-level session's prompts are the person's. A `task` child's prompts are not:
Baton wrote them from what the parent session's model (or a command's `agent:`)
asked, with the agent's instructions in front (`delegation/feature.py` marks them
with the call that started the run, `TASK_CALL_META`). So in a child's context such a
message is labelled `task`, never `person` or `user`: the person's authority is never
lent to what another model wrote.
"""

from __future__ import annotations

from baton.store.children import TASK_CALL_META
from baton.store.model import StoredMessage

TASK = "task"


def from_parent(message: StoredMessage) -> bool:
    """Whether `message` is the task a child's parent gave it (not the person's words)."""
    return message.role == "user" and TASK_CALL_META in message.meta


def requests_label(message: StoredMessage) -> str:
    """The entry label of a message in the `<baton:requests>` block."""
    if from_parent(message):
        return TASK
    return {"feedback": "plan feedback", "approval": "plan approval"}.get(message.kind, "person")


def transcript_label(message: StoredMessage) -> str:
    """The entry label of a user-role message in the summariser's transcript."""
    if from_parent(message):
        return TASK
    return {"continue": "baton", "pre_compact": "hook"}.get(message.kind, "user")
