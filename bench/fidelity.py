"""Compaction fidelity: which known facts reach the model's next input after 1, 3 and 10
successive compactions, when the summariser drops facts at random.

    python bench/fidelity.py [--seed 7] [--replicates 3]

A synthetic session is built with known facts: files read, files changed,
commands with exit codes, unresolved errors, decisions stated in prose, and a
plan. After each round of work Baton compacts it with a scripted summariser
that keeps each fact it is shown with probability 0.5 (and so loses most of
them after a few rounds, as real summaries do). The figures are the share of
facts present verbatim in the next request Baton would send.

Targets: 100% of ledger facts and of the plan at every depth;
compaction time excluding the model under 50 ms for a 200,000-token session.
Then sessions of about 6k, 40k and 200k tokens (with lint failures fixed later)
are compacted once, manual and automatic: tokens before → after, the history share,
summary tokens per replaced token, model calls, the share of probe facts in the
view or one `recall` away, and the ledger's size per 100 tool calls (issues 18, 22).
Targets: every compaction smaller; history at most 50% after a manual one; 100% of
probe facts in the view or one `recall` away.

    python bench/fidelity.py --working [--seeds 1,2,3] [--window 16384] [--children 30]

compacts working sessions of about 6k, 40k and 200k tokens three times under a small
window with a placeholder summary and reports the exact facts in view, in view or one
`recall` away, the view's and the ledger's tokens (bench/fidelity_working.py, issue 45).
Targets: on the ~40k sessions at least 90% of what the unbounded ledger holds in view
with the view at most 45% of the window; the ledger never over its cap; with thirty
children every child's record one `recall` away.

    python bench/fidelity.py --probe-model 1.5b [--seeds 1,2,3] [--sizes 5000,40000,150000]

asks the local model exact-fact questions against the full transcript and
Baton's compacted view of synthetic sessions (bench/fidelity_probes.py, which
says how); `--old-probes` keeps the six probes of the earlier bench (full
transcript, Baton's view, and the view without the ledger).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from baton import protocol as p
from baton.agent.events import NullChannel
from baton.agent.tokens import estimate
from baton.compaction.engine import CompactRequest
from baton.compaction.summary import SECTIONS
from baton.providers.base import (
    AssistantText,
    Finished,
    ItemDone,
    ModelRequest,
    ProviderIdentity,
    Route,
    StreamEvent,
    TextDelta,
    Usage,
)
from baton.store.model import StoredText, ToolResultRecord, part_from_json
from baton.tools.base import Fact

IDENTITY = ProviderIdentity("openai", "gpt-bench", Route("http://127.0.0.1:9/v1", "api_key"))
# Native compaction is what this measures; with the openai provider `auto` would be server-side.
SETTINGS = {"contextWindow": 400_000, "compaction": {"strategy": "native"}}


class DroppingSummariser:
    """A provider whose summaries keep each fact it is shown with probability `keep`."""

    summary_keeps_tools = False

    def __init__(self, rng: random.Random, facts: list[str], keep: float = 0.5) -> None:
        self.identity = IDENTITY
        self.rng = rng
        self.facts = facts
        self.keep = keep
        self.seconds = 0.0
        self.last_request: ModelRequest | None = None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        started = time.perf_counter()
        shown = "\n".join(getattr(item, "text", "") for item in request.items)
        kept = [f for f in self.facts if f in shown and self.rng.random() < self.keep]
        body = "\n\n".join(
            f"## {name}\n" + ("\n".join(f"- {f}" for f in kept) if i == 1 else "none")
            for i, name in enumerate(SECTIONS)
        )
        self.seconds += time.perf_counter() - started
        yield TextDelta(body)
        yield ItemDone(AssistantText(body))
        yield Usage(input_tokens=estimate(shown), output_tokens=estimate(body))
        yield Finished("stop")

    async def aclose(self) -> None:
        pass


class StaticProviders:
    def __init__(self, provider: DroppingSummariser) -> None:
        self.provider = provider

    def get(self, settings, credentials, *, provider=None, model=None):  # type: ignore[no-untyped-def]
        return self.provider

    async def aclose(self) -> None:
        pass


@dataclass
class Facts:
    ledger: list[str] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)
    plan: list[str] = field(default_factory=list)


def add_round(app, state, rng: random.Random, round_index: int, turns: int, facts: Facts) -> None:  # type: ignore[no-untyped-def]
    store = app.sessions.store
    sid = state.id
    for t in range(turns):
        tag = f"r{round_index}t{t}"
        decision = f"decision-{tag}: keep the cache size at {rng.randint(10, 99)} MB"
        facts.prose.append(decision)
        state.add(
            store.append_message(sid, "user", "prompt", [StoredText(f"Work on {tag}. {decision}.")])
        )
        read_path = f"src/module_{tag}.py"
        edit_path = f"src/changed_{tag}.py"
        command = f"pytest tests/test_{tag}.py -q"
        code = rng.choice([0, 0, 1, 2])
        calls = [
            (
                "read",
                {"path": read_path},
                "\n".join(f"{i}: line of {read_path}" for i in range(400)),
                [Fact("read", path=read_path)],
                "completed",
            ),
            (
                "edit",
                {"path": edit_path, "old_string": "a", "new_string": "b"},
                f"edited {edit_path}",
                [Fact("modified", path=edit_path, action="modified")],
                "completed",
            ),
            (
                "bash",
                {"command": command},
                ("ok\n" * 200) + f"[exit code {code}]",
                [Fact("command", command=command, exit_code=code)],
                "completed" if code == 0 else "failed",
            ),
        ]
        parts = [StoredText(f"Looking at {tag}. " * 20)]
        results = []
        for index, (name, args, output, tool_facts, status) in enumerate(calls):
            call_id = f"call_{tag}_{index}"
            parts.append(
                part_from_json(
                    "tool_call",
                    {
                        "toolCallId": call_id,
                        "name": name,
                        "input": args,
                        "arguments": json.dumps(args),
                    },
                )
            )
            results.append(ToolResultRecord(call_id, status, output, tool_facts))  # type: ignore[arg-type]
        state.add(store.append_message(sid, "assistant", "step", parts, results=results))
        facts.ledger += [read_path, edit_path, f"`{command}` → {code}"]
        if code != 0:
            facts.ledger.append(f"bash `{command}`:")


async def run_depth(depth: int, seed: int, turns_per_round: int) -> dict[str, float]:
    from baton.app import build_app

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="baton-fidelity-") as tmp:
        home = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(home / "data")
        os.environ["XDG_CONFIG_HOME"] = str(home / "config")
        ws = home / "ws"
        ws.mkdir()
        app = build_app(ws, NullChannel(), environ={}, client_settings=SETTINGS)
        facts = Facts()
        summariser = DroppingSummariser(rng, [])
        app.sessions.models.providers = StaticProviders(summariser)  # type: ignore[assignment]
        sid = app.sessions.new_session(p.SessionNewParams(title="fidelity")).session_id
        state = app.sessions.state(sid)
        plan_lines = [f"- [ ] step {i}: marker-plan-{seed}-{i}" for i in range(12)]
        app.plans.write(sid, "# Plan\n\n" + "\n".join(plan_lines) + "\n")
        facts.plan = [f"marker-plan-{seed}-{i}" for i in range(12)]
        timings: list[float] = []
        tokens_before: list[int] = []
        tokens_after: list[int] = []
        for round_index in range(depth):
            add_round(app, state, rng, round_index, turns_per_round, facts)
            summariser.facts = facts.prose + facts.ledger
            model_before = summariser.seconds
            started = time.perf_counter()
            record = await app.compaction.engine.compact(state, CompactRequest("manual"))
            timings.append(time.perf_counter() - started - (summariser.seconds - model_before))
            tokens_before.append(record.tokens_before)
            tokens_after.append(record.tokens_after)
        settings = app.sessions.settings()
        built = app.sessions.build_context(state, settings, IDENTITY)
        text = (
            built.request.instructions
            + "\n"
            + "\n".join(
                getattr(item, "text", "")
                or getattr(item, "output", "")
                or getattr(item, "arguments", "")
                for item in built.request.items
            )
        )
        share = lambda items: sum(1 for f in items if f in text) / max(1, len(items))  # noqa: E731
        out = {
            "ledger": share(facts.ledger),
            "plan": share(facts.plan),
            "prose": share(facts.prose),
            "tokens_before": statistics.median(tokens_before),
            "tokens_after": statistics.median(tokens_after),
            "ms": statistics.median(timings) * 1000,
            "ledger_facts": len(facts.ledger),
        }
        await app.close()
        return out


async def big_session_time(seed: int) -> tuple[int, float]:
    """Compaction time, model excluded, for a session of about 200,000 tokens."""
    from baton.app import build_app

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="baton-fidelity-") as tmp:
        home = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(home / "data")
        ws = home / "ws"
        ws.mkdir()
        app = build_app(ws, NullChannel(), environ={}, client_settings=SETTINGS)
        summariser = DroppingSummariser(rng, [])
        app.sessions.models.providers = StaticProviders(summariser)  # type: ignore[assignment]
        sid = app.sessions.new_session(p.SessionNewParams()).session_id
        state = app.sessions.state(sid)
        facts = Facts()
        round_index = 0
        while True:
            add_round(app, state, rng, round_index, 10, facts)
            round_index += 1
            built = app.sessions.build_context(state, app.sessions.settings(), IDENTITY)
            if built.tokens >= 200_000:
                break
        timings = []
        for _ in range(3):
            app.compaction.engine.restore_view(state)
            model_before = summariser.seconds
            started = time.perf_counter()
            await app.compaction.engine.compact(state, CompactRequest("manual"))
            timings.append(time.perf_counter() - started - (summariser.seconds - model_before))
            app.compaction.engine.store.undo(
                [r.compaction_id for r in app.compaction.engine.records(sid)]
            )
        await app.close()
        return built.tokens, statistics.median(timings) * 1000


def window_for(tokens: int) -> int:
    """A context window whose auto-compaction threshold is about `tokens`."""
    small = int(tokens / 0.68)  # reserve is 20% of windows up to 80,000 tokens
    return small if small <= 80_000 else int(tokens / 0.85 + 16_000)


def add_fixed_failures(app, state, rounds: int, first: int = 0) -> list[str]:  # type: ignore[no-untyped-def]
    """Turns where a command fails (a lint rule, a test count) and a later run passes."""
    store = app.sessions.store
    facts: list[str] = []
    for r in range(first, first + rounds):
        command = f"ruff check src/fix_{r}.py"
        error = f"src/fix_{r}.py:{10 + r}:80: E501 Line too long ({90 + r} > 79)\nFound 1 error."
        state.add(store.append_message(state.id, "user", "prompt", [StoredText(f"Fix lint {r}.")]))
        for attempt, (code, output) in enumerate(((1, error), (0, "All checks passed!"))):
            call_id = f"call_fix_{r}_{attempt}"
            args = {"command": command}
            part = part_from_json(
                "tool_call",
                {
                    "toolCallId": call_id,
                    "name": "bash",
                    "input": args,
                    "arguments": json.dumps(args),
                },
            )
            status = "failed" if code else "completed"
            record = ToolResultRecord(
                call_id, status, output, [Fact("command", command=command, exit_code=code)]
            )
            state.add(store.append_message(state.id, "assistant", "step", [part], results=[record]))
        facts += [f"`{command}` → 1, 0", f"E501 Line too long ({90 + r} > 79)"]
    return facts


async def sized_session(target: int, trigger: p.Trigger, seed: int) -> dict[str, float]:
    """One compaction of a session of about `target` tokens with failures fixed later."""
    from baton.app import build_app
    from baton.compaction.recall import RecallSource

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="baton-fidelity-") as tmp:
        home = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(home / "data")
        os.environ["XDG_CONFIG_HOME"] = str(home / "config")
        ws = home / "ws"
        ws.mkdir()
        settings = {"contextWindow": window_for(target), "compaction": {"strategy": "native"}}
        app = build_app(ws, NullChannel(), environ={}, client_settings=settings)
        summariser = DroppingSummariser(rng, [])
        calls = {"n": 0}
        stream = summariser.stream

        async def counted(request: ModelRequest) -> AsyncIterator[StreamEvent]:
            calls["n"] += 1
            async for event in stream(request):
                yield event

        summariser.stream = counted  # type: ignore[method-assign]
        app.sessions.models.providers = StaticProviders(summariser)  # type: ignore[assignment]
        sid = app.sessions.new_session(p.SessionNewParams()).session_id
        state = app.sessions.state(sid)
        facts = Facts()
        fixed = add_fixed_failures(app, state, 2)
        round_index = 0
        while True:
            add_round(app, state, rng, round_index, 1, facts)
            round_index += 1
            built = app.sessions.build_context(state, app.sessions.settings(), IDENTITY)
            if built.tokens >= target:
                break
        summariser.facts = facts.prose + facts.ledger
        fixed_parts = ("system", "instructions", "tools")
        history = lambda b: b.tokens - sum(x.tokens for x in b.parts if x.kind in fixed_parts)  # noqa: E731
        before = built
        started = time.perf_counter()
        record = await app.compaction.engine.compact(state, CompactRequest(trigger))
        seconds = time.perf_counter() - started
        after = app.sessions.build_context(state, app.sessions.settings(), IDENTITY)
        text = "\n".join(
            getattr(item, "text", "") or getattr(item, "output", "") or ""
            for item in after.request.items
        )
        recall = RecallSource(app.sessions)
        probes = facts.prose + facts.ledger
        in_view = [f for f in probes if f in text]
        folded = folded_records(recall, sid, text)
        recalled = [
            f
            for f in probes
            if f not in text
            and (f in folded or "no line" not in recall.recall(sid, call_id=None, query=f))
        ]
        note = next((n for n in record.notes if n.startswith("summary: ")), "")
        numbers = [int(x) for x in note.replace(",", "").split() if x.isdigit()]
        summary_tokens, replaced = (numbers[-2], numbers[-1]) if len(numbers) >= 2 else (0, 0)
        tool_calls = sum(len(m.tool_calls()) for m in state.messages)
        ledger_tokens = next((x.tokens for x in after.parts if x.kind == "ledger"), 0)
        out = {
            "before": before.tokens,
            "after": after.tokens,
            "history_before": history(before),
            "history_after": history(after),
            "summary_per_replaced": summary_tokens / replaced if replaced else 0.0,
            "calls": calls["n"],
            "in_view": len(in_view) / len(probes),
            "recall": (len(in_view) + len(recalled)) / len(probes),
            "fixed": sum(1 for f in fixed if f in text) / len(fixed),
            "ledger_per_100_calls": ledger_tokens * 100 / max(1, tool_calls),
            "committed": float(record.committed),
            "ms": seconds * 1000,
        }
        await app.close()
        return out


def folded_records(recall, sid: str, text: str) -> str:  # type: ignore[no-untyped-def]
    """Every record the `[ledger:…]` ids in `text` name, as `recall` returns them (each
    id one call; its pages joined without their headers, so no line is split)."""
    records = ""
    for entry in sorted(set(re.findall(r"\[(ledger:[0-9a-z-]+)\]", text))):
        offset: int | None = 0
        while offset is not None:
            head, _, body = recall.recall(sid, call_id=entry, query=None, offset=offset).partition(
                "\n"
            )
            records += body
            more = re.search(r"more with offset (\d+)\]", head)
            offset = int(more.group(1)) if more else None
        records += "\n"
    return records


def print_sizes(seed: int) -> None:
    print(
        "\nsize     trigger  tokens before → after   history before → after   summary/replaced"
        "  calls  facts in view  in view or 1 recall  fixed failures in view  ledger/100 calls"
    )
    for target in (6_000, 40_000, 200_000):
        for trigger in ("manual", "auto"):
            r = asyncio.run(sized_session(target, trigger, seed))  # type: ignore[arg-type]
            share = r["history_after"] / r["history_before"]
            print(
                f"{target:>7,}  {trigger:<7}  {r['before']:>8,.0f} → {r['after']:<8,.0f}"
                f"  {r['history_before']:>8,.0f} → {r['history_after']:<7,.0f} ({share:.0%})"
                f"  {r['summary_per_replaced']:>14.3f}  {r['calls']:>5.0f}  {r['in_view']:>13.0%}"
                f"  {r['recall']:>19.0%}  {r['fixed']:>22.0%}  {r['ledger_per_100_calls']:>12,.0f}"
                + ("" if r["committed"] else "  (nothing to compact)")
            )


# ---------------------------------------------------------------- model-answered probes


@dataclass
class Probe:
    question: str
    expected: str  # a regular expression the answer must match

    def passed(self, answer: str) -> bool:
        return re.search(self.expected, answer, re.IGNORECASE) is not None


async def probe_views(seed: int) -> tuple[dict[str, ModelRequest], list[Probe], dict[str, int]]:
    """A session with lint failures fixed later and two turns of work, compacted by hand
    with the scripted summariser; the views the probes are asked against."""
    from baton.app import build_app

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="baton-fidelity-") as tmp:
        home = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(home / "data")
        os.environ["XDG_CONFIG_HOME"] = str(home / "config")
        ws = home / "ws"
        ws.mkdir()
        settings = {"contextWindow": 8_192, "compaction": {"strategy": "native"}}
        app = build_app(ws, NullChannel(), environ={}, client_settings=settings)
        summariser = DroppingSummariser(rng, [])
        app.sessions.models.providers = StaticProviders(summariser)  # type: ignore[assignment]
        sid = app.sessions.new_session(p.SessionNewParams()).session_id
        state = app.sessions.state(sid)
        facts = Facts()
        add_fixed_failures(app, state, 2)
        add_round(app, state, rng, 0, 1, facts)
        add_fixed_failures(app, state, 1, first=2)
        summariser.facts = facts.prose + facts.ledger
        current = app.sessions.settings()
        full = app.sessions.build_context(state, current, IDENTITY)
        record = await app.compaction.engine.compact(state, CompactRequest("manual"))
        baton = app.sessions.build_context(state, current, IDENTITY)
        without_ledger = dc_replace(state.view, ledger_text=None)
        summary_only = app.compaction.engine.build_with_view(
            state,
            current,
            summariser,  # type: ignore[arg-type]
            without_ledger,
        )
        await app.close()
    code0 = next(f for f in facts.ledger if f.startswith("`pytest tests/test_r0t0.py"))[-1]
    size = re.search(r"at (\d+) MB", facts.prose[0])
    assert size is not None
    probes = [
        Probe(
            "What exit codes did `ruff check src/fix_0.py` return, in order?",
            r"\b1\b\D{0,40}\b0\b",
        ),
        Probe("Which ruff rule code failed in src/fix_1.py?", r"E501"),
        Probe(
            "What was the exit code of `pytest tests/test_r0t0.py -q`? Answer with the number.",
            rf"(?<![\d.]){code0}(?![\d.])",
        ),
        Probe("Which file was edited in work item r0t0?", r"changed_r0t0"),
        Probe("What cache size (in MB) was decided in work item r0t0?", rf"\b{size.group(1)}\b"),
        Probe("How long was the too-long line ruff reported in src/fix_2.py?", r"\b92\b"),
    ]
    sent = lambda b: b.tokens - sum(x.tokens for x in b.parts if x.kind == "tools")  # noqa: E731
    tokens = {"full": sent(full), "baton": sent(baton), "summary only": sent(summary_only)}
    assert record.committed
    views = {
        "full": full.request,
        "baton": baton.request,
        "summary only": summary_only.request,
    }
    return views, probes, tokens


def print_probes(seed: int, small: bool, timeout: float) -> None:
    """Ask the local model each probe against the full transcript, Baton's compacted view
    and the same view without the ledger (summary only); print the share answered."""
    from baton.local.engine import EngineConfig, load_xllamacpp
    from baton.local.model_files import DEFAULT_MODEL, QWEN_CODER_0_5B, model_path
    from baton.providers.openai_chat import to_chat_messages

    spec = QWEN_CODER_0_5B if small else DEFAULT_MODEL
    path = model_path(spec)  # before the bench points XDG_DATA_HOME at a throwaway home
    views, probes, tokens = asyncio.run(probe_views(seed))
    if not path.exists():
        print(f"\nmodel-answered probes skipped: {path} is not installed")
        return
    started = time.monotonic()
    server = load_xllamacpp(
        EngineConfig(model_path=path, threads=2, batch_threads=2, context_size=12_288)
    )
    from fidelity_probes import ask as ask_local

    base_url = server.listening_address.rstrip("/")
    print(f"\nmodel-answered probes ({path.name}, {len(probes)} probes, timeout {timeout:.0f} s)")
    print("view          estimated  model's count  answered  seconds")
    deadline = started + timeout
    for name, request in views.items():
        messages = to_chat_messages(request.instructions, request.items)
        right = asked = counted = 0
        view_started = time.monotonic()
        for probe in probes:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            question = (
                "Answer from the conversation above, in one short line, without using tools: "
                + probe.question
            )
            try:
                answer, prompt_tokens = ask_local(
                    base_url, [*messages, {"role": "user", "content": question}], left
                )
            except (OSError, TimeoutError) as exc:
                detail = exc.read().decode()[:300] if hasattr(exc, "read") else ""
                print(f"  {name}: {probe.question!r} failed: {exc} {detail}")
                break
            asked += 1
            counted = counted or prompt_tokens
            right += probe.passed(answer)
            print(f"  {name}: {probe.question!r} -> {answer.strip()[:80]!r}", file=sys.stderr)
        print(
            f"{name:<13} {tokens[name]:>9,}  {counted:>13,}  {right}/{asked} of {len(probes)}"
            f"  {time.monotonic() - view_started:>7.0f}"
        )
    del server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--replicates", type=int, default=3)
    parser.add_argument("--turns", type=int, default=6, help="turns of work between compactions")
    parser.add_argument(
        "--probe-model",
        choices=("0.5b", "1.5b"),
        help="only the model-answered probes, on the local model of this size",
    )
    parser.add_argument("--probe-timeout", type=float, default=900.0, help="seconds in all")
    parser.add_argument(
        "--seeds", default="1,2,3", help="probe sessions per size (1: Python, 2: Node, 3: Rust, …)"
    )
    parser.add_argument("--sizes", default="5000,40000,150000", help="probe session sizes")
    parser.add_argument(
        "--model-max", type=int, default=200_000, help="largest session the model answers on"
    )
    parser.add_argument(
        "--summary-max",
        type=int,
        default=6_000,
        help="largest session the model summarises (larger ones: the scripted summariser)",
    )
    parser.add_argument(
        "--context", type=int, default=16_384, help="the model's n_ctx (local.contextSize)"
    )
    parser.add_argument("--out", type=Path, help="append each session's figures (JSON lines)")
    parser.add_argument("--report", type=Path, help="only print the table of an --out file")
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="don't ask the probes on the newest part of a transcript over the model's context",
    )
    parser.add_argument(
        "--old-probes", action="store_true", help="the six probes of the earlier bench"
    )
    parser.add_argument(
        "--working",
        action="store_true",
        help="working sessions compacted three times under --window (bench/fidelity_working.py)",
    )
    parser.add_argument("--window", type=int, default=16_384, help="the window for --working")
    parser.add_argument(
        "--children", type=int, default=0, help="task children of 40 files, 10 commands each"
    )
    args = parser.parse_args()
    if args.working:
        from fidelity_working import run as run_working

        sizes = args.sizes if args.sizes != "5000,40000,150000" else "6000,40000,200000"
        run_working(
            [int(x) for x in args.seeds.split(",") if x.strip()],
            [int(x) for x in sizes.split(",") if x.strip()],
            args.window,
            args.children,
        )
        return
    if args.report:
        from fidelity_probes import report

        report(args.report)
        return
    if args.probe_model and args.old_probes:
        print_probes(args.seed, args.probe_model == "0.5b", args.probe_timeout)
        return
    if args.probe_model:
        from fidelity_probes import run

        run(
            args.probe_model == "0.5b",
            [int(x) for x in args.seeds.split(",") if x.strip()],
            [int(x) for x in args.sizes.split(",") if x.strip()],
            args.model_max,
            args.summary_max,
            args.context,
            args.out,
            DroppingSummariser,
            baseline=not args.no_baseline,
        )
        return
    print(
        "depth  ledger facts  plan   prose (summary only)  tokens before → after  compaction ms (no model)"
    )
    for depth in (1, 3, 10):
        runs = [
            asyncio.run(run_depth(depth, args.seed + r, args.turns)) for r in range(args.replicates)
        ]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(
            f"{depth:>5}  {med['ledger']:>11.0%}  {med['plan']:>5.0%}  {med['prose']:>20.0%}"
            f"  {med['tokens_before']:>10,.0f} → {med['tokens_after']:<9,.0f}  {med['ms']:>10.1f}"
            f"   ({int(med['ledger_facts'])} ledger facts; median of {args.replicates})"
        )
    print_sizes(args.seed)
    tokens, ms = asyncio.run(big_session_time(args.seed))
    print(
        f"compaction of a {tokens:,}-token session, model excluded: {ms:.1f} ms (median of 3; target < 50 ms)"
    )


if __name__ == "__main__":
    main()
