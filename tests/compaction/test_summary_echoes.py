"""A summary that copies Baton's summary request loses those sentences, not its facts."""

from __future__ import annotations

from baton.compaction.summary import drop_echoes


def test_a_copied_request_sentence_goes_and_its_bare_label_with_it() -> None:
    summary = (
        "## Exact facts\n"
        "Exact facts: The conversation above, up to this message, is being compacted.\n"
        "- `app.toml`: [server] port = 8431"
    )
    kept, echoed = drop_echoes(summary)
    assert kept == "## Exact facts\n- `app.toml`: [server] port = 8431"
    assert echoed == [
        "Exact facts: The conversation above, up to this message, is being compacted."
    ]


def test_a_fact_on_the_same_line_as_an_echo_stays() -> None:
    line = (
        "- The staging date is 2026-03-14. Name things exactly: paths, symbols "
        "(functions, classes), commands, configuration keys and values."
    )
    kept, echoed = drop_echoes(line)
    assert kept == "- The staging date is 2026-03-14."
    assert len(echoed) == 1 and echoed[0].startswith("Name things exactly")


def test_a_summary_without_echoes_is_unchanged() -> None:
    summary = (
        "## Goals, constraints, preferences and open questions\n"
        "- Never touch the vendor/ directory.\n"
        "## Next action\n"
        "- Make `pytest -q tests/test_stats.py` pass: mean() of [] returns 0.0"
    )
    assert drop_echoes(summary) == (summary, [])
