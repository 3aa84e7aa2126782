"""Server-side compaction artifacts: when they are used, how they are stored, where they replay.

A leaf module (no engine imports) because three layers need it: the context
builder (the `context_management` threshold and the local safety net), the
engine (storing a view's server window) and the server strategy itself.

An artifact is an OpenAI Responses output item (`compaction`, or the legacy
`compaction_summary`) or an Anthropic `compaction` content block, kept verbatim in an `OpaqueItem` whose `Native` carries
the identity that produced it: provider id, model and route (base URL and
auth kind). It is replayed only to that same identity; the encrypted content
means nothing, or is an error, anywhere else (docs/architecture.md, "Principles
in the code").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from baton.config import Settings
from baton.providers.base import Item, Native, OpaqueItem, ProviderIdentity

# The provider ids whose requests may carry server-side compaction: OpenAI's Responses
# API and Anthropic's Messages API. Decided by id, never by model name:
# `openai-compatible` and `local` never qualify, whatever the model.
SERVER_PROVIDERS = frozenset({"openai", "anthropic"})
COMPACTION_ITEM_TYPES = frozenset({"compaction", "compaction_summary"})


@dataclass
class ServerArtifact(OpaqueItem):
    """A compaction item in a view's server window, with what it stands in for.

    `covers_through` is the id of the newest stored message whose content the
    artifact encodes (None when it covered nothing but Baton's own blocks); it
    is bookkeeping for people and tools inspecting the store, never sent.
    """

    covers_through: str | None = None


def is_compaction_item(item: OpaqueItem | Item) -> bool:
    return isinstance(item, OpaqueItem) and item.native.item.get("type") in COMPACTION_ITEM_TYPES


def server_allowed(identity: ProviderIdentity | None) -> bool:
    return identity is not None and identity.provider in SERVER_PROVIDERS


def server_auto_enabled(settings: Settings, identity: ProviderIdentity | None) -> bool:
    """Whether normal calls carry `context_management` for in-stream compaction.

    Needs the `openai` or `anthropic` provider, strategy `auto` or `server`, and `compaction.auto`:
    a person who turned automatic compaction off does not get it from the server either.
    """
    compaction = settings.compaction
    return (
        server_allowed(identity) and compaction.auto and compaction.strategy in ("auto", "server")
    )


def server_thresholds(
    settings: Settings,
    identity: ProviderIdentity | None,
    window: int,
    usable: int,
    local_threshold: int,
) -> tuple[int | None, int]:
    """(the `compact_threshold` to send or None, Baton's own trigger in tokens).

    With in-stream compaction on, the server compacts at
    `floor(serverThreshold × contextWindow)` and Baton's local trigger becomes a
    safety net that must fire only after it: `threshold × contextWindow` (the same
    base as the server's, so the defaults 0.85 > 0.8 keep the order), never below
    the usual `threshold × usable window` and never above the usable window.
    """
    if not server_auto_enabled(settings, identity):
        return None, local_threshold
    compact_threshold = math.floor(settings.compaction.server_threshold * window)
    safety = min(usable, math.floor(settings.compaction.threshold * window))
    return compact_threshold, max(local_threshold, safety)


def foreign_artifacts(
    window: Sequence[OpaqueItem | Item] | None, identity: ProviderIdentity | None
) -> bool:
    """Whether a server window holds artifacts another identity made (a model or route
    switch, or another provider): then its chain cannot be replayed here."""
    if not window:
        return False
    return any(
        isinstance(item, OpaqueItem) and (identity is None or item.native.identity != identity)
        for item in window
    )


# ----------------------------------------------------------------------------- storage


def window_to_json(window: Sequence[OpaqueItem | Item] | None) -> list[dict[str, Any]] | None:
    """A view's server window as stored: each item verbatim with its identity."""
    if window is None:
        return None
    out: list[dict[str, Any]] = []
    for item in window:
        if not isinstance(item, OpaqueItem):
            raise TypeError(f"a server window holds only provider items, not {item!r}")
        entry: dict[str, Any] = {
            "identity": item.native.identity.to_json(),
            "item": item.native.item,
        }
        if isinstance(item, ServerArtifact) and item.covers_through:
            entry["coversThrough"] = item.covers_through
        out.append(entry)
    return out


def window_from_json(data: Any) -> list[OpaqueItem | Item] | None:
    if data is None:
        return None
    window: list[OpaqueItem | Item] = []
    for entry in data:
        native = Native(ProviderIdentity.from_json(entry["identity"]), entry["item"])
        window.append(ServerArtifact(native, covers_through=entry.get("coversThrough")))
    return window
