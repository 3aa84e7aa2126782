#!/usr/bin/env bash
# Every check of the VS Code extension, in CI order: install, typecheck,
# protocol drift, build, unit tests, webview tests in headless Chromium,
# package the .vsix, and the real-VS-Code test in code-server (skipped with
# BATON_SKIP_VSCODE_E2E=1). Needs node 20 + npm, Python 3.11+ (the repo's
# .venv when present) and, for the browser tests, Debian's chromium (installed
# with apt when missing). code-server and node 24 are cached outside the clone
# (scripts/setup-code-server.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh

results="dist/test-results"
timings=()
step() {
  local name="$1"; shift
  echo "== extension: $name"
  local start=$SECONDS
  "$@"
  timings+=("$name: $((SECONDS - start)) s")
}

# Every apt package the run needs, in one install (one `apt-get update`): chromium for
# the webview tests, and what setup-code-server.sh needs when the real VS Code test runs.
ensure_apt_packages() {
  if [ "${BATON_SKIP_VSCODE_E2E:-0}" != "1" ]; then
    apt_need chromium libkrb5-dev
  elif [ ! -x "${BATON_CHROMIUM:-/usr/bin/chromium}" ]; then
    apt_need chromium
  fi
}

vitest_run() {
  local config="$1" name="$2"
  npx vitest run --config "$config" --reporter=default --reporter=json --outputFile.json="$results/$name.json"
}

step "npm ci" npm ci --no-audit --no-fund
mkdir -p "$results"
rm -f "$results"/*.json
step "typecheck" npm run --silent typecheck
step "protocol drift" npm run --silent check:protocol
step "build" npm run --silent build
step "unit tests (vitest)" vitest_run vitest.config.mts unit
step "apt packages (chromium)" ensure_apt_packages
step "webview tests (chromium)" vitest_run vitest.webview.config.mts webview
step "package (.vsix)" npm run --silent package
if [ "${BATON_SKIP_VSCODE_E2E:-0}" = "1" ]; then
  echo "== extension: real VS Code test skipped (BATON_SKIP_VSCODE_E2E=1)"
else
  if bash scripts/setup-code-server.sh --check; then
    step "code-server (cached)" bash scripts/setup-code-server.sh
  else
    step "code-server (downloading and installing: minutes, once)" bash scripts/setup-code-server.sh
  fi
  step "real VS Code test (code-server)" vitest_run vitest.e2e.config.mts e2e
fi

echo "== extension timings"
printf '  %s\n' "${timings[@]}"
node -e '
const fs = require("fs");
let passed = 0, failed = 0, skipped = 0;
for (const f of fs.readdirSync(process.argv[1])) {
  const r = JSON.parse(fs.readFileSync(process.argv[1] + "/" + f, "utf8"));
  passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + (r.numTodoTests || 0);
}
console.log(`extension: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
' "$results"
