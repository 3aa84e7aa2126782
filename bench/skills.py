"""What skills cost in context: the catalog, a load, and a loaded skill across compactions.

    python bench/skills.py [--window 128000] [--body-tokens 1500]

Baton's real core runs in this process (build_app, trusted workspace) against the
fake OpenAI Responses server of the tests (tests/fake_llm, 127.0.0.1), whose
scripted answers stand in for the model. Tokens are characters / 4 of what is
sent (baton.agent.tokens.estimate for the catalog; the request as the provider sees
it for prefixes), not a tokenizer.

1. Catalog: the `<baton:skills>` block and the `skill` tool's spec for 10 and
   100 skills with descriptions of 120-400 characters, in a window of
   `--window` tokens (budget 2%) and in a 16k window (where the budget cuts).
2. Prefix reuse across a turn that loads a skill: the request after the
   `skill` call against the one before it (the part a prompt cache serves), and
   the next turn's first request against the last of the loading turn.
3. A loaded skill over a 3-compaction session: the body (`--body-tokens`) is
   loaded once; each round reads files, compacts, and goes on. For each view
   (the original and one per compaction) the copies of the body per request
   and the tokens it costs in that view (counted once per view, as a prompt
   cache serves the repeats).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))

from tests.fake_llm import FakeLLM, text, tool_call  # noqa: E402
from tests.fake_llm.prefix import shared  # noqa: E402
from tests.fake_llm.records import RecordedRequest  # noqa: E402

from baton import protocol as p  # noqa: E402
from baton.agent.events import NullChannel  # noqa: E402
from baton.agent.tokens import estimate  # noqa: E402
from baton.app import App, build_app  # noqa: E402
from baton.config import Settings  # noqa: E402
from baton.skills import catalog  # noqa: E402
from baton.skills.discovery import Scanner  # noqa: E402
from baton.skills.tool import input_model  # noqa: E402
from baton.trust import Trust  # noqa: E402

WORDS = [
    "review",
    "deploy",
    "release",
    "migrate",
    "profile",
    "benchmark",
    "document",
    "triage",
    "refactor",
    "audit",
    "changelog",
    "schema",
    "fixture",
    "cache",
    "index",
    "rollout",
    "rollback",
    "incident",
    "oncall",
    "staging",
]
MARK = "SKILL-BODY-MARK"


def description(n: int) -> str:
    """120-400 characters: what a skill is for and when to use it, as people write them."""
    base = (
        f"{WORDS[n % len(WORDS)].capitalize()} work for the {WORDS[(n * 7) % len(WORDS)]} "
        f"service: the steps this team follows, the checks to run before and after, and "
        f"whom to tell. Use when asked to {WORDS[(n * 3) % len(WORDS)]} or "
        f"{WORDS[(n * 5) % len(WORDS)]} anything in it."
    )
    extra = " Covers the scripts in this folder and the usual failures." * (n % 5)
    return (base + extra)[:400]


def write_skills(root: Path, count: int, body_tokens: int = 200) -> list[str]:
    names = []
    for n in range(count):
        name = f"{WORDS[n % len(WORDS)]}-{n}"
        folder = root / ".baton" / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        body = f"# {name}\n\n{MARK}-{name}\n\n" + (
            "1. Run the check and read its output before going on.\n" * (body_tokens // 13)
        )
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description(n)}\n---\n\n{body}"
        )
        names.append(name)
    return names


def catalog_figures(window: int) -> None:
    print("1. Catalog (names and descriptions; the body enters only when loaded)")
    print(f"  {'skills':>6} {'window':>8} {'budget':>7} {'block':>7} {'tool spec':>9} {'cut':>5}")
    for count in (10, 100):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_skills(root, count)
            snapshot = Scanner(root, person=root / "person").scan(trusted=True)
            skills = snapshot.catalog()
            spec = input_model([s.name for s in skills]).model_json_schema()
            tool_tokens = estimate(str(spec)) + 60
            for size in (window, 16_384):
                budget = int(Settings().skills.catalog_share * size)
                block = catalog.render(skills, budget) or ""
                cut = _cut(block)
                print(
                    f"  {count:>6} {size:>8,} {budget:>7,} {estimate(block):>7,} "
                    f"{tool_tokens:>9,} {cut:>5}"
                )


def _cut(block: str) -> int:
    """How many descriptions the block says it shortened."""
    marker = " descriptions are shortened"
    if marker not in block:
        return 0
    return int(block.split(marker)[0].rsplit("(", 1)[1].split(" of ")[0])


def start(llm: FakeLLM, home: Path, body_tokens: int) -> tuple[App, list[str]]:
    os.environ["XDG_DATA_HOME"] = str(home / "data")
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")
    ws = home / "ws"
    ws.mkdir()
    names = write_skills(ws, 10, body_tokens)
    (ws / "notes.txt").write_text("a line of the notes file, read again and again\n" * 400)
    app = build_app(
        ws,
        NullChannel(),
        environ={"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": llm.base_url},
        client_settings={
            "compaction": {"strategy": "native", "auto": False, "keepRecentTokens": 1500},
            "agent": {"nudgeNoTool": False},
        },
        trust=Trust(True, "editor"),
    )
    return app, names


def reuse(before: RecordedRequest, after: RecordedRequest) -> float:
    return shared(before.segments, after.segments).chars / before.segments.chars


async def session_figures(body_tokens: int) -> None:
    with FakeLLM() as llm, tempfile.TemporaryDirectory() as tmp:
        app, names = start(llm, Path(tmp), body_tokens)
        try:
            sid = app.sessions.new_session(p.SessionNewParams()).session_id
            name = names[1]
            mark = f"{MARK}-{name}"
            llm.add(tool_call("read", {"path": "notes.txt"}))
            llm.add(tool_call("skill", {"name": name}))
            llm.add(text("Loaded; following it."))
            await app.sessions.prompt(p.PromptParams(session_id=sid, text="deploy it"))
            first, before, after = llm.model_requests[-3:]
            llm.add(text("Next."))
            await app.sessions.prompt(p.PromptParams(session_id=sid, text="go on"))
            following = llm.model_requests[-1]
            print("\n2. Prefix reuse across a turn that loads a skill")
            print(f"  step before the load vs the one before it:  {reuse(first, before):.1%}")
            print(f"  request after the load vs the one before:   {reuse(before, after):.1%}")
            print(f"  next turn vs the loading turn's last:        {reuse(after, following):.1%}")
            same = (
                first.segments.instructions == following.segments.instructions
                and first.segments.tools == following.segments.tools
            )
            print(f"  instructions and tools unchanged: {same}")

            outputs = list(after.tool_outputs().values())
            loaded = next(o for o in outputs if mark in o)
            body = estimate(loaded)
            views: list[list[RecordedRequest]] = [llm.model_requests[-3:]]
            for round_ in range(3):
                for n in range(3):
                    llm.add(tool_call("read", {"path": "notes.txt"}))
                    llm.add(text(f"Read, pass {n}."))
                    await app.sessions.prompt(
                        p.PromptParams(session_id=sid, text=f"read the notes, pass {n}")
                    )
                views[-1] += llm.model_requests[-6:]
                llm.on_request(lambda req: text("## Summary\nWorking.") if req.is_summary else None)
                record = await app.compaction.compact(sid)
                llm.on_request(lambda req: None)
                assert record.committed, record
                start_at = len(llm.model_requests)
                llm.add(text(f"After compaction {round_ + 1}."))
                await app.sessions.prompt(p.PromptParams(session_id=sid, text="continue"))
                views.append(list(llm.model_requests[start_at:]))
            print("\n3. A loaded skill over a 3-compaction session")
            print(f"  skill block: {body:,} tokens")
            total = 0
            for index, requests in enumerate(views):
                copies = max(r.input_text().count(mark) for r in requests)
                cost = body if copies else 0
                total += cost
                label = "before any compaction" if index == 0 else f"after compaction {index}"
                print(
                    f"  view {index} ({label}): {len(requests)} requests, "
                    f"{copies} copy per request, {cost:,} tokens in this view"
                )
            sent = sum(r.input_text().count(mark) for v in views for r in v) * body
            requests = sum(len(v) for v in views)
            print(
                f"  total: {total:,} tokens over {len(views)} views ({total / body:.0f} x the "
                f"block, once per view); as input over all {requests} requests {sent:,} "
                "(a prompt cache serves every repeat within a view)"
            )
        finally:
            await app.close()


async def main(args: argparse.Namespace) -> int:
    catalog_figures(args.window)
    await session_figures(args.body_tokens)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=128_000)
    parser.add_argument("--body-tokens", type=int, default=1500)
    sys.exit(asyncio.run(main(parser.parse_args())))
