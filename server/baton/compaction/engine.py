"""The compaction engine: one entry point for manual, automatic and overflow compaction.

Phases, in order: pre-compact hooks (an autonomous round, if a hook asks for
one), compacting hooks (instructions), the strategy (prune first; summarise
only the oldest messages and only as far as needed; escalate if the result
still does not fit), one store transaction that writes the record and the
new view, compacted hooks, then a continue message when automatic compaction
interrupted work. Nothing is deleted: a compaction only changes the view.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from baton import protocol as p
from baton.compaction import summary as summaries
from baton.compaction.artifacts import window_from_json, window_to_json
from baton.compaction.ledger import build_ledger, render_ledger
from baton.compaction.prune import plan_masks
from baton.config import Settings
from baton.context import BuiltContext
from baton.errors import BatonError, CompactionError, NotFound, SessionBusy
from baton.ids import new_id, utc_now
from baton.providers.base import (
    AssistantText,
    ItemDone,
    ModelRequest,
    Provider,
    TextDelta,
    UserText,
)
from baton.session.events import ProgressReporter
from baton.session.model import StoredMessage, StoredPart
from baton.session.state import SessionState, View
from baton.store.compactions import CompactionStore, StoredCompaction
from baton.tokens import estimate

if TYPE_CHECKING:
    from baton.session.service import SessionService

log = logging.getLogger(__name__)

# After compacting, aim this far below the trigger so work can go on before the next one.
TARGET_FRACTION = 0.6
CONTINUE_TEXT = (
    "[Baton] The conversation was compacted to fit the context window while you were working. "
    "Your summary, the ledger of exact facts and the plan above are current. Continue the task "
    "from where you left off; do not start over."
)
PROMPT_KINDS = {"prompt", "feedback", "approval", "continue", "pre_compact"}


@dataclass
class CompactRequest:
    trigger: p.Trigger
    instructions: str | None = None
    strategy: p.StrategySetting | None = None
    # Automatic compaction interrupted a turn that is still working.
    interrupted: bool = False
    # Problems hooks met while this compaction ran; they go into the record's notes.
    notes: list[str] = field(default_factory=list)


class CompactionHooks(Protocol):
    """The seams the hooks feature fills; with no hooks each is a no-op."""

    async def pre_compact(
        self, state: SessionState, request: CompactRequest
    ) -> list[p.PreCompactOutcome]: ...

    async def compacting(
        self, state: SessionState, request: CompactRequest
    ) -> tuple[list[str], str | None]: ...

    async def compacted(self, state: SessionState, record: p.CompactionRecord) -> None: ...


class NoHooks:
    async def pre_compact(
        self, state: SessionState, request: CompactRequest
    ) -> list[p.PreCompactOutcome]:
        return []

    async def compacting(
        self, state: SessionState, request: CompactRequest
    ) -> tuple[list[str], str | None]:
        return [], None

    async def compacted(self, state: SessionState, record: p.CompactionRecord) -> None:
        return None


class Strategy(Protocol):
    """How a compaction produces the new view (native summary, server-side artifact)."""

    name: p.Strategy

    async def run(self, job: CompactionJob) -> View: ...


@dataclass
class CompactionJob:
    """Everything one compaction knows while it runs."""

    engine: CompactionEngine
    state: SessionState
    request: CompactRequest
    settings: Settings
    provider: Provider
    before: BuiltContext
    report: ProgressReporter
    hook_context: list[str] = field(default_factory=list)
    prompt_override: str | None = None
    notes: list[str] = field(default_factory=list)
    ledger_text: str = ""
    # The view a native compaction starts from instead of the session's current one
    # (the server feature: a native view of the local history behind a server chain).
    base_view: View | None = None

    def build(self, view: View) -> BuiltContext:
        return self.engine.build_with_view(self.state, self.settings, self.provider, view)


def view_to_json(view: View) -> dict[str, Any]:
    return {
        "compactionId": view.compaction_id,
        "firstKeptSeq": view.first_kept_seq,
        "summary": view.summary,
        "ledgerText": view.ledger_text,
        "masked": view.masked,
        "serverWindow": window_to_json(view.server_window),
    }


def view_from_json(data: dict[str, Any]) -> View:
    return View(
        compaction_id=data.get("compactionId"),
        first_kept_seq=data.get("firstKeptSeq"),
        summary=data.get("summary"),
        ledger_text=data.get("ledgerText"),
        masked=dict(data.get("masked") or {}),
        server_window=window_from_json(data.get("serverWindow")),
    )


def in_view(state: SessionState, view: View) -> list[StoredMessage]:
    first = view.first_kept_seq
    return [
        m
        for m in state.messages
        if m.kind != "compaction"
        and (first is None or m.seq >= first)
        and m.id not in state.reverted  # taken back by a revert: not summarised
    ]


class NativeStrategy:
    """Prune old tool outputs; then summarise the oldest messages, escalating if needed."""

    name: p.Strategy = "native"

    async def run(self, job: CompactionJob) -> View:
        engine, state, settings = job.engine, job.state, job.settings
        before = job.before
        old = job.base_view if job.base_view is not None else state.view
        messages = in_view(state, old)
        calib = state.calibration or 1.0
        target_est = int(before.threshold_tokens * TARGET_FRACTION / calib)
        usable = before.usable_window
        protect = settings.compaction.protect_tool_output_tokens
        if protect is None:
            protect = min(40_000, usable // 4)
        keep = settings.compaction.keep_recent_tokens
        if keep is None:
            keep = max(1_000, min(20_000, usable // 4))

        # Phase 1: prune.
        job.report("Pruning old tool outputs", 20)
        masks, _saved = plan_masks(
            messages,
            old.masked,
            protect_tokens=protect,
            needed_tokens=max(0, before.estimated_tokens - target_est),
            exempt=self._exempt(state),
        )
        masked = {**old.masked, **masks}
        pruned_view = View(
            compaction_id=old.compaction_id,
            first_kept_seq=old.first_kept_seq,
            summary=old.summary,
            server_window=None,
            ledger_text=job.ledger_text,
            masked=masked,
        )
        # Manual and overflow compactions always summarise: the person asked for it, or
        # the provider has just shown that the estimate was too low.
        forced = job.request.trigger in ("manual", "overflow")
        if not forced and old.server_window is None:
            pruned = job.build(pruned_view)
            if pruned.tokens <= int(before.threshold_tokens * TARGET_FRACTION):
                job.notes.append(f"pruned {len(masks)} old tool outputs; no summary was needed")
                return pruned_view

        # Phase 2+: summarise the oldest messages, escalating until the view fits.
        summary = old.summary if old.server_window is None else None
        summarised_until = old.first_kept_seq
        levels = [(keep, protect), (keep // 4, 0), (0, 0)]
        last_view = pruned_view
        for level, (keep_tokens, protect_tokens) in enumerate(levels, start=1):
            if protect_tokens == 0:
                extra, _ = plan_masks(
                    messages, masked, protect_tokens=0, exempt=self._exempt(state)
                )
                masked = {**masked, **extra}
            boundary = choose_boundary(messages, masked, keep_tokens, state)
            region = _region(messages, boundary, summarised_until)
            if not region and summary is None and forced:
                # A forced compaction of a short history still compacts: everything but
                # the person's pending input goes into the summary.
                boundary = choose_boundary(messages, masked, 0, state)
                region = _region(messages, boundary, summarised_until)
            if region or summary is None:
                job.report(f"Summarising {len(region)} messages (level {level})", 40 + 15 * level)
                summary = await engine.summarise(job, region, masked, previous=summary)
            summarised_until = boundary
            view = View(
                first_kept_seq=boundary if boundary is not None else _after_last(state),
                summary=summary,
                ledger_text=job.ledger_text,
                masked={k: v for k, v in masked.items() if _kept(k, messages, boundary)},
            )
            last_view = view
            built = job.build(view)
            if built.tokens <= before.threshold_tokens:
                if level > 1:
                    job.notes.append(f"escalated to level {level} to fit the window")
                return view
        built = job.build(last_view)
        raise CompactionError(
            f"the session cannot fit the context window: after compacting as far as possible the "
            f"model would still be sent {built.tokens} tokens, over the compaction threshold of "
            f"{before.threshold_tokens} ({_largest_parts(built)}). Shorten the plan or the "
            f"workspace instruction files, or use a model with a larger window."
        )

    def _exempt(self, state: SessionState) -> frozenset[str]:
        """Outputs never masked: calls of the turn still running."""
        if state.turn is not None and state.busy:
            return state.turn.running_call_ids
        return frozenset()


def _region(
    messages: Sequence[StoredMessage], boundary: int | None, since: int | None
) -> list[StoredMessage]:
    return [
        m
        for m in messages
        if (boundary is None or m.seq < boundary) and (since is None or m.seq >= since)
    ]


def _after_last(state: SessionState) -> int:
    return (state.messages[-1].seq + 1) if state.messages else 0


def _kept(call_id: str, messages: Sequence[StoredMessage], boundary: int | None) -> bool:
    for m in messages:
        if boundary is not None and m.seq < boundary:
            continue
        if call_id in m.results or any(
            part.data.get("toolCallId") == call_id for part in m.tool_calls()
        ):
            return True
    return False


def _largest_parts(built: BuiltContext) -> str:
    parts = sorted(built.parts, key=lambda part: part.tokens, reverse=True)[:3]
    return ", ".join(f"{part.kind} {part.tokens}" for part in parts)


def choose_boundary(
    messages: Sequence[StoredMessage],
    masked: dict[str, str],
    keep_tokens: int,
    state: SessionState,
) -> int | None:
    """The seq of the oldest message kept verbatim (None: keep everything).

    Newest messages are kept up to `keep_tokens`. A tool call lives in the same
    message as its result, so any message boundary keeps them together. The
    latest message is always kept when it is the person's pending input.
    """
    if not messages:
        return None
    kept = 0
    boundary_index = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        size = _message_tokens(messages[index], masked, state)
        if kept + size > keep_tokens:
            break
        kept += size
        boundary_index = index
    last = messages[-1]
    if boundary_index == len(messages) and last.role == "user":
        boundary_index = len(messages) - 1
    # Prefer to start at the person's message of a turn when one is in the kept range.
    for index in range(boundary_index, len(messages)):
        if messages[index].role == "user" and messages[index].kind in PROMPT_KINDS:
            boundary_index = index
            break
    if boundary_index >= len(messages):
        return _after_last(state)
    if boundary_index == 0:
        return messages[0].seq
    return messages[boundary_index].seq


def _message_tokens(message: StoredMessage, masked: dict[str, str], state: SessionState) -> int:
    total = 0
    for part in message.parts:
        if part.type in ("text", "reasoning"):
            total += estimate(part.data.get("text", ""))
        elif part.type == "tool_call":
            total += estimate(part.data.get("arguments") or "") + 8
            call_id = part.data["toolCallId"]
            if call_id in masked:
                total += estimate(masked[call_id])
            elif call_id in message.results:
                total += estimate(message.results[call_id].output)
    return total + 4


class CompactionEngine:
    def __init__(self, service: SessionService, store: CompactionStore) -> None:
        self.service = service
        self.store = store
        self.hooks: CompactionHooks = NoHooks()
        self.strategies: dict[str, Strategy] = {"native": NativeStrategy()}
        # Chooses the strategy for a job; the server-side feature replaces it.
        self.choose_strategy: Callable[[CompactionJob], Strategy] = self._native_only
        self.plan_state: Callable[[SessionState], p.PlanState | None] = lambda state: None
        service.on_session_loaded.append(self.restore_view)

    # ------------------------------------------------------------------ views

    def restore_view(self, state: SessionState) -> None:
        entry = self.store.active(state.id)
        state.view = self.view_of(entry) if entry else View()

    def view_of(self, entry: StoredCompaction) -> View:
        view = view_from_json(entry.view)
        view.compaction_id = entry.record.compaction_id
        return view

    def build_with_view(
        self, state: SessionState, settings: Settings, provider: Provider, view: View
    ) -> BuiltContext:
        saved = state.view
        state.view = view
        try:
            return self.service.build_context(state, settings, provider.identity)
        finally:
            state.view = saved

    def records(self, session_id: str) -> list[p.CompactionRecord]:
        self.service.state(session_id)
        return [entry.record for entry in self.store.all(session_id)]

    def _native_only(self, job: CompactionJob) -> Strategy:
        if job.request.strategy == "server":
            job.notes.append(
                "server-side compaction is not available for this provider; used native"
            )
        return self.strategies["native"]

    # ------------------------------------------------------------------ compaction

    async def compact(self, state: SessionState, request: CompactRequest) -> p.CompactionRecord:
        """Run one compaction now. Callers make sure no other one runs in this session."""
        settings = self.service.settings()
        provider = self.service.provider_for(state, settings)
        channel = self.service.channel
        strategy_name: p.Strategy = "native"
        started = False
        try:
            async with channel.progress("Compacting session") as report:
                report("Running pre-compact hooks", 5)
                pre = await self.hooks.pre_compact(state, request)
                before = self.service.build_context(state, settings, provider.identity)
                job = CompactionJob(
                    engine=self,
                    state=state,
                    request=request,
                    settings=settings,
                    provider=provider,
                    before=before,
                    report=report,
                )
                job.hook_context, job.prompt_override = await self.hooks.compacting(state, request)
                job.notes.extend(request.notes)
                strategy = self.choose_strategy(job)
                strategy_name = strategy.name
                channel.send_update(
                    state.id, p.CompactionStarted(trigger=request.trigger, strategy=strategy.name)
                )
                started = True
                ledger = build_ledger(
                    [m for m in state.messages if m.id not in state.reverted],
                    self.plan_state(state),
                )
                job.ledger_text = render_ledger(ledger)
                view = await strategy.run(job)
                view.ledger_text = job.ledger_text
                record = self._commit(job, view, ledger, pre, strategy.name)
                report("Done", 100)
        except BaseException as exc:
            if isinstance(exc, BatonError):
                message = exc.message
            elif isinstance(exc, Exception):
                message = f"{type(exc).__name__}: {exc}"
            else:
                message = "compaction was cancelled"
            if not started:
                channel.send_update(
                    state.id, p.CompactionStarted(trigger=request.trigger, strategy=strategy_name)
                )
            channel.send_update(state.id, p.CompactionFailed(error=message))
            log.warning("compaction failed in %s: %s", state.id, message)
            if isinstance(exc, CompactionError | SessionBusy) or not isinstance(exc, Exception):
                raise
            if not isinstance(exc, BatonError):
                log.error("compaction crashed", exc_info=exc)
            raise CompactionError(f"compaction failed: {message}") from exc
        channel.send_update(state.id, p.CompactionFinished(compaction=record))
        try:
            await self.hooks.compacted(state, record)
        except Exception:
            log.exception("a compacted hook failed; the compaction stands")
        return record

    def _commit(
        self,
        job: CompactionJob,
        view: View,
        ledger: p.Ledger,
        pre: list[p.PreCompactOutcome],
        strategy: p.Strategy,
    ) -> p.CompactionRecord:
        state = job.state
        compaction_id = new_id("cmp")
        view.compaction_id = compaction_id
        after = job.build(view)
        first_kept = next(
            (
                m
                for m in state.messages
                if m.kind != "compaction"
                and view.first_kept_seq is not None
                and m.seq >= view.first_kept_seq
            ),
            None,
        )
        if view.first_kept_seq is None and state.messages:
            first_kept = next((m for m in state.messages if m.kind != "compaction"), None)
        record = p.CompactionRecord(
            compaction_id=compaction_id,
            session_id=state.id,
            trigger=job.request.trigger,
            strategy=strategy,
            tokens_before=job.before.tokens,
            tokens_after=after.tokens,
            first_kept_message_id=first_kept.id if first_kept else None,
            summary=view.summary if strategy == "native" else None,
            ledger=ledger,
            pre_compact=pre,
            created_at=utc_now(),
            notes=job.notes,
        )
        interrupted = job.request.interrupted and job.settings.compaction.auto_continue
        continue_text = CONTINUE_TEXT if interrupted else None
        marker, follow = self.store.commit(
            record,
            first_kept_seq=view.first_kept_seq,
            view=self.serialise_view(view),
            marker_parts=[StoredPart("compaction", {"compactionId": compaction_id})],
            continue_text=continue_text,
        )
        state.add(marker)
        if follow is not None:
            state.add(follow)
            self.service.channel.send_update(
                state.id, p.UserMessageUpdate(message_id=follow.id, text=follow.text())
            )
        state.view = view
        return record

    def serialise_view(self, view: View) -> dict[str, Any]:
        return view_to_json(view)

    # ------------------------------------------------------------------ summary

    async def summarise(
        self,
        job: CompactionJob,
        region: Sequence[StoredMessage],
        masked: dict[str, str],
        *,
        previous: str | None,
    ) -> str:
        """Anchored summary of `region`, in chunks that fit the window."""
        settings = job.settings
        provider = self._summary_provider(job)
        window = job.before.usable_window
        max_out = max(256, min(4_000, window // 6))
        chunk_tokens = max(1_000, window - max_out - 1_500 - estimate(previous or ""))
        summary = previous
        if not region and previous:
            return previous
        for chunk in _chunks(region, masked, chunk_tokens):
            transcript = summaries.render_transcript(chunk, masked)
            summary = await self._summarise_once(
                job, provider, transcript, summary, max_out, settings
            )
        return summary or "## " + "\n\nnone\n\n## ".join(summaries.SECTIONS) + "\n\nnone"

    def _summary_provider(self, job: CompactionJob) -> Provider:
        model = job.settings.compaction.model
        if not model:
            return job.provider
        return self.service.providers.get(
            job.settings,
            self.service.credentials,
            provider=job.provider.identity.provider,
            model=model,
        )

    async def _summarise_once(
        self,
        job: CompactionJob,
        provider: Provider,
        transcript: str,
        previous: str | None,
        max_out: int,
        settings: Settings,
    ) -> str:
        base = job.prompt_override or summaries.INSTRUCTIONS
        prompt = summaries.user_prompt(
            transcript,
            previous=previous,
            instructions=job.request.instructions,
            hook_context=job.hook_context,
            base_instructions=base,
        )
        items: list[Any] = [UserText(text=prompt)]
        text = await self._ask(provider, items, max_out, job.state.id)
        missing = summaries.missing_sections(text)
        if missing:
            items += [
                AssistantText(text=text),
                UserText(
                    text=summaries.RETRY.format(
                        missing=", ".join(missing), sections=", ".join(summaries.SECTIONS)
                    )
                ),
            ]
            retry = await self._ask(provider, items, max_out, job.state.id)
            still = summaries.missing_sections(retry)
            if len(still) <= len(missing) and retry.strip():
                text, missing = retry, still
            if missing:
                job.notes.append("summary accepted without sections: " + ", ".join(missing))
        if not text.strip():
            job.notes.append("the model returned an empty summary; the previous one was kept")
            return previous or ""
        return text.strip()

    async def _ask(self, provider: Provider, items: list[Any], max_out: int, cache_key: str) -> str:
        request = ModelRequest(
            instructions=summaries.system_prompt(),
            items=items,
            tools=[],
            purpose="summary",
            max_output_tokens=max_out,
            cache_key=cache_key,
        )
        deltas: list[str] = []
        final: list[str] = []
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                deltas.append(event.text)
            elif isinstance(event, ItemDone) and isinstance(event.item, AssistantText):
                final.append(event.item.text)
        return "".join(final) if final else "".join(deltas)

    # ------------------------------------------------------------------ undo

    def uncompact(self, state: SessionState, compaction_id: str) -> p.CompactionRecord:
        if state.busy or state.compacting:
            raise SessionBusy(state.id)
        entries = self.store.all(state.id)
        index = next(
            (i for i, e in enumerate(entries) if e.record.compaction_id == compaction_id), None
        )
        if index is None:
            raise NotFound(f"compaction not found: {compaction_id!r}")
        target = entries[index]
        if target.undone:
            raise CompactionError(f"compaction {compaction_id} is already undone")
        later = [e for e in entries[index:] if not e.undone]
        previous = next((e for e in reversed(entries[:index]) if not e.undone), None)
        view = self.view_of(previous) if previous else View()
        settings = self.service.settings()
        provider = self.service.provider_for(state, settings)
        built = self.build_with_view(state, settings, provider, view)
        if built.tokens > built.usable_window:
            raise CompactionError(
                f"the view before this compaction needs {built.tokens} tokens and the usable "
                f"window is {built.usable_window}; it cannot be restored with this model"
            )
        self.store.undo([e.record.compaction_id for e in later])
        state.view = view
        record = target.record.model_copy(update={"undone": True})
        return record


def _chunks(
    region: Sequence[StoredMessage], masked: dict[str, str], budget: int
) -> list[list[StoredMessage]]:
    chunks: list[list[StoredMessage]] = [[]]
    size = 0
    for message in region:
        tokens = estimate(summaries.render_transcript([message], masked))
        if chunks[-1] and size + tokens > budget:
            chunks.append([])
            size = 0
        chunks[-1].append(message)
        size += tokens
    return [c for c in chunks if c] or [[]]
