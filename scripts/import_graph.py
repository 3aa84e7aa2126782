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
"no import cycles" when there is none. Then the same at package level (`baton.agent`,
`baton.faces.lsp`, `baton.compaction`; the loose modules at the top, `config.py`,
`protocol.py`, …, are the foundation), and every import that goes up the layer order
in `LAYERS`: a package may import its own layer or any layer below it, never one above.
Exits 1 on any file cycle, package cycle or upward import.

    python scripts/import_graph.py [server/baton]
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
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


# The layer order, top first. Faces reach people and editors; `app` assembles the core;
# the features plug into the session service (their seams), which the services below it
# serve; the agent loop is what the model is sent and
# the turn; below it the tools, the store, the providers and the foundation.
LAYERS: list[tuple[str, ...]] = [
    ("baton.__main__", "baton.faces.cli"),
    ("baton.faces.acp", "baton.faces.demo"),
    ("baton.faces.lsp",),
    ("baton.faces.terminal",),
    ("baton.app",),
    ("baton.features",),
    ("baton.delegation", "baton.skills"),
    ("baton.hooks", "baton.mcp_servers", "baton.review", "baton.compaction"),
    ("baton.session",),
    ("baton.plan",),
    ("baton.agent",),
    ("baton.tools",),
    ("baton.store",),
    ("baton.providers",),
    ("baton.local",),
    ("baton",),
]


def package_of(module: str, modules: dict[str, Path]) -> str:
    """The package a module counts for: `baton.X` (`baton.faces.X` for a face), or `baton`
    for the foundation's loose modules (`baton.app`, `baton.features` and `baton.__main__`
    stand alone)."""
    parts = module.split(".")
    if parts[1:2] == ["faces"] and len(parts) > 2:
        return ".".join(parts[:3])
    if len(parts) == 1:
        return module
    top = ".".join(parts[:2])
    is_package = modules[top].name == "__init__.py" if top in modules else True
    if is_package or parts[1] in ("app", "features", "__main__"):
        return top
    return parts[0]


def crossings(root: Path) -> Iterator[tuple[str, str, str, str]]:
    """Each import between packages: (module, target, module's package, target's package),
    in a stable order."""
    modules = module_names(root)
    for module, targets in sorted(graph(root).items()):
        source = package_of(module, modules)
        for target in sorted(targets):
            other = package_of(target, modules)
            if other != source:
                yield module, target, source, other


def package_graph(root: Path) -> dict[str, set[str]]:
    modules = module_names(root)
    out: dict[str, set[str]] = {package_of(module, modules): set() for module in modules}
    for _, _, source, other in crossings(root):
        out[source].add(other)
    return out


def package_cycles(root: Path) -> list[list[str]]:
    """The import circles between packages."""
    found = components(package_graph(root))
    return sorted((c for c in found if len(c) > 1), key=lambda c: c[0])


def layer_violations(root: Path, layers: list[tuple[str, ...]] = LAYERS) -> list[str]:
    """Each import that goes up the layer order, or between packages no layer names."""
    level = {package: i for i, layer in enumerate(layers) for package in layer}
    found: list[str] = []
    for module, target, source, other in crossings(root):
        if source not in level or other not in level:
            unknown = source if source not in level else other
            found.append(f"{module} -> {target} ({unknown} is in no layer)")
        elif level[other] < level[source]:
            found.append(f"{module} -> {target} (up from {source} to {other})")
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).parent.parent / "server" / "baton"
    status = 0
    found = cycles(root)
    if not found:
        print("no import cycles")
    for component in found:
        print(f"{len(component)} modules: {', '.join(component)}")
        status = 1
    packages = package_cycles(root)
    if not packages:
        print("no package cycles")
    for component in packages:
        print(f"package cycle: {', '.join(component)}")
        status = 1
    upward = layer_violations(root)
    if not upward:
        print("the layer order holds")
    for line in upward:
        print(f"upward import: {line}")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
