"""Feature modules; each registers its methods on the server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

from baton import protocol as p

if TYPE_CHECKING:
    from baton.faces.lsp.registrar import Registrar


def register_all(server: Registrar) -> None:
    from baton.faces.lsp.features import (
        auth,
        commands,
        compaction,
        plans,
        review,
        sessions,
        store,
        trust,
    )

    for module in (sessions, compaction, plans, auth, review, trust, store, commands):
        module.register(server)
    from baton.faces.lsp.features import manage

    manage.register(server)
    _register_unavailable(server)


def _register_unavailable(server: Registrar) -> None:
    """Methods of the contract not built yet answer a clear error instead of 'not found'."""
    for name in p.METHODS:
        if server.has_feature(name):
            continue

        def handler(ls: Any, params: Any, _name: str = name) -> None:
            raise JsonRpcException(
                code=-32601, message=f"{_name} is not available in this version of Baton yet"
            )

        server.feature(name)(handler)
