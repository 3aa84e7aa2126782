"""The scripted fake OpenAI server (tests/fake_llm) as a standalone process for
the extension's real-VS-Code test. Prints one JSON line with the environment
for Baton ({"OPENAI_BASE_URL": ..., "OPENAI_API_KEY": ...}), then serves until
stdin closes or it is terminated.

Replies, decided per request so the order of requests does not matter:
- a request offering no tools (a summary for native compaction): a summary;
- the last user message contains PLEASE PLAN: plan_write, then plan_exit, then a line;
- plan feedback containing PLEASE REVISE: plan_write of PLAN with one more step
  (REVISED_PLAN), then a line with plan_exit;
- the order to build an approved plan: tick its first step (plan_edit), then a line
  that says whether the planning conversation was still in view (a fresh context
  has no plan_write call in it);
- the last user message contains ECHO REVIEW (plan feedback from the plan panel's
  review): how many user messages the request ends with, and that last message
  verbatim in a code block (so the test reads what the model received);
- the last user message contains WHICH MODEL: the model the request was sent to;
- PLEASE WRITE: `write` README.md (again once if the first was rejected), then a line;
- PLEASE RUN: `bash` the commands of RUN_COMMANDS one by one (each after the last
  one's result, whether it ran or was refused), then a line;
- SHOW CODE: an answer with a Python code block (the README's screenshots);
- WHAT IS ATTACHED: how many times README.md's attachment block is in the request;
- PLEASE READ: `read` README.md once per such prompt, then a line (a tool for hooks to follow);
- a skill the person ran as `/name args` (the message is its framed body): "Skill <name>
  said: " and the body's first line, as the model received it;
- a session whose first prompt says "hello politely" (the README's screenshots,
  test/screenshots): read greet.py, write a two-step plan and submit it; once
  approved, edit greet.py, tick step 1, run the tests, tick step 2, plan_done, a summary;
- PLEASE DELEGATE: a `task` call to an `explore` child told SLOW CHILD; once the call
  has its result, a line that says the status the result reported;
- the SLOW CHILD itself: `glob` first (the card shows the tool), then an answer whose
  stream stalls for minutes (the card is seen running until Stop cancels the child);
- PLEASE BREAK: `edit` counter.ts so it no longer type-checks (BREAK_EDIT), then a line
  quoting the edit's result (the editor's new problems are in it);
- PLEASE ASK: a `question` with QUESTION_OPTIONS, then a line quoting its result;
- PLEASE RATE LIMIT: HTTP 429 with Retry-After 0, every time (Baton gives up after its retries);
- PLEASE DROP: the first words of an answer, then the connection cut mid-stream;
- PLEASE STEER: a slowly streamed line and a `read` of README.md; once the read's result is
  in, "Steered by: " and the person's last message (what they sent while it worked), or
  "Nothing arrived while I worked." when the prompt is still the last message;
- a child building one step of a step-by-step build ("Your step (i of n)"): `write`
  step<i>.txt, then "Built step <i>.";
- HAND A WRITE: a `task` call to a `build` child told CHILD WRITE, which writes README.md
  (asking permission first), then a line;
- anything else: a fixed greeting.
"""

from __future__ import annotations

import json
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from tests.fake_llm import FakeLLM  # noqa: E402
from tests.fake_llm.records import item_type  # noqa: E402
from tests.fake_llm.script import (  # noqa: E402
    cut_after,
    pace,
    rate_limit,
    reply,
    stall,
    text,
    tool_call,
)

GREETING = "Hello from the fake model."
NEW_README = "# e2e workspace\n\nRewritten by the agent.\n"
PLAN = "# Plan: greet the world\n\n- [ ] Write `hello.txt`\n- [ ] Check it\n"
REVISED_STEP = "- [ ] Say it aloud"
REVISED_PLAN = PLAN + REVISED_STEP + "\n"
RUN_COMMANDS = ["echo one >> ran.txt", "echo one >> ran.txt", "echo two >> ran.txt"]
CODE_ANSWER = (
    "Here is a small greeting function:\n\n```python\ndef greet(name: str) -> str:\n"
    '    """Say hello to `name`."""\n    return f"Hello, {name}!"\n```\n\n'
    'Call it as `greet("world")`.'
)
SUMMARY = (
    "## Objective\nSay hello.\n\n## Important Details\nNone.\n\n"
    "## Work State\nCompleted: greeting.\n\n## Next Move\nWait for the user.\n\n## Relevant Files\nNone.\n"
)
# The README's screenshots (test/screenshots/readme.screenshots.ts): a small plan, built.
POLITE = "hello politely"
POLITE_PLAN = (
    "# Plan: a polite greeting\n\n"
    "`greet()` returns `Hello Ada`: no comma, no exclamation mark.\n\n"
    "## Steps\n\n"
    "- [ ] Make `greet()` return `Hello, Ada!` (an f-string in `greet.py`)\n"
    "- [ ] Run the tests in `tests/` and fix what fails\n\n"
    "## Not in this plan\n\n"
    "- Other languages: `greet()` stays English-only.\n"
)
POLITE_STEPS = [
    "- [ ] Make `greet()` return `Hello, Ada!` (an f-string in `greet.py`)",
    "- [ ] Run the tests in `tests/` and fix what fails",
]
POLITE_SUMMARY = (
    "Done. `greet()` now says hello politely:\n\n"
    '```python\ndef greet(name: str) -> str:\n    return f"Hello, {name}!"\n```\n\n'
    "The tests in `tests/` pass and both steps of the plan are ticked."
)


