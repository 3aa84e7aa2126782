"""OpenAI server-side compaction: the `server` strategy and the chain's compatibility rules.

Used when `compaction.strategy` is `auto` or `server` and the session's provider
id is `openai` (by id, never by model name). Three ways in:

* **Automatic** is the server's: every normal Responses call carries
  `context_management` (see `artifacts.server_thresholds`); when a stream carries
  a compaction item the turn stores it and calls `on_server_compaction`, which
  records it through the engine's commit (one transaction, a `CompactionRecord`
  with trigger `auto`, strategy `server`, no summary) and makes the item the
  view's checkpoint. Everything before it leaves the view (a stateless client
  may drop every item before the latest compaction item: docs/compaction.md).
  Baton's own trigger stays armed as a safety net above the server's threshold.
* **Manual, overflow and the safety net** run `ServerStrategy`: one Responses
  call shaped exactly like a normal step (same instructions, tools, prompt cache
  key and input prefix) whose final input item is `{"type":
  "compaction_trigger"}`; the answer's compaction item becomes the checkpoint.
  Why this and not `POST /responses/compact` is in docs/compaction.md.
* **Fallback**: when that call fails or returns no compaction item, the same
  operation falls back to native compaction and the record's notes say why.

Compatibility (provider state stays with its identity: docs/architecture.md): a
server window is replayed only to the identity that made it. When the session
now talks to another model, route or provider, `model_switch` (called before
each step) drops the chain and compacts natively from the local history, once,
lazily: nothing native is prepared in advance. A provider that never made an
artifact needs nothing: its native view is portable, and OpenAI starts a fresh
chain from it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from baton import protocol as p
from baton.compaction.artifacts import (
    ServerArtifact,
    foreign_artifacts,
    is_compaction_item,
    server_allowed,
)
from baton.compaction.compact_request import CompactRequest
from baton.compaction.engine import CompactionEngine
from baton.compaction.job import CompactionJob, Strategy
from baton.compaction.ledger import build_ledger, ledger_budget, render_ledger
from baton.compaction.planning import choose_boundary, in_view, kept_masks
from baton.context import BuiltContext
from baton.errors import ProviderError
from baton.providers.base import (
    Item,
    ItemDone,
    ModelRequest,
    Native,
    OpaqueItem,
    Provider,
    ProviderIdentity,
    ServerCompaction,
    Usage,
)
from baton.session.model import StoredMessage
from baton.session.state import SessionState, View

if TYPE_CHECKING:
    from baton.session.turn import Turn

log = logging.getLogger(__name__)

# The request-control item that asks the Responses API for exactly one compaction item.
TRIGGER_ITEM = {"type": "compaction_trigger"}
# Output items never kept in a compacted window: a call would need an output we never run.
UNREPLAYABLE_TYPES = frozenset({"function_call"})


class NoCompactionItem(Exception):
    """The compaction call answered without a compaction item."""


class ServerStrategy:
    """One compaction on the server; falls back to native in the same operation.

    A fresh instance serves each job: `name` becomes "native" when it falls back,
    and the engine records the strategy by that name once the run is over.
    """

    def __init__(self, engine: CompactionEngine) -> None:
        self.engine = engine
        self.name: p.Strategy = "server"

    async def run(self, job: CompactionJob) -> View:
        try:
            return await self._on_server(job)
        except ProviderError as exc:
            reason = f"the server compaction call failed ({exc.message})"
        except NoCompactionItem as exc:
            reason = str(exc)
        log.warning("server compaction in %s fell back to native: %s", job.state.id, reason)
        self.name = "native"
        job.notes.append(f"{reason}; fell back to native compaction")
        return await native_strategy(self.engine, job).run(job)

    async def _on_server(self, job: CompactionJob) -> View:
        state, settings = job.state, job.settings
        old = state.view
        keep = settings.compaction.keep_recent_tokens
        if keep is None:
            keep = max(1_000, min(20_000, job.before.usable_window // 4))
        self._note_instructions(job)
        current = old
        levels = [keep, keep // 4, 0]
        for level, keep_tokens in enumerate(levels, start=1):
            messages = in_view(state.messages, state.reverted, current)
            boundary = choose_boundary(messages, current.masked, keep_tokens, state)
            covered = [m for m in messages if boundary is not None and m.seq < boundary]
            if not covered and level < len(levels):
                continue  # keep fewer recent messages before asking the server for nothing
            if not covered and current is not old:
                break
            job.report(f"Compacting on the server (level {level})", 30 + 20 * level)
            window = await self._call(job, current, boundary, covered)
            first_kept = boundary if boundary is not None else current.first_kept_seq
            current = View(
                first_kept_seq=first_kept,
                server_window=window,
                ledger_text=job.ledger_text,
                masked=kept_masks(current.masked, messages, first_kept),
            )
            if job.build(current).tokens <= job.before.threshold_tokens:
                if level > 1:
                    job.notes.append(f"kept fewer recent messages (level {level}) to fit")
                return current
        raise NoCompactionItem(
            "the server-compacted view still did not fit under the compaction threshold"
        )

    def _note_instructions(self, job: CompactionJob) -> None:
        if job.prompt_override:
            job.notes.append(
                "a compacting hook's replacement prompt is not applicable to server-side "
                "compaction: the server writes the artifact"
            )
        if job.hook_context or job.request.instructions:
            job.notes.append(
                "compaction instructions were sent in the compaction call's `instructions`; "
                "how far the server follows them is its own"
            )

    def _instructions(self, job: CompactionJob, base: str) -> str:
        lines = [f"- {c}" for c in job.hook_context]
        if job.request.instructions:
            lines.append(f"- The person asked: {job.request.instructions}")
        if not lines:
            return base  # unchanged, so the prompt cache keeps the whole prefix
        body = "\n".join(lines)
        return (
            f"{base}\n\n<baton:compaction-instructions>\nWhen compacting this conversation, "
            f"keep:\n{body}\n</baton:compaction-instructions>"
        )

    async def _call(
        self,
        job: CompactionJob,
        view: View,
        boundary: int | None,
        covered: Sequence[StoredMessage],
    ) -> list[OpaqueItem | Item]:
        """Ask for a compaction item covering the view's checkpoint, blocks and `covered`.

        The input is built by the same context builder as a normal step, over the
        messages before `boundary` only, so it is a prefix of the request the model
        was being sent: the provider's prompt cache still applies.
        """
        state, provider = job.state, job.provider
        built = job.build(view, boundary)
        trigger = OpaqueItem(Native(provider.identity, dict(TRIGGER_ITEM)))
        request = ModelRequest(
            instructions=self._instructions(job, built.request.instructions),
            items=[*built.request.items, trigger],
            tools=built.request.tools,
            purpose="turn",
            cache_key=state.id,
        )
        natives: list[Native] = []
        usage: Usage | None = None
        async for event in provider.stream(request):
            if isinstance(event, ServerCompaction | ItemDone) and event.item.native is not None:
                natives.append(event.item.native)
            elif isinstance(event, Usage):
                usage = event
        last = max(
            (i for i, n in enumerate(natives) if is_compaction_item(OpaqueItem(n))), default=None
        )
        if last is None:
            raise NoCompactionItem("the compaction call returned no compaction item")
        covers = covered[-1].id if covered else None
        window: list[OpaqueItem | Item] = [ServerArtifact(natives[last], covers_through=covers)]
        dropped = 0
        for native in natives[last + 1 :]:
            if native.item.get("type") in UNREPLAYABLE_TYPES:
                dropped += 1
            else:
                window.append(ServerArtifact(native))
        if dropped:
            job.notes.append(f"dropped {dropped} tool call(s) the compaction call returned")
        if usage is not None:
            job.notes.append(
                f"compacted {len(covered)} messages on the server (compaction_trigger): "
                f"{usage.input_tokens} input tokens, {usage.cached_tokens} cached"
            )
        return window


class LocalHistoryNative:
    """Native compaction from the local history behind a server chain.

    A native summary of only the messages after an artifact would lose what the
    artifact covered, so it starts from the latest native view before the chain
    (its summary anchors the new one) or from the whole history.
    """

    name: p.Strategy = "native"

    def __init__(self, engine: CompactionEngine, base: View) -> None:
        self.engine = engine
        self.base = base

    async def run(self, job: CompactionJob) -> View:
        local = dataclasses.replace(job, base_view=self.base, before=job.build(self.base, None))
        view = await self.engine.native.run(local)
        job.made_by, job.summary_calls = local.made_by, local.summary_calls
        return view


class ServerStrategies:
    """The engine's strategy chooser where server-side compaction may be used: the
    server for the official OpenAI provider (unless native is asked for), native
    otherwise, and native from the local history behind a chain another identity made."""

    def choose(self, engine: CompactionEngine, job: CompactionJob) -> Strategy:
        identity = job.provider.identity
        view = job.state.view
        if foreign_artifacts(view.server_window, identity):
            old = next(
                (
                    item.native.identity
                    for item in view.server_window or []
                    if isinstance(item, OpaqueItem)
                ),
                None,
            )
            job.notes.append(
                f"the server chain was made by {_describe(old)} and is never sent to "
                f"{_describe(identity)}: compacted natively from the local history"
            )
            strategy = native_strategy(engine, job)
            if isinstance(strategy, LocalHistoryNative):
                # What this model would be sent without the chain: the local history.
                job.before = engine.build_with_view(
                    job.state, job.settings, job.provider, strategy.base
                )
            return strategy
        requested = job.request.strategy or job.settings.compaction.strategy
        if requested != "native" and server_allowed(identity):
            return ServerStrategy(engine)
        if requested == "server":
            job.notes.append(
                "server-side compaction is only available with the openai provider; used native"
            )
        return native_strategy(engine, job)


def native_strategy(engine: CompactionEngine, job: CompactionJob) -> Strategy:
    """Native compaction; from the local history when the view is a server chain."""
    if job.state.view.server_window is None:
        return engine.native
    return LocalHistoryNative(engine, native_base(engine, job.state))


def native_base(engine: CompactionEngine, state: SessionState) -> View:
    """The latest view in force before the server chain that is not itself one."""
    for entry in reversed(engine.store.all(state.id)):
        if entry.undone:
            continue
        view = engine.view_of(entry)
        if view.server_window is None:
            return view
    return View()


class ServerCompactionFeature:
    """What server-side compaction does outside the engine's strategy choice
    (`ServerStrategies`, given to the engine when it is built): the session's
    `ServerCompactionEvents` seam (`on_server_compaction`) and the compaction
    service's `model_switch` (both connected by build_app)."""

    def __init__(self, engine: CompactionEngine) -> None:
        self.engine = engine
        self._hook_tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ model switch

    async def model_switch(
        self, turn: Turn, built: BuiltContext, provider: Provider
    ) -> BuiltContext:
        """Before a step: replace a chain this identity cannot replay (lazily, once)."""
        state = turn.state
        if not foreign_artifacts(state.view.server_window, provider.identity):
            return built
        await self.engine.compact(state, CompactRequest("model_switch", interrupted=turn.steps > 0))
        service = self.engine.service
        return service.build_context(state, service.settings(), provider.identity)

    # ------------------------------------------------------------------ in-stream compaction

    def on_server_compaction(
        self, turn: Turn, message: StoredMessage, item: OpaqueItem, provider: Provider
    ) -> None:
        """Record a compaction item the server emitted mid-stream (`context_management`).

        Called right after the step carrying it was committed (the item is stored
        verbatim as an opaque part of that message). One store transaction through
        the engine's commit; a failure leaves the old view, which stays valid.
        """
        engine, state = self.engine, turn.state
        service = engine.service
        channel = service.channel
        channel.send_update(state.id, p.CompactionStarted(trigger="auto", strategy="server"))
        try:
            settings = service.settings()
            job = engine.new_job(state, CompactRequest("auto"), settings, provider, _no_report)
            job.notes.append(
                "compacted by the server in-stream (context_management); pre-compact and "
                "compacting hooks are not applicable"
            )
            ledger = build_ledger(state.messages, engine.plan_state(state))
            job.ledger_text = render_ledger(ledger, ledger_budget(job))
            covered = [m for m in state.messages if m.seq < message.seq and m.kind != "compaction"]
            view = View(
                first_kept_seq=message.seq,
                server_window=[
                    ServerArtifact(item.native, covers_through=covered[-1].id if covered else None)
                ],
                ledger_text=job.ledger_text,
            )
            record = engine._commit(job, view, ledger, [], "server")
        except Exception as exc:
            log.exception("could not record the server's compaction in %s", state.id)
            channel.send_update(state.id, p.CompactionFailed(error=f"{type(exc).__name__}: {exc}"))
            return
        channel.send_update(state.id, p.CompactionFinished(compaction=record))
        task = asyncio.get_running_loop().create_task(self._compacted(state, record))
        self._hook_tasks.add(task)
        task.add_done_callback(self._hook_tasks.discard)

    async def _compacted(self, state: SessionState, record: p.CompactionRecord) -> None:
        try:
            await self.engine.hooks.compacted(state, record)
        except Exception:
            log.exception("a compacted hook failed; the compaction stands")


def _no_report(message: str, percentage: int | None = None) -> None:
    return None


def _describe(identity: ProviderIdentity | None) -> str:
    if identity is None:
        return "another identity"
    return f"{identity.provider} {identity.model} at {identity.route.base_url}"
