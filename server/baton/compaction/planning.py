"""What a compaction decides, as pure functions of sizes and messages (no I/O, no model).

The runner (`engine.py`) and the native strategy (`native.py`) do the work; every
choice they make is one of these, so each is unit-tested without a server
(tests/compaction/test_planning.py):

* `should_compact`: whether the automatic trigger fires;
* `ceiling`: once the budgets are reached, the last view at its budgets: no later
  view may be larger;
* `Budgets` / `budgets`: the target size and the protected and kept budgets;
* `prune_is_enough`: the first step, prune only or go on to summarise;
* `keep_recent_tokens`: the verbatim budget's default (a quarter of the usable window,
  within 1,000 and 20,000 tokens), for the native and the server strategies;
* `escalation` (from `LEVELS`) and `after_level`: the whole escalation plan (keep a
  quarter as much verbatim, then mask every old output too), and when to stop;
* `escalate`: the level loop both strategies run, given what one level tries
  (a summary, a server call) and how a tried level is judged;
* `outcome`: which candidate a native compaction offers (a summary, pruning
  alone, nothing to gain, or a session that cannot fit);
* `never_bigger`: the one check that a committed native view is smaller.

The cut (`cut.py`), the masks (`prune.py`) and the ledger (`ledger.py`) are pure
too and live in their own modules.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from baton import protocol as p
from baton.agent.context import BuiltContext
from baton.agent.state import SessionState, View
from baton.agent.tokens import FIXED_KINDS, ITEM_OVERHEAD
from baton.compaction.cut import KEEP_SHARE, choose_cut, protected_start
from baton.compaction.summary import summary_budget
from baton.store.model import StoredMessage

# After an automatic compaction, aim this far below the trigger so work can go on.
TARGET_FRACTION = 0.6
# A region smaller than this is not worth a summary request (the summary and the
# request's own overhead would be about as large as what they replace).
MIN_REGION_TOKENS = 200
# Escalation levels: the share of the verbatim budget each keeps (level 3 also masks
# every old output).
LEVELS = (1.0, 0.25, 0.0)

Outcome = Literal["summary", "pruned", "nothing", "too_big"]
AfterLevel = Literal["done", "escalate", "stop"]


class NothingToCompact(Exception):
    """Nothing can be gained: the result is not committed; the message has the figures.

    `notes` are what the strategy had found before it gave up (the record shows them);
    `author` the strategy that gave up, when it is not the one chosen (a fallback)."""

    def __init__(
        self, message: str, notes: Sequence[str] = (), author: p.Strategy | None = None
    ) -> None:
        super().__init__(message)
        self.notes = tuple(notes)
        self.author = author


def history_tokens(built: BuiltContext) -> int:
    """The view's tokens that are history (the target "history at most half" ignores the
    fixed parts: system prompt, instructions, tools)."""
    return built.tokens - sum(part.tokens for part in built.parts if part.kind in FIXED_KINDS)


def largest_parts(built: BuiltContext) -> str:
    """The three largest parts of a view, for a message saying what does not fit."""
    parts = sorted(built.parts, key=lambda part: part.tokens, reverse=True)[:3]
    return ", ".join(f"{part.kind} {part.tokens}" for part in parts)


def should_compact(tokens: int, threshold: int, *, auto: bool) -> bool:
    """The automatic trigger: the counted context reached the threshold."""
    return auto and tokens >= threshold


@dataclass(frozen=True)
class Budgets:
    target: int  # the view's size to reach, in counted tokens
    protect: int  # newest tool outputs never pruned (estimated tokens)
    keep_recent: int  # recent messages kept verbatim at most (estimated tokens)
    forced: bool  # manual or overflow: always summarise; otherwise prune may be enough


def budgets(
    trigger: p.Trigger,
    *,
    before: int,
    history: int,
    threshold: int,
    usable: int,
    protect: int | None,
    keep_recent: int | None,
    ceiling: int | None = None,
) -> Budgets:
    """A manual or overflow compaction halves the history (everything but instructions
    and tools); an automatic one brings the view to TARGET_FRACTION of the threshold.
    Every compaction but a model switch (which only needs to fit) must shrink the view,
    and none may leave a view larger than `ceiling` (see `ceiling`) when there is one."""
    forced = trigger in ("manual", "overflow")
    target = before - history + history // 2 if forced else int(threshold * TARGET_FRACTION)
    if trigger != "model_switch":
        target = min(target, before - 1)
        if ceiling is not None:
            target = min(target, ceiling)
    return Budgets(
        target=target,
        protect=protect if protect is not None else min(40_000, usable // 4),
        keep_recent=keep_recent_tokens(keep_recent, usable),
        forced=forced,
    )


def at_its_budgets(record: p.CompactionRecord) -> bool:
    """Whether the view `record` left was at its budgets: its ledger could not show every
    fact in the room the rest of the view left it (some are one `recall` away)."""
    return record.score is not None and record.score.one_recall > 0


def ceiling_after(record: p.CompactionRecord, held_to: int | None) -> int | None:
    """The ceiling a compaction hands on (stored with its view): its own view when that
    was at its budgets, else the one it was held to (None: no bound yet)."""
    return record.tokens_after if at_its_budgets(record) else held_to


def ceiling(
    trigger: p.Trigger,
    previous: p.CompactionRecord | None,
    *,
    handed_on: int | None,
    window: int,
    fresh: bool = False,
) -> int | None:
    """The most the view after this compaction may hold, once the budgets are reached: the
    last view that was at its budgets (`at_its_budgets`), handed on by each compaction
    since (`ceiling_after`, stored with the view as `handed_on`).

    Until the budgets are reached a later view may be larger: the ledger, the person's
    requests and the kept skills still grow into the room. After, a view larger than one
    at its budgets would be this compaction's choice (masking old outputs keeps every
    message since the last cut, where the one before moved the cut and gave the ledger the
    room; the cut falls elsewhere), so each fits in it, its ledger giving way. A view that
    showed everything in less (every fact in view: the room was not needed) sets no lower
    bound: holding the next to it would fold facts and cut what the model just read while
    the room stays empty. None: no bound (budgets not reached, no previous native view,
    another window, a model switch, a fresh start: asked for, not needed)."""
    if fresh or trigger == "model_switch" or previous is None or previous.strategy != "native":
        return None
    score = previous.score
    if score is None or score.window != window or previous.undone:
        return None
    return handed_on


def keep_recent_tokens(setting: int | None, usable: int) -> int:
    """The most recent messages kept verbatim (`compaction.keepRecentTokens`, else a
    quarter of the usable window within 1,000 and 20,000 tokens)."""
    return setting if setting is not None else max(1_000, min(20_000, usable // 4))


def prune_is_enough(pruned_tokens: int | None, budgets: Budgets) -> bool:
    """The first step: pruning alone is the compaction when it meets the target (never
    for a manual or overflow compaction, which summarise; never for a server chain)."""
    return pruned_tokens is not None and not budgets.forced and pruned_tokens <= budgets.target


def room(
    target: int, blocks_tokens: int, messages_tokens: int, usable: int, calibration: float
) -> int:
    """Estimated tokens of verbatim messages that still let the view meet `target` with a
    summary at its full budget, so one summary call is the norm. `blocks_tokens` is the
    view with every message summarised away and no summary (instructions, Baton's
    blocks). Continuous in the history's size, so the kept part grows smoothly with it."""
    summary = summary_budget(int(messages_tokens * (1 - KEEP_SHARE)), usable)
    return max(0, int((target - blocks_tokens) / calibration) - summary - ITEM_OVERHEAD)


