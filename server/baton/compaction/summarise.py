"""The summary model calls of a native compaction (I/O; what to ask is in `summary.py`).

One call as a rule: the session's own request up to the cut with the summary
request appended (a prompt-cache hit), or, when that cannot fit the window, the
region as a transcript in chunks. Every answer is checked as it streams:

* a loop stops the stream at once; the attempt is retried with livelier
  sampling (`guard.ATTEMPTS`), and a second loop falls back to a summary built
  by code;
* an answer that stops at `max_output_tokens` is never accepted as it is: one
  more call asks for the sections it did not finish (within half the budget);
  if that is cut too, the model's summary is rejected;
* a timeout, an empty answer or one over twice its bound is rejected.

Then the statements the ledger contradicts are replaced (`claims.py`). The
answer is a `Summary`: the text, the notes saying what happened and the calls
made; the compaction's job is only read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from baton.agent.requests_block import (
    PERSON_KINDS,
    person_messages,
    person_words,
    render_requests,
)
from baton.agent.requests_block import budget as requests_budget
from baton.agent.state import View
from baton.agent.tokens import ITEM_OVERHEAD, estimate
from baton.compaction import guard
from baton.compaction import summary as summaries
from baton.compaction.claims import Correction, check_summary
from baton.compaction.cut import message_tokens
from baton.compaction.job import CompactionJob
from baton.errors import ProviderError
from baton.providers.base import (
    AssistantText,
    Finished,
    ItemDone,
    ModelRequest,
    Progress,
    Provider,
    Sampling,
    TextDelta,
    Usage,
    UserText,
)
from baton.store.model import StoredMessage

# How often (in streamed characters) a summary is checked for a loop.
LOOP_CHECK_CHARS = 400
# A summary this many times over its bound is rejected (the provider ignored the bound).
OVER_BUDGET = 2
# Why an answer was not usable as it came: it stopped at max_output_tokens.
CUT = "length"
# Why there is no answer: no summary request could fit the window.
TOO_BIG = "too_big"
# The least a transcript request must leave for the transcript (estimated tokens).
MIN_CHUNK_TOKENS = 400
RATE_MARGIN = 1.1


def transcript_rate(job: CompactionJob) -> float:
    """Provider tokens per estimated token for a transcript request: the session's
    measured rates, never under 1 (a rate too low sends a request the window refuses)."""
    content = job.state.token_model.content_rate()
    return max(1.0, job.state.calibration, content or 0.0)


def shown_beside(job: CompactionJob, boundary: int | None) -> list[str]:
    """What the request after this compaction shows next to the summary: the person's
    messages before the cut as `<baton:requests>` shows them (a message the block folded
    away may be restated) and the ledger."""
    if boundary is None:
        person = [m for m in job.state.messages if m.role == "user" and m.kind in PERSON_KINDS]
        return [*(person_words(m) for m in person), job.ledger_text]
    person = person_messages(job.state.messages, boundary, job.state.reverted)
    budget = requests_budget(job.before.usable_window, job.settings.compaction.requests_max_tokens)
    block = render_requests(person, budget)
    return [block, job.ledger_text] if block else [job.ledger_text]


def _short(line: str, limit: int = 160) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass(frozen=True)
class Summary:
    """One summary: its text, what the record's notes say about it, its model calls."""

    text: str
    notes: tuple[str, ...]
    calls: int
    # The statements the ledger contradicted, replaced in `text`.
    corrections: tuple[Correction, ...] = ()


