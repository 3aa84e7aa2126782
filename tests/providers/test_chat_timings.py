"""llama.cpp reports how much of the prompt its KV cache served in `timings`."""

from __future__ import annotations

from baton.providers.base import Usage
from baton.providers.openai_chat import ChatStreamParser, with_timings


def test_timings_give_the_cached_part_of_the_prompt() -> None:
    parser = ChatStreamParser("local")
    parser.feed({"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]})
    # llama.cpp's last chunk: usage counting only the evaluated tokens, and the timings.
    parser.feed(
        {
            "choices": [],
            "usage": {"prompt_tokens": 40, "completion_tokens": 2},
            "timings": {"cache_n": 960, "prompt_n": 40, "predicted_n": 2},
        }
    )
    [usage] = [e for e in parser.finish() if isinstance(e, Usage)]
    assert (usage.input_tokens, usage.cached_tokens, usage.output_tokens) == (1000, 960, 2)


def test_without_timings_usage_is_as_reported() -> None:
    usage = Usage(input_tokens=10, output_tokens=1, cached_tokens=4)
    assert with_timings(usage, None) is usage
    assert with_timings(usage, {"prompt_n": 3}) is usage  # no cache_n: nothing to say
    full = with_timings(Usage(1000, 2), {"cache_n": 960, "prompt_n": 40})
    assert full == Usage(1000, 2, cached_tokens=960)
    assert with_timings(None, {"cache_n": 5, "prompt_n": 5, "predicted_n": 1}) == Usage(10, 1, 5)
