"""What the session methods answer: `baton/session/load` (the messages as the client shows
them, with the usage and the model) and `baton/session/context` (what a step would send)."""

from __future__ import annotations

from baton import protocol as p
from baton.agent.context import BuiltContext
from baton.agent.state import SessionState
from baton.providers.base import ProviderIdentity
from baton.session.reopen import fill_compaction_figures, shown_updates, turn_outcomes
from baton.session.usage import usage_totals
from baton.store.model import StoredMessage
from baton.store.outcomes import TurnOutcomeLog
from baton.store.requests import RequestTotals


def load_result(
    state: SessionState, identity: ProviderIdentity | None, outcomes: TurnOutcomeLog
) -> p.SessionLoadResult:
    """`identity`: the model the session would use now (None when it cannot be resolved:
    the row's own provider and model are reported then); `outcomes`: how each turn ended,
    so a reopened session shows what it showed live."""
    compacted = compacted_ids(state)
    running = state.running_call_ids if state.busy else frozenset()
    messages = [
        m.to_wire(compacted=m.id in compacted, running=bool(running & _call_ids(m)))
        for m in state.messages
    ]
    for wire in messages:
        wire.reverted = wire.id in state.reverted
    fill_compaction_figures(messages, state.id, outcomes)
    return p.SessionLoadResult(
        session_id=state.id,
        title=state.row.title,
        mode=state.row.mode,
        messages=messages,
        turns=turn_outcomes(state, outcomes),
        notices=shown_updates(state, outcomes),
        usage=usage_totals(state),
        provider=identity.provider if identity is not None else state.row.provider,
        model=identity.model if identity is not None else state.row.model,
    )


def compacted_ids(state: SessionState) -> set[str]:
    """The messages the compaction in force replaced (its own marker excepted)."""
    first = state.view.first_kept_seq
    if first is None:
        return set()
    return {m.id for m in state.messages if m.seq < first and m.kind != "compaction"}


def _call_ids(message: StoredMessage) -> set[str]:
    return {part.tool_call_id for part in message.tool_calls()}


def context_result(built: BuiltContext, totals: RequestTotals) -> p.ContextResult:
    """`built`: what a step would send now; `totals`: the session's reported requests."""
    return p.ContextResult(
        cached_tokens=totals.cached_tokens,
        cache_hit_rate=totals.cache_hit_rate,
        tokens=built.tokens,
        context_window=built.context_window,
        threshold=built.threshold_tokens,
        items=[p.ContextItem(kind=part.kind, tokens=part.tokens) for part in built.parts],
        server_artifact=built.server_artifact,
    )
