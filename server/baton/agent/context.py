"""Everything the model is sent is built here, in one place, and counted.

Order: instructions (system prompt and
workspace instruction files, the same in every mode); the checkpoint of the
latest compaction (a summary, or the server's compacted window replayed
exactly; absent for a fresh-context start); Baton's blocks (the person's own
messages from the compacted part, verbatim, `compaction.requests`; the ledger;
then the plan as it was when the first request after the compaction was built);
the retained messages verbatim; then the new input (already the last stored
message).

Append, don't rewrite: between two compactions a request is the one before it
plus what happened since, so a provider's prompt cache serves everything
already sent. Nothing here depends on the session's mode, the tool list is the
same in every mode (the registry refuses what a mode forbids), and what changes
(the mode, the plan) reaches the model as history: the plan tools' calls and
results (a `plan_edit` result shows the changed lines), messages the session
appends (`baton.session.notes`).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from baton.agent import framing, prompts
from baton.agent.attachments import render_attachment
from baton.agent.history_cache import HistoryCache
from baton.agent.ledger_text import without_plan_line
from baton.agent.plan_block import PlanSource
from baton.agent.requests_block import budget as requests_budget
from baton.agent.requests_block import person_messages, render_requests
from baton.agent.state import PlanBlock, SessionState, View
from baton.agent.tokens import IMAGE_TOKENS, ITEM_OVERHEAD, estimate
from baton.config import Settings
from baton.providers.artifacts import server_thresholds
from baton.providers.base import (
    AssistantText,
    ContextBlock,
    ImageInput,
    Item,
    ModelRequest,
    OpaqueItem,
    ProviderIdentity,
    Reasoning,
    ToolCall,
    ToolOutput,
    ToolSpec,
    UserText,
)
from baton.providers.windows import context_window
from baton.store.model import StoredAttachment, StoredImage, StoredMessage

log = logging.getLogger(__name__)

INTERRUPTED_OUTPUT = "[interrupted: no result was recorded]"
RECALL_LINE = "(The exact text of everything summarised here is one `recall` away.)"
MAX_INSTRUCTION_FILE_CHARS = 40_000
# A usable window at most this large gets the compact prompt (`compact_prompt`).
SMALL_WINDOW_TOKENS = 16_384


@dataclass
class ContextPart:
    kind: str
    tokens: int


@dataclass
class BuiltContext:
    request: ModelRequest
    parts: list[ContextPart]
    estimated_tokens: int  # uncalibrated
    # Uncalibrated, by part kind: what `TokenModel.observe` compares between reports.
    estimated_parts: dict[str, int]
    tokens: int  # counted as the provider would (baton.tokens.TokenModel)
    context_window: int
    usable_window: int
    threshold_tokens: int
    server_artifact: bool = False
    compact_prompt: bool = False  # the small-window prompt and tool descriptions
    extras: dict[str, Any] = field(default_factory=dict)


def reserve_tokens(settings: Settings, window: int) -> int:
    if settings.compaction.reserve is not None:
        return min(settings.compaction.reserve, window // 2)
    return min(16_000, int(0.2 * window))


def threshold_tokens(settings: Settings, window: int) -> tuple[int, int]:
    """(usable window, auto-compaction threshold in tokens)."""
    usable = window - reserve_tokens(settings, window)
    return usable, int(settings.compaction.threshold * usable)


def compact_prompt(settings: Settings, identity: ProviderIdentity | None) -> bool:
    """Whether the model gets the compact system prompt and tool descriptions.

    `agent.compactPrompt = "auto"`: when the usable window is at most
    `SMALL_WINDOW_TOKENS`, where the full ones (~1,900 tokens) would be a quarter
    of it and more. It depends only on the settings and the model, so a session
    sends one prefix for as long as it talks to one model (a model with another
    window starts a new prefix anyway: a provider caches per model).
    """
    choice = settings.agent.compact_prompt
    if choice != "auto":
        return choice == "always"
    usable, _ = threshold_tokens(settings, context_window(settings, identity))
    return usable <= SMALL_WINDOW_TOKENS


class InstructionFiles:
    """AGENTS.md and friends, re-read only when they change."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._cache: dict[str, tuple[tuple[int, int] | None, str | None]] = {}

    def texts(self) -> list[str]:
        out: list[str] = []
        for name in prompts.INSTRUCTION_FILES:
            path = self.workspace / name
            try:
                st = path.stat()
                key: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
            except OSError:
                key = None
            cached = self._cache.get(name)
            if cached is None or cached[0] != key:
                text = None
                if key is not None and path.is_file() and _inside(self.workspace, path):
                    try:
                        text = path.read_text(encoding="utf-8", errors="replace")
                        text = text[:MAX_INSTRUCTION_FILE_CHARS]
                    except OSError:
                        text = None
                self._cache[name] = (key, text)
                cached = self._cache[name]
            if cached[1]:
                out.append(prompts.INSTRUCTIONS_HEADER.format(name=name, text=cached[1].strip()))
        return out


