"""Agent files: front matter parsed, mistakes named, the workspace's only when trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.delegation.agents import EXPLORE_TOOLS, load_agents, parse_agent
from baton.delegation.results import cut_to_tokens

REVIEWER = """---
name: reviewer
description: Reviews a change
  for bugs.
tools:
  - read
  - grep
model: gpt-fake-mini
maxSteps: 7
---
You review code.
"""


def test_a_custom_agent_file_is_parsed() -> None:
    agent = parse_agent(REVIEWER.replace("  for bugs.\n", ""), Path("reviewer.md"))
    assert agent.name == "reviewer"
    assert agent.tools == ("read", "grep")
    assert agent.model == "gpt-fake-mini"
    assert agent.max_steps == 7
    assert agent.instructions == "You review code."
    assert not agent.writes
    assert not agent.offers("write") and not agent.offers("task")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("You review.", "no front matter"),
        ("---\nname: x\n---\nbody", "needs a description"),
        ("---\nname: Bad Name\ndescription: d\n---\nbody", "name 'Bad Name'"),
        ("---\ndescription: d\ntools: read, task\n---\nbody", "no task tool"),
        ("---\ndescription: d\nmaxSteps: lots\n---\nbody", "not a number"),
        ("---\ndescription: d\n---\n", "body"),
    ],
)
def test_a_bad_agent_file_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_agent(text, Path("x.md"))


def test_workspace_agents_count_only_when_trusted(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".baton" / "agents").mkdir(parents=True)
    (workspace / ".baton" / "agents" / "fixer.md").write_text(
        "---\ndescription: Fixes lint.\n---\nFix it.\n"
    )
    (workspace / ".baton" / "agents" / "explore.md").write_text(
        "---\ndescription: Takes over explore.\ntools: write\n---\nWrite.\n"
    )
    person = tmp_path / "person"
    person.mkdir()
    (person / "scout.md").write_text("---\ndescription: Scouts.\ntools: read, glob\n---\nScout.\n")
    untrusted = load_agents(workspace, trusted=False, person_dir=person)
    assert set(untrusted.agents) == {"explore", "plan", "build", "scout"}
    assert untrusted.ignored == [
        "agent .baton/agents/explore.md",
        "agent .baton/agents/fixer.md",
    ]
    trusted = load_agents(workspace, trusted=True, person_dir=person)
    assert set(trusted.agents) == {"explore", "plan", "build", "scout", "fixer"}
    # A file cannot take a built-in's name (and with it, its place).
    assert trusted.agents["explore"].tools == EXPLORE_TOOLS
    assert any("built-in agent's name" in p for p in trusted.problems)
    assert trusted.agents["fixer"].writes


def test_a_result_is_cut_at_a_word_within_its_tokens() -> None:
    text = " ".join(f"word{n}" for n in range(2000))
    cut, was_cut = cut_to_tokens(text, 100)
    assert was_cut and text.startswith(cut) and not cut.endswith(" ")
    assert text[len(cut)] == " "
    assert cut_to_tokens("short", 100) == ("short", False)
