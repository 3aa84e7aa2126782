"""Small statistics helpers: the project `baton demo` works on.

Every function takes a list of numbers and leaves it unchanged. Three of them
are not finished yet.
"""

from __future__ import annotations

import math
from collections import Counter


def mean(values: list[float]) -> float:
    """The arithmetic mean of `values`."""
    # TODO: return 0.0 for an empty list instead of raising ZeroDivisionError.
    return sum(values) / len(values)


def median(values: list[float]) -> float:
    """The middle value of `values` (the mean of the two middle ones for an even count)."""
    # TODO: implement: sort a copy, then take the middle value.
    raise NotImplementedError


def mode(values: list[float]) -> float:
    """The most common value of `values`."""
    # TODO: on a tie, return the smallest of the most common values, not the first seen.
    return Counter(values).most_common(1)[0][0]


def variance(values: list[float]) -> float:
    """The population variance of `values` (0.0 for fewer than two values)."""
    if len(values) < 2:
        return 0.0
    centre = sum(values) / len(values)
    return sum((v - centre) ** 2 for v in values) / len(values)


def stdev(values: list[float]) -> float:
    """The population standard deviation of `values`."""
    return math.sqrt(variance(values))


def value_range(values: list[float]) -> float:
    """The largest value minus the smallest (0.0 for an empty list)."""
    if not values:
        return 0.0
    return max(values) - min(values)


def percentile(values: list[float], p: float) -> float:
    """The `p`-th percentile (0-100) of `values`, by linear interpolation."""
    if not values:
        raise ValueError("percentile of an empty list")
    if not 0 <= p <= 100:
        raise ValueError(f"p must be between 0 and 100, not {p}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100
    low = math.floor(position)
    high = math.ceil(position)
    if low == high:
        return ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def zscores(values: list[float]) -> list[float]:
    """How many standard deviations each value lies from the mean (all 0.0 when flat)."""
    spread = stdev(values)
    if spread == 0:
        return [0.0 for _ in values]
    centre = sum(values) / len(values)
    return [(v - centre) / spread for v in values]


def moving_average(values: list[float], window: int) -> list[float]:
    """The mean of each run of `window` consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]


def describe(values: list[float]) -> dict[str, float]:
    """A summary of `values`: count, mean, median, mode, stdev and range."""
    return {
        "count": float(len(values)),
        "mean": mean(values),
        "median": median(values),
        "mode": mode(values),
        "stdev": stdev(values),
        "range": value_range(values),
    }
