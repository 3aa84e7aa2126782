"""Token estimates for what has not been sent yet, calibrated by what the provider reported.

Counting exactly would need each provider's tokenizer; instead Baton estimates
cheaply (UTF-8 bytes / 4, the usual rule of thumb for BPE tokenizers on code
and English) and scales the estimate by the ratio the provider's own usage
report gave for the last request it saw.
"""

from __future__ import annotations

from dataclasses import dataclass

# Fixed cost of an item's framing (role markers, separators).
ITEM_OVERHEAD = 4
# An image input, whatever its bytes: OpenAI's price of a 1024×1024 image at high detail
# (the provider's usage report calibrates the rest).
IMAGE_TOKENS = 765
MIN_CALIBRATION = 0.25
MAX_CALIBRATION = 4.0


def estimate(text: str) -> int:
    if not text:
        return 0
    if text.isascii():
        return (len(text) + 3) // 4
    return (len(text.encode("utf-8")) + 3) // 4


def calibration(reported_input_tokens: int, estimated_input_tokens: int) -> float:
    """Tokens per estimated token, clamped so one odd report cannot skew everything."""
    if reported_input_tokens <= 0 or estimated_input_tokens <= 0:
        return 1.0
    ratio = reported_input_tokens / estimated_input_tokens
    return max(MIN_CALIBRATION, min(MAX_CALIBRATION, ratio))


# The parts of a request that are the same in every request of a session (until the
# tool list or an instruction file changes); their provider count is inferred.
FIXED_KINDS = frozenset({"system", "instructions", "skills", "tools"})
# Evidence needed before the content rate replaces the whole-request ratio: estimated
# tokens appended over requests whose reports could be compared.
MIN_RATE_EVIDENCE = 64
# A summary's own rate (from its output count) is trusted within this factor of the
# content rate: an output count may include end markers a prompt does not.
SUMMARY_RATE_SPREAD = 2.0


@dataclass
class Anchor:
    """The last request the provider counted: its input tokens, our estimate by part."""

    reported: int
    parts: dict[str, int]

    @property
    def fixed(self) -> int:
        return sum(v for k, v in self.parts.items() if k in FIXED_KINDS)

    def content(self, *, without: frozenset[str] = frozenset()) -> dict[str, int]:
        return {k: v for k, v in self.parts.items() if k not in FIXED_KINDS | without}


@dataclass
class TokenModel:
    """Counts a view as the provider would, from its last report and what changed since.

    One ratio for the whole request (`calibration`) is right for the request it was
    measured on and wrong for a view of another composition: the instructions and tool
    specs tokenize differently from the history (a provider may not count the tool specs
    at all), and a compaction changes the mix. So the model keeps:

    - the anchor: the provider's count of the last request and our estimate of each of
      its parts; the fixed parts (system, instructions, tools) are worth what the
      report leaves once the content is counted, so they cancel out between views;
    - the content rate: provider tokens per estimated token of what was appended from
      one request to the next (the difference of two reports, so the fixed parts
      cancel), pooled over the session;
    - the summary rate: the summary request's output count per estimated token of the
      summary, for the checkpoint block.

    A view's count is fixed (anchored) + content rate × its history + summary rate ×
    its checkpoint; the anchor's own view counts exactly as reported. Without enough
    evidence (or a report no positive rates explain) it falls back to the one ratio.
    """

    anchor: Anchor | None = None
    appended_reported: int = 0
    appended_estimated: int = 0
    summary_rate: float | None = None

    def observe(self, reported: int, parts: dict[str, int]) -> None:
        """A provider's input count for a request whose estimated parts were `parts`."""
        if reported <= 0:
            return
        previous, current = self.anchor, Anchor(reported, dict(parts))
        if previous is not None and _appended(previous, current):
            grown = sum(current.content().values()) - sum(previous.content().values())
            added = reported - previous.reported
            # A report far off every tokenizer's rate (a scripted or odd count) is skipped.
            if grown > 0 and MIN_CALIBRATION * grown <= added <= MAX_CALIBRATION * grown:
                self.appended_reported += added
                self.appended_estimated += grown
        self.anchor = current

    def observe_summary(self, output_tokens: int, estimated: int) -> None:
        if output_tokens > 0 and estimated > 0:
            self.summary_rate = output_tokens / estimated

    def content_rate(self) -> float | None:
        if self.appended_estimated < MIN_RATE_EVIDENCE:
            return None
        rate = self.appended_reported / self.appended_estimated
        return max(MIN_CALIBRATION, min(MAX_CALIBRATION, rate))

    def rates(self, content_rate: float) -> dict[str, float]:
        rates: dict[str, float] = {}
        if self.summary_rate is not None:
            low, high = content_rate / SUMMARY_RATE_SPREAD, content_rate * SUMMARY_RATE_SPREAD
            rates["checkpoint"] = max(low, min(high, self.summary_rate))
        return rates

    def count(self, parts: dict[str, int]) -> dict[str, int] | None:
        """Provider tokens per part of a view; None when only the single ratio applies."""
        anchor = self.anchor
        rate = self.content_rate()
        if anchor is None or rate is None:
            return None
        rates = self.rates(rate)

        def content_tokens(of: dict[str, int]) -> dict[str, float]:
            return {k: v * rates.get(k, rate) for k, v in of.items() if k not in FIXED_KINDS}

        fixed_reported = anchor.reported - sum(content_tokens(anchor.parts).values())
        if fixed_reported < 0:
            return None  # positive rates cannot explain the report: keep the single ratio
        fixed_now = sum(v for k, v in parts.items() if k in FIXED_KINDS)
        per_fixed = fixed_reported / anchor.fixed if anchor.fixed else 0.0
        if not anchor.fixed and fixed_now:
            per_fixed = rate
        counted = {k: round(v * per_fixed) for k, v in parts.items() if k in FIXED_KINDS}
        counted.update({k: round(v) for k, v in content_tokens(parts).items()})
        return {k: counted[k] for k in parts}


def _appended(previous: Anchor, current: Anchor) -> bool:
    """Whether `current` is `previous` with messages appended (same fixed parts and blocks)."""
    blocks = frozenset({"messages", "tool_outputs"})
    return (
        previous.parts.keys() - {"tool_outputs"} <= current.parts.keys()
        and all(current.parts.get(k) == v for k, v in previous.parts.items() if k not in blocks)
        and all(k in blocks or k in previous.parts for k in current.parts)
    )