@dataclass(frozen=True)
class Level:
    """One escalation level: how much it keeps verbatim, and whether it is the last
    (which also masks every old output, and after which nothing is left to try)."""

    number: int
    keep: int
    last: bool


def escalation(keep: int) -> tuple[Level, ...]:
    """The whole escalation plan for a verbatim budget of `keep` tokens."""
    return tuple(
        Level(number, int(keep * share), number == len(LEVELS))
        for number, share in enumerate(LEVELS, start=1)
    )


def level_keeps(keep: int) -> tuple[int, ...]:
    """The verbatim budget at each escalation level."""
    return tuple(level.keep for level in escalation(keep))


def worth_summarising(region_tokens: int, *, anchored: bool) -> bool:
    """A region is summarised when it is not empty and, with no summary to update, at
    least MIN_REGION_TOKENS (smaller ones: keep fewer messages at the next level)."""
    return region_tokens > 0 and (anchored or region_tokens >= MIN_REGION_TOKENS)


def after_level(level: int, built: int, kept: int, target: int) -> AfterLevel:
    """After summarising at `level`: done (the target is met), escalate, or stop when
    even summarising every kept message could not meet it (another call gains nothing)."""
    if built <= target:
        return "done"
    if level < len(LEVELS) and built - kept > target:
        return "stop"
    return "escalate"


