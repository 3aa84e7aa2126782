"""Server-side versus native compaction: input tokens of the first request after compacting.

    python bench/server_vs_native.py [--seed 7] [--rounds 2 6 12]

The same synthetic session (seeded: prompts with decisions, steps that read,
edit and run commands with large outputs) is built twice through Baton's real
core in this process, against the fake OpenAI Responses server of the tests
(tests/fake_llm, a real HTTP server on 127.0.0.1). One copy is compacted with
strategy `native` (a summary request; the fake summariser writes a faithful
summary: every decision, changed file and command it is shown, in the five
sections), the other with strategy `server` (one `compaction_trigger` request;
the fake returns an opaque compaction item). Then one prompt is sent and the
request it makes is measured.

Token figures are the fake server's estimate, ceil(JSON characters / 4) of
the input items plus the instructions (tool specs excluded), not a tokenizer.
The fake's compaction item is a ~50-character token; a real OpenAI item is an
encrypted blob far larger, so the server checkpoint here is a lower
bound and the rest of the request (instructions, ledger, plan, recent
messages) is what the two strategies share.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT))

from tests.fake_llm import FakeLLM, RecordedRequest, estimate_tokens, text  # noqa: E402
from tests.fake_llm.records import item_type  # noqa: E402

from baton import protocol as p  # noqa: E402
from baton.agent.events import NullChannel  # noqa: E402
from baton.app import build_app  # noqa: E402
from baton.compaction.summary import SECTIONS  # noqa: E402
from baton.store.model import StoredText, ToolResultRecord, part_from_json  # noqa: E402
from baton.tools.base import Fact  # noqa: E402

TURNS_PER_ROUND = 8


def faithful_summary(request: RecordedRequest) -> str:
    """Five sections listing every decision, changed file and command the transcript shows."""
    shown = request.input_text()
    decisions = sorted(set(re.findall(r"decision-[\w-]+: [^.\n]+", shown)))
    changed = sorted(set(re.findall(r"src/changed_\w+\.py", shown)))
    commands = sorted(set(re.findall(r"pytest tests/test_\w+\.py -q", shown)))
    body = {
        SECTIONS[0]: "Work through the modules round by round.",
        SECTIONS[1]: "\n".join(f"- {d}" for d in decisions) or "none",
        SECTIONS[2]: "\n".join(f"- {c}: edited" for c in changed) or "none",
        SECTIONS[3]: "\n".join(f"- `{c}` ran" for c in commands) or "none",
        SECTIONS[4]: "Continue with the next module.",
    }
    return "\n\n".join(f"## {name}\n{text}" for name, text in body.items())


def build_session(app: Any, seed: int, rounds: int) -> str:
    """The synthetic history, written straight into the store (no model involved)."""
    rng = random.Random(seed)
    store = app.sessions.store
    sid: str = app.sessions.new_session(p.SessionNewParams(title="bench")).session_id
    state = app.sessions.state(sid)
    for r in range(rounds):
        for t in range(TURNS_PER_ROUND):
            tag = f"r{r}t{t}"
            decision = f"decision-{tag}: keep the cache at {rng.randint(10, 99)} MB"
            state.add(
                store.append_message(
                    sid,
                    "user",
                    "prompt",
                    [StoredText(f"Work on {tag}. {decision}.")],
                )
            )
            read_path, edit_path = f"src/module_{tag}.py", f"src/changed_{tag}.py"
            command = f"pytest tests/test_{tag}.py -q"
            code = rng.choice([0, 0, 1])
            calls = [
                ("read", {"path": read_path}, "\n".join(f"{i}: code of {read_path}" for i in range(300)),
                 [Fact("read", path=read_path)], "completed"),
                ("edit", {"path": edit_path, "old_string": "a", "new_string": "b"}, f"edited {edit_path}",
                 [Fact("modified", path=edit_path, action="modified")], "completed"),
                ("bash", {"command": command}, "collected 40 items\n" + "." * 2000 + f"\n[exit code {code}]",
                 [Fact("command", command=command, exit_code=code)], "completed" if code == 0 else "failed"),
            ]  # fmt: skip
            parts = [StoredText(f"Looking at {tag}.")]
            results = []
            for index, (name, args, output, facts, status) in enumerate(calls):
                call_id = f"call_{tag}_{index}"
                data = {
                    "toolCallId": call_id,
                    "name": name,
                    "input": args,
                    "arguments": json.dumps(args),
                }
                parts.append(part_from_json("tool_call", data))
                results.append(ToolResultRecord(call_id, status, output, facts))  # type: ignore[arg-type]
            state.add(store.append_message(sid, "assistant", "step", parts, results=results))
    return sid


def shared_prefix_tokens(previous: RecordedRequest, request: RecordedRequest) -> int:
    """Tokens of `request` a prompt cache could reuse from `previous`: same instructions and
    tools, then the longest run of identical leading input items (estimated like the fake)."""
    if previous.instructions != request.instructions or previous.tools != request.tools:
        return 0
    count = 0
    for mine, theirs in zip(request.items, previous.items, strict=False):
        if mine != theirs:
            break
        count += 1
    return estimate_tokens({"input": request.items[:count], "instructions": request.instructions})


@dataclass
class Run:
    history_tokens: int  # the fake's estimate of the request had nothing been compacted
    compaction_requests: int
    compaction_input: int
    cacheable: int  # of that input, tokens that repeat the previous request's prefix exactly
    after: int  # the fake's estimate of the first request after compaction
    checkpoint_chars: int


async def run(strategy: str, seed: int, rounds: int) -> Run:
    with FakeLLM() as llm, tempfile.TemporaryDirectory(prefix="baton-svn-") as tmp:
        llm.on_request(lambda req: text(faithful_summary(req)) if req.is_summary else None)
        home = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(home / "data")
        os.environ["XDG_CONFIG_HOME"] = str(home / "config")
        ws = home / "ws"
        ws.mkdir()
        app = build_app(
            ws,
            NullChannel(),
            environ={"OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": llm.base_url},
            client_settings={"compaction": {"strategy": strategy}},
        )
        try:
            sid = build_session(app, seed, rounds)
            # What the model would be sent uncompacted, measured the same way.
            await app.sessions.prompt(p.PromptParams(session_id=sid, text="status?"))
            history = llm.model_requests[-1].tokens
            seen = len(llm.requests)
            record = await app.compaction.compact(sid, strategy=strategy)  # type: ignore[arg-type]
            assert record.strategy == strategy, record.notes
            work = llm.requests[seen:]
            cacheable = sum(shared_prefix_tokens(llm.requests[seen - 1], r) for r in work)
            await app.sessions.prompt(p.PromptParams(session_id=sid, text="continue"))
            after = llm.model_requests[-1]
            first = after.items[0] if after.items else {}
            if item_type(first) == "compaction":
                checkpoint = len(json.dumps(first))
            else:
                checkpoint = len(record.summary or "")
            return Run(
                history, len(work), sum(r.tokens for r in work), cacheable, after.tokens, checkpoint
            )
        finally:
            await app.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, nargs="+", default=[2, 6, 12])
    args = parser.parse_args()
    print("Input tokens of the request after a manual compaction, server vs native strategy.")
    print("Tokens are the fake OpenAI server's estimate (ceil(JSON chars / 4)), not a tokenizer;")
    print("the fake's compaction item is tiny, real ones are much larger (see the docstring).\n")
    print(
        f"{'session':>9}  {'strategy':>8}  {'compaction calls':>16}  {'their input':>11}"
        f"  {'cacheable':>9}  {'checkpoint chars':>16}  {'next request':>12}"
    )
    for rounds in args.rounds:
        for strategy in ("native", "server"):
            result = asyncio.run(run(strategy, args.seed, rounds))
            print(
                f"{result.history_tokens:>9,}  {strategy:>8}  {result.compaction_requests:>16}"
                f"  {result.compaction_input:>11,}  {result.cacheable:>9,}"
                f"  {result.checkpoint_chars:>16,}"
                f"  {result.after:>12,}"
            )
    print(
        "\nsession = the fake's estimate of the uncompacted request; compaction calls = summary"
        " requests (native) or compaction_trigger requests (server); cacheable = of their input,"
        " the tokens that repeat the previous request's prefix exactly (same instructions, tools"
        " and leading items), which a provider prompt cache can serve."
    )


if __name__ == "__main__":
    main()
