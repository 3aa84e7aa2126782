"""The `question` tool over ACP: a form elicitation (`elicitation/create`, form mode),
for a client that announced `clientCapabilities.elicitation.form`.

The options become one field: a single choice (`oneOf`) or, when several may be
chosen, a multi-select (`anyOf`); `allow_text` adds a free-text field. A child's
question is asked in its parent's ACP session (a child has none of its own) and
says which child asks. Declined, cancelled or failed: the question closes unanswered.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from acp.schema import (
    ElicitationFormSessionMode,
    ElicitationMultiSelectPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    EnumOption,
    TitledMultiSelectItems,
)

from baton import protocol as p

log = logging.getLogger(__name__)

CHOICE = "choice"
TEXT = "text"


class AcpQuestions:
    """The `question` tool's PersonQuestions over an ACP client's form elicitation."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def ask(self, request: p.QuestionRequestParams) -> p.QuestionResponse | None:
        choices = [
            EnumOption(const=o.label, title=o.label, description=o.description)
            for o in request.options
        ]
        choice: Any = (
            ElicitationMultiSelectPropertySchema(
                type="array", title="Choose", items=TitledMultiSelectItems(any_of=choices)
            )
            if request.multiple
            else ElicitationStringPropertySchema(type="string", title="Choose", one_of=choices)
        )
        properties: dict[str, Any] = {CHOICE: choice}
        if request.allow_text:
            properties[TEXT] = ElicitationStringPropertySchema(
                type="string", title="Or in your own words"
            )
        schema = ElicitationSchema(
            properties=properties, required=None if request.allow_text else [CHOICE]
        )
        asker = f"[the {request.agent or 'task'} child asks] " if request.parent_id else ""
        mode = ElicitationFormSessionMode(
            session_id=request.parent_id or request.session_id,
            tool_call_id=None if request.parent_id else request.tool_call_id,
            requested_schema=schema,
        )
        try:
            response = await self.client.create_elicitation(
                message=asker + request.question, mode=mode
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("elicitation failed, the question is closed unanswered: %s", exc)
            return None
        if getattr(response, "action", None) != "accept":
            return p.QuestionResponse(outcome="cancelled")
        content = getattr(response, "content", None) or {}
        picked = content.get(CHOICE)
        labels = [picked] if isinstance(picked, str) else picked if isinstance(picked, list) else []
        text = content.get(TEXT)
        return p.QuestionResponse(
            outcome="answered",
            labels=[label for label in labels if isinstance(label, str)],
            text=text if isinstance(text, str) and text.strip() else None,
        )
