"""Server figures: cold start, JSON-RPC round trip, and the agent loop's own cost per step.

    python bench/server.py

Targets: cold start to the `initialize` result under 0.5 s (median of
10), `baton/session/list` round trip p50 under 2 ms (of 1,000), and per-step
overhead excluding the model (context build + store writes) under 5 ms at
5,000 messages.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rpc import RawServer, isolated_env, temp_home


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


BARE_PYGLS = "from pygls.lsp.server import LanguageServer\nLanguageServer('bare', '0').start_io()\n"


def cold_start(runs: int = 10, *, bare: bool = False) -> list[float]:
    """Spawn to `initialize` result; `bare` measures an empty pygls server (the floor)."""
    times = []
    with temp_home() as tmp:
        home = Path(tmp)
        ws = home / "ws"
        ws.mkdir()
        env = isolated_env(home)
        command = [sys.executable, "-c", BARE_PYGLS] if bare else None
        for _ in range(runs):
            started = time.perf_counter()
            server = RawServer(ws, env, command=command)
            server.initialize()
            times.append(time.perf_counter() - started)
            server.close()
    return times


def round_trips(count: int = 1000) -> list[float]:
    with temp_home() as tmp:
        home = Path(tmp)
        ws = home / "ws"
        ws.mkdir()
        server = RawServer(ws, isolated_env(home))
        server.initialize()
        for _ in range(5):
            server.request("baton/session/new", {})
        times = []
        for _ in range(count):
            started = time.perf_counter()
            reply = server.request("baton/session/list", {})
            times.append(time.perf_counter() - started)
            assert "result" in reply, reply
        server.close()
    return times


def step_overhead(messages: int, steps: int = 50, *, with_plan: bool = False) -> list[float]:
    """Time what the loop adds to each step: build the request, store the step and its result."""
    import os

    from baton import protocol as p
    from baton.agent.events import NullChannel
    from baton.app import build_app
    from baton.providers.base import ProviderIdentity, Route
    from baton.store.model import StoredText, ToolResultRecord, part_from_json
    from baton.tools.base import Fact

    with temp_home() as tmp:
        home = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(home / "data")
        os.environ["XDG_CONFIG_HOME"] = str(home / "config")
        ws = home / "ws"
        ws.mkdir()
        app = build_app(ws, NullChannel(), environ={})
        service = app.sessions
        sid = service.new_session(p.SessionNewParams()).session_id
        state = service.state(sid)
        store = service.store
        for index in range(messages // 2):
            state.add(
                store.append_message(sid, "user", "prompt", [StoredText(f"question {index} " * 20)])
            )
            call = f"call_{index}"
            message = store.append_message(
                sid,
                "assistant",
                "step",
                [
                    StoredText(f"answer {index} " * 30),
                    part_from_json(
                        "tool_call",
                        {
                            "toolCallId": call,
                            "name": "read",
                            "input": {"path": "a.py"},
                            "arguments": '{"path": "a.py"}',
                        },
                    ),
                ],
                results=[
                    ToolResultRecord(call, "completed", "line\n" * 40, [Fact("read", path="a.py")])
                ],
            )
            state.add(message)
        if with_plan:
            app.plans.write(sid, "# Plan\n\n" + "\n".join(f"- [ ] step {i}" for i in range(60)))
        settings = service.settings()
        identity = ProviderIdentity(
            "openai", "gpt-5.1", Route("https://api.openai.com/v1", "api_key")
        )
        settings = settings.model_copy(update={"context_window": 10_000_000})
        service.build_context(state, settings, identity)  # warm the per-message cache
        times = []
        for index in range(steps):
            started = time.perf_counter()
            service.build_context(state, settings, identity)
            call = f"bench_{index}"
            message = store.append_message(
                sid,
                "assistant",
                "step",
                [
                    part_from_json(
                        "tool_call",
                        {
                            "toolCallId": call,
                            "name": "glob",
                            "input": {"pattern": "*"},
                            "arguments": '{"pattern": "*"}',
                        },
                    )
                ],
                meta={"usage": {"input": 1, "output": 1}},
            )
            state.add(message)
            store.append_tool_result(message, ToolResultRecord(call, "completed", "a.py"))
            times.append(time.perf_counter() - started)
        asyncio.run(app.close())
    return times


def main() -> None:
    bare = statistics.median(cold_start(bare=True))
    starts = cold_start()
    median = statistics.median(starts)
    print(
        f"cold start to initialize result: median {median * 1000:.0f} ms"
        f" (min {min(starts) * 1000:.0f}, max {max(starts) * 1000:.0f}; 10 runs; target < 500 ms);"
        f" an empty pygls server: {bare * 1000:.0f} ms (ratio {median / bare:.2f});"
        f" the very first start on a machine, before the attrs code cache exists:"
        f" {starts[0] * 1000:.0f} ms"
    )
    trips = round_trips()
    print(
        f"baton/session/list round trip: p50 {percentile(trips, 0.5) * 1000:.2f} ms,"
        f" p99 {percentile(trips, 0.99) * 1000:.2f} ms (1,000 calls; target p50 < 2 ms)"
    )
    for size, with_plan in ((100, False), (5000, False), (5000, True)):
        steps = step_overhead(size, with_plan=with_plan)
        label = " with a plan" if with_plan else ""
        print(
            f"agent loop overhead per step at {size:,} messages{label}: median"
            f" {statistics.median(steps) * 1000:.2f} ms,"
            f" p99 {percentile(steps, 0.99) * 1000:.2f} ms"
            " (context build + store writes; target < 5 ms at 5,000)"
        )


if __name__ == "__main__":
    main()
