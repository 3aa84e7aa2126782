#!/usr/bin/env bash
# Takes the README's screenshots (media/screenshot-*-{dark,light,high-contrast}.png) in real
# VS Code: code-server from the cache (scripts/setup-code-server.sh), the
# extension packaged from this checkout, the repository's server (.venv) and the
# scripted fake model. The run writes only to temporary folders (VS Code's
# profile, the workspace, Baton's store, HOME), dist/ (the build), media/ and
# docs/screenshots/sidebar/, and
# uses loopback only; setup-code-server.sh downloads into its cache once, the
# first time. It also takes the sidebar's everyday situations (reopened session,
# edited proposal, write prompt, retry countdown, error titles, first run, retry in place, the
# composer at 300 px, tool output, plan line, context meter) in dark, light and
# high contrast from the webview bundle (test/screenshots/situations.screenshots.ts)
# into dist/screenshots/situations/, copied to docs/screenshots/sidebar/.
# Usage: npm run screenshots [-- -t dark]
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-code-server.sh >/dev/null
if [ ! -x ../.venv/bin/python ]; then
  echo "screenshots: the repository's .venv is missing (python3 -m venv .venv && .venv/bin/pip install -e '.[dev]')" >&2
  exit 1
fi
node esbuild.mjs >/dev/null
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# No bundled server wheels needed: the screenshots use the repository's .venv.
node_modules/.bin/vsce package --no-dependencies --no-rewrite-relative-links --allow-missing-repository -o "$out/baton.vsix" >/dev/null
BATON_SCREENSHOT_VSIX="$out/baton.vsix" node_modules/.bin/vitest run --config vitest.screenshots.config.mts "$@"
ls -l media/screenshot-*.png
# The situations are kept beside the docs (not in the .vsix, which ships media/).
rm -rf ../docs/screenshots/sidebar
mkdir -p ../docs/screenshots/sidebar
cp dist/screenshots/situations/*.png ../docs/screenshots/sidebar/
ls ../docs/screenshots/sidebar/*.png
