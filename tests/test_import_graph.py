"""No import circles in server/baton, type-only imports included (scripts/import_graph.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts/import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("import_graph", module)
    spec.loader.exec_module(module)
    return module


def test_server_has_no_import_cycle() -> None:
    assert _script().cycles(ROOT / "server" / "baton") == []


def test_the_graph_sees_type_only_and_function_level_imports(tmp_path: Path) -> None:
    # The check above is only worth something if it finds circles where they are.
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n"
    )
    (package / "b.py").write_text("def f():\n    from pkg import a\n")
    (package / "sub" / "c.py").write_text("from ..sub import d\n")
    (package / "sub" / "d.py").write_text("import pkg.sub.c\n")
    (package / "e.py").write_text("from pkg.a import x\n")
    found = _script().cycles(package)
    assert found == [["pkg.a", "pkg.b"], ["pkg.sub.c", "pkg.sub.d"]]


def test_server_packages_keep_their_layers() -> None:
    script = _script()
    root = ROOT / "server" / "baton"
    assert script.package_cycles(root) == []
    assert script.layer_violations(root) == []


def test_the_layer_check_finds_an_upward_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    for sub in ("top", "low"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "config.py").write_text("")
    (package / "top" / "a.py").write_text("from pkg.low import b\nfrom pkg import config\n")
    (package / "low" / "b.py").write_text("def f():\n    from pkg.top import a\n")
    script = _script()
    layers = [("pkg.top",), ("pkg.low",), ("pkg",)]
    assert script.package_cycles(package) == [["pkg.low", "pkg.top"]]
    assert script.layer_violations(package, layers) == [
        "pkg.low.b -> pkg.top.a (up from pkg.low to pkg.top)"
    ]
