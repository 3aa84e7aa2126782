"""Token estimates for what has not been sent yet, calibrated by what the provider reported.

Counting exactly would need each provider's tokenizer; instead Baton estimates
cheaply (UTF-8 bytes / 4, the usual rule of thumb for BPE tokenizers on code
and English) and scales the estimate by the ratio the provider's own usage
report gave for the last request it saw.
"""

from __future__ import annotations

# Fixed cost of an item's framing (role markers, separators).
ITEM_OVERHEAD = 4
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
