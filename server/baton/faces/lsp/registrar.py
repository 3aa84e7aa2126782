"""What a feature module needs of the server: a place to register its methods.

The feature modules (`baton.faces.lsp.features`) and `baton.faces.lsp.methods` depend on
these Protocols, not on `BatonServer`, so the server imports its features and
nothing imports the server back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from baton.app import App

F = TypeVar("F", bound=Callable[..., Any])


class AppHost(Protocol):
    """The server as a method's handler sees it (pygls passes it as `ls`)."""

    @property
    def app(self) -> App | None:
        """The core, once built (None before the first method that needs it)."""
        ...

    def require_app(self) -> App:
        """The core, built now if it is not yet."""
        ...


class Registrar(Protocol):
    """Where a feature registers its JSON-RPC methods (pygls's `feature` decorator)."""

    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]: ...

    def has_feature(self, name: str) -> bool:
        """Whether a handler for `name` is registered already."""
        ...
