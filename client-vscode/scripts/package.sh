#!/usr/bin/env bash
# Builds the extension's .vsix without running any test: installs the npm
# dependencies, bundles the extension, bundles the Baton server wheel with its
# dependency wheels (scripts/bundle-python.sh, so the extension installs the
# server offline) and packages everything into client-vscode/dist/baton.vsix.
# Needs node 20+ with npm and Python 3.11+ with pip (the repo's .venv when present).
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund
npm run --silent package
echo "built $(pwd)/dist/baton.vsix"
