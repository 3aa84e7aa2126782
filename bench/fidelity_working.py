"""Working sessions compacted three times under a small window: which of the exact facts
Baton tracks stay in the view, which are one `recall` away, and what the view costs.

    python bench/fidelity.py --working [--seeds 1,2,3] [--sizes 6000,40000,200000]
        [--window 16384] [--children 0]

A working session (in process, the real app and store) does what a day at a
project does: it reads a config file and `.env`, prints versions, creates a test
file and a helper, runs the same test command again and again (failing three
times with three distinct errors, then passing), fails and fixes a lint run,
rules out two hypotheses, hears the person's constraints and values, writes a
plan with a blocked step; and in between it reads many files it never changes,
edits others, runs other commands and reads long outputs. The session is grown
in three parts and compacted by hand after each (three compactions). The summary
is a placeholder (every section `none`), so only Baton's own blocks are measured.

Per session, after the third compaction: the planted facts in the view, in the
view or one `recall` away (a search for the fact, or the `[ledger:…]` ids the
view names), the facts the *unbounded* ledger and requests block would hold
(the denominator of the issue's 90% target), the view's tokens against the
window, and the ledger's tokens (children's lines included). `--children N`
adds N task children of 40 files and 10 commands each (the ledger's children's
lines), and reports whether each child's record is one `recall` away.

Set BATON_SERVER to another checkout's `server/` to measure its code (before).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from baton import protocol as p
from baton.agent.events import NullChannel
from baton.agent.tokens import estimate
from baton.compaction.engine import CompactRequest
from baton.store.model import StoredText, ToolResultRecord, part_from_json
from baton.tools.base import Fact
from fidelity import IDENTITY, DroppingSummariser, StaticProviders, folded_records
from fidelity_probes import FLAVOURS

Call = tuple[str, dict[str, Any], str, list[Fact], bool]


class Working:
    """Writes a working session into Baton's store; knows its planted facts."""

    def __init__(self, app: Any, state: Any, seed: int) -> None:
        self.app, self.state, self.rng = app, state, random.Random(seed)
        self.flavour = list(FLAVOURS)[(seed - 1) % len(FLAVOURS)]
        self.calls = 0
        self.n = 0
        # (label, exact text the view must hold)
        self.facts: list[tuple[str, str]] = []
        # A child's id and one of its files (what its record must return).
        self.children: list[tuple[str, str]] = []

    def person(self, text: str) -> None:
        store = self.app.sessions.store
        self.state.add(store.append_message(self.state.id, "user", "prompt", [StoredText(text)]))

    def step(self, say: str, tools: list[Call], meta: dict[str, Any] | None = None) -> None:
        parts = [StoredText(say)] if say else []
        results = []
        for name, args, output, facts, ok in tools:
            self.calls += 1
            call_id = f"call_{self.calls:05d}"
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

    @staticmethod
    def read(path: str, text: str) -> Call:
        numbered = "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.splitlines(), 1))
        return ("read", {"path": path}, numbered, [Fact("read", path=path)], True)

    @staticmethod
    def bash(command: str, output: str, code: int) -> Call:
        return (
            "bash",
            {"command": command},
            f"{output}\n[exit code {code}]",
            [Fact("command", command=command, exit_code=code)],
            code == 0,
        )

    @staticmethod
    def edit(path: str) -> Call:
        args = {"path": path, "old_string": "return total", "new_string": "return total or 0"}
        return ("edit", args, f"Edited {path}: 1 replacement.", [Fact("modified", path=path, action="modified")], True)  # fmt: skip

    @staticmethod
    def write(path: str, text: str) -> Call:
        args = {"path": path, "content": text}
        return ("write", args, f"Wrote {path} ({len(text)} bytes).", [Fact("modified", path=path, action="created")], True)  # fmt: skip

    def plant(self, label: str, text: str) -> None:
        self.facts.append((label, text))

    def busy(self, tokens: int, tag: str) -> None:
        """A working stretch worth about `tokens`: reads of files never changed, edits of
        others, the test command passing, other commands (some failing once, then
        passing) and long outputs."""
        r = self.rng
        made = 0
        while made < tokens:
            self.n += 1
            n = self.n
            self.person(f"Now the {tag} part {n}.")
            body = "\n".join(
                f"def {tag}_helper_{n}_{i}(value):\n    return value * {r.randint(2, 97)}"
                for i in range(r.randint(8, 30))
            )
            tools = [self.read(f"src/{tag}/mod_{n}.py", body)]
            out = len(body)
            if n % 2 == 0:
                tools.append(self.edit(f"src/{tag}/changed_{n}.py"))
            if n % 3 == 0:
                tools.append(self.bash(self.test, f"{r.randint(20, 30)} passed in 0.{n % 9}s", 0))
            if n % 4 == 0:
                listing = "\n".join(f"src/{tag}/mod_{n}.py:{i}: value" for i in range(60))
                tools.append(self.bash(f"grep -rn value_{n} src/{tag}", listing, 0))
                out += len(listing)
            if n % 3 == 1:
                unit = f"pytest tests/{tag}/test_unit_{n}.py -q"
                if n % 2:
                    fail = f"E   assert {n} == {n + 1}\n1 failed, 3 passed"
                    tools.append(self.bash(unit, fail, 1))
                tools.append(self.bash(unit, "4 passed in 0.1s", 0))
            if n % 5 == 0:
                tools.append(
                    self.bash(f"git diff --stat src/{tag}", f" src/{tag}/changed_{n}.py | 2 +-", 0)
                )
            self.step(f"Working through {tag} part {n}. " + "Nothing surprising there. " * 4, tools)
            made += out // 4 + 150

    def build(self, size: int, part: int) -> None:
        """One of the session's three parts (0, 1, 2), about size / 3 tokens each."""
        r = self.rng
        f = FLAVOURS[self.flavour]
        share = max(300, int(size * 1.13) // 3 - 1_200) // 3
        if part == 0:
            keep_out = r.choice(["vendor", "legacy", "third_party", "generated"])
            date = f"2026-{r.randint(1, 12):02d}-{r.randint(10, 28)}"
            bucket = f"s3://acme-{r.choice(['staging', 'qa'])}-{r.randint(100, 999)}"
            ticket = f"{r.choice(['OPS', 'REL'])}-{r.randint(1000, 9999)}"
            self.module = r.choice(["billing", "orders", "invoices", "payments"])
            self.test = f["test"].format(module=self.module)
            self.person(
                f"Fix the failing {self.module} tests. Never touch the {keep_out}/ directory. "
                f"The staging date is {date} and the bucket is {bucket}; the ticket is {ticket}."
            )
            for label, text in [("constraint", f"{keep_out}/"), ("date", date), ("bucket", bucket), ("ticket", ticket)]:  # fmt: skip
                self.plant(label, text)
            port, pool, region = r.randint(8000, 8999), r.randint(5, 40), r.choice(["eu-west-1", "us-east-2"])  # fmt: skip
            values = {"port": port, "region": region, "pool": pool, "module": self.module, "func": "total"}  # fmt: skip
            timeout = r.randint(11, 89)
            self.step(
                "Reading the configuration.",
                [
                    self.read(f["config"], f["config_text"].format(**values)),
                    self.read(".env", f"API_TIMEOUT={timeout}\nLOG_FORMAT=json\n"),
                ],
            )
            self.plant("config port", str(port))
            self.plant("config pool", f["pool"].format(pool=pool).split()[-1])
            self.plant("config region", region)
            self.plant(".env", f"API_TIMEOUT={timeout}")
            ver, pyver = f"2.{r.randint(1, 40)}.{r.randint(0, 9)}", f"3.11.{r.randint(2, 9)}"
            tool = f"0.{r.randint(1, 9)}.{r.randint(10, 99)}"
            self.step(
                "Versions first.",
                [
                    self.bash("pip show httpx", f"Name: httpx\nVersion: {ver}\nSummary: HTTP", 0),
                    self.bash("python --version", f"Python {pyver}", 0),
                    self.bash("ruff --version", f"ruff {tool}", 0),
                ],
            )
            self.plant("version httpx", ver)
            self.plant("version python", f"Python {pyver}")
            self.plant("version ruff", f"ruff {tool}")
            self.test_file = f"tests/test_{self.module}_edge.py"
            self.step(
                "A test for the empty case.",
                [self.write(self.test_file, "def test_empty():\n    assert total([]) == 0\n")],
            )
            self.plant("test file created", self.test_file)
            self.busy(share, "a")
            err1 = f"E   TypeError: unsupported operand type(s) for +: 'NoneType' and 'int' ({r.randint(10, 99)})"  # fmt: skip
            self.step("Running the tests.", [self.bash(self.test, f"collected 9 items\n{err1}\n1 failed, 8 passed in 0.3s", 1)])  # fmt: skip
            self.plant("first error", err1.strip())
            self.busy(share, "b")
            self.step(
                "Hypothesis: a stale cache. Cleared it, same failure: the cache is ruled out.",
                [self.bash("rm -rf .pytest_cache", "", 0)],
            )
            self.plant("hypothesis 1", "the cache is ruled out")
            self.busy(share, "c")
        elif part == 1:
            got = r.randint(40, 60)
            err2 = f"E   AssertionError: assert {got} == {got + 1}"
            source = f"src/{self.module}.py"
            self.step("Fixing the None.", [self.edit(source), self.bash(self.test, f"{err2}\n1 failed, 8 passed in 0.3s", 1)])  # fmt: skip
            self.plant("second error", err2.strip())
            self.plant("file changed", source)
            self.busy(share, "d")
            err3 = f"E   KeyError: 'currency_{r.randint(100, 999)}'"
            self.step("Rounding fixed.", [self.edit(source), self.bash(self.test, f"{err3}\n1 failed, 8 passed in 0.3s", 1)])  # fmt: skip
            self.plant("third error", err3.strip())
            self.step(
                "Hypothesis: the locale. Set LC_ALL=C, same failure: the locale is ruled out.",
                [self.bash("LC_ALL=C true", "", 0)],
            )
            self.plant("hypothesis 2", "the locale is ruled out")
            self.busy(share, "e")
            lint = f"src/{self.module}.py:{r.randint(10, 99)}:80: E501 Line too long (91 > 79)"
            self.step("Lint.", [self.bash("ruff check src", f"{lint}\nFound 1 error.", 1)])
            self.plant("lint error", lint)
            self.step("Lint fixed.", [self.edit(source), self.bash("ruff check src", "All checks passed!", 0)])  # fmt: skip
            self.busy(share, "f")
        else:
            self.step("Keys fixed.", [self.edit(f"src/{self.module}.py"), self.bash(self.test, "9 passed in 0.3s", 0)])  # fmt: skip
            self.plant("test command", f"`{self.test}`")
            level = r.choice(["WARNING", "ERROR"])
            lib = r.choice(["tenacity", "backoff"])
            self.person(f"Use {lib} for the retries. Log level {level} in production.")
            self.plant("log level", f"Log level {level}")
            self.plant("retry library", f"Use {lib}")
            helper = f"src/{self.module}_retry.py"
            self.step("Retries.", [self.write(helper, f"import {lib}\n")])
            self.plant("helper created", helper)
            self.busy(share, "g")
            self.app.plans.write(
                self.state.id,
                f"# Fix {self.module}\n\n- [x] Fix the tests\n"
                "- [!] Deploy to staging: waiting for the deploy credentials\n- [ ] Announce\n",
            )
            self.plant("plan blocked", "Deploy to staging")
            self.busy(share, "h")
            self.step("Tests again.", [self.bash(self.test, "9 passed in 0.3s", 0)])

    def add_children(self, count: int) -> None:
        """`count` task children, each reporting 40 files and 10 commands."""
        for c in range(count):
            child = f"ses_child{c:03d}"
            facts = [
                Fact("modified", path=f"pkg{c}/file_{i}.py", action="modified", session=child)
                for i in range(40)
            ] + [
                Fact(
                    "command",
                    command=f"pytest pkg{c}/test_{i}.py -q",
                    exit_code=i % 2,
                    session=child,
                )
                for i in range(10)
            ]
            self.calls += 1
            call_id = f"call_{self.calls:05d}"
            part = part_from_json(
                "tool_call",
                {
                    "toolCallId": call_id,
                    "name": "task",
                    "input": {"prompt": f"part {c}"},
                    "arguments": json.dumps({"prompt": f"part {c}"}),
                },
            )
            result = ToolResultRecord(call_id, "completed", f"child {c} done", facts)
            store = self.app.sessions.store
            self.state.add(
                store.append_message(self.state.id, "assistant", "step", [part], results=[result])
            )
            self.children.append((child, f"pkg{c}/file_39.py"))


def _texts(message: Any) -> list[str]:
    texts = [message.text()]
    texts += [json.dumps(c.input) for c in message.tool_calls()]
    texts += [r.output for r in message.results.values()]
    return texts


async def measure(size: int, seed: int, window: int, children: int) -> dict[str, Any]:
    from baton.app import build_app
    from baton.compaction.ledger import build_ledger, render_ledger
    from baton.compaction.recall import RecallSource

    with tempfile.TemporaryDirectory(prefix="baton-working-") as tmp:
        home = Path(tmp)
        for key in ("DATA", "CONFIG", "CACHE"):
            os.environ[f"XDG_{key}_HOME"] = str(home / key.lower())
        ws = home / "ws"
        ws.mkdir()
        settings = {"contextWindow": window, "compaction": {"strategy": "native", "auto": False}}
        app = build_app(ws, NullChannel(), environ={}, client_settings=settings)
        app.sessions.models.providers = StaticProviders(DroppingSummariser(random.Random(seed), []))  # type: ignore[assignment]
        sid = app.sessions.new_session(p.SessionNewParams(title="working")).session_id
        state = app.sessions.state(sid)
        session = Working(app, state, seed)
        records = []
        for part in range(3):
            session.build(size, part)
            if part == 2 and children:
                session.add_children(children)
            records.append(await app.compaction.engine.compact(state, CompactRequest("manual")))
        after = app.sessions.build_context(state, app.sessions.settings(), IDENTITY)
        full_tokens = sum(estimate(part_text) for m in state.messages for part_text in _texts(m))
        text = "\n".join(
            getattr(item, "text", "") or getattr(item, "output", "") or ""
            for item in after.request.items
        )
        unbounded = render_ledger(build_ledger(state.messages, None), None)
        requests = next(
            (
                getattr(i, "text", "")
                for i in after.request.items
                if getattr(i, "name", "") == "requests"
            ),
            "",
        )
        recall = RecallSource(app.sessions)
        folded = folded_records(recall, sid, text)
        facts = session.facts
        in_view = [label for label, fact in facts if fact in text]
        held = [
            label for label, fact in facts if fact in unbounded or fact in requests or fact in text
        ]
        reachable = [
            label
            for label, fact in facts
            if fact in text
            or fact in folded
            or "no line" not in recall.recall(sid, call_id=None, query=fact)
        ]
        children_back = sum(
            1
            for child, path in session.children
            if (f"{child}: " in text and path in text) or path in folded
        )
        sizes = {x.kind: x.tokens for x in after.parts}
        tools = sizes.get("tools", 0)
        score = getattr(records[-1], "score", None)
        await app.close()
    return {
        "size": size,
        "seed": seed,
        "full_tokens": full_tokens,
        "view": after.tokens,
        "view_no_tools": after.tokens - tools,
        "window": window,
        "ledger": sizes.get("ledger", 0),
        "requests": sizes.get("requests", 0),
        "summary": sizes.get("checkpoint", 0),
        "facts": len(facts),
        "held": len(held),
        "in_view": len(in_view),
        "in_view_of_held": len([x for x in in_view if x in held]),
        "reachable": len(reachable),
        "missing": [label for label, _ in facts if label not in in_view],
        "children": children,
        "children_back": children_back,
        "committed": [r.committed for r in records],
        "score": score.model_dump(by_alias=True) if score is not None else None,
    }


def run(seeds: list[int], sizes: list[int], window: int, children: int) -> None:
    print(
        f"window {window:,}; three manual compactions, placeholder summary\n"
        "size     seed  tokens full  view (no tools) %win  ledger  requests  facts held by the"
        " unbounded ledger  in view (of held)  in view or 1 recall  children back"
    )
    rows = []
    for size in sizes:
        for seed in seeds:
            r = asyncio.run(measure(size, seed, window, children))
            rows.append(r)
            print(
                f"{size:>7,}  {seed:>4}  {r['full_tokens']:>11,}  {r['view']:>5,} ({r['view_no_tools']:,})"
                f" {100 * r['view'] / window:4.0f}%  {r['ledger']:>6,}  {r['requests']:>8,}"
                f"  {r['held']:>3}/{r['facts']:<3}  {r['in_view']:>3} ({r['in_view_of_held']}/{r['held']})"
                f"  {r['reachable']:>3}/{r['facts']:<3}"
                f"  {r['children_back']}/{r['children']}"
            )
            print(f"         missing from view: {', '.join(r['missing']) or 'none'}")
            if r["score"]:
                print(f"         score: {r['score']}")
    if os.environ.get("BENCH_JSON"):
        print(json.dumps(rows), file=sys.stderr)
