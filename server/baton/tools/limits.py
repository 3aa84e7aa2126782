"""How much one tool result may say: a share of the model's usable window.

`tools.maxOutputChars` (30,000 characters) suits a 128k-token window, but one
such result is most of an 8k window: the model then cannot see its own
instructions and the result together, and compaction runs at once. So the
limit a tool is given is the smaller of that ceiling and `tools.outputShare`
(a quarter) of the usable window, converted to characters with the session's
calibrated tokens-per-character. The tools already end a cut result with how
to read the rest (`read` with `offset`, `grep` with a narrower pattern or
path), so a smaller window means more, smaller steps, never a lost result.
"""

from __future__ import annotations

from baton.config import Settings

# Characters per estimated token (`tokens.estimate` counts UTF-8 bytes / 4).
CHARS_PER_TOKEN = 4
# The floor: below this a result cannot say anything useful (the setting's own minimum).
MIN_OUTPUT_CHARS = 1_000


def output_limit(settings: Settings, usable_window: int, calibration: float = 1.0) -> int:
    """Characters one tool result may take in a usable window of `usable_window` tokens.

    `calibration` is the provider's reported tokens per estimated token, so a
    tokenizer that spends more tokens per character gets fewer characters. It
    only ever lowers the limit: a report below the estimate (a provider that
    leaves the tool list out of its count) must not let one result take more.
    """
    share_tokens = usable_window * settings.tools.output_share
    share_chars = int(share_tokens * CHARS_PER_TOKEN / max(calibration, 1.0))
    return max(MIN_OUTPUT_CHARS, min(settings.tools.max_output_chars, share_chars))


def sized_for_window(settings: Settings, usable_window: int, calibration: float = 1.0) -> Settings:
    """`settings` with `tools.maxOutputChars` lowered to what the window allows."""
    limit = output_limit(settings, usable_window, calibration)
    if limit == settings.tools.max_output_chars:
        return settings
    tools = settings.tools.model_copy(update={"max_output_chars": limit})
    return settings.model_copy(update={"tools": tools})
