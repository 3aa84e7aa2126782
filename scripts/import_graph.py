#!/usr/bin/env python3
"""The import graph of `server/baton` and its strongly connected components.

Every `import` / `from ... import` of a `baton` module counts, wherever it stands:
at module level, inside a function, under `if TYPE_CHECKING:`. An edge goes to the
most specific module that exists (`from baton.session import state` is an edge to
`baton.session.state`; `from baton.session.state import View` to
`baton.session.state`); importing a name from a package (`from baton.hooks import
hookimpl`) is an edge to its `__init__`. The parent packages Python imports on the way
to a submodule are not edges (every module would otherwise import its package).

Prints each component of more than one module (an import circle), one a line, and
"no import cycles" when there is none; exits 1 if there is a cycle.

    python scripts/import_graph.py [server/baton]
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable
from pathlib import Path


def module_names(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the package `root`."""
    names: dict[str, Path] = {}
    base = root.parent
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The most specific existing module `name` is or lies in."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets: Iterable[str] = (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                source = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            # `from pkg import sub` imports the submodule when there is one, else a name
            # of `pkg` itself.
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            resolved = _resolve(target, modules)
            if resolved is not None and resolved != module:
                out.add(resolved)
    return out


def graph(root: Path) -> dict[str, set[str]]:
    modules = module_names(root)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def components(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(sorted(component))
    return out


def cycles(root: Path) -> list[list[str]]:
    """The import circles under `root`: components of more than one module."""
    return sorted((c for c in components(graph(root)) if len(c) > 1), key=lambda c: c[0])


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).parent.parent / "server" / "baton"
    found = cycles(root)
    if not found:
        print("no import cycles")
        return 0
    for component in found:
        print(f"{len(component)} modules: {', '.join(component)}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
