"""Plugin loading: workspace files and entry points, in order; broken plugins are skipped."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from baton.hooks.plugins import ENTRY_POINT_GROUP, load_plugins

GOOD = """
from baton.hooks import hookimpl

@hookimpl
def baton_compacting(event):
    return {"context": ["from {name}"]}
"""


def _write(workspace: Path, name: str, text: str) -> Path:
    folder = workspace / ".baton" / "plugins"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def _no_entry_points() -> list[object]:
    return []


def test_workspace_plugins_load_in_file_name_order(tmp_path: Path) -> None:
    _write(tmp_path, "b_second.py", GOOD.replace("{name}", "b"))
    _write(tmp_path, "a_first.py", GOOD.replace("{name}", "a"))
    plugins = load_plugins(tmp_path, trusted=True, entry_point_source=_no_entry_points)
    assert plugins.problems == []
    assert plugins.order == ["a_first", "b_second"]
    assert [i.plugin_name for i in plugins.impls("baton_compacting")] == ["a_first", "b_second"]


def test_a_plugin_that_raises_on_import_is_reported_and_skipped(tmp_path: Path) -> None:
    _write(tmp_path, "broken.py", "raise RuntimeError('cannot import me')\n")
    _write(tmp_path, "exits.py", "import sys\nsys.exit(2)\n")
    _write(tmp_path, "syntax.py", "def (:\n")
    _write(tmp_path, "good.py", GOOD.replace("{name}", "good"))
    plugins = load_plugins(tmp_path, trusted=True, entry_point_source=_no_entry_points)
    assert plugins.order == ["good"]
    messages = {Path(p.source).name: p.message for p in plugins.problems}
    assert messages["broken.py"] == "RuntimeError: cannot import me"
    assert messages["exits.py"].startswith("SystemExit")
    assert messages["syntax.py"].startswith("SyntaxError")
    assert "was skipped" in str(plugins.problems[0])


def test_a_misspelt_hook_name_is_reported(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "typo.py",
        "from baton.hooks import hookimpl\n\n@hookimpl\ndef baton_precompact(event):\n    pass\n",
    )
    plugins = load_plugins(tmp_path, trusted=True, entry_point_source=_no_entry_points)
    assert plugins.order == []
    assert "unknown hook baton_precompact" in plugins.problems[0].message
    assert plugins.impls("baton_pre_compact") == []


def test_a_bad_signature_is_reported(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "args.py",
        "from baton.hooks import hookimpl\n\n@hookimpl\ndef baton_compacting(nope):\n    pass\n",
    )
    plugins = load_plugins(tmp_path, trusted=True, entry_point_source=_no_entry_points)
    assert plugins.order == []
    assert "nope" in plugins.problems[0].message


def test_tryfirst_and_trylast_move_a_plugin(tmp_path: Path) -> None:
    _write(tmp_path, "a.py", GOOD.replace("@hookimpl", "@hookimpl(trylast=True)"))
    _write(tmp_path, "b.py", GOOD)
    _write(tmp_path, "c.py", GOOD.replace("@hookimpl", "@hookimpl(tryfirst=True)"))
    plugins = load_plugins(tmp_path, trusted=True, entry_point_source=_no_entry_points)
    assert [i.plugin_name for i in plugins.impls("baton_compacting")] == ["c", "b", "a"]


@pytest.fixture
def installed_plugin(tmp_path: Path) -> Iterator[Path]:
    """A real distribution on sys.path declaring two `baton.plugins` entry points."""
    site = tmp_path / "site"
    (site / "demo_baton_plugin").mkdir(parents=True)
    (site / "demo_baton_plugin" / "__init__.py").write_text(GOOD.replace("{name}", "ep"))
    (site / "demo_baton_plugin" / "broken.py").write_text("raise ImportError('missing dep')\n")
    info = site / "demo_baton_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-baton-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\n"
        "zz-demo = demo_baton_plugin\n"
        "aa-broken = demo_baton_plugin.broken\n"
    )
    sys.path.insert(0, str(site))
    try:
        yield tmp_path / "ws"
    finally:
        sys.path.remove(str(site))
        for name in [m for m in sys.modules if m.startswith("demo_baton_plugin")]:
            del sys.modules[name]


def test_entry_point_plugins_load_before_workspace_files(installed_plugin: Path) -> None:
    workspace = installed_plugin
    _write(workspace, "local.py", GOOD.replace("{name}", "local"))
    plugins = load_plugins(workspace, trusted=True)
    assert plugins.order[-2:] == ["zz-demo", "local"]
    broken = [p for p in plugins.problems if "aa-broken" in p.source]
    assert broken and "missing dep" in broken[0].message
