"""The agent loop: one turn runs model steps until the model stops calling tools.

Each step is committed as it completes: the model's output as one message,
then each tool's result as it finishes, so a crash loses at most the step in
flight. A stream that breaks mid-message is kept, marked incomplete.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from baton import protocol as p
from baton.agent import prompts
from baton.agent.context import BuiltContext
from baton.agent.echoed_markup import shown_text
from baton.agent.events import ClientChannel
from baton.agent.notes import ContextNotes
from baton.agent.nudge import nudge_text, should_nudge, turn_prompt
from baton.agent.repeats import RepeatGuard
from baton.agent.state import SessionState
from baton.agent.tokens import calibration
from baton.causes import cause_of
from baton.config import Settings
from baton.errors import BatonError, ProviderError
from baton.providers.base import (
    AnyTool,
    AssistantText,
    Finished,
    ItemDone,
    NoTool,
    OpaqueItem,
    Progress,
    Provider,
    ProviderIdentity,
    Reasoning,
    ReasoningDelta,
    RequiredCall,
    ServerCompaction,
    StepChoice,
    TextDelta,
    ToolCall,
    Usage,
)
from baton.providers.retry_notice import RetryNotice, retries_reported_to
from baton.store.model import (
    StoredMessage,
    StoredOpaque,
    StoredPart,
    StoredReasoning,
    StoredText,
    StoredToolCall,
    ToolResultRecord,
    let_go_of_load_only_meta,
)
from baton.store.outcomes import TurnOutcomeLog
from baton.store.requests import RequestLog
from baton.store.sessions import SessionStore
from baton.tools.base import ToolResult

log = logging.getLogger(__name__)

CANCELLED_OUTPUT = "[cancelled: the turn was stopped before this tool finished]"
NOT_RUN_OUTPUT = "[not run: {reason}]"


@dataclass
class StepOutput:
    message: StoredMessage
    tool_calls: list[ToolCall]
    finish: str | None
    usage: Usage | None


@dataclass
class _Collector:
    """What a step's stream has produced so far (kept if the stream breaks)."""

    parts: list[StoredPart] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    usage: Usage | None = None
    finish: str | None = None
    server_compactions: list[OpaqueItem] = field(default_factory=list)

    def flush_partial(self) -> None:
        if self.reasoning:
            self.parts.append(StoredReasoning("".join(self.reasoning)))
            self.reasoning.clear()
        if self.text:
            self.parts.append(StoredText("".join(self.text)))
            self.text.clear()


class TurnHooks(Protocol):
    """Around each model step of a turn (compaction: its trigger and overflow recovery)."""

    async def before_step(self, turn: Turn) -> None: ...

    async def check(self, turn: Turn, built: BuiltContext, provider: Provider) -> BuiltContext:
        """The context to send instead of `built` (compacted when over the threshold)."""
        ...

    async def recover_overflow(self, turn: Turn, error: ProviderError) -> bool:
        """After the provider refused the request for size: True to retry the step once."""
        ...


class ServerCompactionEvents(Protocol):
    """A compaction item the provider's server emitted mid-stream (OpenAI's
    `context_management`; baton.compaction.server records it)."""

    def on_server_compaction(
        self, turn: Turn, message: StoredMessage, item: OpaqueItem, provider: Provider
    ) -> None: ...


class StepSeams(Protocol):
    """The seams a turn calls itself (`baton.session.seams.Seams`)."""

    @property
    def turn(self) -> TurnHooks: ...

    @property
    def server_compaction(self) -> ServerCompactionEvents: ...


class TurnHost(Protocol):
    """What a turn needs of the session service (baton.session.service.SessionService):
    the store and the channel, the context it sends, the seams around each step, and
    each tool call run."""

    @property
    def workspace(self) -> Path: ...

    @property
    def channel(self) -> ClientChannel: ...

    @property
    def store(self) -> SessionStore: ...

    @property
    def requests(self) -> RequestLog: ...

    @property
    def outcomes(self) -> TurnOutcomeLog: ...

    @property
    def notes(self) -> ContextNotes: ...

    @property
    def seams(self) -> StepSeams:
        """Compaction's check and overflow recovery, the server's in-stream compactions."""
        ...

    def settings(self) -> Settings: ...

    def provider_for(self, state: SessionState, settings: Settings) -> Provider: ...

    def build_context(
        self, state: SessionState, settings: Settings, identity: ProviderIdentity | None
    ) -> BuiltContext: ...

    async def before_step(self, turn: Turn) -> None: ...

    async def run_tool(self, turn: Turn, call: ToolCall) -> ToolResult: ...

    def concurrency(self, state: SessionState, calls: Sequence[ToolCall]) -> int: ...