def is_approval(message: str) -> bool:
    """The message an approval starts the build with: plain (it names the plan and the first
    step) or in a fresh context (the plan block above says those)."""
    return "is approved. Build it now" in message or "The plan above is approved" in message


def polite(req: Any) -> Any:
    """The screenshot session, one step per request, decided by what the history holds."""
    calls = [c.get("name") for c in req.function_calls()]
    approved = any(is_approval(t) for t in req.texts("user"))
    if not approved:
        if "read" not in calls:
            return reply(
                text("I'll read `greet.py` first to see what it returns now."),
                tool_call("read", {"path": "greet.py"}),
            )
        if "plan_write" not in calls:
            return reply(
                text("It joins the words without punctuation. Here is a plan."),
                tool_call("plan_write", {"content": POLITE_PLAN}),
            )
        if "plan_exit" in calls:
            return text("The plan is waiting for your approval.")
        # plan_exit ends the turn: the last words come with it.
        return reply(
            text("The plan is ready for your review: two small steps, `greet.py` and its test."),
            tool_call("plan_exit", {}),
        )
    ticks = calls.count("plan_edit")
    if "edit" not in calls:
        return reply(
            text("Step 1: an f-string with a comma and an exclamation mark."),
            tool_call(
                "edit",
                {
                    "path": "greet.py",
                    "old_string": 'return "Hello " + name',
                    "new_string": 'return f"Hello, {name}!"',
                },
            ),
        )
    if ticks == 0:
        step = POLITE_STEPS[0]
        return tool_call(
            "plan_edit", {"old_string": step, "new_string": step.replace("[ ]", "[x]", 1)}
        )
    if "bash" not in calls:
        return reply(
            text("Step 2: run the tests."),
            tool_call("bash", {"command": "python3 -m unittest"}),
        )
    if ticks == 1:
        step = POLITE_STEPS[1]
        return tool_call(
            "plan_edit", {"old_string": step, "new_string": step.replace("[ ]", "[x]", 1)}
        )
    if "plan_done" not in calls:
        return tool_call("plan_done", {})
    return text(POLITE_SUMMARY)


SLOW_CHILD = "SLOW CHILD"


def delegation(req: Any) -> Any:
    """The parent: one `task` call, then what its result said. The child: a tool, then a
    stream that stalls until it is cancelled."""
    if any(SLOW_CHILD in t for t in req.texts("user")):
        if "glob" not in [c.get("name") for c in req.function_calls()]:
            return tool_call("glob", {"pattern": "*"})
        return reply(text("Counting the files, one by one", chunks=4), stall(600, after=2))
    outputs = list(req.tool_outputs().values())
    if not outputs:
        return tool_call(
            "task",
            {
                "agent": "explore",
                "description": "Count the files slowly",
                "prompt": f"{SLOW_CHILD}: count the files in the workspace.",
            },
        )
    status = "cancelled" if "status: cancelled" in outputs[-1] else "not cancelled"
    return text(f"The child's result says: {status}.")


# Issue 49: the editor's problems after an edit, and a question for the person.
BREAK_EDIT = {
    "path": "counter.ts",
    "old_string": "const count: number = 1;",
    "new_string": 'const count: number = "one";',
}
QUESTION_OPTIONS = [
    {"label": "SQLite", "description": "one file"},
    {"label": "Postgres", "description": "a server"},
]


def quoting(req: Any, name: str, arguments: dict[str, Any], intro: str) -> Any:
    """A `name` call first; once it has its result, a line quoting that result (the test
    reads it)."""
    calls = [c for c in req.function_calls() if c.get("name") == name]
    output = req.tool_outputs().get(calls[-1].get("call_id")) if calls else None
    if output is None:
        return tool_call(name, arguments)
    return text(f"{intro}\n\n```text\n{output}\n```")


def child_write(req: Any) -> Any:
    """HAND A WRITE: the parent's `task` call to a `build` child told CHILD WRITE; the child
    writes README.md (it asks permission), then a line; the parent, a line."""
    calls = [c.get("name") for c in req.function_calls()]
    if any("CHILD WRITE" in t for t in req.texts("user")):
        if "write" not in calls:
            return tool_call("write", {"path": "README.md", "content": NEW_README})
        return text("The child is done.")
    if "task" not in calls:
        return tool_call(
            "task",
            {"agent": "build", "description": "Rewrite the readme", "prompt": "CHILD WRITE the readme"},
        )
    return text("Handed over.")


