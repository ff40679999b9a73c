#!/usr/bin/env bash
# Soak benchmark: arangob's crud cycle (insert, read, patch, read, remove by key) at
# concurrency 256 against one server for 10 minutes. Every interval (10 s) it reports the
# throughput, p50/p99/max latency and errors of that interval, and the server's RSS, open file
# descriptors (under load and idle), live documents, disk use and CPU. Checks at the end that
# the server still answers GET /_api/version. Writes docs/benchmarks/soak.md and
# benches/out/soak-<time>.csv. Not part of CI: run it by hand on a quiet machine.
#
# Usage: bash benches/soak.sh                          (600 s; builds the release binary first)
#        DURATION=60 INTERVAL=10 bash benches/soak.sh  (a one-minute trial)
#        QUINCE_BIN=path CONCURRENCY=256 COMPLEXITY=10 bash benches/soak.sh
# Exit status: 0 when every operation succeeded and the server answered at the end, else 1.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3; }
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN

# Neither the server, the client nor the data directory may outlive the script, however it
# ends: the driver runs in its own process group (setsid), which the trap signals as a whole
# (the driver then stops the server itself), and this shell owns the data directory.
SOAK_DATA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/quince-soak-XXXXXX")
export SOAK_DATA_DIR
driver=
cleanup() {
  if [ -n "$driver" ]; then
    kill -TERM -- "-$driver" 2>/dev/null || true
    wait "$driver" 2>/dev/null || true
    # Whatever of the group is left (the server, if the driver died first) gets 30 s.
    for _ in $(seq 150); do
      kill -0 -- "-$driver" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL -- "-$driver" 2>/dev/null || true
  fi
  rm -rf "$SOAK_DATA_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# In a script, a background job is not a process-group leader, so setsid does not fork:
# $! is the driver, and its process group id.
setsid python3 benches/lib/soak.py "$@" &
driver=$!
wait "$driver"