def _inside(workspace: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(workspace.resolve())
        return True
    except (ValueError, OSError):
        return False


def message_items(
    message: StoredMessage,
    *,
    masked: dict[str, str],
    running_call_ids: frozenset[str] = frozenset(),
) -> list[Item]:
    """The provider items one stored message contributes to the model's view."""
    if message.kind == "context":
        # A note Baton appended (the mode, a plan changed outside the tools).
        return [UserText(text=message.text())] if message.text() else []
    if message.role == "user":
        text = message.text()
        # Attachments (editor context) come first, then the prompt that refers to them.
        blocks = [render_attachment(x) for x in message.parts if isinstance(x, StoredAttachment)]
        if blocks:
            text = "\n\n".join([*blocks, text] if text else blocks)
        images = tuple(
            ImageInput(mime_type=x.mime_type, data=x.data)
            for x in message.parts
            if isinstance(x, StoredImage)
        )
        return [UserText(text=text, images=images)] if text or images else []
    if message.role != "assistant":
        return []
    items: list[Item] = []
    outputs: list[Item] = []
    for part in message.parts:
        if part.type == "reasoning":
            items.append(Reasoning(text=part.text, native=part.native))
        elif part.type == "text":
            if part.text:
                items.append(AssistantText(text=part.text, native=part.native))
        elif part.type == "tool_call":
            call_id = part.tool_call_id
            arguments = part.arguments or json.dumps(part.input, ensure_ascii=False)
            items.append(
                ToolCall(call_id=call_id, name=part.name, arguments=arguments, native=part.native)
            )
            if call_id in running_call_ids:
                continue
            result = message.results.get(call_id)
            if call_id in masked:
                output = masked[call_id]
            elif result is not None:
                output = result.output
            else:
                output = INTERRUPTED_OUTPUT
            outputs.append(ToolOutput(call_id=call_id, output=output))
        elif (
            part.type == "opaque"
            and part.native is not None
            and not part.server_compaction  # replayed from the view's server window
        ):
            items.append(OpaqueItem(native=part.native))
    if message.incomplete and items and isinstance(items[-1], AssistantText):
        items[-1] = AssistantText(text=items[-1].text + "\n[response interrupted]")
    return items + outputs


def item_tokens(item: Item) -> int:
    if isinstance(item, UserText):
        return estimate(item.text) + IMAGE_TOKENS * len(item.images) + ITEM_OVERHEAD
    if isinstance(item, AssistantText | Reasoning | ContextBlock):
        return estimate(item.text) + ITEM_OVERHEAD
    if isinstance(item, ToolCall):
        return estimate(item.name) + estimate(item.arguments) + ITEM_OVERHEAD
    if isinstance(item, ToolOutput):
        return estimate(item.output) + ITEM_OVERHEAD
    if isinstance(item, OpaqueItem):  # pragma: no branch - the last kind
        content = item.native.item.get("encrypted_content")
        if isinstance(content, str):
            # Encrypted artifacts are base64 of roughly 3/4 their length in tokens' worth
            # of text; the provider's usage report calibrates the rest.
            return len(content) // 6 + ITEM_OVERHEAD
        return estimate(json.dumps(item.native.item)) + ITEM_OVERHEAD
    raise TypeError(f"unknown item {item!r}")


def tool_specs_tokens(tools: list[ToolSpec]) -> int:
    return sum(
        estimate(t.name) + estimate(t.description) + estimate(json.dumps(t.parameters)) + 8
        for t in tools
    )


class SkillBlocks(Protocol):
    """What the context is sent of skills (baton.skills.service.SkillsFeature)."""

    def catalog(self, settings: Settings, window: int) -> str | None:
        """The skills block, with the instructions; None without skills."""
        ...

    def kept(self, state: SessionState, view: View, usable_window: int | None = None) -> list[str]:
        """The skills loaded before the view's compaction, each block verbatim while they
        fit their budget (a share of `usable_window`), the oldest folded to a line."""
        ...


class ContextBuilder:
    def __init__(
        self,
        workspace: Path,
        plans: PlanSource | None = None,
        skills: SkillBlocks | None = None,
    ) -> None:
        self.workspace = workspace
        self.instruction_files = InstructionFiles(workspace)
        self.plans = plans
        self.skills = skills

    def _history(
        self,
        state: SessionState,
        running_call_ids: frozenset[str],
        view: View,
        candidate: bool,
        before_seq: int | None,
    ) -> HistoryCache:
        """The converted history of `view`; a candidate (a view being measured, or the
        history up to `before_seq` for a compaction's request) leaves the cache alone."""
        # `reverted` only grows, so its size tells whether a revert happened since.
        signature = (view.signature, len(state.reverted))
        messages = state.messages
        if before_seq is not None:
            messages = [m for m in messages if m.seq < before_seq]
        cache = state.history_cache
        if (
            candidate
            or cache is None
            or cache.signature != signature
            or cache.stable_count > len(messages)
        ):
            cache = HistoryCache(signature)
            if not candidate:
                state.history_cache = cache
        out = HistoryCache(
            signature,
            cache.stable_count,
            list(cache.items),
            cache.history_tokens,
            cache.tool_output_tokens,
        )
        settled = True
        for index in range(cache.stable_count, len(messages)):
            message = messages[index]
            its, history, outputs = _convert(
                message,
                view.first_kept_seq,
                view.masked,
                running_call_ids,
                reverted=state.reverted,
            )
            out.items.extend(its)
            out.history_tokens += history
            out.tool_output_tokens += outputs
            settled = settled and message.answered(running_call_ids)
            if settled:
                cache.items.extend(its)
                cache.history_tokens += history
                cache.tool_output_tokens += outputs
                cache.stable_count = index + 1
        return out

    def _requests(
        self, state: SessionState, view: View, candidate: bool, budget: int
    ) -> str | None:
        """The person's messages the view no longer shows (`compaction.requests`), built
        once per view: between compactions they do not change, so neither does the block."""
        cache = state.history_cache
        key = ((view.signature, len(state.reverted)), budget)
        if candidate:
            cache = None
        elif cache is not None and cache.requests and cache.requests[0] == key:
            return cache.requests[1]
        text = render_requests(
            person_messages(state.messages, view.first_kept_seq, state.reverted),
            budget,
        )
        if cache is not None and cache.signature == key[0]:
            cache.requests = (key, text)
        return text

    def system_prompt(self, state: SessionState, *, compact: bool = False) -> str:
        """The system prompt: the same in every mode and for every session of a workspace
        (the compact one for a small window, `compact_prompt`)."""
        return (prompts.SYSTEM_COMPACT if compact else prompts.SYSTEM).format(
            workspace=self.workspace
        )

    def plan_block(self, state: SessionState, view: View | None = None) -> PlanBlock | None:
        """The plan block after the current compaction's checkpoint, frozen at the first
        request built after it (later changes are appended), so the new prefix is stable.

        Frozen in memory: after a restart it is built again from the plan as it is then,
        which starts a new prefix only if the plan changed since the compaction."""
        view = view if view is not None else state.view
        compacted = (
            view.compaction_id is not None
            or view.summary
            or view.server_window
            or view.first_kept_seq is not None
        )
        if self.plans is None or not compacted:
            return None
        frozen = state.plan_block
        if frozen is not None and frozen[0] == view.compaction_id:
            return frozen[1]
        block = self.plans.block(state, view)
        if view.compaction_id is not None:  # not a candidate view being measured
            state.plan_block = (view.compaction_id, block)
        return block

    def build(
        self,
        state: SessionState,
        settings: Settings,
        *,
        tools: list[ToolSpec],
        identity: ProviderIdentity | None,
        running_call_ids: frozenset[str] = frozenset(),
        compact: bool = False,
        view: View | None = None,
        before_seq: int | None = None,
    ) -> BuiltContext:
        """The request for the next step. `tools` are offered as given; `compact` picks
        the compact system prompt (the caller passes the compact tool specs with it).

        `view` builds another view than the session's (a compaction measuring a
        candidate); `before_seq` only the messages before it (a compaction's request
        over the part it compacts). Neither touches the session's caches."""
        candidate = view is not None or before_seq is not None
        parts: list[ContextPart] = []
        system = self.system_prompt(state, compact=compact)
        instruction_texts = self.instruction_files.texts()
        window = context_window(settings, identity)
        # The skills list goes with the instructions: it changes only when the skills do,
        # so the cached prefix holds across a session's requests.
        catalog = self.skills.catalog(settings, window) if self.skills is not None else None
        instructions = "\n\n".join([system, *instruction_texts, *([catalog] if catalog else [])])
        parts.append(ContextPart("system", estimate(system)))
        if instruction_texts:
            parts.append(ContextPart("instructions", estimate("\n\n".join(instruction_texts))))
        if catalog:
            parts.append(ContextPart("skills", estimate(catalog)))
        if tools:
            parts.append(ContextPart("tools", tool_specs_tokens(tools)))

        view = view if view is not None else state.view
        items: list[Item] = []
        server_artifact = False
        if view.server_window is not None:
            replay = [
                it
                for it in view.server_window
                if not isinstance(it, OpaqueItem)
                or (identity is not None and it.native.identity == identity)
            ]
            server_artifact = any(isinstance(it, OpaqueItem) for it in replay)
            items.extend(replay)
            parts.append(ContextPart("checkpoint", sum(item_tokens(i) for i in replay)))
        elif view.summary:
            block = ContextBlock(
                name="summary", text=_tag("summary", f"{view.summary.strip()}\n\n{RECALL_LINE}")
            )
            items.append(block)
            parts.append(ContextPart("checkpoint", item_tokens(block)))
        usable, threshold = threshold_tokens(settings, window)
        history = self._history(state, running_call_ids, view, candidate, before_seq)
        # A server chain carries the conversation in the server's own artifact (the person's
        # messages too); the block is for native views, where a summary stands in for them.
        requests = (
            self._requests(
                state,
                view,
                candidate,
                requests_budget(usable, settings.compaction.requests_max_tokens),
            )
            if view.server_window is None
            else None
        )
        if requests:
            block = ContextBlock(name="requests", text=_tag("requests", requests))
            items.append(block)
            parts.append(ContextPart("requests", item_tokens(block)))
        plan = self.plan_block(state, view)
        if view.ledger_text:
            # The plan block below says what the ledger's plan line would: not twice.
            ledger = view.ledger_text if plan is None else without_plan_line(view.ledger_text)
            block = ContextBlock(name="ledger", text=_tag("ledger", ledger))
            items.append(block)
            parts.append(ContextPart("ledger", item_tokens(block)))
        if plan is not None:
            block = ContextBlock(name="plan", text=_tag("plan", plan.text))
            items.append(block)
            parts.append(ContextPart("plan", item_tokens(block)))
        # The skills the session loaded before the compaction, verbatim, like the plan.
        kept = (
            self.skills.kept(state, view, usable_window=usable) if self.skills is not None else []
        )
        if kept:
            blocks = [ContextBlock(name="skill", text=text) for text in kept]
            items.extend(blocks)
            parts.append(ContextPart("skills_loaded", sum(item_tokens(b) for b in blocks)))
        items.extend(history.items)
        history_tokens, tool_output_tokens = history.history_tokens, history.tool_output_tokens
        parts.append(ContextPart("messages", history_tokens))
        if tool_output_tokens:
            parts.append(ContextPart("tool_outputs", tool_output_tokens))

        estimated = sum(p.tokens for p in parts)
        compact_threshold, threshold = server_thresholds(
            settings, identity, window, usable, threshold
        )
        request = ModelRequest(
            instructions=instructions,
            items=items,
            tools=tools,
            purpose="turn",
            cache_key=state.id,
            compact_threshold=compact_threshold,
        )
        estimated_parts = {p.kind: p.tokens for p in parts}
        counted = state.token_model.count(estimated_parts)
        if counted is not None:
            calibrated = [ContextPart(kind, tokens) for kind, tokens in counted.items()]
        else:
            calibrated = [ContextPart(p.kind, round(p.tokens * state.calibration)) for p in parts]
        return BuiltContext(
            request=request,
            parts=calibrated,
            estimated_tokens=estimated,
            estimated_parts=estimated_parts,
            tokens=sum(p.tokens for p in calibrated),
            context_window=window,
            usable_window=usable,
            threshold_tokens=threshold,
            server_artifact=server_artifact,
            compact_prompt=compact,
        )


def _convert(
    message: StoredMessage,
    view_first_seq: int | None,
    masked: dict[str, str],
    running_call_ids: frozenset[str],
    *,
    reverted: set[str] | frozenset[str] = frozenset(),
) -> tuple[list[Item], int, int]:
    """(items, history tokens, tool-output tokens) one message adds to the view."""
    if (
        message.kind == "compaction"
        or (view_first_seq is not None and message.seq < view_first_seq)
        or message.id in reverted  # taken back by baton/session/revert
    ):
        return [], 0, 0
    its = message_items(message, masked=masked, running_call_ids=running_call_ids)
    history = 0
    outputs = 0
    for item in its:
        tokens = item_tokens(item)
        if isinstance(item, ToolOutput):
            outputs += tokens
        else:
            history += tokens
    return its, history, outputs


def _tag(name: str, text: str) -> str:
    return framing.block(name, text.strip())
