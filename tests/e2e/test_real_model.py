"""The real local model through the real server process: no fake LLM, no key.

Selected with `-m real_model`; skipped, saying why, when xllamacpp or the model
file is missing (`baton model install`, or BATON_TEST_REAL_MODEL=/path/to.gguf).
The model is small and what it does varies from run to run, so these tests
assert Baton's behaviour for any answer (tests/e2e/real_model_checks.py, which
test_real_model_checks.py also runs on scripted good and bad answers): what
streamed is what was stored, a plan exists when one was written, a compaction
that gains nothing changes nothing, and the plan is in the next request after a
fresh-context compaction. How often the model does the right thing is measured
by bench/local_agent.py and bench/demo_runs.py. Prompts and token limits are kept small: on two CPU cores every
model step costs tens of seconds.
"""

from __future__ import annotations

import importlib.util
import os
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from baton.local.model_files import DEFAULT_MODEL, looks_installed, model_path
from tests.conftest import StartBaton
from tests.e2e.real_model_checks import (
    PLAN_PROMPT,
    SECRET,
    TOOL_PROMPT,
    check_plan_survives_compaction,
    check_turn_recorded_as_streamed,
)


def _find_model() -> tuple[Path | None, str]:
    # Resolved at import, before the `home` fixture points XDG_DATA_HOME at a temp dir.
    override = os.environ.get("BATON_TEST_REAL_MODEL")
    if override:
        path = Path(override).expanduser()
        return (
            (path, "")
            if path.is_file()
            else (None, f"BATON_TEST_REAL_MODEL={override} is not a file")
        )
    path = model_path(DEFAULT_MODEL)
    if looks_installed(path, DEFAULT_MODEL):
        return path, ""
    return None, (
        f"the local model is not installed at {path}: run `baton model install` "
        "(or set BATON_TEST_REAL_MODEL to a GGUF file)"
    )


MODEL, WHY_NOT = _find_model()
if importlib.util.find_spec("xllamacpp") is None:
    MODEL, WHY_NOT = None, "xllamacpp is not installed: pip install -e '.[local]'"

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(MODEL is None, reason=WHY_NOT),
    pytest.mark.timeout(900),
]


def _settings(**extra: Any) -> dict[str, Any]:
    return {
        "provider": "local",
        "local": {"modelPath": str(MODEL), "contextSize": 4096, "maxTokens": 160},
        "maxSteps": 3,
        "compaction": {"auto": False},
        **extra,
    }


@pytest.mark.asyncio
async def test_a_real_model_turn_is_recorded_as_it_streamed(
    start_baton: StartBaton, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text(f"The secret word is: {SECRET}\n", encoding="utf-8")
    baton = await start_baton(settings=_settings(), api_key=None)
    sid = await baton.new_session()
    result = await baton.prompt(sid, TOOL_PROMPT)
    await check_turn_recorded_as_streamed(baton, sid, result)


# The demo's sample (about 90 lines, 2,800 tokens of session once read and planned): a
# session big enough that the compaction has something to take out of the view.
STATS = (resources.files("baton") / "demo_project" / "stats.py").read_text(encoding="utf-8")


@pytest.mark.asyncio
async def test_plan_written_to_a_file_survives_a_compaction(
    start_baton: StartBaton, workspace: Path
) -> None:
    (workspace / "stats.py").write_text(STATS, encoding="utf-8")
    baton = await start_baton(settings=_settings(maxSteps=4), api_key=None)
    sid = await baton.new_session(mode="plan")
    result = await baton.prompt(sid, PLAN_PROMPT)
    await check_plan_survives_compaction(baton, workspace, sid, result)
