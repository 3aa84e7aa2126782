"""`turn_task` and `compacting` say what runs on a session; only its owner,
`baton.session.activity`, may assign them (one entry admits every kind of work)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "server" / "baton"
OWNER = ROOT / "session" / "activity.py"
PRIVATE = {"turn_task", "compacting"}


def assignments(source: str) -> list[tuple[int, str]]:
    """(line, name) of every assignment of an attribute in PRIVATE, `setattr` included."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr":
            name = node.args[1] if len(node.args) > 1 else None
            if isinstance(name, ast.Constant) and name.value in PRIVATE:
                found.append((node.lineno, str(name.value)))
        while targets:
            target = targets.pop()
            if isinstance(target, ast.Tuple | ast.List):
                targets.extend(target.elts)
            elif isinstance(target, ast.Attribute) and target.attr in PRIVATE:
                found.append((target.lineno, target.attr))
    return found


def test_only_the_owner_assigns_turn_task_and_compacting() -> None:
    outside = [
        f"{path.relative_to(ROOT)}:{line} assigns {name}"
        for path in sorted(ROOT.rglob("*.py"))
        if path != OWNER
        for line, name in assignments(path.read_text())
    ]
    assert outside == []
    # The owner does assign them (the scan sees what it looks for).
    assert {name for _, name in assignments(OWNER.read_text())} == PRIVATE


def test_the_scan_finds_every_form_of_assignment() -> None:
    source = (
        "state.turn_task = task\n"
        "a.compacting, b = True, 1\n"
        "x.compacting: bool = False\n"
        "setattr(state, 'turn_task', None)\n"
        "state.other = 1\n"
        "print(state.turn_task)\n"
    )
    assert assignments(source) == [
        (1, "turn_task"),
        (2, "compacting"),
        (3, "compacting"),
        (4, "turn_task"),
    ]
