"""Exact-answer probes against the full transcript and Baton's compacted view (issue 27).

    python bench/fidelity.py --probe-model 1.5b [--sessions 2] [--sizes 5000,40000,150000]

Synthetic coding sessions of about 5k, 40k and 150k tokens hold known facts:
the person's constraints and values, values in config files read, versions
printed by `pip show` / `npm ls`, a test that fails twice with two different
errors and then passes, a hypothesis ruled out, decisions, and a plan with a
blocked step; the rest is filler (large reads, prose). Each has 23 probes with
exact answers. Per session:

* **in view / one recall**: the share of probe answers present verbatim in
  Baton's view after one manual compaction, or returned by one `recall`
  search for the answer (no model needed);
* **accuracy** (sessions the model can read, `--model-max` tokens): the local
  model answers every probe against the full transcript and against Baton's
  view; the figure is Baton's share of what the full transcript answers. The
  compaction's summary is written by the same local model (Baton's real
  manual compaction, through the openai-compatible provider); larger sessions
  use the scripted summariser of bench/fidelity.py (it keeps each fact with
  probability 0.5), and are measured for size and recall coverage only.

It runs against whatever Baton the repository it sits in holds, so the same
file measures the code before a change (a worktree at the old commit) and after.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from baton import protocol as p
from baton.compaction.engine import CompactRequest
from baton.providers.base import Finished, ModelRequest, StreamEvent
from baton.session.events import NullChannel
from baton.session.model import StoredPart, ToolResultRecord
from baton.tools.base import Fact

MODEL_CONTEXT = 12_288


@dataclass
class Probe:
    question: str
    answer: str  # the exact text the view must hold (for "in view / one recall")
    pattern: str  # a regular expression a right answer matches

    def passed(self, reply: str) -> bool:
        return re.search(self.pattern, reply, re.IGNORECASE) is not None


class Session:
    """Writes a synthetic session into Baton's store and knows its probes."""

    def __init__(self, app: Any, state: Any, seed: int) -> None:
        self.app, self.state, self.rng = app, state, random.Random(seed)
        self.calls = 0
        self.probes: list[Probe] = []

    # ------------------------------------------------------------ writing

    def person(self, text: str) -> None:
        store = self.app.sessions.store
        self.state.add(
            store.append_message(
                self.state.id, "user", "prompt", [StoredPart("text", {"text": text})]
            )
        )

    def step(
        self, say: str, tools: list[tuple[str, dict[str, Any], str, list[Fact], bool]]
    ) -> None:
        """One assistant step: its text, then tool calls (name, args, output, facts, ok)."""
        parts = [StoredPart("text", {"text": say})] if say else []
        results = []
        for name, args, output, facts, ok in tools:
            self.calls += 1
            call_id = f"call_{self.calls:04d}"
            parts.append(
                StoredPart(
                    "tool_call",
                    {
                        "toolCallId": call_id,
                        "name": name,
                        "input": args,
                        "arguments": json.dumps(args),
                    },
                )
            )
            status = "completed" if ok else "failed"
            results.append(ToolResultRecord(call_id, status, output, facts))  # type: ignore[arg-type]
        store = self.app.sessions.store
        self.state.add(
            store.append_message(self.state.id, "assistant", "step", parts, results=results)
        )

    def read(self, path: str, text: str) -> tuple[str, dict[str, Any], str, list[Fact], bool]:
        numbered = "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.splitlines(), 1))
        return ("read", {"path": path}, numbered, [Fact("read", path=path)], True)

    def bash(
        self, command: str, output: str, code: int
    ) -> tuple[str, dict[str, Any], str, list[Fact], bool]:
        out = f"{output}\n[exit code {code}]"
        return (
            "bash",
            {"command": command},
            out,
            [Fact("command", command=command, exit_code=code)],
            code == 0,
        )

    def edit(self, path: str) -> tuple[str, dict[str, Any], str, list[Fact], bool]:
        return (
            "edit",
            {"path": path, "old_string": "return total", "new_string": "return total or 0"},
            f"Edited {path}: 1 replacement.",
            [Fact("modified", path=path, action="modified")],
            True,
        )

    def filler(self, tokens: int, tag: str) -> None:
        """Large reads and prose worth about `tokens`: what compaction should drop."""
        made = 0
        n = 0
        while made < tokens:
            n += 1
            lines = [
                f"def helper_{tag}_{n}_{i}(value):  # {self.rng.choice(['parse', 'render', 'merge', 'load'])}"
                f"\n    return value * {self.rng.randint(2, 97)}"
                for i in range(40)
            ]
            text = "\n".join(lines)
            self.person(f"Look at src/{tag}/part_{n}.py as well.")
            self.step(
                f"Reading src/{tag}/part_{n}.py to see how the helpers fit together. "
                + "The helpers are small pure functions; nothing there matters for the bug. " * 3,
                [self.read(f"src/{tag}/part_{n}.py", text)],
            )
            made += len(text) // 4 + 120

    # ------------------------------------------------------------ the session

    def build(self, size: int) -> None:
        r = self.rng
        keep_out = r.choice(["vendor", "legacy", "third_party", "generated"])
        date = f"2026-{r.randint(1, 12):02d}-{r.randint(10, 28)}"
        bucket = f"s3://acme-{r.choice(['staging', 'preprod', 'qa'])}-{r.randint(100, 999)}"
        ticket = f"OPS-{r.randint(1000, 9999)}"
        level = r.choice(["WARNING", "ERROR", "DEBUG"])
        port, pool, timeout = r.randint(8000, 8999), r.randint(5, 40), r.randint(10, 90)
        region = r.choice(["eu-west-1", "us-east-2", "ap-south-1"])
        pkg, ver = (
            r.choice(["requests", "httpx", "pydantic"]),
            f"2.{r.randint(1, 40)}.{r.randint(0, 9)}",
        )
        jspkg, jsver = (
            r.choice(["lodash", "axios", "zod"]),
            f"4.{r.randint(1, 20)}.{r.randint(0, 30)}",
        )
        module = r.choice(["billing", "orders", "invoices"])
        func = r.choice(["compute_total", "sum_lines", "apply_discount"])
        lib, other = r.choice([("tenacity", "backoff"), ("backoff", "tenacity")])
        attempts = r.randint(3, 7)
        test = f"pytest -q tests/test_{module}.py"
        expected = r.randint(40, 60)
        passed = r.randint(4, 12)
        share = max(0, size - 3_500) // 7  # filler between the facts, spread through the region

        self.person(
            f"Fix the failing {module} tests. Never touch the {keep_out}/ directory. "
            f"The staging date is {date} and the bucket is {bucket}; the ticket is {ticket}."
        )
        self.step(
            "I'll start with the configuration.",
            [
                self.read(
                    "config/app.toml",
                    f'[server]\nport = {port}\nregion = "{region}"\n\n[db]\npool_size = {pool}\n',
                ),
                self.read(".env", f"API_TIMEOUT={timeout}\nLOG_FORMAT=json\n"),
            ],
        )
        self.filler(share, "a")
        self.person(f"Check the versions we have of {pkg} and {jspkg}.")
        pip = (
            f"Name: {pkg}\nVersion: {ver}\nSummary: A library\nHome-page: https://example.org\n"
            f"Author: Someone\nLicense: MIT\nLocation: /usr/lib/python3/site-packages\n"
            f"Requires: idna\nRequired-by: app"
        )
        self.step(
            "Checking the installed versions.",
            [
                self.bash(f"pip show {pkg}", pip, 0),
                self.bash(f"npm ls {jspkg}", f"app@1.0.0 /work\n└── {jspkg}@{jsver}", 0),
            ],
        )
        self.filler(share, "b")
        first = (
            "============================= test session starts ==============================\n"
            "collected 6 items\n\n"
            f"tests/test_{module}.py ..F...\n\n"
            "=================================== FAILURES ===================================\n"
            f"    def test_total():\n>       assert {func}([]) == 0\n"
            f"src/{module}.py:12: in {func}\n    return total + tax\n"
            "E   TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'\n"
            "=========================== short test summary info ============================\n"
            f"FAILED tests/test_{module}.py::test_total - TypeError: unsupported operand\n"
            "========================= 1 failed, 5 passed in 0.31s =========================="
        )
        self.person("Run the tests.")
        self.step("Running the tests.", [self.bash(test, first, 1)])
        self.step(
            f"The failure comes from {func} returning None for an empty list. "
            "Hypothesis: a stale cache in .pytest_cache. I cleared it and the same failure came "
            "back, so the cache is ruled out as the cause.",
            [self.bash("rm -rf .pytest_cache", "", 0)],
        )
        self.filler(share, "c")
        second = (
            f"tests/test_{module}.py ..F...\n"
            f"E   AssertionError: assert {expected - 1} == {expected}\n"
            "========================= 1 failed, 5 passed in 0.29s =========================="
        )
        self.step(f"Fixing {func}.", [self.edit(f"src/{module}.py"), self.bash(test, second, 1)])
        self.filler(share, "d")
        self.step(
            "An off-by-one in the tax rounding; fixing it.",
            [self.edit(f"src/{module}.py"), self.bash(test, f"{passed} passed in 0.27s", 0)],
        )
        self.person(f"Use {lib} for the retries, not {other}. Log level {level} in production.")
        self.step(f"Decided: the retries use {lib} with {attempts} attempts.", [])
        self.filler(share, "e")
        plan = (
            f"# Fix {module}\n\nGoal: the {module} tests pass and the fix is deployed.\n\n"
            f"- [x] Fix {func} for empty input\n- [x] Fix the tax rounding\n"
            f"- [x] Add retries with {lib}\n"
            "- [!] Deploy to staging: waiting for the deploy credentials\n"
            "- [ ] Announce the release\n"
        )
        self.app.plans.write(self.state.id, plan)
        self.filler(share, "f")
        self.person("What is left?")
        self.step("Deploying is blocked on the credentials; the rest is done.", [])

        q = Probe
        self.probes = [
            q("Which directory must never be touched?", f"{keep_out}/", rf"\b{keep_out}\b"),
            q("What is the staging date?", date, re.escape(date)),
            q("What is the bucket?", bucket, re.escape(bucket)),
            q("What is the ticket id?", ticket, re.escape(ticket)),
            q("Which log level is wanted in production?", f"Log level {level}", level),
            q("What port does config/app.toml set?", f"port = {port}", rf"\b{port}\b"),
            q("What region does config/app.toml set?", region, re.escape(region)),
            q("What is pool_size in config/app.toml?", f"pool_size = {pool}", rf"\b{pool}\b"),
            q("What is API_TIMEOUT in .env?", f"API_TIMEOUT={timeout}", rf"\b{timeout}\b"),
            q(f"Which version of {pkg} is installed?", f"Version: {ver}", re.escape(ver)),
            q(f"Which version of {jspkg} is installed?", f"{jspkg}@{jsver}", re.escape(jsver)),
            q(
                f"What error type did the first failing run of `{test}` report?",
                "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
                r"TypeError",
            ),
            q(
                f"What assertion failed in the second failing run of `{test}`?",
                f"assert {expected - 1} == {expected}",
                rf"{expected - 1}\s*==\s*{expected}",
            ),
            q(
                f"What exit codes did `{test}` return, in order?",
                "1, 1, 0",
                r"\b1\D{1,12}1\D{1,12}0\b",
            ),
            q(
                f"How many tests passed in the last run of `{test}`?",
                f"{passed} passed",
                rf"\b{passed}\b",
            ),
            q("Which hypothesis was ruled out?", "cache is ruled out", r"cache"),
            q(
                "Which file was edited to fix the bug?",
                f"src/{module}.py",
                re.escape(f"{module}.py"),
            ),
            q("Which function returned None?", func, re.escape(func)),
            q("Which library do the retries use?", f"use {lib}", rf"\b{lib}\b"),
            q("How many retry attempts were decided?", f"{attempts} attempts", rf"\b{attempts}\b"),
            q("Which plan step is blocked?", "Deploy to staging", r"deploy"),
            q(
                "Why is that plan step blocked?",
                "waiting for the deploy credentials",
                r"credential",
            ),
            q("Which plan step is still open (not started)?", "Announce the release", r"announce"),
        ]


