#!/usr/bin/env bash
# The project's test command: every test suite, in order, with one summary at the end.
#
#   1. cargo fmt --check             the code's own layout
#      cargo clippy -D warnings      clippy's lints, run inside the test build: the workspace's
#                                    crates are compiled by clippy-driver (as `cargo clippy`
#                                    does, but with code generation), so the dependencies are
#                                    built once, for the tests, instead of also checked apart
#   2. cargo test --workspace        unit, property and integration tests of the crates
#   3. cargo build                   the debug binaries the process-level suites start
#      (the clippy, test, build and fuzz stages run with no protoc on PATH: building needs
#      only the Rust toolchain, a C compiler and make)
#   4. pytest tests/python           python-arango driver suites and curl-level HTTP suites
#   5. node tests/js                 arangojs suites with Node's built-in test runner
#   6. tests/crash/kill_loop.py      kill -9 at random moments under every kind of writer
#   7. tests/crash/trx_atomicity.py  kill -9 under stream transactions, multi-document requests
#                                    and complete=true imports: each whole or absent
#      tests/crash/backup_crash_loop.py  kill -9 while hot backups are taken and restored
#   8. tests/crash/corruption_test.py  one flipped byte per seed: refuse, or lose nothing
#   9. tests/powercut/powercut_test.py  power cuts on a FUSE file system that drops unsynced writes
#  10. tests/faults/*                a failing fsync (LD_PRELOAD shim) and a full disk (tmpfs, ext4)
#  11. scripts/fuzz.sh               every cargo-fuzz target for a bounded time
#  12. cargo deny                    licences, bans and sources of every dependency (advisories
#                                    when the advisory database can be fetched)
#
# Works on a fresh Debian machine that has the Rust toolchain and python3: it installs curl,
# gcc and libc6-dev, make, openssl, python3-venv, etcd-server (the etcd members the metadata store's
# and the cluster's tests start), etcd-client (etcdctl, which the cluster join test uses),
# iproute2 (ip, for the partition tests' network namespaces), nodejs and npm with apt-get only
# when they are missing, and creates .venv (pinned packages from tests/requirements.txt) only
# when it is missing or the requirements changed; cargo-fuzz and cargo-deny are installed from
# crates.io into ~/.cargo/bin the first time. The stages run with QUINCE_REQUIRE_ETCD=1, so a test that needs
# etcd fails rather than skips when the etcd binary is missing.
# The arangojs stage installs nodejs and npm the same way, and runs `npm ci` in tests/js only
# when its node_modules is missing or package-lock.json changed.
# The power-cut stage needs root and /dev/fuse (it fails without them); the full-disk stage
# needs root (it says it skipped without it).
# Every stage runs even when an earlier one failed (except those that need the binary), so one
# run shows every failure; the exit status is non-zero when any stage failed, or when the whole
# run took longer than QUINCE_TEST_BUDGET seconds (default 1800: CI's budget is 30 minutes).
# The summary is a table of every stage's outcome and time, and the total.
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
BUDGET="${QUINCE_TEST_BUDGET:-1800}"

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
  printf '  %-34s %-32s %5ss\n' "total" "(budget ${BUDGET}s)" "$SECONDS"
  printf 'stages: %d passed, %d failed\n' "$passed" "$FAILED"
  if [[ $SECONDS -gt $BUDGET ]]; then
    printf 'FAILED: the run took %ss, over its budget of %ss\n' "$SECONDS" "$BUDGET"
    FAILED=$((FAILED + 1))
  fi
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
command -v gcc >/dev/null 2>&1 || apt_install gcc libc6-dev
# jemalloc (the server's allocator) builds its C code with configure and make.
command -v make >/dev/null 2>&1 || apt_install make
# The TLS suites make their certificate authorities with the openssl command.
command -v openssl >/dev/null 2>&1 || apt_install openssl
# quince-meta's tests start real etcd members (crates/meta/tests/support); with this set they
# fail instead of skipping when the etcd binary is missing.
command -v etcd >/dev/null 2>&1 || apt_install etcd-server
# The cluster join test lists the members with etcdctl.
command -v etcdctl >/dev/null 2>&1 || apt_install etcd-client
export QUINCE_REQUIRE_ETCD=1
# The cluster's partition and join tests make network namespaces with ip(8).
command -v ip >/dev/null 2>&1 || apt_install iproute2

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

# Runs "$@" where no protoc can be found, as on a machine with only the Rust toolchain: each
# PATH directory that holds a protoc is replaced by a directory of links to everything else in
# it, and PROTOC names nothing. The build must not need protoc (docs/architecture.md).
without_protoc() {
  local shadow dir entry path="" status=0
  shadow="$(mktemp -d "${TMPDIR:-/tmp}/quince-no-protoc.XXXXXX")"
  local IFS=:
  for dir in $PATH; do
    if [[ -n "$dir" && -e "$dir/protoc" ]]; then
      local copy="$shadow/${dir//\//_}"
      mkdir -p "$copy"
      for entry in "$dir"/*; do
        [[ "${entry##*/}" == protoc ]] || ln -s "$entry" "$copy/"
      done
      dir="$copy"
    fi
    path="${path:+$path:}$dir"
  done
  unset IFS
  if PATH="$path" command -v protoc >/dev/null 2>&1; then
    echo "without_protoc: protoc is still on PATH" >&2
    rm -rf "$shadow"
    return 1
  fi
  PATH="$path" PROTOC=/nonexistent/protoc "$@" || status=$?
  rm -rf "$shadow"
  return $status
}
export -f without_protoc

