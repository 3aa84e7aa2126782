"""What the hooks do to a session: the pre-compact round, summary instructions, tool guards.

`LifecycleHooks` fills the compaction engine's `CompactionHooks` seam and the
session service's tool seam, using the dispatcher for the hooks themselves.

The pre-compact round. Every pre_compact hook is asked first, with the same
history; then each hook that answered `shouldRun: true` gets one round of its
own, in hook order (one round per asking hook, not one combined round, so each
round's audit entry and outcome name the hook that asked for it, and one
hook's prompt cannot dilute another's). A round is the ordinary agent loop
(`Turn(purpose="pre_compact")`): the session's mode, full tool set and
permissions, permission requests to the client; it never compacts itself.
It is bounded by `hooks.preCompactMaxSteps` model steps and
`hooks.preCompactTimeout` seconds. In the history a round is

1. a user message of kind `pre_compact`: a `pre_compact` part (status
   `started`: hook, prompt, trigger) and the prompt as text, which the model
   sees;
2. the round's model steps and tool results, as in any turn;
3. a system message of kind `pre_compact` holding the closing audit entry
   (status `completed`, or `failed` with the error). The store is
   append-only, so the round's end is a new entry rather than an update, and
   a system message is never sent to the model.

A round that ends on its own is `completed`. One stopped by its step limit,
its timeout, a provider error or `baton/session/cancel` is `failed`, and the
error is also in the record's `preCompact` list; the compaction goes on
either way. If the turn that the compaction runs inside is itself cancelled,
the round is closed as cancelled and the cancellation goes on up (the person
stopped the work; the compaction stops with it).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from baton import protocol as p
from baton.agent.compact_request import CompactRequest
from baton.agent.state import SessionState
from baton.agent.turn import Turn
from baton.errors import BatonError, ProviderError
from baton.hooks.dispatcher import HookDispatcher, HookResult
from baton.hooks.events import (
    CompactedEvent,
    CompactingAnswer,
    CompactingEvent,
    PreCompactAnswer,
    PreCompactEvent,
    ToolAfterEvent,
    ToolBeforeAnswer,
    ToolBeforeEvent,
)
from baton.store.model import StoredPreCompact, StoredText

if TYPE_CHECKING:
    from baton.session.service import SessionService

log = logging.getLogger(__name__)

DEFAULT_PROMPT = (
    "[Baton] This conversation is about to be compacted: older messages will be replaced by a "
    "summary. Before that happens, save anything you will need later and that a summary could "
    "lose (working notes, exact values, the state of unfinished work) to files in the "
    "workspace with your tools. Then stop."
)


class LifecycleHooks:
    """The engine's `CompactionHooks` and the service's `ToolHooks`, backed by the dispatcher."""

    def __init__(self, service: SessionService, dispatcher: HookDispatcher) -> None:
        self.service = service
        self.dispatcher = dispatcher

    # ------------------------------------------------------------------ pre_compact

    async def pre_compact(
        self, state: SessionState, request: CompactRequest
    ) -> list[p.PreCompactOutcome]:
        if not self.dispatcher.has("pre_compact"):
            return []
        event = PreCompactEvent(
            session_id=state.id,
            trigger=request.trigger,
            instructions=request.instructions,
            messages=self.service.load(state.id).messages,
        )
        results = await self.dispatcher.dispatch("pre_compact", event)
        outcomes: list[p.PreCompactOutcome] = []
        for result in results:
            answer = result.answer
            if result.error is not None:
                outcomes.append(
                    p.PreCompactOutcome(hook=result.hook, ran=False, error=result.error)
                )
            elif isinstance(answer, PreCompactAnswer) and answer.should_run:
                prompt = (answer.prompt or "").strip() or DEFAULT_PROMPT
                error = await self.run_round(state, request, result.hook, prompt)
                outcomes.append(p.PreCompactOutcome(hook=result.hook, ran=True, error=error))
            else:
                outcomes.append(p.PreCompactOutcome(hook=result.hook, ran=False))
        return outcomes

    async def run_round(
        self, state: SessionState, request: CompactRequest, hook: str, prompt: str
    ) -> str | None:
        """One bounded autonomous round; returns why it failed, or None."""
        service = self.service
        settings = service.settings().hooks
        audit = p.PreCompactPart(hook=hook, prompt=prompt, trigger=request.trigger)
        message = service.store.append_message(
            state.id,
            "user",
            "pre_compact",
            [StoredPreCompact(audit), StoredText(prompt)],
            meta={"hook": hook},
        )
        state.add(message)
        service.channel.send_update(
            state.id, p.UserMessageUpdate(message_id=message.id, text=prompt)
        )
        turn = Turn(service, state, max_steps=settings.pre_compact_max_steps, purpose="pre_compact")
        turn.permission_timeout = settings.pre_compact_permission_timeout
        task = asyncio.create_task(turn.run(), name=f"pre-compact-{state.id}")
        state.pre_compact_round = task
        error: str | None
        try:
            done, _ = await asyncio.wait({task}, timeout=settings.pre_compact_timeout)
        except asyncio.CancelledError:
            # The work around the compaction was stopped: close the round, then stop too.
            await _stop(task)
            self._close(state, audit, "cancelled: the compaction itself was cancelled")
            raise
        finally:
            if state.pre_compact_round is task:
                state.pre_compact_round = None
        if not done:
            await _stop(task)
            error = f"timed out after {settings.pre_compact_timeout:g} s"
        else:
            error = _round_error(task, settings.pre_compact_max_steps)
        self._close(state, audit, error)
        return error

    def cancel_round(self, state: SessionState) -> None:
        """`baton/session/cancel` while a round runs: stop the round; the compaction goes on."""
        task = state.pre_compact_round
        if task is not None and not task.done():
            task.cancel()

    def _close(self, state: SessionState, audit: p.PreCompactPart, error: str | None) -> None:
        closing = audit.model_copy(
            update={"status": "failed" if error else "completed", "error": error}
        )
        try:
            message = self.service.store.append_message(
                state.id,
                "system",
                "pre_compact",
                [StoredPreCompact(closing)],
                meta={"hook": audit.hook},
            )
        except BatonError:
            log.exception("could not record the end of a pre-compact round")
            return
        state.add(message)
        if error:
            log.warning("pre-compact round of %s in %s: %s", audit.hook, state.id, error)

    # ------------------------------------------------------------------ compacting / compacted

    async def compacting(
        self, state: SessionState, request: CompactRequest
    ) -> tuple[list[str], str | None]:
        """Context lines from every hook, in order; several prompts are joined in order."""
        if not self.dispatcher.has("compacting"):
            return [], None
        event = CompactingEvent(session_id=state.id, trigger=request.trigger)
        context: list[str] = []
        prompts: list[str] = []
        for result in await self.dispatcher.dispatch("compacting", event):
            if result.error is not None:
                request.notes.append(f"compacting hook {result.hook} failed: {result.error}")
                continue
            answer = result.answer
            if isinstance(answer, CompactingAnswer):
                context += [line for line in answer.context or [] if line.strip()]
                if answer.prompt and answer.prompt.strip():
                    prompts.append(answer.prompt.strip())
        return context, ("\n\n".join(prompts) or None)

    async def compacted(self, state: SessionState, record: p.CompactionRecord) -> None:
        if not self.dispatcher.has("compacted"):
            return
        event = CompactedEvent(session_id=state.id, compaction=record)
        # Errors are logged by the dispatcher; the compaction stands whatever they are.
        await self.dispatcher.dispatch("compacted", event)

    # ------------------------------------------------------------------ tools

    async def tool_before(
        self, state: SessionState, name: str, input: dict[str, Any]
    ) -> str | None:
        """The first denial's reason (naming the hook), or None to let the tool run.

        A tool_before hook that fails is logged and does not block the tool: a
        broken hook must not stop all work, and permissions still apply.
        """
        if not self.dispatcher.has("tool_before"):
            return None
        event = ToolBeforeEvent(session_id=state.id, name=name, input=input)
        results = await self.dispatcher.dispatch("tool_before", event, stop=_denies)
        for result in results:
            if _denies(result):
                assert isinstance(result.answer, ToolBeforeAnswer)
                return f"denied by hook {result.hook}: {result.answer.deny}"
        return None

    async def tool_after(
        self, state: SessionState, name: str, input: dict[str, Any], output: str
    ) -> None:
        if not self.dispatcher.has("tool_after"):
            return
        event = ToolAfterEvent(session_id=state.id, name=name, input=input, output=output)
        await self.dispatcher.dispatch("tool_after", event)


def _denies(result: HookResult) -> bool:
    return isinstance(result.answer, ToolBeforeAnswer) and result.answer.deny is not None


async def _stop(task: asyncio.Task[p.PromptResult]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def _round_error(task: asyncio.Task[p.PromptResult], max_steps: int) -> str | None:
    if task.cancelled():
        return "cancelled"
    exc = task.exception()
    if isinstance(exc, ProviderError):
        return f"provider error: {exc.message}"
    if exc is not None:
        return f"internal error: {type(exc).__name__}: {exc}"
    result = task.result()
    reason = result.stop_reason
    if reason == "end_turn":
        return None
    if reason == "cancelled":
        return "cancelled"
    if reason == "max_steps":
        return f"stopped at the step limit ({max_steps} steps)"
    if reason == "refusal":
        return "the model refused"
    return result.error or reason