def answer(req: Any) -> Any:
    last_words = req.last_user_text() or ""
    if "PLEASE BREAK" in last_words:
        return quoting(req, "edit", BREAK_EDIT, "The edit said:")
    if "PLEASE ASK" in last_words:
        question = {"question": "Which store?", "options": QUESTION_OPTIONS}
        return quoting(req, "question", question, "You answered:")
    if not req.tool_names:
        return text(SUMMARY)
    if any("HAND A WRITE" in t or "CHILD WRITE" in t for t in req.texts("user")):
        return child_write(req)
    if any(SLOW_CHILD in t or "PLEASE DELEGATE" in t for t in req.texts("user")):
        return delegation(req)
    if any(POLITE in t for t in req.texts("user")):
        return polite(req)
    last = req.last_user_text() or ""
    # A failed turn leaves its prompt without an answer: the next prompt may come joined to
    # it in one user message, so the newest request is looked for first.
    if "PLEASE DROP" in last:
        return reply(text("The first words of an answer that ", "never ", "ends ", "well."), cut_after(2))
    if "PLEASE RATE LIMIT" in last and "PLEASE STEER" not in last:
        return rate_limit(0)
    building = re.search(r"Your step \((\d+) of \d+\)", req.texts("user")[0] if req.texts("user") else "")
    if building:
        index = building.group(1)
        if not any(c.get("name") == "write" for c in req.function_calls()):
            return tool_call("write", {"path": f"step{index}.txt", "content": f"step {index}\n"})
        return text(f"Built step {index}.")
    asked_to_steer = any("PLEASE STEER" in t for t in req.texts("user"))
    if asked_to_steer and not any(c.get("name") == "read" for c in req.function_calls()):
        words = [f"word{i} " for i in range(24)]
        return reply(text("Reading the readme slowly: ", *words), tool_call("read", {"path": "README.md"}), pace(0.5))
    if asked_to_steer:
        if "PLEASE STEER" in last:
            return text("Nothing arrived while I worked.")
        return text(f"Steered by: {last}")
    if "ECHO REVIEW" in last:
        return text(echo_review(req, last))
    if "PLEASE REVISE" in last:
        called = [c.get("name") for c in req.function_calls()]
        if called.count("plan_write") < 2:
            return tool_call("plan_write", {"content": REVISED_PLAN})
        # plan_exit ends the turn: the last words come with it.
        return reply(text("The revised plan is ready for your review."), tool_call("plan_exit", {}))
    if "PLEASE PLAN" in last:
        called = [c.get("name") for c in req.function_calls()]
        if "plan_write" not in called:
            return tool_call("plan_write", {"content": PLAN})
        if "plan_exit" not in called:
            return tool_call("plan_exit", {})
        return text("The plan is ready for your review.")
    if "WHICH MODEL" in last:
        return text(f"model: {req.model}")
    if "PLEASE WRITE" in last:
        outputs = list(req.tool_outputs().values())
        if not outputs or (len(outputs) == 1 and "permission denied" in outputs[0]):
            return tool_call("write", {"path": "README.md", "content": NEW_README})
        return text("README.md is rewritten.")
    if "PLEASE READ" in last:
        asked = sum("PLEASE READ" in t for t in req.texts("user"))
        reads = sum(c.get("name") == "read" for c in req.function_calls())
        if reads < asked:
            return tool_call("read", {"path": "README.md"})
        return text("I read the readme.")
    if "PLEASE RUN" in last:
        ran = [c for c in req.function_calls() if c.get("name") == "bash"]
        if len(ran) < len(RUN_COMMANDS):
            return tool_call("bash", {"command": RUN_COMMANDS[len(ran)]})
        return text("The commands are done.")
    if last.startswith("<baton:skill "):
        head, _, body = last.partition(">\n")
        name = head.removeprefix('<baton:skill name="').rstrip('"')
        return text(f"Skill {name} said: {body.splitlines()[0] if body else ''}")
    if "SHOW CODE" in last:
        return text(CODE_ANSWER)
    if "WHAT IS ATTACHED" in last:
        seen = req.input_text().count('<baton:attachment path="README.md" lines="1-1">')
        return text(f"Attached: README.md lines 1-1, seen {seen} time(s).")
    if is_approval(last):
        if "plan_edit" not in [c.get("name") for c in req.function_calls()]:
            return tool_call(
                "plan_edit",
                {"old_string": "- [ ] Write `hello.txt`", "new_string": "- [x] Write `hello.txt`"},
            )
        if "plan_write" not in [c.get("name") for c in req.function_calls()]:
            return text("Building from the approved plan in a fresh context.")
        return text("Building from the approved plan.")
    if "approved" in last.lower() or "build" in last.lower():
        return text("Building from the approved plan.")
    return text(GREETING)


def echo_review(req: Any, last: str) -> str:
    """The user messages at the end of the request (1: the review came as one message), and the last one."""
    trailing = 0
    for item in reversed(req.items):
        if item_type(item) != "message" or item.get("role") != "user":
            break
        trailing += 1
    fence = "````" if "```" in last else "```"
    return f"Review received in {trailing} message(s):\n\n{fence}text\n{last}\n{fence}"


def main() -> None:
    llm = FakeLLM(strict=False)
    llm.on_request(answer)
    llm.start()
    print(json.dumps(llm.env()), flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait()
    llm.stop()


if __name__ == "__main__":
    main()
