"""`baton demo`'s entry: the provider it runs on (the local model, OpenAI with
`OPENAI_API_KEY`, or Claude with `ANTHROPIC_API_KEY`), a temporary directory for the project and the store, the run."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from baton.faces.demo.phases import Demo
from baton.faces.demo.scenario import EXPLORE_STEPS, LOCAL_SETTINGS


def _configure() -> tuple[dict[str, Any], str] | str:
    """Client settings and a label for the provider, or an error message naming the fix."""
    settings: dict[str, Any] = {
        "maxSteps": 4,
        # The explore child: the steps it is held to, no more.
        "delegation": {"maxSteps": len(EXPLORE_STEPS)},
        "permissions": {"write": "allow", "bash": "deny"},
        # Only the manual compaction, so the demo shows one clear record. It keeps little
        # verbatim and protects no tool output from pruning: with the reading done in the
        # explore child, the planner's context fits whole in the default kept window.
        "compaction": {"auto": False, "keepRecentTokens": 200, "protectToolOutputTokens": 0},
    }
    if os.environ.get("OPENAI_API_KEY"):
        settings["provider"] = "openai"
        return settings, "OpenAI (OPENAI_API_KEY is set)"
    if os.environ.get("ANTHROPIC_API_KEY"):
        settings["provider"] = "anthropic"
        return settings, "Claude (ANTHROPIC_API_KEY is set)"
    from baton.config import LocalSettings
    from baton.errors import ConfigError
    from baton.local.engine import require_xllamacpp, resolve_model_path
    from baton.local.model_files import DEFAULT_MODEL

    try:
        require_xllamacpp()
        model = resolve_model_path(LocalSettings())
    except ConfigError as exc:
        return exc.message
    settings["provider"] = "local"
    settings["local"] = {**LOCAL_SETTINGS, "modelPath": str(model)}
    return settings, f"local model {DEFAULT_MODEL.title}, embedded llama.cpp, no API key"


def main(*, clean: bool = False, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    configured = _configure()
    if isinstance(configured, str):
        print(f"baton demo: {configured}", file=sys.stderr)
        return 1
    settings, label = configured
    root = Path(tempfile.mkdtemp(prefix="baton-demo-"))
    # The demo's store goes with its project; the model path was resolved above.
    os.environ["XDG_DATA_HOME"] = str(root / "data")
    demo = Demo(out, root, settings, label)
    try:
        return asyncio.run(demo.run())
    except KeyboardInterrupt:
        print("baton demo: interrupted", file=sys.stderr)
        return 130
    finally:
        if clean:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(
                f"the demo's project and store are kept in {root} (remove it when done)", file=out
            )