class Summariser:
    """Runs one summary's calls (one instance a summary: it tallies the notes and calls)."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.calls = 0

    async def summarise(
        self,
        job: CompactionJob,
        region: Sequence[StoredMessage],
        masked: dict[str, str],
        *,
        previous: str | None,
        boundary: int | None,
        base: View,
    ) -> Summary:
        """The summary of `previous` plus `region` (everything before `boundary`).

        `base` is the view the request is built over: the session's view at the
        first level, the previous level's candidate when escalating, so the model
        reads the summary it is updating and only what it must now drop."""
        provider = job.summary_provider or job.provider
        replaced = sum(message_tokens(m, masked) for m in region) + estimate(previous or "")
        max_out = summaries.summary_budget(
            replaced, job.before.usable_window, previous_tokens=estimate(previous or "")
        )
        deadline = asyncio.get_running_loop().time() + job.settings.compaction.summary_timeout
        text: str | None = None
        # What a summary stopped by the timeout or its cap had finished: kept, and only the
        # sections it did not finish are built by code.
        partial = ""
        for attempt, sampling in enumerate(guard.ATTEMPTS, start=1):
            answer, problem = await self._attempt(
                job, provider, region, masked, previous, boundary, base, max_out, sampling, deadline
            )
            if problem is None and estimate(answer) > OVER_BUDGET * max_out:
                # A provider that ignores max_output_tokens (or a proxy that drops it):
                # copying code into the summary is what made views bigger than before.
                self.notes.append(
                    f"the summary was {estimate(answer)} tokens, over {OVER_BUDGET}× its bound "
                    f"of {max_out}, and was rejected"
                )
                break
            if problem is None and answer.strip():
                text = answer.strip()
                break
            if problem == "timeout":
                self.notes.append(
                    f"the summary request ran past compaction.summaryTimeout "
                    f"({job.settings.compaction.summary_timeout:g} s) and was stopped"
                )
                partial = answer
                break
            if problem in (CUT, TOO_BIG):
                partial = answer if problem == CUT else ""
                break  # the note says why
            if problem is None:
                self.notes.append("the model returned an empty summary")
                break
            self.notes.append(f"summary attempt {attempt} looped ({problem}) and was rejected")
        if text is not None:
            text, echoed = summaries.drop_echoes(text)
            if echoed:
                self.notes.append(
                    f"dropped {len(echoed)} summary sentence(s) restating Baton's summary "
                    "request: " + "; ".join(repr(_short(e)) for e in echoed)
                )
        if text is not None:
            text, repeated = summaries.drop_repeats(text, shown_beside(job, boundary))
            if repeated:
                self.notes.append(
                    f"dropped {len(repeated)} summary sentence(s) the request already shows "
                    "(the person's messages or the ledger): "
                    + "; ".join(repr(_short(r)) for r in repeated)
                )
        next_step = summaries.current_step(job.ledger)
        kept, unfinished = summaries.split_cut(partial) if text is None else ("", [])
        if text is None and kept:
            kept, _ = summaries.drop_echoes(kept)
            kept, _ = summaries.drop_repeats(kept, shown_beside(job, boundary))
            built = summaries.structured_summary(region, previous, next_step)
            text = summaries.merge_sections(kept, built, unfinished)
            self.notes.append(
                "kept the sections the stopped summary had finished ("
                + ", ".join(n for n in summaries.SECTIONS if n not in unfinished)
                + "); built the others from the ledger, the plan and the messages: "
                + ", ".join(unfinished)
            )
        elif text is None:
            self.notes.append("used a summary built from the ledger, the plan and the messages")
            text = summaries.structured_summary(region, previous, next_step)
        text, missing = summaries.complete_sections(text, region, next_step)
        if missing:
            self.notes.append(
                "summary accepted without sections: "
                + ", ".join(missing)
                + " (the next action built by code, the others as none)"
            )
        said = [
            part.text
            for m in region
            if m.role == "assistant"
            for part in m.parts
            if part.type == "text"
        ]
        text, corrections = check_summary(text, job.ledger, said=said)
        if corrections:
            self.notes.append(
                f"corrected {len(corrections)} summary statement(s) the ledger contradicts: "
                + "; ".join(f"{c.reason} (removed: {_short(c.line)!r})" for c in corrections)
            )
        self.notes.append(
            f"summary: {self.calls} model call(s), "
            f"max_output_tokens {max_out}, {estimate(text)} tokens replacing {replaced}"
        )
        return Summary(text, tuple(self.notes), self.calls, tuple(corrections))

    async def _attempt(
        self,
        job: CompactionJob,
        provider: Provider,
        region: Sequence[StoredMessage],
        masked: dict[str, str],
        previous: str | None,
        boundary: int | None,
        base: View,
        max_out: int,
        sampling: Sampling,
        deadline: float,
    ) -> tuple[str, str | None]:
        """One summary attempt: (text, None) or (partial text, why it was rejected)."""
        words = summaries.words_for(max_out)
        request = self._in_place_request(job, provider, boundary, base, max_out, words)
        if request is not None:
            return await self._ask_whole(
                job, provider, replace(request, sampling=sampling), max_out, deadline
            )
        return await self._from_transcript(
            job, provider, region, masked, previous, max_out, words, sampling, deadline
        )

    async def _from_transcript(
        self,
        job: CompactionJob,
        provider: Provider,
        region: Sequence[StoredMessage],
        masked: dict[str, str],
        previous: str | None,
        max_out: int,
        words: int,
        sampling: Sampling,
        deadline: float,
    ) -> tuple[str, str | None]:
        """The region as a transcript, in as few requests as fit the window, each updating
        the summary of the ones before. Every request is sized in the provider's tokens
        (the session's measured rate) with all it holds: the rules, the ledger, the
        summary so far and the answer's max_output_tokens; none is sent over the window."""
        # The answer has its own room here, so the limit is the window itself; the
        # margin is for a chunk that tokenizes worse than the session's average.
        rate = transcript_rate(job) * RATE_MARGIN
        window = job.before.context_window
        system = summaries.system_prompt(words)
        # The answer, and the call asking for the rest of it when it stops at its cap.
        answer = (
            max_out
            + max_out // 2
            + estimate(summaries.continue_prompt(list(summaries.SECTIONS), words))
        )
        summary = previous
        start, clip, first = 0, 0, True
        while first or start < len(region):
            first = False

            def prompt(transcript: str, summary: str | None = summary) -> str:
                return summaries.user_prompt(
                    transcript,
                    previous=summary,
                    instructions=job.request.instructions,
                    hook_context=list(job.hook_context),
                    ledger=job.ledger_text,
                    base_instructions=job.prompt_override or summaries.INSTRUCTIONS,
                    leaving=job.ledger_leaving,
                )

            fixed = estimate(system) + estimate(prompt("")) + 2 * ITEM_OVERHEAD
            room = int((window - answer) / rate) - fixed
            if room < MIN_CHUNK_TOKENS:
                self.notes.append(
                    f"the summary request cannot fit the window ({window} tokens): the rules, "
                    f"the ledger and the summary so far take {round(fixed * rate)} and the "
                    f"answer up to {answer}"
                )
                return summary or "", TOO_BIG
            clip = clip or summaries.output_clip(region, masked, room)
            transcript, start = summaries.next_chunk(region, masked, start, room, clip)
            request = ModelRequest(
                instructions=system,
                items=[UserText(text=prompt(transcript))],
                tools=[],
                purpose="summary",
                max_output_tokens=max_out,
                cache_key=job.state.id,
                sampling=sampling,
            )
            try:
                text, problem = await self._ask_whole(job, provider, request, max_out, deadline)
            except ProviderError as exc:
                if not exc.overflow:
                    raise
                # The rate was measured on other text: a summary built by code, not a failure.
                self.notes.append(f"the provider refused a summary request for size ({exc})")
                return summary or "", TOO_BIG
            if problem is not None or not text.strip():
                return text, problem
            summary = text.strip()
        if clip < summaries.TOOL_OUTPUT_CHARS:
            self.notes.append(
                f"summarised from a transcript showing {clip} characters of each tool output "
                "(their facts are in the ledger, their text one `recall` away)"
            )
        return summary or "", None

    def _in_place_request(
        self,
        job: CompactionJob,
        provider: Provider,
        boundary: int | None,
        base: View,
        max_out: int,
        words: int,
    ) -> ModelRequest | None:
        """The session's request over `base` up to the cut, the summary request appended;
        None when it cannot fit the window (then the region goes as a transcript)."""
        if base.server_window is not None:
            return None  # a server chain's items are not the history to summarise
        built = job.build(base, boundary)
        prompt = summaries.in_place_prompt(
            words=words,
            ledger=job.ledger_text,
            anchored=base.summary is not None,
            instructions=job.request.instructions,
            hook_context=list(job.hook_context),
            base_instructions=job.prompt_override or summaries.INSTRUCTIONS,
            leaving=job.ledger_leaving,
        )
        # A provider whose cached prefix holds the tools (llama.cpp renders them in the
        # prompt; OpenAI's cache matches them) is sent them, never offered, so the request
        # is the turn's cached prefix; they then count.
        keep_tools = provider.summary_keeps_tools
        tools = 0 if keep_tools else sum(p.tokens for p in built.parts if p.kind == "tools")
        need = built.tokens - tools + round(estimate(prompt) * job.state.calibration) + max_out
        if need > job.before.usable_window:
            return None
        return ModelRequest(
            instructions=built.request.instructions,
            items=[*built.request.items, UserText(text=prompt)],
            tools=list(built.request.tools) if keep_tools else [],
            purpose="summary",
            max_output_tokens=max_out,
            cache_key=job.state.id,
        )

    async def _ask_whole(
        self,
        job: CompactionJob,
        provider: Provider,
        request: ModelRequest,
        max_out: int,
        deadline: float,
    ) -> tuple[str, str | None]:
        """One summary call; an answer cut at max_output_tokens is completed or rejected."""
        text, problem = await self._ask(job, provider, request, deadline)
        if problem != CUT:
            return text, problem
        kept, missing = summaries.split_cut(text)
        budget = max(summaries.MIN_SUMMARY_TOKENS, max_out // 2)
        stopped = (
            f"the summary stopped at max_output_tokens ({max_out}) "
            f"with {', '.join(missing)} unfinished"
        )
        follow = replace(
            request,
            items=[
                *request.items,
                AssistantText(text=kept),
                UserText(text=summaries.continue_prompt(missing, summaries.words_for(budget))),
            ],
            max_output_tokens=budget,
        )
        more, problem = await self._ask(job, provider, follow, deadline)
        combined = (kept.rstrip() + "\n\n" + more.strip()).strip()
        if problem is not None and problem != CUT:
            self.notes.append(f"{stopped}; the call asking for them was stopped ({problem})")
            # A timeout keeps what both calls finished; a loop keeps only the first's.
            return (combined if problem == "timeout" else kept), problem
        still = [name for name in summaries.missing_sections(combined) if name in missing]
        if problem == CUT or still or not more.strip():
            why = "was cut too" if problem == CUT else "left out " + ", ".join(still or missing)
            self.notes.append(
                f"{stopped}; asked for them in one more call, whose answer {why}: the model's "
                "unfinished sections were not accepted"
            )
            return combined, CUT
        self.notes.append(f"{stopped}; completed by one more call asking for them")
        return combined, None

    async def _ask(
        self, job: CompactionJob, provider: Provider, request: ModelRequest, deadline: float
    ) -> tuple[str, str | None]:
        """Stream one summary; stop as soon as it loops or the deadline passes."""
        self.calls += 1
        deltas: list[str] = []
        final: list[str] = []
        size = checked = 0
        usage: list[Usage] = []
        cut = False
        events = provider.stream(request)
        try:
            async with asyncio.timeout_at(deadline):
                async for event in events:
                    if isinstance(event, Usage):
                        usage.append(event)
                    elif isinstance(event, Finished):
                        cut = event.reason == "length"
                    elif isinstance(event, TextDelta):
                        deltas.append(event.text)
                        size += len(event.text)
                        if size - checked >= LOOP_CHECK_CHARS:
                            checked = size
                            loop = guard.looping("".join(deltas))
                            if loop is not None:
                                return "".join(deltas), loop
                    elif isinstance(event, ItemDone) and isinstance(event.item, AssistantText):
                        final.append(event.item.text)
                    elif isinstance(event, Progress):
                        # The local model loading or reading the summary's prompt: minutes
                        # on a CPU, shown as a turn's are (`baton run`, the demo, editors).
                        job.show_progress(event)
        except TimeoutError:
            return "".join(deltas), "timeout"
        finally:
            # Stop generating now (a loop or a timeout): closing the stream drops the request.
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
            if usage:
                # Counted with the session's turns: `cachedTokens` and `cacheHitRate`
                # include what the summary request's reused prefix saved.
                job.record_usage(usage[-1], provider)
        text = "".join(final) if final else "".join(deltas)
        loop = guard.looping(text)
        if loop is not None:
            return text, loop
        if cut:
            return text, CUT
        if usage and text.strip():
            # How the provider counts this kind of text: the checkpoint's rate afterwards.
            used = usage[-1]
            job.state.token_model.observe_summary(
                used.output_tokens - used.reasoning_tokens, estimate(text)
            )
        return text, None
