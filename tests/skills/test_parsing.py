"""The pure parts of skills: front matter, argument expansion, the catalog's budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.agent.tokens import estimate
from baton.skills import catalog
from baton.skills.expand import expand, parse_command
from baton.skills.frontmatter import FrontmatterError, split
from baton.skills.model import Skill


def test_front_matter_values_quotes_blocks_and_flags() -> None:
    fields, body = split(
        "---\n"
        "name: deploy\n"
        "description: >\n  Deploy the service,\n  then check it.\n"
        'argument-hint: "<env> [--dry-run]"\n'
        "note: 'it''s fine'\n"
        "disable-model-invocation: true\n"
        "allowed-tools: [read, bash]\n"
        "metadata:\n  owner: ops\n"
        "---\n\n# Body\n",
        required=True,
    )
    assert fields["description"] == "Deploy the service, then check it."
    assert fields["argument-hint"] == "<env> [--dry-run]"
    assert fields["note"] == "it's fine"
    assert fields["disable-model-invocation"] is True
    assert fields["allowed-tools"] == "[read, bash]"
    assert body == "# Body"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("# no front matter\n", "must start with a `---` line"),
        ("---\nname: x\n", "no closing `---`"),
        ("---\njust words\n---\n", "line 2: expected `key: value`"),
        ("---\nname: a\nname: b\n---\n", "`name` is given twice"),
        ('---\nname: "open\n---\n', 'no closing "'),
    ],
)
def test_front_matter_errors_name_the_line(text: str, reason: str) -> None:
    with pytest.raises(FrontmatterError, match=None) as info:
        split(text, required=True)
    assert reason in str(info.value)


def test_a_command_file_needs_no_front_matter() -> None:
    assert split("Fix $1.\n", required=False) == ({}, "Fix $1.\n")


def test_arguments_expand_once_from_one_and_missing_ones_stay() -> None:
    assert expand("Fix $1 in $2 ($ARGUMENTS); $3 $10", '"$2 x" main.py') == (
        'Fix $2 x in main.py ("$2 x" main.py); $3 $10'
    )
    assert expand("No placeholder.", "a b") == "No placeholder.\n\nArguments: a b"
    assert expand("No placeholder.", "  ") == "No placeholder."
    assert expand("All: [$ARGUMENTS]", "") == "All: []"
    assert expand("Unclosed $1 $2", "'a b") == "Unclosed 'a b"


def test_parse_command() -> None:
    assert parse_command("/deploy prod now") == ("deploy", "prod now")
    assert parse_command("  /deploy\nmore lines") == ("deploy", "more lines")
    assert parse_command("/usr/bin/env is odd") is None
    assert parse_command("deploy") is None and parse_command("//x") is None


def _skills(count: int, length: int) -> list[Skill]:
    return [
        Skill(f"skill-{n}", "d" * length, "body", Path(f"/s/skill-{n}/SKILL.md"), "skill", "person")
        for n in range(count)
    ]


def test_catalog_fits_its_budget_by_cutting_descriptions_and_says_so() -> None:
    full = catalog.render(_skills(10, 100), 10_000)
    assert full is not None and "shortened" not in full and "d" * 100 in full
    tight = catalog.render(_skills(10, 400), 300)
    assert tight is not None and estimate(tight) <= 300
    assert "(10 of 10 descriptions are shortened" in tight
    assert all(f"- skill-{n}" in tight for n in range(10))
    assert catalog.render([], 100) is None
    # The same skills and budget give the same bytes (the cached prefix holds).
    assert catalog.render(_skills(10, 400), 300) == tight
