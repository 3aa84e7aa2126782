"""`baton run` with a `task` child: the child's steps are printed indented under the
call that started it; stdout keeps only the parent's answer."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_cli import baton
from tests.fake_llm import FakeLLM, text, tool_call


def script_child(llm: FakeLLM) -> None:
    llm.add(
        tool_call(
            "task",
            {"agent": "explore", "description": "find the TODOs", "prompt": "Find every TODO."},
        )
    )
    llm.add(tool_call("grep", {"pattern": "TODO"}))
    llm.add(tool_call("bash", {"command": "wc -l app.py"}))
    llm.add(text("CHILD-WORDS: one TODO in app.py."))
    llm.add(text("The child found one TODO."))


def test_a_childs_steps_are_indented_under_its_task_call(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    (workspace / "app.py").write_text("# TODO: one\n")
    script_child(llm)
    done = baton(["run", "look for TODOs with a child"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The child found one TODO."
    assert "CHILD-WORDS" not in done.stdout + done.stderr

    # Status lines ("[running grep]": no terminal, so plain lines now and then) aside.
    lines = [line for line in done.stderr.splitlines() if not line.startswith("[")]
    start = next(i for i, line in enumerate(lines) if line.startswith("→ task "))
    shown = lines[start : start + 6]
    assert shown[1] == "  ↳ explore child: find the TODOs"
    assert shown[2] == '    → grep {"pattern": "TODO"}'
    assert shown[3] == '    → bash {"command": "wc -l app.py"}'
    # No terminal to ask: the child's command is refused, and the line says whose it was.
    assert shown[4] == (
        "      ✗ bash refused (the explore child (find the TODOs)): no terminal to ask"
        " (use --allow-bash / --allow-write)"
    )
    assert shown[5].startswith("      ✗ permission denied")
    ended = [line for line in lines if line.startswith("  ↳ explore child ")]
    assert len(ended) == 1 and ended[0].startswith("  ↳ explore child done (")
    assert ended[0].endswith(" tokens)")

    # `baton sessions` lists the child under its parent.
    listed = baton(["sessions"], workspace, home, llm).stdout.splitlines()
    parent = next(
        i for i, line in enumerate(listed) if line.endswith("look for TODOs with a child")
    )
    assert "  ↳ explore: " in listed[parent + 1]


def test_json_lines_carry_the_childs_parent(llm: FakeLLM, workspace: Path, home: Path) -> None:
    (workspace / "app.py").write_text("# TODO: one\n")
    script_child(llm)
    done = baton(["run", "--json", "--allow-bash", "look for TODOs"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    parent = events[0]["sessionId"]
    child_events = [e for e in events if e.get("parentId") == parent]
    assert child_events and all(e["sessionId"] != parent for e in child_events)
    assert any(e["update"]["kind"] == "tool_call" for e in child_events)
    statuses = [e["update"]["status"] for e in events if e["update"].get("kind") == "child"]
    assert statuses[0] == "running" and statuses[-1] == "done"
    assert all("parentId" not in e for e in events if e["sessionId"] == parent)


def test_at_a_terminal_the_prompt_says_which_child_asks(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    from tests.e2e.test_cli_permission import run_at_a_terminal

    (workspace / "app.py").write_text("# TODO: one\n")
    script_child(llm)
    code, out, err = run_at_a_terminal(workspace, home, llm, b"y\n")
    assert code == 0, err
    assert out.strip() == "The child found one TODO."
    asked = err.index("[the explore child (find the TODOs) asks:]")
    assert err.index('    → bash {"command": "wc -l app.py"}') < asked < err.index("Allow bash?")
    assert "✗" not in err, "allowed: the child's command ran"


def test_approve_steps_prints_step_k_of_n_with_each_childs_steps(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    from tests.e2e.test_cli_approve import planned

    sid = planned(llm, workspace, home)
    llm.add(tool_call("write", {"path": "hello.py", "content": "print('hello')\n"}))
    llm.add(text("Wrote hello.py."))
    llm.add(tool_call("bash", {"command": "python3 hello.py"}))
    llm.add(text("It prints hello."))
    args = ["run", "--session", sid, "--approve", "--steps", "--allow-write", "--allow-bash"]
    done = baton(args, workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert (workspace / "hello.py").exists()
    assert f"[end_turn; session {sid}]" in done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("[")]
    assert lines[:6] == [
        "  ↳ step 1 of 2: build child: Write hello.py",
        '    → write {"path": "hello.py", "content": "print(\'hello\')\\n"}',
        lines[2],
        "  ↳ step 2 of 2: build child: Run it",
        '    → bash {"command": "python3 hello.py"}',
        lines[5],
    ]
    assert lines[2].startswith("  ↳ step 1 of 2: build child done (")
    assert lines[5].startswith("  ↳ step 2 of 2: build child done (")


def test_steps_needs_approve(llm: FakeLLM, workspace: Path, home: Path) -> None:
    done = baton(["run", "--steps", "hello"], workspace, home, llm)
    assert done.returncode == 2 and "--steps goes with --approve" in done.stderr
    assert llm.model_requests == []
