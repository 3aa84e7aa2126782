"""Many compactions of one session, through the real server: a long session compacted ten
times (after each hour's work, a summariser that keeps no fact). Each probe fact of the
first hour (the person's constraint and values, a config value, a printed version, a
failure a later run fixed, its exit codes, the hypothesis ruled out in prose) is in the
view or one `recall` away after the first, third and tenth compaction; the ledger and the
person's requests block stay within their budgets and flat once they fold; and once both
are flat the view never grows from one compaction to the next."""

from __future__ import annotations

import re
from collections import deque
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from baton.agent.tokens import estimate
from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.e2e.test_compaction import start_baton as start_baton  # pins native compaction
from tests.fake_llm import FakeLLM, text, tool_call
from tests.fake_llm.records import RecordedRequest
from tests.harness import BatonClient

WINDOW = 32_000
LEDGER_MAX = 600
REQUESTS_MAX = 300
SETTINGS = {
    "permissions": {"bash": "allow", "write": "allow"},
    "contextWindow": WINDOW,
    # A fixed verbatim part and a small ledger budget, so the steady state comes early.
    "compaction": {
        "auto": False,
        "keepRecentTokens": 1_000,
        "ledgerMaxTokens": LEDGER_MAX,
        "requestsMaxTokens": REQUESTS_MAX,
    },
}
CONSTRAINT = "Never touch the vendor/ directory."
VALUE = "The staging date is 2026-03-14 and the bucket is s3://acme-staging-eu."
RULED_OUT = "The stale cache is ruled out: the error stays with an empty cache."
# (what to look for in the view, what `recall {query}` finds it by)
PROBES = [
    (CONSTRAINT, None),
    (VALUE, None),
    ("port = 8431", "port = 8431"),
    ("serde v1.0.197", "serde v1.0.197"),
    ("KeyError: missing key DATABASE_URL", "DATABASE_URL"),
    ("`sh check.sh` → 2, 0", None),
    (RULED_OUT, "stale cache is ruled out"),
]
# The scripted summariser keeps no fact: whatever survives is Baton's doing.
SUMMARY = "\n\n".join(f"## {name}\nnone" for name in SECTIONS)
COMPACTIONS = 10
# A line's worth of tokens: where a cut or a fold falls moves the view by about that much.
SLACK = 40


class Model:
    """Answers summary requests with SUMMARY and turns from a queue of replies."""

    def __init__(self, llm: FakeLLM) -> None:
        self.turns: deque[Any] = deque()
        llm.on_request(self.answer)

    def answer(self, request: RecordedRequest) -> Any:
        if request.is_summary:
            return text(SUMMARY)
        return self.turns.popleft() if self.turns else text("ok")


async def first_hour(baton: BatonClient, model: Model, sid: str, workspace: Path) -> None:
    (workspace / "app.toml").write_text('[server]\nport = 8431\nregion = "eu-west-1"\n')
    (workspace / "check.sh").write_text("echo 'KeyError: missing key DATABASE_URL' >&2\nexit 2\n")
    model.turns.extend(
        [
            tool_call("read", {"path": "app.toml"}),
            tool_call("bash", {"command": "echo 'serde v1.0.197'"}),
            tool_call("bash", {"command": "sh check.sh"}),
            text(f"It fails. {RULED_OUT} " + "Looking into the settings loader. " * 20),
        ]
    )
    await baton.prompt(sid, f"Fix the export. {CONSTRAINT} {VALUE}")
    model.turns.extend(
        [
            tool_call("write", {"path": "check.sh", "content": "echo 'all good'\n"}),
            tool_call("bash", {"command": "sh check.sh"}),
            text("Fixed: the loader now reads DATABASE_URL. " + "Explaining the fix. " * 20),
        ]
    )
    await baton.prompt(sid, "Run the check again.")


async def later_hour(baton: BatonClient, model: Model, sid: str, workspace: Path, n: int) -> None:
    for k in range(5):
        name = f"mod{n}_{k}.py"
        (workspace / name).write_text(f"def f{n}_{k}(x):\n    return x + {k}\n" * 40)
        model.turns.extend(
            [
                tool_call("read", {"path": name}),
                tool_call("bash", {"command": f"python3 -c 'print({n * 10 + k})'"}),
                text(f"Module {name} reviewed. " + f"Notes on part {n}.{k}. " * 30),
            ]
        )
        await baton.prompt(sid, f"Review {name}.")


async def compactions(baton: BatonClient, sid: str) -> list[dict[str, Any]]:
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    return list(listed["compactions"])


