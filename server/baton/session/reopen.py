"""What a reopened session shows besides its messages: how each turn ended, the figures
of each compaction, and the retries and uncommitted compactions, as the live updates
showed them (`baton/session/load`)."""

from __future__ import annotations

from baton import protocol as p
from baton.agent.state import SessionState
from baton.causes import cause_of_message
from baton.store.outcomes import TurnOutcomeLog


def turn_outcomes(state: SessionState, log: TurnOutcomeLog) -> list[p.TurnOutcome]:
    """Each stored turn end, placed after the message that was the session's last then."""
    ids = {m.seq: m.id for m in state.messages}
    out: list[p.TurnOutcome] = []
    for after_seq, stop_reason, error, created_at in log.outcomes(state.id):
        if after_seq is not None and after_seq not in ids:
            continue  # its message is gone (a repaired store): nowhere to show it
        out.append(
            p.TurnOutcome(
                after_message_id=ids[after_seq] if after_seq is not None else None,
                stop_reason=stop_reason,
                error=error,
                cause=cause_of_message(error) if stop_reason == "error" else None,
                created_at=created_at,
            )
        )
    return out


def shown_updates(state: SessionState, log: TurnOutcomeLog) -> list[p.ShownUpdate]:
    """Each stored live-only update, placed after the message that was the session's last then."""
    ids = {m.seq: m.id for m in state.messages}
    return [
        p.ShownUpdate(
            after_message_id=ids[after_seq] if after_seq is not None else None,
            update=update,
            created_at=created_at,
        )
        for after_seq, update, created_at in log.shown(state.id)
        # Its message is gone (a repaired store): nowhere to show it.
        if after_seq is None or after_seq in ids
    ]


def fill_compaction_figures(
    messages: list[p.Message], session_id: str, log: TurnOutcomeLog
) -> None:
    """The compaction markers get the trigger and token figures of their records."""
    figures = log.compaction_figures(session_id)
    for message in messages:
        for part in message.parts:
            if isinstance(part, p.CompactionPart) and part.compaction_id in figures:
                found = figures[part.compaction_id]
                part.trigger = found.trigger
                part.tokens_before = found.tokens_before
                part.tokens_after = found.tokens_after
                part.score = found.score
