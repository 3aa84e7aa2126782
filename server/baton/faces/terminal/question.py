"""`baton run` asks the `question` tool's question on its terminal.

The question and its options are the model's words, so each is shown through
`visible` (no control character from them reaches the terminal). The person
answers by number (several, separated by commas or spaces, when the question
allows more than one), or in their own words when it allows text; an empty
line closes the question unanswered.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

from baton import protocol as p
from baton.terminal_escape import visible

if TYPE_CHECKING:
    from baton.faces.terminal.render import TerminalChannel


class TerminalQuestions:
    """The `question` tool's PersonQuestions at `baton run`'s terminal."""

    def __init__(self, channel: TerminalChannel) -> None:
        self.channel = channel

    async def ask(self, request: p.QuestionRequestParams) -> p.QuestionResponse | None:
        err = self.channel.err
        self.channel.status.hide()
        self.channel.end_line()
        if request.parent_id:
            asker = self.channel.children.label(request.session_id)
            err.write(f"[{asker or 'the ' + visible(request.agent or 'task') + ' child'} asks:]\n")
        err.write(f"? {visible(request.question)}\n")
        for number, option in enumerate(request.options, start=1):
            about = f" — {visible(option.description)}" if option.description else ""
            err.write(f"  {number}  {visible(option.label)}{about}\n")
        count = len(request.options)
        how = f"numbers 1-{count}, comma-separated" if request.multiple else f"a number 1-{count}"
        words = ", or your own words" if request.allow_text else ""
        while True:
            err.write(f"Answer ({how}{words}; empty to skip): ")
            err.flush()
            line = (await asyncio.to_thread(sys.stdin.readline)).strip()
            if not line:
                return p.QuestionResponse(outcome="cancelled")
            answer = parse_answer(line, request)
            if answer is not None:
                return answer
            err.write(f"  not an answer: give {how}{words}\n")


def parse_answer(line: str, request: p.QuestionRequestParams) -> p.QuestionResponse | None:
    """The answer `line` gives, or None when it is none the question accepts."""
    parts = line.replace(",", " ").split()
    if parts and all(part.isdigit() for part in parts):
        numbers = [int(part) for part in parts]
        if all(1 <= n <= len(request.options) for n in numbers) and (
            request.multiple or len(numbers) == 1
        ):
            labels = [request.options[n - 1].label for n in dict.fromkeys(numbers)]
            return p.QuestionResponse(outcome="answered", labels=labels)
        return None
    if request.allow_text:
        return p.QuestionResponse(outcome="answered", text=line)
    return None