async def probes_reachable(
    baton: BatonClient, model: Model, llm: FakeLLM, sid: str, *, recall: bool
) -> tuple[dict[str, str], str]:
    """Where each probe is after the latest compaction ('view', 'recall' or 'lost'), and
    the request the view was sent in."""
    model.turns.append(text("ok"))
    await baton.prompt(sid, "Where are we?")
    sent = llm.model_requests[-1].input_text()
    where = {fact: "view" for fact, _ in PROBES if fact in sent}
    missing = [(fact, query) for fact, query in PROBES if fact not in where]
    if missing and recall:
        # As the model would: a search for what it remembers, and every folded ledger
        # entry the block names by its id.
        block = sent[sent.index("<baton:ledger>") : sent.index("</baton:ledger>")]
        ids = sorted(set(re.findall(r"\[(ledger:[0-9a-z-]+)\]", block)))
        calls = [tool_call("recall", {"query": q}) for _, q in missing if q]
        calls += [tool_call("recall", {"call_id": i}) for i in ids]
        model.turns.append(calls)
        model.turns.append(text("recalled"))
        await baton.prompt(sid, "Look the early facts up.")
        outputs = "\n".join(list(llm.model_requests[-1].tool_outputs().values())[-len(calls) :])
        for fact, _ in missing:
            if fact in outputs:
                where[fact] = "recall"
    return {fact: where.get(fact, "lost") for fact, _ in PROBES}, sent


def block_tokens(sent: str, name: str) -> int:
    """A block's tokens as the fake counts them (characters / 4)."""
    match = re.search(f"<baton:{name}>.*?</baton:{name}>", sent, re.S)
    return estimate(match.group(0)) if match else 0


@pytest.mark.asyncio
async def test_ten_compactions_keep_the_first_hour_and_never_grow_the_view(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=SETTINGS)
    model = Model(llm)
    sid = await baton.new_session()
    await first_hour(baton, model, sid, workspace)
    sent_after: list[str] = []
    for n in range(COMPACTIONS):
        await later_hour(baton, model, sid, workspace, n)
        record = await baton.request("baton/session/compact", {"sessionId": sid})
        assert record["committed"] is True, record["notes"]
        # Asked back after the first, the third and the last compaction (a recall's
        # output is history too: asking every time would make the session another one).
        probe = n + 1 in (1, 3, COMPACTIONS)
        where, sent = await probes_reachable(baton, model, llm, sid, recall=probe)
        if probe:
            assert "lost" not in where.values(), (n, where)
        sent_after.append(sent)
    records = await compactions(baton, sid)
    assert len(records) == COMPACTIONS, len(records)
    after = [r["tokensAfter"] for r in records]
    person = [block_tokens(sent, "requests") for sent in sent_after]
    ledgers = [block_tokens(sent, "ledger") for sent in sent_after]
    # What grows is what must: the person's words (each compaction adds the messages it
    # summarised to the requests block) and the ledger, until each reaches its budget.
    # The rest of the view never grows from one compaction to the next beyond a line's
    # worth (where the cut falls) and does not drift.
    rest = [a - r - g for a, r, g in zip(after, person, ledgers, strict=True)]
    assert all(b <= a + SLACK for a, b in pairwise(rest)), rest
    assert rest[-1] <= rest[0] + SLACK, rest
    # Each block stays under its budget and, once it folds, flat.
    assert max(ledgers) <= LEDGER_MAX, ledgers
    assert max(person) <= REQUESTS_MAX, person
    folded = next(i for i, sent in enumerate(sent_after) if "folded [ledger:" in sent)
    assert folded < COMPACTIONS - 3, ledgers
    assert max(ledgers[folded:]) - min(ledgers[folded:]) <= SLACK, ledgers
    person_folded = next(i for i, sent in enumerate(sent_after) if "[requests:" in sent)
    assert person_folded < COMPACTIONS - 3, person
    assert max(person[person_folded:]) - min(person[person_folded:]) <= SLACK, person
    # Once both are flat, the view as a whole never grows.
    steady = max(folded, person_folded)
    assert all(b <= a + SLACK for a, b in pairwise(after[steady:])), after
    # The constraint and the values stay in the view itself, every time.
    assert where[CONSTRAINT] == where[VALUE] == "view"
    # The person's folded messages come back by the id the count line names.
    run = re.findall(r"\[(requests:[^\]]+)\]", sent_after[-1])[-1]
    model.turns.extend([tool_call("recall", {"call_id": run}), text("recalled")])
    await baton.prompt(sid, "What did I ask first?")
    recalled = list(llm.model_requests[-1].tool_outputs().values())[-1]
    assert "Review mod0_0.py." in recalled and "Review mod1_0.py." in recalled, recalled[:400]
