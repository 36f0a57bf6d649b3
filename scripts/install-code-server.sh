#!/usr/bin/env bash
# Install code-server (a real VS Code in the browser) for the end-to-end test of the extension
# (tests/test_vscode_e2e.py), from the npm registry only, into a cache folder kept between runs.
#
#   scripts/install-code-server.sh [DIR]     # default: $CITELENS_CODE_SERVER_DIR or
#                                            # ${XDG_CACHE_HOME:-~/.cache}/citelens/code-server-4.100.3
# Prints the path of the code-server executable. Needs node 20 + npm, and (Debian) the packages
# ripgrep, libkrb5-dev and chromium (scripts/install-vscode-test-deps.sh installs them as root).
# code-server 4.100.3 is the last release that runs on Node 20.
set -euo pipefail
VERSION=4.100.3
DIR="${1:-${CITELENS_CODE_SERVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/citelens/code-server-$VERSION}}"
BIN="$DIR/node_modules/code-server/out/node/entry.js"
STAMP="$DIR/.installed"
if [[ -f "$STAMP" && -f "$BIN" ]]; then
  echo "$DIR/node_modules/.bin/code-server"
  exit 0
fi
command -v npm >/dev/null || { echo "install-code-server: npm is not on PATH" >&2; exit 1; }
RG="$(command -v rg || true)"
[[ -n "$RG" ]] || { echo "install-code-server: rg (Debian package ripgrep) is not on PATH" >&2; exit 1; }
mkdir -p "$DIR"
log() { echo "install-code-server: $*" >&2; }
log "npm install code-server@$VERSION into $DIR"
npm install --no-audit --no-fund --ignore-scripts --prefix "$DIR" "code-server@$VERSION" >&2
CS="$DIR/node_modules/code-server"
cd "$CS/lib/vscode"
# @vscode/ripgrep's postinstall downloads a binary: give it Debian's rg first, so it skips.
log "lib/vscode: npm install (production dependencies)"
npm install --no-audit --no-fund --unsafe-perm --omit=dev --ignore-scripts >&2
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$RG" node_modules/@vscode/ripgrep/bin/rg
# native modules: build what the scripts would have built (offline, from source)
export npm_config_yes=true
for mod in node-pty kerberos @parcel/watcher native-watchdog @vscode/spdlog @vscode/sqlite3 \
           @vscode/deviceid @vscode/windows-registry @vscode/policy-watcher; do
  if [[ -d "node_modules/$mod" ]]; then
    log "rebuild $mod"
    npm rebuild "$mod" >&2 || log "rebuild of $mod failed (continuing: not every module is needed)"
  fi
done
ln -sfn node_modules node_modules.asar
cd "$CS"
npm install --no-audit --no-fund --unsafe-perm --omit=dev --ignore-scripts >&2 || true
if [[ -d node_modules/argon2 ]]; then
  log "rebuild argon2 from source"
  npm rebuild argon2 --build-from-source >&2
fi
touch "$STAMP"
echo "$DIR/node_modules/.bin/code-server"
