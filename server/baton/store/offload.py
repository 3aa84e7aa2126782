"""Payloads of the history that may leave memory and come back from the store on access.

A long session's compacted past is never sent to a model again, yet every reader of
`state.messages` (recall, export, the ledger, session/load, an undo of the compaction)
may still read it whole. So its heavy payloads (a tool result's output, a part's
provider-native item) are fields that can be *offloaded*: the value is replaced by a
loader that reads it again from the store, where it has been since it was committed
(rows are append-only, so what is read back is what was dropped). Readers see the
same attribute; only its cost changes (one indexed row read, bounded by the store's
small cache of recent reads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

_NO_DEFAULT = object()


class Offloaded:
    """Stands in for a value that left memory: `load` reads it from the store."""

    __slots__ = ("load",)

    def __init__(self, load: Callable[[], Any]) -> None:
        self.load = load


class Offloadable(Generic[T]):
    """A dataclass field whose value may be offloaded (see the module docstring).

    The value lives in the instance's `__dict__` under the field's own name (this data
    descriptor takes precedence over it), either as itself or as an `Offloaded`."""

    def __init__(self, default: Any = _NO_DEFAULT) -> None:
        self.default = default
        self.name = ""

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type[Any] | None = None) -> T: ...
    @overload
    def __get__(self, obj: object, owner: type[Any] | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type[Any] | None = None) -> T:
        if obj is None:
            # A dataclass asks the class for the field's default: none unless given.
            if self.default is _NO_DEFAULT:
                raise AttributeError(self.name)
            return self.default  # type: ignore[no-any-return]
        value = obj.__dict__[self.name]
        if type(value) is Offloaded:
            return value.load()  # type: ignore[no-any-return]
        return value  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: T) -> None:
        obj.__dict__[self.name] = value


def offload(obj: object, name: str, load: Callable[[], Any]) -> None:
    """Let `obj`'s field `name` leave memory; `load` reads it back from the store."""
    obj.__dict__[name] = Offloaded(load)


def is_offloaded(obj: object, name: str) -> bool:
    return type(obj.__dict__.get(name)) is Offloaded


def held(obj: object, name: str) -> Any:
    """The field's value as held in memory: itself, or the `Offloaded` standing in for it."""
    return obj.__dict__.get(name)


def bring_back(obj: object, name: str) -> None:
    """Hold the field's value in memory again (its messages are back in a model's view)."""
    value = obj.__dict__.get(name)
    if type(value) is Offloaded:
        obj.__dict__[name] = value.load()
