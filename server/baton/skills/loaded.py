"""Which skills a session has loaded, and where: in the view, or before its compaction.

A skill is loaded by a `skill` tool call (its result is the framed body) or by the
person's `/name` (the message is the framed body, with their arguments). Both are
in the store, so what was loaded is read from the history: nothing else to keep.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from baton.agent import framing
from baton.agent.state import SessionState, View
from baton.agent.tokens import estimate
from baton.store.model import StoredMessage

TOOL_NAME = "skill"
BLOCK_OPENING = "<baton:skill "
# The skills kept after a compaction share this much of the usable window (estimated
# tokens, at least MIN_KEPT_TOKENS); past it the oldest fold to their name and one line,
# their body one `skill` call away. The newest loaded skill always stays whole.
KEPT_SHARE = 0.10
MIN_KEPT_TOKENS = 800
# A folded skill keeps this many characters of its first line.
FOLDED_LINE_CHARS = 160


@dataclass(frozen=True)
class Load:
    seq: int
    name: str
    text: str  # the framed block, as the model was sent it


def loads(state: SessionState) -> Iterator[Load]:
    for message in state.messages:
        if message.id in state.reverted or message.kind == "compaction":
            continue
        yield from _loads(message)


def _loads(message: StoredMessage) -> Iterator[Load]:
    if message.role == "user":
        command = message.meta.get("command")
        if isinstance(command, dict) and command.get("kind") == "skill":
            text = message.text()
            if text.startswith(BLOCK_OPENING):
                yield Load(message.seq, str(command.get("name")), text)
        return
    for part in message.tool_calls():
        if part.name != TOOL_NAME:
            continue
        args = part.input or {}
        if not isinstance(args, dict) or args.get("file"):
            continue  # a bundled file read through the tool, not the skill itself
        result = message.results.get(part.tool_call_id)
        if result is None or result.status != "completed":
            continue
        if result.output.startswith(BLOCK_OPENING):
            yield Load(message.seq, str(args.get("name")), result.output)


def in_view(state: SessionState, name: str, kept: list[Load]) -> bool:
    """Whether the model's current view holds `name`'s body already."""
    first = state.view.first_kept_seq
    if any(load.name == name for load in kept):
        return True
    return any(load.name == name and (first is None or load.seq >= first) for load in loads(state))


def kept_after(state: SessionState, view: View) -> list[Load]:
    """The skills loaded in the part of the history `view` compacted and not loaded again
    in the part it keeps: the latest text of each, in the order they were last loaded."""
    first = view.first_kept_seq
    if first is None:
        return []
    latest: dict[str, Load] = {}
    retained: set[str] = set()
    for load in loads(state):
        if load.seq < first:
            latest.pop(load.name, None)
            latest[load.name] = load
        else:
            retained.add(load.name)
    return [load for name, load in latest.items() if name not in retained]


def kept_budget(usable_window: int) -> int:
    """The kept skills' budget for a usable window of `usable_window` tokens."""
    return max(MIN_KEPT_TOKENS, int(usable_window * KEPT_SHARE))


def within_budget(kept: list[Load], budget: int) -> list[tuple[Load, bool]]:
    """Each kept skill and whether it stays whole: the oldest fold first until the rest
    fit `budget` (estimated tokens); the newest never folds."""
    total = sum(estimate(load.text) for load in kept)
    out: list[tuple[Load, bool]] = []
    for index, load in enumerate(kept):
        fold = total > budget and index < len(kept) - 1
        if fold:
            total -= estimate(load.text) - estimate(folded_line(load))
        out.append((load, not fold))
    return out


def folded_line(load: Load) -> str:
    """A kept skill folded to its name and its first line, and how to load it again."""
    body = [line.strip() for line in load.text.splitlines()[1:] if line.strip()]
    first = body[0] if body and not body[0].startswith("</baton:") else ""
    if len(first) > FOLDED_LINE_CHARS:
        first = first[: FOLDED_LINE_CHARS - 1] + "…"
    about = f": {framing.inline(first)}" if first else ""
    return (
        f"[skill {framing.inline(load.name)} was loaded before the compaction and folded to "
        f"keep the view small{about}. "
        f'`skill {{"name": "{framing.inline(load.name)}"}}` loads its body again.]'
    )
