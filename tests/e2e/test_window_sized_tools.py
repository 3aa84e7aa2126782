"""Tool results sized to the model's window: one result never takes more than a share of it."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_cli import baton
from tests.fake_llm import FakeLLM, text, tool_call


def _big_file(workspace: Path) -> None:
    lines = [
        f"def function_{i}(value):\n    return value * {i}  # padding padding\n" for i in range(700)
    ]
    (workspace / "big.py").write_text("".join(lines))  # ~45,000 characters


def _read_output(llm: FakeLLM) -> str:
    outputs = llm.model_requests[-1].tool_outputs()
    assert len(outputs) == 1
    return next(iter(outputs.values()))


def test_a_read_into_a_small_window_takes_at_most_a_quarter_and_says_how_to_go_on(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    _big_file(workspace)
    llm.add(tool_call("read", {"path": "big.py"}))
    llm.add(text("Read."))
    done = baton(
        ["run", "read big.py"], workspace, home, llm, extra={"BATON_CONTEXT_WINDOW": "8192"}
    )
    assert done.returncode == 0, done.stderr
    output = _read_output(llm)
    # 8,192 tokens, 1,638 reserved: a quarter of 6,554 usable tokens is ~6,550 characters.
    assert 5_000 < len(output) <= 6_600, len(output)
    last_line = int(output.rsplit("\n", 2)[-2].split("\t")[0])
    assert output.endswith(f"continue with offset={last_line + 1}]")
    assert "[compacted" not in done.stderr  # the result alone does not force a compaction

    llm.add(tool_call("read", {"path": "big.py", "offset": last_line + 1}))
    llm.add(text("Read more."))
    more = baton(["run", "go on"], workspace, home, llm, extra={"BATON_CONTEXT_WINDOW": "8192"})
    assert more.returncode == 0
    assert _read_output(llm).startswith(f"{last_line + 1}\t")


def test_a_large_window_keeps_the_configured_ceiling(
    llm: FakeLLM, workspace: Path, home: Path
) -> None:
    _big_file(workspace)
    llm.add(tool_call("read", {"path": "big.py"}))
    llm.add(text("Read."))
    done = baton(["run", "read big.py"], workspace, home, llm)
    assert done.returncode == 0, done.stderr
    assert 29_000 < len(_read_output(llm)) <= 30_500  # tools.maxOutputChars, 30,000


def test_the_share_is_a_setting(llm: FakeLLM, workspace: Path, home: Path) -> None:
    _big_file(workspace)
    for command in ["grep", "bash"]:
        args = {"pattern": "padding"} if command == "grep" else {"command": "cat big.py"}
        llm.add(tool_call(command, args))
        llm.add(text("Done."))
        done = baton(
            ["run", "--allow-bash", "look"],
            workspace,
            home,
            llm,
            extra={"BATON_CONTEXT_WINDOW": "16384", "BATON_TOOLS__OUTPUT_SHARE": "0.1"},
        )
        assert done.returncode == 0, done.stderr
        # 16,384 tokens, 3,276 reserved: a tenth of 13,108 is ~5,240 characters.
        output = _read_output(llm)
        assert 3_000 < len(output) <= 5_500, (command, len(output))
        assert "narrow the pattern" in output or "read or grep that" in output, command
