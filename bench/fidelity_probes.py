"""Exact-answer probes against the full transcript and Baton's compacted view.

    python bench/fidelity.py --probe-model 1.5b [--seeds 1,2,3] [--sizes 5000,40000,150000]
        [--context 16384] [--summary-max 6000] [--out runs.jsonl]
    python bench/fidelity.py --report runs.jsonl

Synthetic coding sessions of about 5k, 40k and 150k tokens (Baton's estimate)
hold known facts: the person's constraints and values, values in a config file
read (TOML, YAML or INI by the session's kind: seed 1 a Python project tested
with pytest, 2 Node with jest, 3 Rust with cargo, then round again), versions
printed by `pip show` / `npm ls`, a test that fails twice with two different
errors and then passes, a hypothesis ruled out, decisions, and a plan with a
blocked step; the rest is filler (large reads, prose). Every value is drawn
from the seed. Each session has 23 probes with exact answers. Per session:

* **in view / one recall**: the share of probe answers present verbatim in
  Baton's view after one manual compaction, or returned by one `recall`
  search for the answer (no model needed);
* **accuracy**: the local model (Baton's own engine, provider `local`, n_ctx
  `--context`) answers every probe against the full transcript, then against
  Baton's view, each probe appended to the same view so llama.cpp's prompt
  cache reads the view once. A full transcript over n_ctx is not answered
  (llama.cpp refuses it; its count is reported) and the view's accuracy is
  then given against the probes' known answers only, never as a share of a
  full-transcript figure; it is compared with a baseline instead, the newest
  part of the full transcript that fits n_ctx (the system message and the
  newest messages from one of the person's: what an agent that only drops its
  oldest messages would send). Sessions up to `--summary-max` are compacted with
  the same model writing the summary (Baton's real manual compaction, right
  after the full-transcript probes, so the session's prefix is in the cache
  as after a turn); larger ones with the scripted summariser of
  bench/fidelity.py (it keeps each fact with probability 0.5). Each session's
  record says who wrote the summary (the model, or the code-built fallback
  and why, from the compaction's notes).

Each invocation can take a subset (`--sizes`, `--seeds`), so model runs stay
short; `--out` appends each session's figures and `--report` adds them up.
It runs against whatever Baton the repository it sits in holds.
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
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))

from baton import protocol as p
from baton.agent.events import NullChannel
from baton.compaction.engine import CompactRequest
from baton.providers.base import Finished, ModelRequest, Progress, StreamEvent, TextDelta, Usage
from baton.store.model import StoredText, ToolResultRecord, part_from_json
from baton.tools.base import Fact


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
        self.flavour = list(FLAVOURS)[(seed - 1) % len(FLAVOURS)]
        self.calls = 0
        self.probes: list[Probe] = []

    # ------------------------------------------------------------ writing

    def person(self, text: str) -> None:
        store = self.app.sessions.store
        self.state.add(store.append_message(self.state.id, "user", "prompt", [StoredText(text)]))

    def step(
        self, say: str, tools: list[tuple[str, dict[str, Any], str, list[Fact], bool]]
    ) -> None:
        """One assistant step: its text, then tool calls (name, args, output, facts, ok)."""
        parts = [StoredText(say)] if say else []
        results = []
        for name, args, output, facts, ok in tools:
            self.calls += 1
            call_id = f"call_{self.calls:04d}"
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
        """The session: its flavour (a Python, a Node or a Rust project) and every value
        drawn from the seed, so a run is repeatable and sessions differ."""
        r = self.rng
        flavour = FLAVOURS[self.flavour]
        keep_out = r.choice(["vendor", "legacy", "third_party", "generated"])
        date = f"2026-{r.randint(1, 12):02d}-{r.randint(10, 28)}"
        bucket = f"s3://acme-{r.choice(['staging', 'preprod', 'qa'])}-{r.randint(100, 999)}"
        ticket = f"{r.choice(['OPS', 'REL', 'INFRA'])}-{r.randint(1000, 9999)}"
        level = r.choice(["WARNING", "ERROR", "DEBUG"])
        port, pool, timeout = r.randint(8000, 8999), r.randint(5, 40), r.randint(10, 90)
        region = r.choice(["eu-west-1", "us-east-2", "ap-south-1", "eu-central-1"])
        pkg, ver = (
            r.choice(["requests", "httpx", "pydantic", "sqlalchemy"]),
            f"2.{r.randint(1, 40)}.{r.randint(0, 9)}",
        )
        jspkg, jsver = (
            r.choice(["lodash", "axios", "zod", "express"]),
            f"4.{r.randint(1, 20)}.{r.randint(0, 30)}",
        )
        module = r.choice(["billing", "orders", "invoices", "payments", "ledger"])
        func = r.choice(["compute_total", "sum_lines", "apply_discount", "round_tax"])
        lib, other = r.choice(flavour["retries"])
        attempts = r.randint(3, 7)
        test = flavour["test"].format(module=module)
        expected = r.randint(40, 60)
        passed = r.randint(4, 12)
        share = max(0, size - 3_500) // 7  # filler between the facts, spread through the region
        config_path = flavour["config"]
        values = {"port": port, "region": region, "pool": pool, "module": module, "func": func}

        self.person(
            f"Fix the failing {module} tests. Never touch the {keep_out}/ directory. "
            f"The staging date is {date} and the bucket is {bucket}; the ticket is {ticket}."
        )
        self.step(
            "I'll start with the configuration.",
            [
                self.read(config_path, flavour["config_text"].format(**values)),
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
        self.person("Run the tests.")
        self.step(
            "Running the tests.",
            [self.bash(test, flavour["first"].format(**values), flavour["first_code"])],
        )
        self.step(
            f"The failure comes from {func} returning None for an empty list. "
            f"Hypothesis: a stale cache in {flavour['cache']}. I cleared it and the same failure "
            "came back, so the cache is ruled out as the cause.",
            [self.bash(f"rm -rf {flavour['cache']}", "", 0)],
        )
        self.filler(share, "c")
        second = flavour["second"].format(got=expected - 1, want=expected, **values)
        source = flavour["source"].format(module=module)
        self.step(
            f"Fixing {func}.", [self.edit(source), self.bash(test, second, flavour["fail_code"])]
        )
        self.filler(share, "d")
        self.step(
            "An off-by-one in the tax rounding; fixing it.",
            [self.edit(source), self.bash(test, flavour["passed"].format(n=passed), 0)],
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
        first_answer, first_pattern = flavour["first_probe"]
        self.probes = [
            q("Which directory must never be touched?", f"{keep_out}/", rf"\b{keep_out}\b"),
            q("What is the staging date?", date, re.escape(date)),
            q("What is the bucket?", bucket, re.escape(bucket)),
            q("What is the ticket id?", ticket, re.escape(ticket)),
            q("Which log level is wanted in production?", f"Log level {level}", level),
            q(
                f"What port does {config_path} set?",
                flavour["port"].format(port=port),
                rf"\b{port}\b",
            ),
            q(f"What region does {config_path} set?", region, re.escape(region)),
            q(
                f"What is pool_size in {config_path}?",
                flavour["pool"].format(pool=pool),
                rf"\b{pool}\b",
            ),
            q("What is API_TIMEOUT in .env?", f"API_TIMEOUT={timeout}", rf"\b{timeout}\b"),
            q(f"Which version of {pkg} is installed?", f"Version: {ver}", re.escape(ver)),
            q(f"Which version of {jspkg} is installed?", f"{jspkg}@{jsver}", re.escape(jsver)),
            q(
                f"What error did the first failing run of `{test}` report?",
                first_answer.format(**values),
                first_pattern,
            ),
            q(
                f"What values did the failing assertion of the second failing run of `{test}` "
                "compare?",
                flavour["second_answer"].format(got=expected - 1, want=expected),
                rf"\b{expected - 1}\b\D{{1,40}}\b{expected}\b|\b{expected}\b\D{{1,40}}\b{expected - 1}\b",
            ),
            q(
                f"What exit codes did `{test}` return, in order?",
                f"{flavour['first_code']}, {flavour['fail_code']}, 0",
                rf"\b{flavour['first_code']}\D{{1,12}}{flavour['fail_code']}\D{{1,12}}0\b",
            ),
            q(
                f"How many tests passed in the last run of `{test}`?",
                flavour["passed"].format(n=passed).split("\n")[0],
                rf"\b{passed}\b",
            ),
            q("Which hypothesis was ruled out?", "cache is ruled out", r"cache"),
            q("Which file was edited to fix the bug?", source, re.escape(source.split("/")[-1])),
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


# Three kinds of project, so the sessions differ in shape as well as in values: the
# test runner and its output, the config file's format, the first error.
FLAVOURS: dict[str, dict[str, Any]] = {
    "python": {
        "test": "pytest -q tests/test_{module}.py",
        "cache": ".pytest_cache",
        "source": "src/{module}.py",
        "config": "config/app.toml",
        "config_text": '[server]\nport = {port}\nregion = "{region}"\n\n[db]\npool_size = {pool}\n',
        "port": "port = {port}",
        "pool": "pool_size = {pool}",
        "retries": [("tenacity", "backoff"), ("backoff", "tenacity")],
        "first_code": 1,
        "fail_code": 1,
        "first": (
            "============================= test session starts ==============================\n"
            "collected 6 items\n\n"
            "tests/test_{module}.py ..F...\n\n"
            "=================================== FAILURES ===================================\n"
            "    def test_total():\n>       assert {func}([]) == 0\n"
            "src/{module}.py:12: in {func}\n    return total + tax\n"
            "E   TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'\n"
            "=========================== short test summary info ============================\n"
            "FAILED tests/test_{module}.py::test_total - TypeError: unsupported operand\n"
            "========================= 1 failed, 5 passed in 0.31s =========================="
        ),
        "first_probe": (
            "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
            r"TypeError",
        ),
        "second": (
            "tests/test_{module}.py ..F...\n"
            "E   AssertionError: assert {got} == {want}\n"
            "========================= 1 failed, 5 passed in 0.29s =========================="
        ),
        "second_answer": "assert {got} == {want}",
        "passed": "{n} passed in 0.27s",
    },
    "node": {
        "test": "npx jest tests/{module}.test.js",
        "cache": "node_modules/.cache/jest",
        "source": "src/{module}.js",
        "config": "config/app.yaml",
        "config_text": "server:\n  port: {port}\n  region: {region}\ndb:\n  pool_size: {pool}\n",
        "port": "port: {port}",
        "pool": "pool_size: {pool}",
        "retries": [("p-retry", "async-retry"), ("async-retry", "p-retry")],
        "first_code": 1,
        "fail_code": 1,
        "first": (
            " FAIL  tests/{module}.test.js\n"
            "  ● {module} › total of an empty list\n\n"
            "    TypeError: Cannot read properties of undefined (reading 'amount')\n\n"
            "      10 |   return lines.reduce((t, l) => t + l.amount, 0) + tax;\n"
            "      at {func} (src/{module}.js:10:41)\n\n"
            "Tests:       1 failed, 5 passed, 6 total\n"
            "Time:        0.84 s"
        ),
        "first_probe": (
            "TypeError: Cannot read properties of undefined (reading 'amount')",
            r"TypeError|undefined",
        ),
        "second": (
            " FAIL  tests/{module}.test.js\n"
            "    expect(received).toBe(expected)\n\n"
            "    Expected: {want}\n    Received: {got}\n\n"
            "Tests:       1 failed, 5 passed, 6 total"
        ),
        "second_answer": "Received: {got}",
        "passed": "Tests:       {n} passed, {n} total\nTime:        0.79 s",
    },
    "rust": {
        "test": "cargo test -p {module}",
        "cache": "target/debug/incremental",
        "source": "src/{module}.rs",
        "config": "config/app.ini",
        "config_text": "[server]\nport = {port}\nregion = {region}\n\n[db]\npool_size = {pool}\n",
        "port": "port = {port}",
        "pool": "pool_size = {pool}",
        "retries": [("backon", "tokio-retry"), ("tokio-retry", "backon")],
        "first_code": 101,
        "fail_code": 101,
        "first": (
            "   Compiling {module} v0.3.1 (/work/{module})\n"
            "error[E0308]: mismatched types\n"
            "  --> src/{module}.rs:12:5\n"
            "   |\n12 |     total + tax\n"
            "   |     ^^^^^^^^^^^ expected `Option<u64>`, found `u64`\n\n"
            "error: could not compile `{module}` (lib test) due to 1 previous error"
        ),
        "first_probe": ("error[E0308]: mismatched types", r"E0308|mismatched"),
        "second": (
            "running 6 tests\n"
            "test tests::total_of_empty ... FAILED\n\n"
            "thread 'tests::total_of_empty' panicked at src/{module}.rs:40:9:\n"
            "assertion `left == right` failed\n  left: {got}\n right: {want}\n\n"
            "test result: FAILED. 5 passed; 1 failed; 0 ignored"
        ),
        "second_answer": "left: {got}",
        "passed": "test result: ok. {n} passed; 0 failed; 0 ignored",
    },
}


class Counting:
    """Wraps a provider: counts summary calls, those that stopped at their cap, and
    what each call read (prompt tokens, cached) and wrote, and how long it took."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.identity = inner.identity
        self.summary_keeps_tools: bool = inner.summary_keeps_tools
        self.calls = 0
        self.cut = 0
        self.log: list[dict[str, Any]] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        started = time.monotonic()
        entry: dict[str, Any] = {"max_tokens": request.max_output_tokens, "finish": None}
        self.log.append(entry)
        try:
            async for event in self.inner.stream(request):
                if isinstance(event, Finished):
                    entry["finish"] = event.reason
                    if event.reason == "length":
                        self.cut += 1
                elif isinstance(event, Usage):
                    entry |= {
                        "prompt": event.input_tokens,
                        "cached": event.cached_tokens,
                        "output": event.output_tokens,
                    }
                elif isinstance(event, Progress) and event.phase == "reading":
                    # What a call stopped before its usage report had read, and from the cache.
                    entry |= {"read": event.done, "prompt": event.total, "cached": event.cached}
                    entry["read_seconds"] = round(time.monotonic() - started, 1)
                elif isinstance(event, TextDelta):
                    entry["chars"] = entry.get("chars", 0) + len(event.text)
                    entry.setdefault("first_text_seconds", round(time.monotonic() - started, 1))
                yield event
        finally:
            entry["seconds"] = round(time.monotonic() - started, 1)

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


