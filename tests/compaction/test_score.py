"""The compaction's score as the person reads it: on the record, and in `baton run`."""

from __future__ import annotations

import io

from baton import protocol as p
from baton.compaction.ledger import ledger_score, render_ledger
from baton.faces.terminal.render import TerminalChannel
from tests.compaction.test_ledger_fold import working_ledger


def test_the_score_counts_what_the_fold_kept_and_what_is_one_recall_away() -> None:
    ledger = working_ledger(200)
    facts, shown, folded = ledger_score(ledger, None)
    assert facts == 200 + 200 + 21 + 2 and shown == facts and folded == 0
    facts, shown, folded = ledger_score(ledger, 900)
    assert facts == shown + folded and 0 < shown < facts
    # What is shown with its details is what the rendered block holds.
    text = render_ledger(ledger, 900)
    assert "[ledger:" in text and folded > 0


def test_baton_run_prints_the_score_after_a_compaction() -> None:
    out, err = io.StringIO(), io.StringIO()
    channel = TerminalChannel(out, err, as_json=False, interactive=False)
    record = p.CompactionRecord(
        compaction_id="cmp_1",
        session_id="ses_1",
        trigger="auto",
        strategy="native",
        tokens_before=12_000,
        tokens_after=6_100,
        first_kept_message_id=None,
        ledger=p.Ledger(),
        created_at="2026-12-07T12:00:00Z",
        score=p.CompactionScore(
            facts=430, in_view=38, one_recall=392, view_tokens=6_100, window=16_384
        ),
    )
    channel.send_update("ses_1", p.CompactionFinished(compaction=record))
    assert (
        "[kept: 38 of 430 tracked facts in view, 392 one `recall` away; "
        "view 6,100 of 16,384 tokens (37%)]"
    ) in err.getvalue()
