#!/usr/bin/env bash
# System packages the VS Code end-to-end test (tests/test_vscode_e2e.py) and the venue page test
# (tests/test_venue_page.py) need on Debian:
# chromium (driven by Playwright; Playwright's own browser download is never used), ripgrep
# (code-server's search binary, which its npm package would download) and libkrb5-dev (to build
# code-server's kerberos module). Run as root; does nothing when they are all installed.
set -euo pipefail
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v rg >/dev/null || need+=(ripgrep)
[[ -e /usr/include/krb5.h || -e /usr/include/krb5/krb5.h ]] || need+=(libkrb5-dev)
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
((${#need[@]})) || exit 0
if [[ "$(id -u)" != 0 ]]; then
  echo "install-vscode-test-deps: missing ${need[*]}; run as root: apt-get install -y ${need[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
apt-get install -y -q "${need[@]}" >&2