class Counting:
    """Wraps a provider: counts summary calls and those that stopped at their cap."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.identity = inner.identity
        self.calls = 0
        self.cut = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        async for event in self.inner.stream(request):
            if isinstance(event, Finished) and event.reason == "length":
                self.cut += 1
            yield event

    async def aclose(self) -> None:
        await self.inner.aclose()


class OneProvider:
    def __init__(self, provider: Any) -> None:
        self.provider = provider

    def get(
        self, settings: Any, credentials: Any, *, provider: Any = None, model: Any = None
    ) -> Any:
        return self.provider

    async def aclose(self) -> None:
        pass


def view_text(request: ModelRequest) -> str:
    parts = [request.instructions]
    for item in request.items:
        parts.append(
            str(
                getattr(item, "text", "")
                or getattr(item, "output", "")
                or getattr(item, "arguments", "")
            )
        )
    return "\n".join(parts)


async def measure(size: int, seed: int, base_url: str | None, scripted: Any) -> dict[str, Any]:
    """Build one session, compact it by hand, and return both views and the figures."""
    from baton.app import build_app
    from baton.compaction.recall import RecallSource

    with tempfile.TemporaryDirectory(prefix="baton-probes-") as tmp:
        home = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(home / "data")
        os.environ["XDG_CONFIG_HOME"] = str(home / "config")
        ws = home / "ws"
        ws.mkdir()
        use_model = base_url is not None
        window = MODEL_CONTEXT if use_model else max(16_000, int(size * 1.6))
        settings: dict[str, Any] = {"contextWindow": window, "compaction": {"strategy": "native"}}
        if use_model:
            settings |= {
                "provider": "openai-compatible",
                "model": "local",
                "baseUrl": f"{base_url}/v1",
            }
        app = build_app(ws, NullChannel(), environ={}, client_settings=settings)
        sid = app.sessions.new_session(p.SessionNewParams(title="probes")).session_id
        state = app.sessions.state(sid)
        session = Session(app, state, seed)
        session.build(size)
        current = app.sessions.settings()
        identity = app.sessions.identity_for(state, current)
        if use_model:
            real = app.sessions.provider_for(state, current)
            provider = Counting(real)
        else:
            provider = Counting(scripted(random.Random(seed), [pr.answer for pr in session.probes]))
        app.sessions.providers = OneProvider(provider)
        full = app.sessions.build_context(state, current, identity)
        started = time.monotonic()
        record = await app.compaction.engine.compact(state, CompactRequest("manual"))
        seconds = time.monotonic() - started
        after = app.sessions.build_context(state, current, identity)
        text = view_text(after.request).lower()
        recall = RecallSource(app.sessions)
        in_view = [pr for pr in session.probes if pr.answer.lower() in text]
        recalled = [
            pr
            for pr in session.probes
            if pr.answer.lower() not in text
            and pr.answer.lower() in recall.recall(sid, call_id=None, query=pr.answer).lower()
        ]
        await app.close()
    notes = record.notes
    accepted_cut = provider.cut > 0 and not any(
        "rejected" in n or "completed by one more call" in n or "built from" in n for n in notes
    )
    sent = lambda b: b.tokens - sum(x.tokens for x in b.parts if x.kind == "tools")  # noqa: E731
    return {
        "size": size,
        "seed": seed,
        "full": full.request,
        "baton": after.request,
        "full_tokens": sent(full),
        "baton_tokens": sent(after),
        "probes": session.probes,
        "in_view": len(in_view),
        "recall": len(in_view) + len(recalled),
        "missing": [pr.answer for pr in session.probes if pr not in in_view and pr not in recalled],
        "recalled": [pr.answer for pr in recalled],
        "summary_calls": provider.calls,
        "summary_cut": provider.cut,
        "accepted_cut": accepted_cut,
        "corrections": [n for n in notes if n.startswith("corrected")],
        "notes": notes,
        "summary": record.summary or "",
        "committed": record.committed,
        "seconds": seconds,
    }


def ask(base_url: str, messages: list[dict[str, object]], timeout: float) -> tuple[str, int]:
    body = {"messages": messages, "max_tokens": 40, "temperature": 0, "cache_prompt": True}
    req = urllib.request.Request(
        f"{base_url}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=timeout) as response:
        data = json.loads(response.read())
    answer = str(data["choices"][0]["message"].get("content") or "")
    return answer, int((data.get("usage") or {}).get("prompt_tokens") or 0)


def answer_probes(
    base_url: str, request: ModelRequest, probes: list[Probe]
) -> tuple[int, int, list[str]]:
    """(right answers, the model's prompt token count, the probes missed)."""
    from baton.providers.openai_chat import to_chat_messages

    messages = to_chat_messages(request.instructions, request.items)
    right = counted = 0
    missed: list[str] = []
    for probe in probes:
        question = (
            "Answer from the conversation above, in one short line, without using tools: "
            + probe.question
        )
        reply, prompt_tokens = ask(
            base_url, [*messages, {"role": "user", "content": question}], 900
        )
        counted = counted or prompt_tokens
        if probe.passed(reply):
            right += 1
        else:
            missed.append(f"{probe.question} -> {reply.strip()[:70]!r}")
    return right, counted, missed


def run(small: bool, sessions: int, sizes: list[int], model_max: int, scripted: Any) -> None:
    """`scripted`: the summariser class for sessions the model does not read
    (bench/fidelity.py's DroppingSummariser: keeps each fact with probability 0.5)."""
    from baton.local.engine import EngineConfig, load_xllamacpp
    from baton.local.model_files import DEFAULT_MODEL, QWEN_CODER_0_5B, model_path

    spec = QWEN_CODER_0_5B if small else DEFAULT_MODEL
    path = model_path(spec)  # before the bench points XDG_DATA_HOME at a throwaway home
    server = None
    base_url: str | None = None
    if any(size <= model_max for size in sizes):
        if not path.exists():
            print(f"model not installed ({path}): sizes and recall only")
        else:
            server = load_xllamacpp(
                EngineConfig(
                    model_path=path, threads=2, batch_threads=2, context_size=MODEL_CONTEXT
                )
            )
            base_url = server.listening_address.rstrip("/")
    print(f"model: {path.name if base_url else 'none'} (context {MODEL_CONTEXT:,})")
    print(
        "size     seed  tokens full → baton (share)  in view  view or 1 recall"
        "  summary calls (cut at cap, accepted cut)  corrections  accuracy full  baton  ratio"
    )
    totals: dict[int, list[dict[str, Any]]] = {}
    for size in sizes:
        for seed in range(1, sessions + 1):
            with_model = base_url if size <= model_max else None
            started = time.monotonic()
            m = asyncio.run(measure(size, seed, with_model, scripted))
            print(f"  compacted in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
            n = len(m["probes"])
            acc = ""
            if with_model:
                full_right, full_count, full_missed = answer_probes(
                    with_model, m["full"], m["probes"]
                )
                baton_right, baton_count, baton_missed = answer_probes(
                    with_model, m["baton"], m["probes"]
                )
                m |= {"full_right": full_right, "baton_right": baton_right}
                ratio = baton_right / full_right if full_right else float("nan")
                acc = f"  {full_right:>2}/{n} ({full_count:,} t)  {baton_right:>2}/{n} ({baton_count:,} t)  {ratio:.2f}"
                for miss in baton_missed:
                    print(f"    baton missed: {miss}", file=sys.stderr)
                for miss in full_missed:
                    print(f"    full missed: {miss}", file=sys.stderr)
            share = m["baton_tokens"] / m["full_tokens"]
            print(
                f"{size:>7,}  {seed:>4}  {m['full_tokens']:>7,} → {m['baton_tokens']:<7,} ({share:.0%})"
                f"  {m['in_view']:>4}/{n}  {m['recall']:>8}/{n}"
                f"  {m['summary_calls']:>13} ({m['summary_cut']}, {'yes' if m['accepted_cut'] else 'no'})"
                f"  {len(m['corrections']):>11}{acc}",
                flush=True,
            )
            for note in m["notes"]:
                print(f"    note: {note}", file=sys.stderr)
            print(f"    one recall away: {m['recalled']}", file=sys.stderr)
            if m["missing"]:
                print(f"    not in view nor one recall: {m['missing']}", file=sys.stderr)
            totals.setdefault(size, []).append(m)
    for size, runs in totals.items():
        probes = sum(len(r["probes"]) for r in runs)
        line = (
            f"all {size:,}: tokens {sum(r['baton_tokens'] for r in runs) / sum(r['full_tokens'] for r in runs):.0%}"
            f" of the full transcript; in view or 1 recall {sum(r['recall'] for r in runs)}/{probes}"
        )
        if all("full_right" in r for r in runs):
            full = sum(r["full_right"] for r in runs)
            baton = sum(r["baton_right"] for r in runs)
            line += f"; accuracy {baton}/{probes} vs full {full}/{probes}: {baton / full:.2f} of the full transcript"
        print(line)
    del server
