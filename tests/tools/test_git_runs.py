"""What decides what git runs (pure parts; through the server in
tests/reliability/test_hardening2.py)."""

from __future__ import annotations

from pathlib import Path

from baton.tools.git_runs import hooks_folders, parse_git_config
from baton.tools.policy import protected_path_reason


def test_git_config_values_sections_quotes_and_comments(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        '[core]\n\tbare = false\n\thooksPath = "my hooks" # comment\n'
        '[includeIf "gitdir:~/work/"]\n\tpath = ../a\\"b.inc\n[CORE] HooksPath = x;y\n'
    )
    assert parse_git_config(config) == [
        ("core.bare", "false"),
        ("core.hookspath", "my hooks"),
        ("includeif.path", '../a"b.inc'),
        ("core.hookspath", "x"),
    ]
    assert parse_git_config(tmp_path / "missing") == []


def test_a_worktree_reads_its_git_dir_and_common_dir(tmp_path: Path) -> None:
    main = tmp_path / "main.git"
    (main / "worktrees" / "w").mkdir(parents=True)
    (main / "config").write_text("[core]\n\thooksPath = hooks-here\n")
    (main / "worktrees" / "w" / "commondir").write_text("../..\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {main / 'worktrees' / 'w'}\n")
    assert hooks_folders(tree, tree / "x.txt") == [(tree / "hooks-here").resolve()]
    assert protected_path_reason(tree, Path("hooks-here/pre-push")) is not None
    assert protected_path_reason(tree, Path("src/pre-push")) is None
