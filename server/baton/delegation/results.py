"""What a `task` call returns to its parent: one bounded block, and the whole of it on recall.

The block says the child's status and session id, the files it changed and the
commands it ran with their exit codes (from its ledger: facts, never its prose), its
tokens, and its final message cut to `delegation.resultTokens`; all of this call only
(a resumed child's earlier calls were reported by their own results). A cut says so and
names the `recall` that returns the final message whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from baton import protocol as p
from baton.agent import framing
from baton.agent.tokens import estimate
from baton.compaction.ledger import build_ledger
from baton.store.model import StoredMessage

# Files and commands listed in a result at most (the child's ledger has the rest).
MAX_FILES = 40
MAX_COMMANDS = 40


@dataclass
class ChildOutcome:
    status: p.ChildStatus
    child_id: str
    agent: str
    # Spent by this call; `total_tokens` by the child in all its calls.
    tokens: int
    final: str
    error: str | None = None
    total_tokens: int = 0
    # The child's messages of this call only (a resumed child's earlier work is not in).
    messages: list[StoredMessage] = field(default_factory=list)


def cut_to_tokens(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut at a line or word to about `limit` tokens; (text, whether it was cut)."""
    if estimate(text) <= limit:
        return text, False
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate(text[:middle]) <= limit:
            low = middle
        else:
            high = middle - 1
    cut = text[:low]
    for sep in ("\n", " "):
        at = cut.rfind(sep)
        if at > len(cut) // 2:
            cut = cut[:at]
            break
    return cut.rstrip(), True


def _indented(text: str) -> str:
    """The child's words, every line (at every line break) indented: none can pass for
    a line of Baton's."""
    return framing.indented(text)


def render_result(
    outcome: ChildOutcome,
    messages: list[StoredMessage],
    *,
    call_id: str,
    result_tokens: int,
    plan: p.PlanInfo | None = None,
) -> str:
    ledger = build_ledger(messages, None)
    lines = [f"status: {outcome.status}", f"child session: {framing.inline(outcome.child_id)}"]
    if outcome.error:
        lines.append(f"error: {framing.inline(outcome.error)}")
    if outcome.total_tokens > outcome.tokens:
        lines.append(f"tokens: {outcome.tokens:,} ({outcome.total_tokens:,} in all its calls)")
    else:
        lines.append(f"tokens: {outcome.tokens:,}")
    if ledger.files_modified:
        lines.append("files changed:")
        for touch in ledger.files_modified[:MAX_FILES]:
            lines.append(f"- {touch.action} {framing.inline(touch.path)}")
        if len(ledger.files_modified) > MAX_FILES:
            lines.append(f"- … {len(ledger.files_modified) - MAX_FILES} more in the child's ledger")
    else:
        lines.append("files changed: none")
    if ledger.commands:
        lines.append("commands run (exit codes, oldest first):")
        for run in ledger.commands[:MAX_COMMANDS]:
            codes = ", ".join("killed" if c is None else str(c) for c in run.exit_codes)
            lines.append(f"- `{framing.inline(run.command)}` → {codes or run.exit_code}")
        if len(ledger.commands) > MAX_COMMANDS:
            lines.append(f"- … {len(ledger.commands) - MAX_COMMANDS} more in the child's ledger")
    if plan is not None:
        lines.append(
            f"plan: {framing.inline(plan.path)} ({plan.status}, version {plan.version}); "
            f"the person approves it in the child's session {framing.inline(outcome.child_id)}"
        )
    final, cut = cut_to_tokens(outcome.final, result_tokens)
    if not final:
        lines.append("final message: none")
    elif cut:
        lines.append(
            f"final message (cut to {result_tokens:,} of {estimate(outcome.final):,} tokens; "
            f'`recall` with call_id "{framing.inline(call_id)}" returns it whole):'
        )
        lines.append(_indented(final) + "\n  [… cut here]")
    else:
        lines.append("final message:")
        lines.append(_indented(final))
    return framing.block(
        "task-result",
        "\n".join(lines),
        {"agent": outcome.agent, "child": outcome.child_id, "status": outcome.status},
        trusted=True,
    )
