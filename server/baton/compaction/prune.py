"""Pruning: the cheapest phase. Old tool outputs leave the model's view as one-line notes.

Nothing is deleted: the store keeps every output; only the view changes.
Measured on exact-answer probes, masking old outputs kept far more than
summarising, so it always runs first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from baton.agent.tokens import estimate
from baton.store.model import StoredMessage

# Outputs smaller than this are not worth a note.
MIN_MASKED_TOKENS = 50


def _call_detail(args: dict[str, object]) -> str:
    """A call's arguments as its notes name them: JSON, at most 160 characters."""
    detail = json.dumps(args, ensure_ascii=False)
    return detail if len(detail) <= 160 else detail[:157] + "…"


def mask_note(call_id: str, name: str, args: dict[str, object], output: str) -> str:
    detail = _call_detail(args)
    return (
        f"[output pruned by compaction: {name} {detail} returned {len(output):,} characters;"
        f' `recall {{"call_id": "{call_id}"}}` returns it exactly]'
    )


def cut_note(call_id: str, name: str, args: dict[str, object], output: str, keep: int) -> str:
    """The output's first whole lines within `keep` characters, then a note of where it
    was cut: what a compaction that must save only part of an output leaves of it."""
    head = output[:keep]
    if len(head) < len(output):
        head = head[: head.rfind("\n") + 1]
    lines = output.count("\n") + (0 if output.endswith("\n") else 1)
    shown = head.count("\n")
    return (
        f"{head}[output cut by compaction after line {shown:,} of {lines:,} ({len(head):,} of "
        f"{len(output):,} characters): {name} {_call_detail(args)}; "
        f'`recall {{"call_id": "{call_id}"}}` '
        "returns it whole]"
    )


def plan_masks(
    messages: Sequence[StoredMessage],
    already: dict[str, str],
    *,
    protect_tokens: int,
    needed_tokens: int | None = None,
    exempt: frozenset[str] = frozenset(),
    cut_last: bool = False,
) -> tuple[dict[str, str], int]:
    """Choose tool outputs to mask, oldest first, outside the newest `protect_tokens`.

    Returns (the new masks, the tokens they save). With `needed_tokens`, stops
    once that much is saved: remove the least first. With `cut_last` too, the last
    output chosen keeps the head that the saving does not need (`cut_note`): a mask
    saves only what is asked of it.
    """
    outputs: list[tuple[str, str, dict[str, object], str]] = []
    for message in messages:
        for part in message.tool_calls():
            call_id = part.tool_call_id
            result = message.results.get(call_id)
            if result is None or call_id in already or call_id in exempt:
                continue
            outputs.append((call_id, part.name, part.input, result.output))

    protected = 0
    cutoff = len(outputs)
    for index in range(len(outputs) - 1, -1, -1):
        size = estimate(outputs[index][3])
        if protected + size > protect_tokens:
            cutoff = index + 1
            break
        protected += size
    else:
        cutoff = 0

    masks: dict[str, str] = {}
    saved = 0
    for call_id, name, args, output in outputs[:cutoff]:
        size = estimate(output)
        if size < MIN_MASKED_TOKENS:
            continue
        note = mask_note(call_id, name, args, output)
        masks[call_id] = note
        saved += size - estimate(note)
        if needed_tokens is not None and saved >= needed_tokens:
            spare = saved - needed_tokens
            if cut_last and spare >= MIN_MASKED_TOKENS:
                # Estimates are a character count over four: the spare tokens' characters.
                cut = cut_note(call_id, name, args, output, spare * 4)
                kept = estimate(cut) - estimate(note)
                if 0 < kept <= spare:
                    masks[call_id] = cut
                    saved -= kept
            break
    return masks, saved