# --- the stages -------------------------------------------------------------------------------
run_stage "cargo fmt" 300 cargo fmt --all -- --check

# Clippy as the compiler of the workspace's own crates, with its lints denied: what `cargo
# clippy --workspace --all-targets -- -D warnings` checks (every target `cargo test` builds:
# libraries, binaries, tests, examples), in the build the tests then run from. CLIPPY_ARGS is
# how cargo-clippy hands clippy-driver its arguments (separated by __CLIPPY_HACKERY__).
CLIPPY_DRIVER="$(rustc --print sysroot)/bin/clippy-driver"
# Runs "$@" with clippy-driver compiling the workspace's crates, every lint denied.
with_clippy() {
  [[ -x "$CLIPPY_DRIVER" ]] || { echo "no clippy-driver at $CLIPPY_DRIVER (rustup component add clippy)" >&2; return 1; }
  RUSTC_WORKSPACE_WRAPPER="$CLIPPY_DRIVER" CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__" "$@"
}
export -f with_clippy
export CLIPPY_DRIVER
run_stage "cargo clippy (in the test build)" 1800 \
  bash -c "without_protoc with_clippy cargo test --workspace --no-run --quiet"

# The tests run from that build (the same wrapper, so nothing is compiled again); when clippy
# failed, from a plain build, so that the tests still report.
if [[ "${STAGE_RESULTS[-1]}" == passed ]]; then
  run_stage "cargo test --workspace" 3000 bash -c "without_protoc with_clippy cargo test --workspace --quiet"
else
  run_stage "cargo test --workspace" 3000 bash -c "without_protoc cargo test --workspace --quiet"
fi

run_stage "cargo build (no protoc on PATH)" 1800 \
  bash -c "without_protoc cargo build --quiet -p quince-server -p quince-powercut"
built=0
[[ "${STAGE_RESULTS[-1]}" == passed && -x "$QUINCE_BIN" ]] && built=1

# The arangojs suites: node and npm from apt when missing, `npm ci` (the pinned lock file) only
# when node_modules is missing or the lock file changed, then Node's test runner.
js_tests() {
  local dir="$ROOT/tests/js"
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm || return 1
  fi
  local lock_hash stamp="$dir/node_modules/.quince-package-lock"
  lock_hash="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_hash" ]]; then
    (cd "$dir" && npm ci --no-audit --no-fund) || return 1
    echo "$lock_hash" >"$stamp"
  fi
  # The files, not the folder: Node 21 and later read the arguments as globs.
  node --test "$dir"/*.test.mjs
}
export -f js_tests apt_install
export ROOT apt_updated

PROCESS_STAGES=(
  "pytest tests/python|900|$VENV/bin/python -m pytest tests/python -q"
  "node tests/js (arangojs)|300|bash -c js_tests"
  "kill -9 loop|420|$VENV/bin/python tests/crash/kill_loop.py"
  "transaction crash test|240|$VENV/bin/python tests/crash/trx_atomicity.py"
  "hot backup crash loop|180|$VENV/bin/python tests/crash/backup_crash_loop.py"
  "corruption test|300|$VENV/bin/python tests/crash/corruption_test.py"
  "power-cut test (FUSE)|300|$VENV/bin/python tests/powercut/powercut_test.py"
  "fsync failure test|180|$VENV/bin/python tests/faults/fsync_failure_test.py"
  "disk full test|180|$VENV/bin/python tests/faults/disk_full_test.py"
)
for stage in "${PROCESS_STAGES[@]}"; do
  IFS='|' read -r name limit command <<<"$stage"
  if [[ $built -eq 1 ]]; then
    # shellcheck disable=SC2086 # the command is a word list on purpose
    run_stage "$name" "$limit" $command
  else
    skip_stage "$name" "no server binary"
  fi
done

run_stage "cargo-fuzz targets" 900 bash -c "without_protoc bash scripts/fuzz.sh"

# cargo-deny from crates.io, built once into ~/.cargo/bin. The advisory database is a git
# repository on GitHub: it is checked when it can be fetched, and said so when it cannot.
deny() {
  if ! command -v cargo-deny >/dev/null 2>&1; then
    cargo install --locked --quiet cargo-deny@0.20.2 || return 1
  fi
  cargo deny --log-level error check licenses bans sources || return 1
  if cargo deny --log-level error fetch db >/dev/null 2>&1; then
    cargo deny --log-level error check advisories
  else
    echo "cargo deny: the advisory database cannot be fetched here; advisories not checked"
  fi
}
export -f deny
run_stage "cargo deny" 1200 bash -c deny

summary
[[ $FAILED -eq 0 ]]
