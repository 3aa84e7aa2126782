"""What matters stays in view, through the real server (issue 45).

A long working session compacted many times under an 8,192-token window with a
summariser that keeps nothing: the test command, the test file it created and
the first and latest error of the test command that failed and later passed stay
in the view, the ledger within its cap, and each compaction's record carries its
score (facts in view, one `recall` away, view tokens against the window), as
`baton/session/compactions` returns it; the summary request names the entries
that fold, and each one it names does. Skills kept after a compaction have a
budget: the oldest folds to its name and one line, and `skill` loads its body again.
The children's lines fold within the ledger's cap and every child's files come back
through `recall`.
"""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from baton.agent.tokens import estimate
from baton.compaction.summary import SECTIONS
from tests.conftest import StartBaton
from tests.e2e.test_compaction import start_baton as start_baton  # pins native compaction
from tests.e2e.test_delegation import task
from tests.e2e.test_skills import skill
from tests.fake_llm import FakeLLM, text, tool_call
from tests.fake_llm.records import RecordedRequest

WINDOW = 8_192
# The ledger's cap at this window: a quarter of it (compaction/room.py).
LEDGER_CAP = WINDOW // 4
SETTINGS = {
    "permissions": {"bash": "allow", "write": "allow"},
    "contextWindow": WINDOW,
    "compaction": {"auto": False, "strategy": "native"},
}
SUMMARY = "\n\n".join(f"## {name}\nnone" for name in SECTIONS)
TEST = "sh run_tests.sh"
ERRORS = (
    "E   TypeError: unsupported operand for total 4417",
    "E   AssertionError: assert 41 == 42 in rounding",
    "E   KeyError: 'currency_812'",
)
COMPACTIONS = 4


class Model:
    """Answers summary requests with SUMMARY (no fact) and turns from a queue."""

    def __init__(self, llm: FakeLLM) -> None:
        self.turns: deque[Any] = deque()
        self.summary_requests: list[str] = []
        llm.on_request(self.answer)

    def answer(self, request: RecordedRequest) -> Any:
        if request.is_summary:
            self.summary_requests.append(request.input_text())
            return text(SUMMARY)
        return self.turns.popleft() if self.turns else text("ok")


def write_test_script(workspace: Path, error: str | None) -> None:
    body = (
        f"echo 'collected 9 items'\necho \"{error}\"\necho '1 failed, 8 passed'\nexit 1\n"
        if error
        else "echo '9 passed in 0.31s'\n"
    )
    (workspace / "run_tests.sh").write_text(body)


def block(sent: str, name: str) -> str:
    match = re.search(f"<baton:{name}>.*?</baton:{name}>", sent, re.S)
    return match.group(0) if match else ""


