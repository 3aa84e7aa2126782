"""Tiny statistics helpers: the project `baton demo` works on."""


def mean(values: list[float]) -> float:
    """The arithmetic mean of `values`."""
    # TODO: return 0.0 for an empty list instead of raising ZeroDivisionError.
    return sum(values) / len(values)


def median(values: list[float]) -> float:
    """The middle value of `values` (the mean of the two middle ones for an even count)."""
    # TODO: implement: sort a copy, then take the middle value.
    raise NotImplementedError