class TurnEnded(Exception):
    def __init__(self, result: p.PromptResult) -> None:
        super().__init__(result.stop_reason)
        self.result = result


class Turn:
    """One run of the agent loop for one session; cancellable as an asyncio task."""

    def __init__(
        self,
        service: TurnHost,
        state: SessionState,
        *,
        max_steps: int | None = None,
        purpose: Literal["turn", "pre_compact"] = "turn",
        require_tools: Sequence[StepChoice] = (),
        first_call: ToolCall | None = None,
    ) -> None:
        self.service = service
        self.state = state
        self.max_steps = max_steps
        # A call Baton makes for the person before the model's first step (a slash
        # command that runs as a `task` child): recorded and run like the model's own.
        self.first_call = first_call
        # Step k of the turn must call require_tools[k] (a caller that knows which tool
        # each step needs: `baton demo`), its arguments maybe narrowed; later steps are
        # free.
        self.require_tools = tuple(require_tools)
        # The call the current step was held to (its tools run under it), None when free.
        self.required: RequiredCall | None = None
        self.purpose = purpose
        # Set for autonomous rounds: how long a permission request may wait.
        self.permission_timeout: float | None = None
        self.repeats = RepeatGuard(service.settings().tools.repeat_limit)
        # Why the turn ends with an error once the current step's tools have run.
        self.stop_error: str | None = None
        self.steps = 0
        self.overflow_retried = False
        self._last_message: StoredMessage | None = None
        # For the look-first nudge (session/nudge.py): once per turn, only before any tool.
        self.tool_calls_made = 0
        self.nudged = False
        self.must_call_tool = False
        self.asked_for_words = False

    @property
    def session_id(self) -> str:
        return self.state.id

    def emit(self, update: p.Update) -> None:
        self.service.channel.send_update(self.session_id, update)

    async def run(self) -> p.PromptResult:
        try:
            result = await self._loop()
        except asyncio.CancelledError:
            self._finish_interrupted(CANCELLED_OUTPUT)
            result = p.PromptResult(stop_reason="cancelled")
        except ProviderError as exc:
            self._finish_interrupted(NOT_RUN_OUTPUT.format(reason="the provider failed"))
            if self.purpose == "turn":
                self._ended(
                    p.PromptResult(stop_reason="error", error=exc.message, cause=cause_of(exc))
                )
            raise
        except BatonError as exc:
            self._finish_interrupted(NOT_RUN_OUTPUT.format(reason=exc.message))
            result = p.PromptResult(stop_reason="error", error=exc.message, cause=cause_of(exc))
        except Exception as exc:
            log.exception("turn failed in session %s", self.session_id)
            self._finish_interrupted(NOT_RUN_OUTPUT.format(reason="internal error"))
            result = p.PromptResult(
                stop_reason="error", error=f"internal error: {type(exc).__name__}: {exc}"
            )
        # A pre-compact round runs inside a compaction (maybe inside a turn): its end is
        # not the end of the person's turn, so clients are not told it is.
        if self.purpose == "turn":
            self._ended(result)
        return result

    def _ended(self, result: p.PromptResult) -> None:
        """Tell the client how the turn ended, and keep it for a client that reopens the
        session later (a store that cannot take it costs the reopened marker, not the turn)."""
        last = self.state.messages[-1].seq if self.state.messages else None
        try:
            self.service.outcomes.record(self.session_id, last, result.stop_reason, result.error)
        except Exception:
            log.exception("the end of a turn in %s was not stored", self.session_id)
        self.emit(
            p.TurnEnded(stop_reason=result.stop_reason, error=result.error, cause=result.cause)
        )

    async def _loop(self) -> p.PromptResult:
        if self.first_call is not None:
            await self.service.before_step(self)
            step = self._person_step(self.first_call)
            self.tool_calls_made += 1
            end_turn = await self._run_tools(step)
            if self.stop_error:
                return p.PromptResult(stop_reason="error", error=self.stop_error)
            if end_turn:
                return p.PromptResult(stop_reason="end_turn")
        while True:
            settings = self.service.settings()
            limit = self.max_steps or settings.max_steps
            if self.steps >= limit:
                return p.PromptResult(stop_reason="max_steps")
            await self.service.before_step(self)
            provider = self.service.provider_for(self.state, settings)
            built = self.service.build_context(self.state, settings, provider.identity)
            built = await self.service.seams.turn.check(self, built, provider)
            named = self.require_tools[self.steps] if self.steps < len(self.require_tools) else None
            self.required = None
            if isinstance(named, NoTool):
                built.request.require_tool = named
            elif named is not None and any(t.name == named.name for t in built.request.tools):
                built.request.require_tool = self.required = named
            elif self.must_call_tool and built.request.tools:
                built.request.require_tool = AnyTool()
            self.must_call_tool = False
            try:
                step = await self._model_step(provider, built)
            except ProviderError as exc:
                if exc.overflow and not self.overflow_retried:
                    self.overflow_retried = True
                    if await self.service.seams.turn.recover_overflow(self, exc):
                        continue
                raise
            self.steps += 1
            if not step.tool_calls:
                if step.finish == "refusal":
                    return p.PromptResult(stop_reason="refusal")
                if self._nudge() or self._ask_for_words(step):
                    continue
                return p.PromptResult(stop_reason="end_turn")
            self.tool_calls_made += len(step.tool_calls)
            end_turn = await self._run_tools(step)
            if self.stop_error:
                return p.PromptResult(stop_reason="error", error=self.stop_error)
            if end_turn:
                return p.PromptResult(stop_reason="end_turn")

    def _nudge(self) -> bool:
        """After an answer without any tool call: ask the model once to look first, when
        the person asked about the code and there is code to look at (session/nudge.py)."""
        if self.nudged or self.tool_calls_made or self.purpose != "turn":
            return False
        if not should_nudge(self.state, self.service.workspace, self.service.settings()):
            return False
        self.nudged = True
        # The step after the nudge must call a tool: small models ignore the words alone.
        self.must_call_tool = True
        self._note(nudge_text(turn_prompt(self.state) or ""), "no_tool")
        return True

    def _ask_for_words(self, step: StepOutput) -> bool:
        """After tools, an answer with nothing to show (a small model's echoed markup) ends
        nothing: the model is asked once in the turn to answer in words."""
        if self.asked_for_words or not self.tool_calls_made or self.purpose != "turn":
            return False
        if shown_text(step.message.text()).strip():
            return False
        self.asked_for_words = True
        self._note(prompts.EMPTY_ANSWER, "empty_answer")
        return True

    def _note(self, text: str, reason: Literal["no_tool", "empty_answer"]) -> None:
        """Append a note for the model (stored, replayed by load) and tell the client."""
        message = self.service.notes.add(self.state, text, {"nudge": reason})
        self.emit(p.NoteUpdate(message_id=message.id, text=message.text(), reason=reason))

    # ------------------------------------------------------------------ model step

    async def _model_step(self, provider: Provider, built: BuiltContext) -> StepOutput:
        collected = _Collector()
        try:
            with retries_reported_to(_weakly(self._on_retry)):
                async for event in provider.stream(built.request):
                    self._on_event(event, collected)
        except (ProviderError, asyncio.CancelledError) as exc:
            collected.flush_partial()
            if collected.parts:
                reason = "cancelled" if isinstance(exc, asyncio.CancelledError) else str(exc)
                self._commit_step(collected, built, provider, incomplete=True, error=reason)
            raise
        if not collected.parts:
            # A provider that sends deltas but no finished items: keep what streamed.
            collected.flush_partial()
        # Otherwise the finished items are the truth: deltas left over are text the
        # provider took back (a tool call the model wrote as text, parsed into a call).
        message = self._commit_step(collected, built, provider, incomplete=False, error=None)
        for item in collected.server_compactions:
            self.service.seams.server_compaction.on_server_compaction(self, message, item, provider)
        return StepOutput(message, collected.tool_calls, collected.finish, collected.usage)

    def _on_retry(self, notice: RetryNotice) -> None:
        update = p.ModelRetry(
            attempt=notice.attempt,
            max_retries=notice.max_retries,
            delay_seconds=round(notice.delay, 1),
            reason=notice.reason,
            status=notice.status,
        )
        # Kept for a client that reopens the session (a store that cannot take it costs
        # the reopened line, not the retry).
        last = self.state.messages[-1].seq if self.state.messages else None
        try:
            self.service.outcomes.record_shown(self.session_id, last, update)
        except Exception:
            log.exception("a retry in %s was not stored", self.session_id)
        self.emit(update)

    def _on_event(self, event: object, c: _Collector) -> None:
        if isinstance(event, TextDelta):
            c.text.append(event.text)
            self.emit(p.AgentMessageChunk(text=event.text))
        elif isinstance(event, ReasoningDelta):
            c.reasoning.append(event.text)
            self.emit(p.AgentThoughtChunk(text=event.text))
        elif isinstance(event, ItemDone):
            item = event.item
            if isinstance(item, AssistantText):
                c.text.clear()
                c.parts.append(StoredText(item.text, item.native))
            elif isinstance(item, Reasoning):
                text = item.text or "".join(c.reasoning)
                c.reasoning.clear()
                c.parts.append(StoredReasoning(text, item.native))
            elif isinstance(item, ToolCall):
                args = parse_arguments(item.arguments)
                part = StoredToolCall(
                    item.call_id,
                    item.name,
                    args if args is not None else {},
                    item.arguments,
                    item.native,
                )
                c.parts.append(part)
                c.tool_calls.append(item)
                self.emit(
                    p.ToolCallStarted(tool_call_id=item.call_id, name=item.name, input=part.input)
                )
            elif isinstance(item, OpaqueItem):
                c.parts.append(StoredOpaque(item.native))
        elif isinstance(event, ServerCompaction):
            c.parts.append(StoredOpaque(event.item.native, server_compaction=True))
            c.server_compactions.append(event.item)
        elif isinstance(event, Usage):
            c.usage = event
        elif isinstance(event, Finished):
            c.finish = event.reason
        elif isinstance(event, Progress):
            self.emit(
                p.ModelProgress(
                    phase=event.phase, done=event.done, total=event.total, cached=event.cached
                )
            )

    def _commit_step(
        self,
        c: _Collector,
        built: BuiltContext,
        provider: Provider,
        *,
        incomplete: bool,
        error: str | None,
    ) -> StoredMessage:
        meta: dict[str, Any] = {
            "identity": provider.identity.to_json(),
            "estimatedInput": built.estimated_tokens,
            "estimatedParts": built.estimated_parts,
            "finish": c.finish,
        }
        if c.usage is not None:
            meta["usage"] = {
                "input": c.usage.input_tokens,
                "output": c.usage.output_tokens,
                "cached": c.usage.cached_tokens,
                "reasoning": c.usage.reasoning_tokens,
            }
            if c.usage.cache_write_tokens:
                meta["usage"]["cacheWrite"] = c.usage.cache_write_tokens
        if error:
            meta["error"] = error
        if self.purpose == "pre_compact":
            meta["preCompact"] = True
        results: list[ToolResultRecord] = []
        if incomplete:
            # Calls from a broken response are never run; say so in the history.
            results = [
                ToolResultRecord(
                    call.call_id,
                    "failed",
                    NOT_RUN_OUTPUT.format(reason="the response was interrupted"),
                )
                for call in c.tool_calls
            ]
        message = self.service.store.append_message(
            self.session_id,
            "assistant",
            "step",
            c.parts,
            incomplete=incomplete,
            meta=meta,
            results=results,
        )
        let_go_of_load_only_meta(message)
        self.state.add(message)
        self._last_message = message
        if c.usage is not None:
            self.service.requests.record(
                self.session_id, self.purpose, c.usage, provider.identity, message.id
            )
            self.state.calibration = calibration(c.usage.input_tokens, built.estimated_tokens)
            self.state.token_model.observe(c.usage.input_tokens, built.estimated_parts)
            self.emit(
                p.UsageUpdate(
                    tokens=c.usage.input_tokens + c.usage.output_tokens,
                    context_window=built.context_window,
                    input_tokens=c.usage.input_tokens,
                    cached_tokens=c.usage.cached_tokens,
                    output_tokens=c.usage.output_tokens,
                )
            )
        for result in results:
            self.emit(
                p.ToolCallUpdate(
                    tool_call_id=result.tool_call_id, status="failed", output=result.output
                )
            )
        return message

    def _person_step(self, call: ToolCall) -> StepOutput:
        """The step that holds a call Baton makes for the person, committed as the model's
        steps are (the model sees it, and its result, as its own history)."""
        args = parse_arguments(call.arguments) or {}
        part = StoredToolCall(call.call_id, call.name, input=args, arguments=call.arguments)
        message = self.service.store.append_message(
            self.session_id, "assistant", "step", [part], meta={"byPerson": True}
        )
        self.state.add(message)
        self.emit(p.ToolCallStarted(tool_call_id=call.call_id, name=call.name, input=args))
        return StepOutput(message, [call], None, None)

    # ------------------------------------------------------------------ tools

    async def _run_tools(self, step: StepOutput) -> bool:
        if len(step.tool_calls) > 1:
            width = self.service.concurrency(self.state, step.tool_calls)
            if width > 1:
                return await self._run_together(step, width)
        end_turn = False
        for call in step.tool_calls:
            self._running(frozenset({call.call_id}))
            self.emit(p.ToolCallUpdate(tool_call_id=call.call_id, status="in_progress"))
            self.repeats.see(call)
            if self.repeats.refuse:
                refusal = prompts.REPEATED_EDIT if self.repeats.edit else prompts.REPEATED_CALL
                result = tool_error(refusal.format(name=call.name, times=self.repeats.run - 1))
                if self.repeats.stop:
                    self.stop_after_step(
                        prompts.REPEATED_CALL_STOPPED.format(name=call.name, times=self.repeats.run)
                    )
            else:
                result = await self.service.run_tool(self, call)
            self._running(frozenset())
            self._record(step.message, call, result)
            end_turn = end_turn or result.end_turn
        return end_turn

    def _record(self, message: StoredMessage, call: ToolCall, result: ToolResult) -> None:
        """Commit a call's result and tell the client."""
        record = ToolResultRecord(
            tool_call_id=call.call_id,
            status="failed" if result.is_error else "completed",
            output=result.output,
            facts=result.facts,
        )
        self.service.store.append_tool_result(message, record)
        self.emit(
            p.ToolCallUpdate(tool_call_id=call.call_id, status=record.status, output=record.output)
        )

    # ---- calls that may run at the same time (read-only `task` children, baton.delegation)

    async def _run_together(self, step: StepOutput, width: int) -> bool:
        """Run every call of `step`, `width` at a time; each result is committed as it
        finishes (the history's order of results is not the calls' order, which no
        provider needs)."""
        gate = asyncio.Semaphore(width)
        calls = step.tool_calls
        for call in calls:
            self.repeats.see(call)
            self.emit(p.ToolCallUpdate(tool_call_id=call.call_id, status="in_progress"))
        self._running(frozenset(call.call_id for call in calls))

        async def one(call: ToolCall) -> bool:
            async with gate:
                result = await self.service.run_tool(self, call)
            self._record(step.message, call, result)
            return result.end_turn

        ends = await asyncio.gather(*(one(call) for call in calls))
        self._running(frozenset())
        return any(ends)

    def _running(self, call_ids: frozenset[str]) -> None:
        """Say which call runs now. Only the session's turn says it: a pre-compact round's
        calls are not the session's work in progress (SessionState.running_call_ids)."""
        if self.purpose == "turn":
            self.state.running_call_ids = call_ids

    def stop_after_step(self, reason: str) -> None:
        """End the turn with `reason` as its error once this step's tools have run."""
        self.stop_error = self.stop_error or reason

    def _finish_interrupted(self, output: str) -> None:
        """Give every tool call of the last step a result, so the history stays well-formed."""
        self._running(frozenset())
        message = self._last_message
        if message is None:
            return
        for part in message.tool_calls():
            call_id = part.tool_call_id
            if call_id in message.results:
                continue
            record = ToolResultRecord(call_id, "failed", output)
            try:
                self.service.store.append_tool_result(message, record)
            except BatonError:
                log.exception("could not record an interrupted tool result")
                continue
            self.emit(p.ToolCallUpdate(tool_call_id=call_id, status="failed", output=output))


def parse_arguments(text: str) -> dict[str, Any] | None:
    """A tool call's arguments as an object; None when they are not a JSON object."""
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def tool_error(message: str) -> ToolResult:
    return ToolResult(output=message, is_error=True)


def _weakly(method: Callable[[RetryNotice], None]) -> Callable[[RetryNotice], None]:
    """The retry listener by a weak reference: the stream's timers copy the context it is
    set in and may outlive the turn by their timeout; they must not keep the turn, its
    session and its whole history in memory until then."""
    ref = weakref.WeakMethod(method)

    def listener(notice: RetryNotice) -> None:
        bound = ref()
        if bound is not None:
            bound(notice)

    return listener