@pytest.mark.asyncio
async def test_many_compactions_keep_the_test_command_its_errors_and_created_files(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=SETTINGS)
    model = Model(llm)
    sid = await baton.new_session()
    for n in range(60):
        (workspace / f"mod_{n}.py").write_text(f"def helper_{n}(x):\n    return x * {n}\n" * 30)

    # The morning: a test file created, the test command failing three times with three
    # distinct errors, then passing.
    write_test_script(workspace, ERRORS[0])
    model.turns.extend(
        [
            [
                tool_call("write", {"path": "tests/test_edge.py", "content": "def test(): pass\n"}),
                tool_call("bash", {"command": TEST}),
            ],
            text("It fails: " + "looking into it. " * 20),
        ]
    )
    await baton.prompt(sid, "Fix the failing tests. Never touch vendor/.")
    for error in (*ERRORS[1:], None):
        write_test_script(workspace, error)
        model.turns.extend([tool_call("bash", {"command": TEST}), text("Ran them again.")])
        await baton.prompt(sid, "Run the tests again.")

    sent_after: list[str] = []
    leaving: list[list[str]] = []
    for c in range(COMPACTIONS):
        # A working stretch: files read and never changed, commands that only passed,
        # long outputs, the test command passing again.
        for k in range(4):
            n = (c * 4 + k) * 4
            calls = [tool_call("read", {"path": f"mod_{(n + i) % 60}.py"}) for i in range(4)]
            calls += [
                tool_call("bash", {"command": f"echo stretch-{c}-{k}-{i} && seq 1 40"})
                for i in range(8)
            ]
            calls += [
                tool_call("bash", {"command": f"echo tool-{c}{k}{i} version 1.{c}{k}.{i}"})
                for i in range(4)
            ]
            calls.append(tool_call("bash", {"command": TEST}))
            model.turns.extend([calls, text(f"Stretch {c}.{k} done. " + "Notes. " * 30)])
            await baton.prompt(sid, f"Go on with part {c}.{k}.")
        asked = len(model.summary_requests)
        record = await baton.request("baton/session/compact", {"sessionId": sid})
        assert record["committed"] is True, record["notes"]
        model.turns.append(text("ok"))
        await baton.prompt(sid, "Where are we?")
        sent_after.append(llm.model_requests[-1].input_text())
        # What the summary request named as folding at this compaction.
        named = block(model.summary_requests[asked], "ledger-folding")
        leaving.append(named.splitlines()[1:-1])

    for sent in sent_after:
        ledger = block(sent, "ledger")
        assert estimate(ledger) <= LEDGER_CAP, estimate(ledger)
        # The test command with its latest exit codes, the file it created, and the
        # first and the latest distinct error of its failing runs, in view.
        assert f"`{TEST}` → 1, 1, 1, 0" in ledger, ledger
        assert "tests/test_edge.py (created by write)" in ledger
        assert ERRORS[0].removeprefix("E   ") in ledger
        assert ERRORS[-1].removeprefix("E   ") in ledger
    # The ledger did fold (the session outgrew it): the test still means something.
    assert "folded [ledger:" in block(sent_after[-1], "ledger"), [
        estimate(block(s, "ledger")) for s in sent_after
    ] + [estimate(s) for s in sent_after]

    # Every record carries its score, as baton/session/compactions returns it.
    listed = await baton.request("baton/session/compactions", {"sessionId": sid})
    records = listed["compactions"]
    assert len(records) == COMPACTIONS
    for record in records:
        score = record["score"]
        assert score["window"] == WINDOW
        assert score["viewTokens"] == record["tokensAfter"] <= WINDOW
        assert score["facts"] == score["inView"] + score["oneRecall"] > 0
    # Reopened, each compaction marker carries its record's score.
    loaded = await baton.request("baton/session/load", {"sessionId": sid})
    markers = [
        part for m in loaded["messages"] for part in m["parts"] if part["type"] == "compaction"
    ]
    assert [part["score"] for part in markers] == [r["score"] for r in records]
    last = records[-1]["score"]
    assert last["oneRecall"] > 0 and last["inView"] > 0, last
    # The view after each compaction stays well under the automatic threshold.
    assert max(r["tokensAfter"] for r in records) <= 0.45 * WINDOW


