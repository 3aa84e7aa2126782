#!/usr/bin/env bash
# Runs every test Baton has: lint, types, the Python suites (unit, end-to-end
# through the real server, reliability subsets), and the VS Code extension's
# tests. Installs what it needs itself on a machine with Python 3.11+, node 20,
# npm, pip and apt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
. .venv/bin/activate
# What is installed already is kept (pip upgrades nothing that satisfies the pins).
python -m pip install --quiet --disable-pip-version-check -e ".[dev]"

echo "== lint and types"
ruff check server tests bench
ruff format --check server tests bench
mypy

echo "== python tests"
set +e
python -m pytest -q -p no:cacheprovider "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
[ "$status" -eq 0 ] || exit "$status"

if [ -f client-vscode/scripts/test-all.sh ]; then
  echo "== VS Code extension"
  bash client-vscode/scripts/test-all.sh
fi
echo "== all tests passed"