@dataclass(frozen=True)
class Tried:
    """What one level made: its view and its counted size, and how many of those tokens
    are the messages it kept verbatim (counted)."""

    view: View
    tokens: int
    kept: int = 0
    # The view as the model would be sent it, when the level built it (its parts say
    # what a view that cannot fit is made of).
    built: BuiltContext | None = None


@dataclass(frozen=True)
class Escalated:
    """The loop's answer: the level that met its target with what it made (`met`), or
    neither, and the smallest candidate any level made (`best`)."""

    level: Level | None
    met: Tried | None
    best: Tried | None


async def escalate(
    levels: Sequence[Level],
    attempt: Callable[[Level], Awaitable[Tried | None]],
    judge: Callable[[Level, Tried], AfterLevel],
) -> Escalated:
    """Try each level in turn (`attempt` returns None when the level has nothing to try:
    the next keeps fewer), until `judge` says one is done or that another gains nothing."""
    best: Tried | None = None
    for level in levels:
        tried = await attempt(level)
        if tried is None:
            continue
        if best is None or tried.tokens < best.tokens:
            best = tried
        step = judge(level, tried)
        if step == "done":
            return Escalated(level, tried, best)
        if step == "stop":
            break
    return Escalated(None, None, best)


def outcome(
    best: int | None, pruned: int | None, masks: int, *, threshold: int, forced: bool
) -> Outcome:
    """Which candidate a native compaction offers when no level met its target: the
    smallest summary (`best`) if it may stand (always when forced, else under the
    threshold), else pruning alone if it masked something, else nothing. Whether
    either is smaller than the view before is `never_bigger`'s to say."""
    if best is not None:
        return "summary" if forced or best <= threshold else "too_big"
    if pruned is not None and masks:
        return "pruned"
    return "nothing"


def never_bigger(
    strategy: p.Strategy,
    trigger: p.Trigger,
    *,
    before: int,
    history: int,
    after: int,
    made_by: str,
) -> str | None:
    """Why the new view may not be committed (it is not smaller), or None.

    Native views only: a server artifact's size is the provider's to know (its
    estimate is a guess from encrypted bytes), a model switch needs only to fit,
    and a fresh start is asked for, not needed."""
    if strategy != "native" or trigger == "model_switch" or after < before:
        return None
    return (
        f"nothing to compact: the view is {before} tokens (history {history}); "
        f"{made_by} would make it {after}"
    )


def in_view(
    messages: Sequence[StoredMessage], reverted: set[str], view: View
) -> list[StoredMessage]:
    """The messages `view` shows (not compaction markers, not taken back by a revert)."""
    first = view.first_kept_seq
    return [
        m
        for m in messages
        if m.kind != "compaction" and (first is None or m.seq >= first) and m.id not in reverted
    ]


def region(
    messages: Sequence[StoredMessage], boundary: int | None, since: int | None
) -> list[StoredMessage]:
    """The messages from `since` (the previous cut) up to `boundary` (this one)."""
    return [
        m
        for m in messages
        if (boundary is None or m.seq < boundary) and (since is None or m.seq >= since)
    ]


def after_last(messages: Sequence[StoredMessage]) -> int:
    """A first kept seq that keeps no message."""
    return (messages[-1].seq + 1) if messages else 0


def kept_masks(
    masked: dict[str, str], messages: Sequence[StoredMessage], boundary: int | None
) -> dict[str, str]:
    """The masks of calls still in view after a cut at `boundary`."""
    kept_ids: set[str] = set()
    for m in messages:
        if boundary is not None and m.seq < boundary:
            continue
        kept_ids.update(m.results)
        kept_ids.update(part.tool_call_id for part in m.tool_calls())
    return {k: v for k, v in masked.items() if k in kept_ids}


def choose_boundary(
    messages: Sequence[StoredMessage],
    masked: dict[str, str],
    keep_tokens: int,
    state: SessionState,
) -> int | None:
    """The seq of the oldest message kept verbatim (None: keep everything before it)."""
    if not messages:
        return None
    cut = choose_cut(messages, masked, keep_tokens, protected_start(messages, state))
    if cut.index >= len(messages):
        return after_last(state.messages)
    return messages[cut.index].seq