@pytest.mark.asyncio
async def test_the_oldest_kept_skill_folds_to_a_line_and_loads_again(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    baton = await start_baton(settings=SETTINGS | {"compaction": {"keepRecentTokens": 1000}})
    big = "\n".join(f"- step {i}: check the part {i} of the release" for i in range(120))
    for name in ("deploy", "release", "rollback"):
        skill(
            workspace,
            ".baton/skills",
            name,
            f"How to {name}",
            f"# {name}\n\nThe {name} checklist (MARK-{name}).\n{big}\n",
        )
    (workspace / "notes.txt").write_text("alpha line of the notes file\n" * 300)
    model = Model(llm)
    sid = await baton.new_session()
    for name in ("deploy", "release", "rollback"):
        model.turns.extend([tool_call("skill", {"name": name}), text(f"{name} loaded")])
        await baton.prompt(sid, f"load {name}")
    for n in range(3):
        model.turns.extend([tool_call("read", {"path": "notes.txt"}), text(f"read {n}")])
        await baton.prompt(sid, f"read the notes, pass {n}")
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    assert record["committed"] is True, record["notes"]
    model.turns.append(text("ok"))
    await baton.prompt(sid, "go on")
    sent = llm.model_requests[-1].input_text()
    # The newest stays whole; the oldest folds to its name, one line and how to load it.
    assert sent.count("MARK-rollback") == 1
    assert "MARK-deploy" not in sent
    assert (
        "[skill deploy was loaded before the compaction and folded to keep the view small: "
        "# deploy." in sent
    )
    assert '`skill {"name": "deploy"}` loads its body again.]' in sent
    # And `skill` loads its body again, whole.
    model.turns.extend([tool_call("skill", {"name": "deploy"}), text("loaded again")])
    await baton.prompt(sid, "load deploy again")
    output = list(llm.model_requests[-1].tool_outputs().values())[-1]
    assert "MARK-deploy" in output and "already loaded" not in output


CHILDREN = 6
CHILD_FILES = 10


@pytest.mark.asyncio
async def test_the_childrens_lines_fold_within_the_ledger_and_come_back_whole(
    start_baton: StartBaton, llm: FakeLLM, workspace: Path
) -> None:
    # A ledger cap of 300 tokens: six children of ten files and four commands each
    # (about 700 tokens of lines in full) must fold.
    settings = SETTINGS | {
        "compaction": {"auto": False, "strategy": "native", "ledgerMaxTokens": 300}
    }
    baton = await start_baton(settings=settings)
    (workspace / "notes.txt").write_text("alpha line of the notes\n" * 300)
    sid = await baton.new_session()
    llm.add(tool_call("read", {"path": "notes.txt"}))
    llm.add(text("Read the notes."))
    await baton.prompt(sid, "read notes.txt")
    for c in range(CHILDREN):
        llm.add(task("build", f"Write part {c}.", f"part {c}", call_id=f"call_task{c}"))
        llm.add(
            *(
                tool_call("write", {"path": f"part{c}/file_{i}.py", "content": "x = 1\n"})
                for i in range(CHILD_FILES)
            )
        )
        llm.add(*(tool_call("bash", {"command": f"echo check-{c}-{i}"}) for i in range(4)))
        llm.add(text(f"Wrote part {c}."))
        llm.add(text(f"Part {c} is done."))
        await baton.prompt(sid, f"delegate part {c}")
    llm.on_request(lambda req: text(SUMMARY) if req.is_summary else None)
    record = await baton.request("baton/session/compact", {"sessionId": sid})
    llm.on_request(lambda req: None)
    assert record["committed"] is True, record["notes"]
    children = record["ledger"]["children"]
    assert len(children) == CHILDREN
    assert all(len(child["filesModified"]) == CHILD_FILES for child in children)

    llm.add(text("ok"))
    await baton.prompt(sid, "where are we?")
    ledger = block(llm.model_requests[-1].input_text(), "ledger")
    assert estimate(ledger) <= 300, estimate(ledger)
    assert "Done by task children" in ledger
    # Not every file of every child is in view, but each child is named or counted…
    shown = [c["childId"] for c in children if c["childId"] in ledger]
    assert len(shown) < CHILDREN or "part0/file_9.py" not in ledger, ledger
    ids = sorted(set(re.findall(r"\[(ledger:[0-9a-z-]+)\]", ledger)))
    assert ids, ledger
    # …and every child's whole record comes back through `recall` by the ids the view
    # names (its own line's id, or the section's when it was counted away).
    llm.add(*(tool_call("recall", {"call_id": i}) for i in ids))
    llm.add(text("recalled"))
    await baton.prompt(sid, "look the children up")
    recalled = "\n".join(llm.model_requests[-1].tool_outputs().values())
    for child in children:
        for path in child["filesModified"]:
            assert path in ledger or path in recalled, (child["childId"], path)
