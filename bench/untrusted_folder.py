"""What an untrusted clone with a huge `.baton/agents/` costs the server (issue 46).

    python bench/untrusted_folder.py [--files 150000] [--runs 5] [--server DIR]

Starts the real server (`baton serve`, through tests/harness.py) on two workspaces
in the same run: one with `--files` agent files in `.baton/agents/` and one without
(the baseline), both untrusted, against the scripted fake model (tests/fake_llm).
For each it prints the median over `--runs` of:

- `session/list` (ms),
- `session/new` (ms),
- a turn of three model steps (three `glob` calls, then an answer), and the gap
  between its model requests (ms),

the ratio of each to the baseline, and the size of `baton/workspace/trust`'s
`ignored` (characters, lines). `--server DIR` runs another checkout's
`server/` (e.g. an export of the commit before the fix) for a before/after.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))

from tests.fake_llm import FakeLLM, text, tool_call  # noqa: E402
from tests.harness import TEST_KEY, server_env, start_client, stop_client  # noqa: E402


def fill(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    body = "---\ndescription: d\n---\nx\n"
    for n in range(count):
        (folder / f"a{n:06d}.md").write_text(body)


async def measure(workspace: Path, home: Path, runs: int, server: Path | None) -> dict[str, float]:
    with FakeLLM() as llm:
        extra = {"PYTHONPATH": str(server)} if server else None
        env = server_env(home, {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": TEST_KEY}, extra)
        baton = await start_client(workspace, env, trusted=False)
        try:
            lists, news, turns, gaps = [], [], [], []
            for _ in range(runs):
                start = time.perf_counter()
                sid = await baton.new_session()
                news.append(time.perf_counter() - start)
                start = time.perf_counter()
                await baton.request("baton/session/list", {})
                lists.append(time.perf_counter() - start)
                for n in range(3):
                    llm.add(tool_call("glob", {"pattern": f"*.{n}"}))
                llm.add(text("done"))
                before = len(llm.model_requests)
                arrived: list[float] = []
                start = time.perf_counter()
                task = asyncio.create_task(baton.prompt(sid, "look"))
                while not task.done():
                    if len(llm.model_requests) > before + len(arrived):
                        arrived.append(time.perf_counter())
                    await asyncio.sleep(0.002)
                await task
                turns.append(time.perf_counter() - start)
                gaps += [b - a for a, b in itertools.pairwise(arrived)]
            trust = await baton.request("baton/workspace/trust", {})
            ignored = trust["ignored"]
            return {
                "list": statistics.median(lists) * 1000,
                "new": statistics.median(news) * 1000,
                "turn": statistics.median(turns) * 1000,
                "gap": statistics.median(gaps) * 1000 if gaps else 0.0,
                "ignored_chars": len(json.dumps(ignored)),
                "ignored_lines": len(ignored),
            }
        finally:
            await stop_client(baton)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=150_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--server", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        results = {}
        for name, count in (("baseline", 0), ("agents", args.files)):
            workspace, home = base / name / "ws", base / name / "home"
            workspace.mkdir(parents=True)
            home.mkdir(parents=True)
            fill(workspace / ".baton" / "agents", count)
            results[name] = await measure(workspace, home, args.runs, args.server)
    plain, big = results["baseline"], results["agents"]
    print(f"untrusted workspace, {args.files:,} files in .baton/agents, median of {args.runs}")
    print(f"{'':28} {'without':>10} {'with':>10} {'ratio':>7}")
    for key, label in (
        ("list", "session/list (ms)"),
        ("new", "session/new (ms)"),
        ("turn", "turn of 3 steps (ms)"),
        ("gap", "between model requests (ms)"),
    ):
        ratio = big[key] / plain[key] if plain[key] else float("nan")
        print(f"{label:28} {plain[key]:10.1f} {big[key]:10.1f} {ratio:6.2f}x")
    print(f"{'ignored (characters)':28} {plain['ignored_chars']:10,} {big['ignored_chars']:10,}")
    print(f"{'ignored (lines)':28} {plain['ignored_lines']:10,} {big['ignored_lines']:10,}")


if __name__ == "__main__":
    asyncio.run(main())
