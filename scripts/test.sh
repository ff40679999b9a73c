#!/usr/bin/env bash
# The project's test command: every test suite, in order, with one summary at the end.
#
#   1. cargo test --workspace        unit, property and integration tests of the crates
#   2. cargo build -p quince-server  the debug binary the python suites start (target/debug/quince)
#   3. pytest tests/python           python-arango driver suites and curl-level HTTP suites
#   4. tests/crash/crash_test.py     kill -9 crash test with a writer process
#
# Works on a fresh Debian machine that has the Rust toolchain and python3: it installs curl and
# python3-venv with apt-get only when they are missing, and creates .venv (pinned packages from
# tests/requirements.txt) only when it is missing or the requirements changed.
# Every stage runs even when an earlier one failed (except those that need the binary), so one
# run shows every failure; the exit status is non-zero when any stage failed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
VENV="$ROOT/.venv"
REQUIREMENTS="$ROOT/tests/requirements.txt"
export QUINCE_BIN="${QUINCE_BIN:-$ROOT/target/debug/quince}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export PYTHONDONTWRITEBYTECODE=1
export PYTHONUNBUFFERED=1

STAGE_NAMES=()
STAGE_RESULTS=()
STAGE_SECONDS=()
FAILED=0

log() { printf '\n==> %s\n' "$*"; }

# Runs one stage with a time limit, records its outcome, never stops the script.
run_stage() {
  local name="$1" limit="$2"
  shift 2
  log "$name"
  local start=$SECONDS status=0
  timeout --kill-after=30 "$limit" "$@" || status=$?
  STAGE_NAMES+=("$name")
  STAGE_SECONDS+=($((SECONDS - start)))
  if [[ $status -eq 0 ]]; then
    STAGE_RESULTS+=("passed")
  else
    if [[ $status -eq 124 || $status -eq 137 ]]; then
      STAGE_RESULTS+=("FAILED (timed out after ${limit}s)")
    else
      STAGE_RESULTS+=("FAILED (exit $status)")
    fi
    FAILED=$((FAILED + 1))
  fi
  return 0
}

skip_stage() {
  STAGE_NAMES+=("$1")
  STAGE_RESULTS+=("SKIPPED ($2)")
  STAGE_SECONDS+=(0)
  FAILED=$((FAILED + 1))
}

summary() {
  printf '\n==> summary\n'
  local i passed=0
  for i in "${!STAGE_NAMES[@]}"; do
    printf '  %-34s %-32s %5ss\n' "${STAGE_NAMES[$i]}" "${STAGE_RESULTS[$i]}" "${STAGE_SECONDS[$i]}"
    [[ "${STAGE_RESULTS[$i]}" == passed ]] && passed=$((passed + 1))
  done
  printf 'stages: %d passed, %d failed\n' "$passed" "$FAILED"
}

apt_updated=0
apt_install() {
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "need root or sudo to install: $*" >&2; return 1; }
    sudo="sudo"
  fi
  if [[ $apt_updated -eq 0 ]]; then
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" </dev/null
}

# --- prerequisites ---------------------------------------------------------------------------
log "prerequisites"
command -v cargo >/dev/null 2>&1 || { echo "cargo not found: install the Rust toolchain" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || apt_install python3
command -v curl >/dev/null 2>&1 || apt_install curl ca-certificates

requirements_hash="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
stamp="$VENV/.quince-requirements"
if [[ ! -x "$VENV/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$requirements_hash" ]]; then
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    py_minor="$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    apt_install python3-venv "python${py_minor}-venv" || apt_install python3-venv
    python3 -m venv "$VENV"
  fi
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQUIREMENTS"
  echo "$requirements_hash" >"$stamp"
fi
"$VENV/bin/python" -m pip list --disable-pip-version-check 2>/dev/null | grep -Ei '^(python-arango|pytest|requests) '

# --- the stages -------------------------------------------------------------------------------
run_stage "cargo test --workspace" 3000 cargo test --workspace --quiet

run_stage "cargo build -p quince-server" 1800 cargo build --quiet -p quince-server
built=0
[[ "${STAGE_RESULTS[-1]}" == passed && -x "$QUINCE_BIN" ]] && built=1

if [[ $built -eq 1 ]]; then
  run_stage "pytest tests/python" 900 "$VENV/bin/python" -m pytest tests/python -q
  run_stage "crash test (kill -9)" 300 "$VENV/bin/python" tests/crash/crash_test.py
else
  skip_stage "pytest tests/python" "no server binary"
  skip_stage "crash test (kill -9)" "no server binary"
fi

summary
[[ $FAILED -eq 0 ]]
