"""glob and grep on ripgrep against the pure-Python implementation they replaced, in one run.

A generated tree (default 400 directories x 50 files x 60 lines, 20,000 files,
~80 MB) is searched by both implementations with the same tool inputs; each
case prints the median of several runs and the ratio Python / ripgrep. The
baseline is the previous `tools/search.py` loaded from git (commit
`BASELINE`), so the two run side by side in one process.

    python bench/search.py [--dirs 400] [--files 50] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "server"))

from baton.config import Settings  # noqa: E402
from baton.tools import search as rg_search  # noqa: E402
from baton.tools.base import ToolContext  # noqa: E402

# The last commit whose tools/search.py walked and matched in Python.
BASELINE = "fa87bec"
WORDS = ["alpha", "beta", "gamma", "delta", "def", "class", "return", "import", "value"]


def baseline_module() -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{BASELINE}:server/baton/tools/search.py"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("baton_search_python")
    exec(compile(source, "search_python.py", "exec"), module.__dict__)
    return module


def make_tree(root: Path, dirs: int, files: int) -> None:
    rng = random.Random(7)
    for d in range(dirs):
        folder = root / f"pkg{d % 20}" / f"mod{d}"
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(files):
            lines = [" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(60)]
            if d == dirs - 1 and f == files - 1:
                lines[30] = "needle_at_the_end = 1"
            (folder / f"f{f}.py").write_text("\n".join(lines) + "\n")


def median_time(tool: Any, args: Any, ctx: ToolContext, runs: int) -> tuple[float, str]:
    times = []
    output = ""
    for _ in range(runs):
        began = time.perf_counter()
        output = asyncio.run(tool.run(args, ctx)).output
        times.append(time.perf_counter() - began)
    return statistics.median(times), output


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dirs", type=int, default=400)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    python_search = baseline_module()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        make_tree(root, opts.dirs, opts.files)
        ctx = ToolContext(
            session_id="bench",
            tool_call_id="bench",
            workspace=root,
            mode="plan",
            settings=Settings(),
            ask_permission=None,  # type: ignore[arg-type]
        )
        cases = [
            ("grep, one match at the end", "grep", {"pattern": "needle_at_the_end"}),
            ("grep, no match", "grep", {"pattern": "absent_[0-9]+_word"}),
            ("grep, 200+ matches", "grep", {"pattern": r"alpha beta \w+"}),
            ("grep, include *.py, case-insensitive", "grep", {"pattern": "(?i)NEEDLE_AT"}),
            ("glob **/*.py", "glob", {"pattern": "**/*.py"}),
            ("glob pkg3/**/f1*.py", "glob", {"pattern": "pkg3/**/f1*.py"}),
        ]
        files = opts.dirs * opts.files
        print(f"tree: {files} files, {opts.runs} runs per case (median seconds)")
        print(f"{'case':40} {'python':>9} {'ripgrep':>9} {'ratio':>7}")
        for label, name, raw in cases:
            old_tool = python_search.GrepTool() if name == "grep" else python_search.GlobTool()
            new_tool = rg_search.GrepTool() if name == "grep" else rg_search.GlobTool()
            old_args = old_tool.input_model(**raw)
            new_args = new_tool.input_model(**raw)
            old, old_out = median_time(old_tool, old_args, ctx, opts.runs)
            new, new_out = median_time(new_tool, new_args, ctx, opts.runs)
            same = "" if old_out.splitlines()[:1] == new_out.splitlines()[:1] else "  (differ)"
            print(f"{label:40} {old:9.3f} {new:9.3f} {old / new:6.1f}x{same}")


if __name__ == "__main__":
    main()
