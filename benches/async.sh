#!/usr/bin/env bash
# Issue 4's asynchronous-execution benchmark: fire-and-forget single inserts
# (x-arango-async: true) against synchronous ones at concurrency 1 (and 8), in the same run,
# waiting for the job queue to drain after each asynchronous run. Writes
# docs/benchmarks/async.md. Not part of CI.
#
# Usage: bash benches/async.sh                 (builds the release binary first)
#        QUINCE_BIN=path DURATION=10 CONCURRENCIES=1,8 bash benches/async.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v wrk >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk
fi
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/async_bench.py "$@"
