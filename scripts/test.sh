#!/usr/bin/env bash
# The README's test command, from a fresh clone on a fresh Debian machine with Python 3.11+,
# node 20 and npm: what the tests drive for real, the venv, the static checks, the suite.
#
#   bash scripts/test.sh [PYTEST ARGS...]      e.g. bash scripts/test.sh -x -k scale
#
# - As root it installs the Debian packages the tests need (PostgreSQL for tests/test_scale.py;
#   chromium, ripgrep, libkrb5-dev, g++ and make for the real VS Code test) and code-server
#   from npm into the cache folder (scripts/install-code-server.sh; kept between runs).
#   As another user it prints one line naming the missing packages and goes on: the tests
#   that need them then fail (VS Code) or skip (PostgreSQL, outside CI) saying what is
#   missing, and every other test still runs.
# - ruff and mypy run here, once (mypy alone takes minutes: not a test of the suite); mypy
#   runs beside pytest.
# - The suite runs on CITELENS_TEST_WORKERS workers (default 4; 0: one process).
# - The large bibliographies are not needed: tests that read them skip unless
#   CITELENS_BIGBIB names their folder (tests/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "scripts/test.sh: $*" >&2; }

# ---------------------------------------------------------------- the machine's packages
missing=()
command -v initdb >/dev/null || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null \
  || missing+=(postgresql)
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || missing+=(chromium)
command -v rg >/dev/null || missing+=(ripgrep)
[[ -e /usr/include/krb5.h || -e /usr/include/krb5/krb5.h ]] || missing+=(libkrb5-dev)
command -v g++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)
if ((${#missing[@]})); then
  if [[ "$(id -u)" == 0 ]]; then
    say "installing ${missing[*]} (Debian packages the tests drive)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    say "missing Debian packages, as root: apt-get install -y ${missing[*]} (the tests that need them fail or skip)"
  fi
fi
if command -v npm >/dev/null && command -v rg >/dev/null; then
  install_log="$(mktemp)"
  bash scripts/install-code-server.sh >/dev/null 2>"$install_log" || {
    tail -n 20 "$install_log" >&2
    say "could not install code-server: tests/test_vscode_e2e.py will fail and say why"
  }
  rm -f "$install_log"
elif ! command -v npm >/dev/null; then
  say "node 20 and npm are not on PATH: the VS Code tests will fail and say so"
fi  # (without ripgrep, code-server is not installed: the line above named the package)

# ---------------------------------------------------------------- the project
python3 -m venv .venv
.venv/bin/pip install -q -e '.[test]'

# ---------------------------------------------------------------- static checks, once
# (a failure is reported and fails the command, after the tests have run all the same)
lint=0
.venv/bin/python -m ruff check -q server tests benchmarks || { lint=1; say "ruff check failed (above)"; }
# formatting is said, not enforced (the team's gates are ruff check and mypy)
.venv/bin/python -m ruff format -q --check server >/dev/null \
  || say "note: ruff format would change files in server/ (.venv/bin/python -m ruff format server)"
# mypy (strict, files from pyproject.toml) runs beside the tests, which mostly wait on
# servers and editors: its result is printed after them only when it fails
types_log="$(mktemp)"
.venv/bin/python -m mypy >"$types_log" 2>&1 &
types_pid=$!

# ---------------------------------------------------------------- the suite
# In parallel (pytest-xdist): the suite mostly waits (a real VS Code and Neovim, Ray, venue
# runs, sources failing at their real pacing), so more workers than the 2 cores pay.
# Tests sharing a costly fixture stay on one worker (tests/conftest.py). CITELENS_TEST_WORKERS=0
# runs it in this one process; a -n given after the command wins.
tests=0
.venv/bin/python -m pytest -n "${CITELENS_TEST_WORKERS:-4}" --dist loadgroup "$@" || tests=$?
types=0
wait "$types_pid" || types=$?
if ((types)); then
  cat "$types_log" >&2
  say "mypy found problems (above)"
fi
rm -f "$types_log"
((tests)) && exit "$tests"
((types)) && exit "$types"
exit "$lint"
