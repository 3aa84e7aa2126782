"""Summaries that cannot run away: sampling per attempt and a repetition check.

Small models under greedy-ish sampling fall into loops ("- The `refund_fee`
function … is correct." fifty times until the output cap). The check runs on
the streamed text as it grows, so a loop is stopped within a few repeats
instead of at the cap, and a looping text is never committed: the engine
retries once with livelier sampling, then falls back to a summary built from
the ledger and the plan.
"""

from __future__ import annotations

import re
from collections import Counter

from baton.providers.base import Sampling

# Attempt 1 is near-deterministic with a mild penalty on repeats; attempt 2 (after a
# loop) samples more widely and penalises repeats hard. Providers send what they
# support (docs/compaction.md, "The summary": Sampling).
ATTEMPTS: tuple[Sampling, ...] = (
    Sampling(temperature=0.2, top_p=0.9, frequency_penalty=0.3, repeat_penalty=1.1),
    Sampling(
        temperature=0.7,
        top_p=0.95,
        frequency_penalty=1.0,
        presence_penalty=0.5,
        repeat_penalty=1.3,
    ),
)

# A line (at least this long once normalised) seen this many times is a loop.
MIN_LINE_CHARS = 12
LINE_REPEATS = 3
# A run of this many words seen this many times is a loop (loops inside one long line).
NGRAM_WORDS = 12
NGRAM_REPEATS = 3
# Headings and list scaffolding repeat legitimately.
_SCAFFOLD = re.compile(r"^(#+\s|[-*]\s*none\b|none\b)", re.I)


def _norm(line: str) -> str:
    return re.sub(r"\s+", " ", line.strip(" \t-*>").lower())


def looping(text: str) -> str | None:
    """Why `text` is a loop (for the record's notes), or None when it is not."""
    lines = [_norm(line) for line in text.splitlines()]
    counts = Counter(
        line for line in lines if len(line) >= MIN_LINE_CHARS and not _SCAFFOLD.match(line)
    )
    if counts:
        line, count = counts.most_common(1)[0]
        if count >= LINE_REPEATS:
            return f"the line {line[:80]!r} repeated {count} times"
    words = text.lower().split()
    if len(words) >= NGRAM_WORDS * NGRAM_REPEATS:
        grams = Counter(
            " ".join(words[i : i + NGRAM_WORDS]) for i in range(len(words) - NGRAM_WORDS + 1)
        )
        gram, count = grams.most_common(1)[0]
        if count >= NGRAM_REPEATS:
            return f"the words {gram[:80]!r} repeated {count} times"
    return None
