"""Exact recall of what compaction hid: the source behind the `recall` tool.

A compaction never deletes anything; it only changes the view. `recall`
returns, word for word, what left it: a masked tool output by the call id its
placeholder names, or the lines of compacted messages and hidden outputs that
match a search. Read-only and bounded, so it is allowed in every mode and a
recall never floods the window it was meant to spare.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from baton.agent.requests_block import RUN_PREFIX, folded_run, person_words
from baton.agent.state import SessionState
from baton.compaction.ledger import folded_record
from baton.compaction.ledger_fold import ID_PREFIX
from baton.store.children import whole_final_message
from baton.store.model import StoredMessage
from baton.tools.base import ToolFailure
from baton.tools.webfetch import saved_page

if TYPE_CHECKING:
    from baton.session.service import SessionService

# What one recall returns at most (characters): a masked output in pages of this size.
MAX_CHARS = 12_000
# A search returns at most this many matching lines, each cut to LINE_CHARS.
MAX_MATCHES = 40
LINE_CHARS = 400


class RecallSource:
    """What `recall` reads: the session's stored history and its current view."""

    def __init__(self, sessions: SessionService) -> None:
        self.sessions = sessions

    def recall(
        self, session_id: str, *, call_id: str | None, query: str | None, offset: int = 0
    ) -> str:
        state = self.sessions.state(session_id)
        if call_id:
            # A `task` call's result is cut: its recall is the child's whole final message.
            whole = whole_final_message(
                self.sessions.store, state.id, state.messages, call_id.strip()
            )
            if whole is not None:
                return _page(f"whole final message of task call {call_id.strip()}", whole, offset)
            return _output(state, call_id.strip(), offset)
        if query and query.strip():
            return _search(state, query.strip())
        raise ToolFailure("give call_id (from a pruned-output placeholder) or query (text to find)")


def _hidden_messages(state: SessionState) -> Iterator[StoredMessage]:
    first = state.view.first_kept_seq
    for message in state.messages:
        if message.kind == "compaction" or message.id in state.reverted:
            continue
        if first is not None and message.seq < first:
            yield message


def _output(state: SessionState, call_id: str, offset: int) -> str:
    if call_id.startswith(ID_PREFIX):
        return _ledger_entry(state, call_id, offset)
    if call_id.startswith(RUN_PREFIX):
        return _requests_run(state, call_id, offset)
    for message in state.messages:
        result = message.results.get(call_id)
        if result is None:
            continue
        name = next(
            (part.name for part in message.tool_calls() if part.tool_call_id == call_id),
            "tool",
        )
        # A long page's result shows its start; the whole page waits in the cache.
        page = saved_page(state.id, call_id) if name == "webfetch" else None
        if page is not None:
            return _page(f"whole page of webfetch call {call_id}", page, offset)
        return _page(
            f"exact output of {name} call {call_id} ({result.status})", result.output, offset
        )
    # A person's long message the `<baton:requests>` block shows cut names its message id.
    for message in state.messages:
        if message.id == call_id and message.role == "user":
            return _page(f"exact text of the person's message {call_id}", message.text(), offset)
    raise ToolFailure(
        f"no tool call {call_id!r} in this session; copy the id from the placeholder exactly"
    )


def _ledger_entry(state: SessionState, entry: str, offset: int) -> str:
    """The full record of a ledger entry the block shows folded (`[ledger:…]`)."""
    messages = [m for m in state.messages if m.id not in state.reverted]
    record = folded_record(messages, entry)
    if record is None:
        raise ToolFailure(
            f"no ledger entry {entry!r} in this session; copy the id in brackets exactly"
        )
    return _page(f"full ledger record {entry}", record, offset)


def _requests_run(state: SessionState, run_id: str, offset: int) -> str:
    """The person's messages a folded count line of `<baton:requests>` stands for."""
    run = folded_run((m for m in state.messages if m.id not in state.reverted), run_id)
    if run is None:
        raise ToolFailure(
            f"no run of the person's messages {run_id!r}; copy the id in brackets exactly"
        )
    text = "\n\n".join(f"[{m.id}] {person_words(m)}" for m in run)
    return _page(f"the person's {len(run)} folded message(s) {run_id}", text, offset)


def _page(what: str, text: str, offset: int) -> str:
    """One page of `text` from `offset`, headed by what it is and where the next starts."""
    if offset >= len(text) and text:
        raise ToolFailure(f"offset {offset} is past the end ({len(text):,} characters)")
    page = text[offset : offset + MAX_CHARS]
    end = offset + len(page)
    header = f"[recall: {what}"
    if offset or end < len(text):
        header += f", characters {offset:,}–{end:,} of {len(text):,}"
        if end < len(text):
            header += f"; more with offset {end}"
    return f"{header}]\n{page}"


def _sources(state: SessionState) -> Iterator[tuple[str, str]]:
    """(label, text) of everything compaction hid: compacted messages and masked outputs."""
    hidden = list(_hidden_messages(state))
    hidden_ids = {m.id for m in hidden}
    for message in hidden:
        if message.role == "user":
            yield f"{message.id} person", message.text()
            continue
        for part in message.parts:
            if part.type == "text" and part.text:
                yield f"{message.id} assistant", part.text
            elif part.type == "tool_call":
                yield (
                    f"{message.id} call {part.tool_call_id} {part.name} input",
                    part.arguments,
                )
    masked = state.view.masked
    for message in state.messages:
        for call_id, result in message.results.items():
            if message.id in hidden_ids or call_id in masked:
                yield f"output of call {call_id}", result.output


def _search(state: SessionState, query: str) -> str:
    needle = query.lower()
    matches: list[str] = []
    total = 0
    for label, text in _sources(state):
        for number, line in enumerate(text.splitlines(), start=1):
            if needle not in line.lower():
                continue
            total += 1
            if len(matches) < MAX_MATCHES:
                shown = line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"
                matches.append(f"[{label}, line {number}] {shown}")
    if not matches:
        return (
            f"[recall: no line of the compacted history or pruned outputs contains {query!r}; "
            "what is still in view is not searched]"
        )
    more = f"; showing the first {MAX_MATCHES}" if total > MAX_MATCHES else ""
    body = "\n".join(matches)
    if len(body) > MAX_CHARS:
        body = body[:MAX_CHARS] + "\n[… cut; search for something narrower]"
    return f"[recall: {total} matching line(s) for {query!r}{more}]\n{body}"
