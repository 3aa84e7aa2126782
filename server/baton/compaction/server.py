"""Server-side compaction: the `server` strategy and the chain's compatibility rules.

Used when `compaction.strategy` is `auto` or `server` and the session's provider
id is `openai` or `anthropic` (by id, never by model name). The provider turns
the same three ways in into its own API (Anthropic's: a `compact_20260112` edit
for the automatic one, the on-demand `compaction` parameter for the trigger, and
a `compaction` content block as the artifact). Three ways in:

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
from baton.agent import framing
from baton.agent.compact_request import CompactRequest
from baton.agent.context import BuiltContext
from baton.agent.state import SessionState, View
from baton.compaction.engine import CompactionEngine
from baton.compaction.job import Candidate, Choice, CompactionJob
from baton.compaction.ledger import build_ledger
from baton.compaction.planning import (
    AfterLevel,
    Level,
    NothingToCompact,
    Tried,
    choose_boundary,
    escalate,
    escalation,
    in_view,
    keep_recent_tokens,
    kept_masks,
)
from baton.errors import ProviderError
from baton.providers.artifacts import (
    ServerArtifact,
    foreign_artifacts,
    is_compaction_item,
    server_allowed,
)
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
from baton.store.model import StoredMessage

if TYPE_CHECKING:
    from baton.agent.turn import Turn

log = logging.getLogger(__name__)

# The request-control item that asks the Responses API for exactly one compaction item.
TRIGGER_ITEM = {"type": "compaction_trigger"}
# Output items never kept in a compacted window: a call would need an output we never run.
UNREPLAYABLE_TYPES = frozenset({"function_call"})


class NoCompactionItem(Exception):
    """The compaction call answered without a compaction item."""


class ServerStrategy:
    """One compaction on the server; falls back to native in the same operation (the
    candidate's author then says "native")."""

    name: p.Strategy = "server"

    def __init__(self, engine: CompactionEngine) -> None:
        self.engine = engine

    async def run(self, job: CompactionJob) -> Candidate:
        notes: list[str] = []
        try:
            return await self._on_server(job, notes)
        except ProviderError as exc:
            reason = f"the server compaction call failed ({exc.message})"
        except NoCompactionItem as exc:
            reason = str(exc)
        log.warning("server compaction in %s fell back to native: %s", job.state.id, reason)
        notes.append(f"{reason}; fell back to native compaction")
        try:
            candidate = await run_native(self.engine, job)
        except NothingToCompact as nothing:
            raise NothingToCompact(
                str(nothing), (*notes, *nothing.notes), nothing.author or "native"
            ) from nothing
        return dataclasses.replace(candidate, notes=(*notes, *candidate.notes))

    async def _on_server(self, job: CompactionJob, notes: list[str]) -> Candidate:
        """The escalation plan of the native strategy (`planning.escalation`), each level
        a server call over the messages before its cut, until the view fits."""
        state, settings = job.state, job.settings
        old = state.view
        keep = keep_recent_tokens(settings.compaction.keep_recent_tokens, job.before.usable_window)
        notes.extend(self._instruction_notes(job))
        current = old

        async def attempt(level: Level) -> Tried | None:
            nonlocal current
            messages = in_view(state.messages, state.reverted, current)
            boundary = choose_boundary(messages, current.masked, level.keep, state)
            covered = [m for m in messages if boundary is not None and m.seq < boundary]
            if not covered and (not level.last or current is not old):
                # Keep fewer recent messages before asking the server for nothing; after
                # a level that did not fit, there is nothing left to ask it.
                return None
            job.report(f"Compacting on the server (level {level.number})", 30 + 20 * level.number)
            window = await self._call(job, current, boundary, covered, notes)
            first_kept = boundary if boundary is not None else current.first_kept_seq
            current = View(
                first_kept_seq=first_kept,
                server_window=window,
                ledger_text=job.ledger_text,
                masked=kept_masks(current.masked, messages, first_kept),
            )
            return Tried(current, job.build(current).tokens)

        def judge(level: Level, tried: Tried) -> AfterLevel:
            return "done" if tried.tokens <= job.before.threshold_tokens else "escalate"

        result = await escalate(escalation(keep), attempt, judge)
        if result.met is None or result.level is None:
            raise NoCompactionItem(
                "the server-compacted view still did not fit under the compaction threshold"
            )
        if result.level.number > 1:
            notes.append(f"kept fewer recent messages (level {result.level.number}) to fit")
        return Candidate(result.met.view, "server", notes=tuple(notes))

    def _instruction_notes(self, job: CompactionJob) -> list[str]:
        notes = []
        if job.prompt_override:
            notes.append(
                "a compacting hook's replacement prompt is not applicable to server-side "
                "compaction: the server writes the artifact"
            )
        if job.hook_context or job.request.instructions:
            notes.append(
                "compaction instructions were sent in the compaction call's `instructions`; "
                "how far the server follows them is its own"
            )
        return notes

    def _instructions(self, job: CompactionJob, base: str) -> str:
        lines = [f"- {framing.entry(c)}" for c in job.hook_context]
        if job.request.instructions:
            lines.append(f"- The person asked: {framing.entry(job.request.instructions)}")
        if not lines:
            return base  # unchanged, so the prompt cache keeps the whole prefix
        body = "\n".join(lines)
        instructions = f"When compacting this conversation, keep:\n{body}"
        return f"{base}\n\n{framing.block('compaction-instructions', instructions)}"

    async def _call(
        self,
        job: CompactionJob,
        view: View,
        boundary: int | None,
        covered: Sequence[StoredMessage],
        notes: list[str],
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
            notes.append(f"dropped {dropped} tool call(s) the compaction call returned")
        if usage is not None:
            notes.append(
                f"compacted {len(covered)} messages on the server (compaction_trigger): "
                f"{usage.input_tokens} input tokens, {usage.cached_tokens} cached"
            )
        return window


class ServerStrategies:
    """The engine's strategy chooser where server-side compaction may be used: the
    server for the official OpenAI provider (unless native is asked for), native
    otherwise, and native from the local history behind a chain another identity made."""

    def choose(self, engine: CompactionEngine, job: CompactionJob) -> Choice:
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
            # What this model would be sent without the chain: the local history.
            return Choice(
                engine.native,
                (
                    f"the server chain was made by {_describe(old)} and is never sent to "
                    f"{_describe(identity)}: compacted natively from the local history",
                ),
                base_view=native_base(engine, job.state),
            )
        requested = job.request.strategy or job.settings.compaction.strategy
        if requested != "native" and server_allowed(identity):
            return Choice(ServerStrategy(engine))
        notes: tuple[str, ...] = ()
        if requested == "server":
            notes = (
                "server-side compaction is only available with the openai provider and the "
                "anthropic provider; used native",
            )
        return Choice(LocalHistoryNative(engine), notes)


class LocalHistoryNative:
    """Native compaction, from the local history when the view is a server chain
    (`run_native`)."""

    name: p.Strategy = "native"

    def __init__(self, engine: CompactionEngine) -> None:
        self.engine = engine

    async def run(self, job: CompactionJob) -> Candidate:
        return await run_native(self.engine, job)


async def run_native(engine: CompactionEngine, job: CompactionJob) -> Candidate:
    """Native compaction; from the local history when the view is a server chain (a
    native summary of only the messages after an artifact would lose what the artifact
    covered, so it starts from the latest native view before the chain, whose summary
    anchors the new one, or from the whole history)."""
    base = chain_base(engine, job)
    if base is None:
        return await engine.native.run(job)
    local = dataclasses.replace(job, base_view=base, before=job.build(base, None))
    candidate = await engine.native.run(local)
    return dataclasses.replace(candidate, before=local.before)


def chain_base(engine: CompactionEngine, job: CompactionJob) -> View | None:
    """The view a native compaction starts from when the session's is a server chain."""
    if job.base_view is not None or job.state.view.server_window is None:
        return None
    return native_base(engine, job.state)


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
    service's `model_switch` (both connected by baton.features)."""

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
            job = engine.prepare(
                job,
                Choice(
                    ServerStrategy(engine),
                    (
                        "compacted by the server in-stream (context_management); pre-compact "
                        "and compacting hooks are not applicable",
                    ),
                ),
                build_ledger(state.messages, engine.plan_state(state)),
            )
            covered = [m for m in state.messages if m.seq < message.seq and m.kind != "compaction"]
            view = View(
                first_kept_seq=message.seq,
                server_window=[
                    ServerArtifact(item.native, covers_through=covered[-1].id if covered else None)
                ],
                ledger_text=job.ledger_text,
            )
            record = engine._commit(job, view, [], "server", job.notes)
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