@dataclass
class Model:
    """The local model the bench asks: Baton's own engine (the `local` provider's), kept
    loaded across sessions by holding a reference to it."""

    path: Path
    context: int
    base_url: str

    def settings(self) -> dict[str, Any]:
        """Client settings that make Baton's `local` provider use this very engine."""
        return {
            "provider": "local",
            # Stated, so a session summarised by the scripted summariser gets the same window.
            "contextWindow": self.context,
            "local": {
                "modelPath": str(self.path),
                "contextSize": self.context,
                "promptCache": False,
            },
        }


def summary_source(notes: list[str]) -> str:
    """Who wrote the committed summary, from the record's notes."""
    if any(n.startswith("used a summary built from") for n in notes):
        return "code (fallback)"
    return ""


async def measure(
    size: int,
    seed: int,
    model: Model | None,
    model_summary: bool,
    scripted: Any,
    window: int | None = None,
    baseline: bool = True,
) -> dict[str, Any]:
    """Build one session, ask the probes on the full transcript (when the model is used),
    send the session's last request as a turn would (it leaves the prefix, tools included,
    in llama.cpp's cache), compact it by hand, ask them on Baton's view; return the
    figures."""
    from baton.app import build_app
    from baton.compaction.recall import RecallSource

    with tempfile.TemporaryDirectory(prefix="baton-probes-") as tmp:
        home = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(home / "data")
        os.environ["XDG_CONFIG_HOME"] = str(home / "config")
        os.environ["XDG_CACHE_HOME"] = str(home / "cache")
        ws = home / "ws"
        ws.mkdir()
        settings: dict[str, Any] = {"compaction": {"strategy": "native"}}
        if model is not None:
            settings |= model.settings()  # the window is the model's context (local.contextSize)
        else:
            settings["contextWindow"] = window or max(16_000, int(size * 1.6))
        app = build_app(ws, NullChannel(), environ={}, client_settings=settings)
        sid = app.sessions.new_session(p.SessionNewParams(title="probes")).session_id
        state = app.sessions.state(sid)
        session = Session(app, state, seed)
        session.build(size)
        current = app.sessions.settings()
        identity = app.sessions.identity_for(state, current)
        if model is not None and model_summary:
            provider = Counting(app.sessions.provider_for(state, current))
        else:
            answers = [pr.answer for pr in session.probes]
            provider = Counting(scripted(random.Random(seed), answers))
        app.sessions.models.providers = OneProvider(provider)
        full = app.sessions.build_context(state, current, identity)
        result: dict[str, Any] = {}
        if model is not None:
            result["full_answers"] = answer_probes(model, full.request, session.probes)
            if not result["full_answers"]["fits"] and baseline:
                result["newest_answers"] = answer_newest(
                    model, full.request, session.probes, result["full_answers"]["tokens"]
                )
        if model is not None and model_summary:
            # The probes are sent without tools; a turn is not. A session's last step as
            # Baton sent it (tools and all, one token answered) is what the summary request
            # extends, so it is in the engine's cache when a compaction comes after a turn.
            warm_started = time.monotonic()
            async for _ in provider.inner.stream(replace(full.request, max_output_tokens=1)):
                pass
            result["warm_seconds"] = round(time.monotonic() - warm_started, 1)
        started = time.monotonic()
        record = await app.compaction.engine.compact(state, CompactRequest("manual"))
        seconds = time.monotonic() - started
        after = app.sessions.build_context(state, current, identity)
        if model is not None:
            result["baton_answers"] = answer_probes(model, after.request, session.probes)
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
    sent = lambda b: b.tokens - sum(x.tokens for x in b.parts if x.kind == "tools")  # noqa: E731
    # A summary that stopped at its cap is accepted only if no note says it was completed
    # by one more call or rejected for the code-built one.
    handled = ("completed by one more call", "rejected", "used a summary built from")
    return result | {
        "size": size,
        "seed": seed,
        "flavour": session.flavour,
        "probes": len(session.probes),
        "full_tokens": sent(full),
        "baton_tokens": sent(after),
        "in_view": len(in_view),
        "recall": len(in_view) + len(recalled),
        "missing": [pr.answer for pr in session.probes if pr not in in_view and pr not in recalled],
        "recalled": [pr.answer for pr in recalled],
        "summariser": "local model" if model is not None and model_summary else "scripted",
        "summary_source": summary_source(notes)
        or ("the model" if model is not None and model_summary else "the scripted summariser"),
        "summary_calls": provider.calls,
        "summary_log": provider.log,
        "summary_cut": provider.cut,
        "accepted_cut": provider.cut > 0 and not any(h in n for n in notes for h in handled),
        "corrections": [n for n in notes if n.startswith("corrected")],
        "notes": notes,
        "summary": record.summary or "",
        "committed": record.committed,
        "compaction_seconds": round(seconds, 1),
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


def answer_probes(model: Model, request: ModelRequest, probes: list[Probe]) -> dict[str, Any]:
    """Every probe appended, one at a time, to the same view: the view is a shared prefix
    that llama.cpp's prompt cache reads once. A view over the model's context is not
    answered at all (`fits: false`, with the model's count of it)."""
    from baton.providers.openai_chat import to_chat_messages

    return answer_messages(model, to_chat_messages(request.instructions, request.items), probes)


# Room the probe's question and its answer need beside the view, in the model's tokens.
PROBE_ROOM = 600


def newest_that_fits(
    messages: list[dict[str, Any]], counted: int, context: int
) -> list[dict[str, Any]]:
    """The baseline for a transcript the model's context cannot hold: what an agent that
    only drops its oldest messages would send. The system message, then the newest
    messages whose share of `counted` (the model's count of all of them) fits, starting
    at a message of the person's."""
    size = [len(json.dumps(m, ensure_ascii=False)) for m in messages]
    rate = counted / sum(size)
    system, rest, rest_size = messages[:1], messages[1:], size[1:]
    room = context - PROBE_ROOM - size[0] * rate
    kept = len(rest)
    used = 0.0
    while kept > 0 and used + rest_size[kept - 1] * rate <= room:
        used += rest_size[kept - 1] * rate
        kept -= 1
    tail = rest[kept:]
    while tail and tail[0].get("role") != "user":
        tail = tail[1:]
    return system + tail


def answer_newest(
    model: Model, request: ModelRequest, probes: list[Probe], counted: int
) -> dict[str, Any]:
    """The probes on the newest part of the full transcript that fits the model's context
    (`newest_that_fits`), shrunk by a tenth while llama.cpp still counts it over."""
    from baton.providers.openai_chat import to_chat_messages

    messages = to_chat_messages(request.instructions, request.items)
    context = model.context
    for _ in range(6):
        kept = newest_that_fits(messages, counted, context)
        answers = answer_messages(model, kept, probes)
        if answers["fits"]:
            return answers | {"messages_kept": len(kept) - 1, "messages_all": len(messages) - 1}
        context = int(context * 0.9)
    return {"fits": False, "tokens": 0}


def answer_messages(
    model: Model, messages: list[dict[str, Any]], probes: list[Probe]
) -> dict[str, Any]:
    right = counted = 0
    missed: list[str] = []
    times: list[float] = []
    for probe in probes:
        question = (
            "Answer from the conversation above, in one short line, without using tools: "
            + probe.question
        )
        started = time.monotonic()
        try:
            reply, prompt_tokens = ask(
                model.base_url, [*messages, {"role": "user", "content": question}], 900
            )
        except urllib.error.HTTPError as exc:
            body = exc.read().decode(errors="replace")
            if exc.code == 400 and "context" in body:
                detail = json.loads(body).get("error", {}) if body.startswith("{") else {}
                return {"fits": False, "tokens": int(detail.get("n_prompt_tokens") or 0)}
            raise
        times.append(time.monotonic() - started)
        counted = counted or prompt_tokens
        if probe.passed(reply):
            right += 1
        else:
            missed.append(f"{probe.question} -> {reply.strip()[:70]!r}")
        print(f"    {probe.question[:60]!r} -> {reply.strip()[:70]!r}", file=sys.stderr, flush=True)
    return {
        "fits": True,
        "right": right,
        "tokens": counted,
        "missed": missed,
        "first_seconds": round(times[0], 1),
        "later_seconds_median": round(sorted(times[1:])[len(times[1:]) // 2], 1)
        if len(times) > 1
        else 0.0,
        "seconds": round(sum(times), 1),
    }


def run(
    small: bool,
    seeds: list[int],
    sizes: list[int],
    model_max: int,
    summary_max: int,
    context: int,
    out: Path | None,
    scripted: Any,
    baseline: bool = True,
) -> None:
    """`scripted`: the summariser for sessions the model does not summarise
    (bench/fidelity.py's DroppingSummariser: keeps each fact with probability 0.5).
    `baseline`: also ask the probes on the newest part of a transcript over the model's
    context (the costliest prompt of a run: on a busy 2-core machine its first probe
    alone can pass the 900 s a probe may take).
    The model answers sessions up to `model_max` tokens and writes the summary of those
    up to `summary_max`."""
    from baton.local.engine import EngineConfig, default_manager
    from baton.local.model_files import DEFAULT_MODEL, QWEN_CODER_0_5B, model_path

    spec = QWEN_CODER_0_5B if small else DEFAULT_MODEL
    path = model_path(spec)  # before the bench points XDG_DATA_HOME at a throwaway home
    model: Model | None = None
    engine = None
    if any(size <= model_max for size in sizes):
        if not path.exists():
            print(f"model not installed ({path}): sizes and recall only")
        else:
            from baton.config import Settings

            local = Settings.model_validate(
                {"local": {"modelPath": str(path), "contextSize": context, "promptCache": False}}
            ).local
            engine = default_manager().acquire(EngineConfig.from_settings(local))
            started = time.monotonic()
            model = Model(path, context, engine.start())
            print(f"model loaded in {time.monotonic() - started:.0f} s", file=sys.stderr)
    print(f"model: {path.name if model else 'none'} (n_ctx {context:,})", flush=True)
    for size in sizes:
        for seed in seeds:
            started = time.monotonic()
            use = model if size <= model_max else None
            m = asyncio.run(
                measure(size, seed, use, size <= summary_max, scripted, baseline=baseline)
            )
            m["seconds"] = round(time.monotonic() - started, 1)
            m["model"] = path.name if use else None
            m["context"] = context
            print_row(m)
            for note in m["notes"]:
                print(f"    note: {note}", file=sys.stderr)
            if "warm_seconds" in m:
                print(
                    f"    the session's last request sent first: {m['warm_seconds']} s",
                    file=sys.stderr,
                )
            for call in m["summary_log"]:
                print(f"    summary call: {call}", file=sys.stderr)
            for side in ("full_answers", "newest_answers", "baton_answers"):
                for miss in (m.get(side) or {}).get("missed", []):
                    print(f"    {side} missed: {miss}", file=sys.stderr)
            if m["missing"]:
                print(f"    not in view nor one recall: {m['missing']}", file=sys.stderr)
            if out is not None:
                with out.open("a") as handle:
                    handle.write(json.dumps(m) + "\n")
    if engine is not None:
        default_manager().release(engine)


def print_row(m: dict[str, Any]) -> None:
    n = m["probes"]
    full, baton = m.get("full_answers"), m.get("baton_answers")
    if full is None:
        acc = "not model-answered"
    elif not baton["fits"]:
        acc = f"not even Baton's view fits ({baton['tokens']:,} > {m['context']:,} t)"
    elif not full["fits"]:
        acc = (
            f"full transcript does not fit ({full['tokens']:,} > {m['context']:,} t); "
            f"view {baton['right']}/{n} of the known answers ({baton['tokens']:,} t)"
        )
        newest = m.get("newest_answers")
        if newest and newest.get("fits"):
            ratio = baton["right"] / newest["right"] if newest["right"] else float("nan")
            acc += (
                f"; its newest part that fits ({newest['messages_kept']} of"
                f" {newest['messages_all']} messages, {newest['tokens']:,} t)"
                f" {newest['right']}/{n}, view / newest {ratio:.2f}"
            )
    else:
        ratio = baton["right"] / full["right"] if full["right"] else float("nan")
        acc = (
            f"full {full['right']}/{n} ({full['tokens']:,} t)  view {baton['right']}/{n}"
            f" ({baton['tokens']:,} t)  ratio {ratio:.2f}"
        )
    print(
        f"{m['size']:>7,} seed {m['seed']} {m['flavour']:<6}  tokens {m['full_tokens']:,} →"
        f" {m['baton_tokens']:,} ({m['baton_tokens'] / m['full_tokens']:.0%})"
        f"  in view {m['in_view']}/{n}, view or 1 recall {m['recall']}/{n}"
        f"  summary by {m['summary_source']} ({m['summary_calls']} calls,"
        f" {m['summary_cut']} at cap, accepted cut: {'yes' if m['accepted_cut'] else 'no'})"
        f"  corrections {len(m['corrections'])}  {acc}  [{m['seconds']:.0f} s]",
        flush=True,
    )


def report(path: Path) -> None:
    """Per session and totals from the lines `run` wrote (the latest line per session)."""
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            m = json.loads(line)
            rows[(m["size"], m["seed"])] = m
    for m in sorted(rows.values(), key=lambda r: (r["size"], r["seed"])):
        print_row(m)
        for note in m["corrections"]:
            print(f"    claim check: {note}")  # to be read: a true statement removed is a false one
        for call in m["summary_log"]:
            if m["summariser"] == "local model":
                print(f"    summary call: {call}")
    by_size: dict[int, list[dict[str, Any]]] = {}
    for m in rows.values():
        by_size.setdefault(m["size"], []).append(m)
    everything = list(rows.values())
    for label, runs in [*sorted(by_size.items()), ("all", everything)]:
        probes = sum(r["probes"] for r in runs)
        line = (
            f"{label if isinstance(label, str) else f'{label:,}'}: {len(runs)} sessions,"
            f" tokens {sum(r['baton_tokens'] for r in runs) / sum(r['full_tokens'] for r in runs):.0%}"
            f" of the full transcript; in view {sum(r['in_view'] for r in runs)}/{probes},"
            f" in view or 1 recall {sum(r['recall'] for r in runs)}/{probes};"
            f" summaries by the model {sum(r['summary_source'] == 'the model' for r in runs)}"
            f"/{len(runs)}, cut at cap {sum(r['summary_cut'] for r in runs)},"
            f" accepted cut {sum(r['accepted_cut'] for r in runs)};"
            f" claim corrections {sum(len(r['corrections']) for r in runs)}"
        )
        answered = [r for r in runs if (r.get("baton_answers") or {}).get("fits")]
        both = [r for r in answered if r["full_answers"]["fits"]]
        if both:
            full = sum(r["full_answers"]["right"] for r in both)
            baton = sum(r["baton_answers"]["right"] for r in both)
            n = sum(r["probes"] for r in both)
            line += (
                f"; where the full transcript fits ({len(both)}): view {baton}/{n} vs full"
                f" {full}/{n} = {baton / full:.2f} of the full transcript's accuracy, at"
                f" {sum(r['baton_answers']['tokens'] for r in both) / sum(r['full_answers']['tokens'] for r in both):.0%}"
                " of its tokens by the model's count"
            )
        alone = [r for r in answered if not r["full_answers"]["fits"]]
        if alone:
            right = sum(r["baton_answers"]["right"] for r in alone)
            n = sum(r["probes"] for r in alone)
            line += (
                f"; where it does not fit ({len(alone)}): view {right}/{n} of the known answers"
                " (no full-transcript figure)"
            )
            newest = [r for r in alone if (r.get("newest_answers") or {}).get("fits")]
            if newest:
                kept = sum(r["newest_answers"]["right"] for r in newest)
                view = sum(r["baton_answers"]["right"] for r in newest)
                n = sum(r["probes"] for r in newest)
                line += (
                    f"; against the newest part that fits n_ctx ({len(newest)}): view {view}/{n}"
                    f" vs newest {kept}/{n}"
                    + (f" = {view / kept:.2f}" if kept else "")
                    + ", at "
                    + f"{sum(r['baton_answers']['tokens'] for r in newest) / sum(r['newest_answers']['tokens'] for r in newest):.0%}"
                    + " of its tokens"
                )
        print(line)
