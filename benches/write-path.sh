#!/usr/bin/env bash
# The request path before and after a change (issue 13): single inserts at concurrency 1 and
# 8, fire-and-forget inserts and reads by key at concurrency 8, for two or more `quince`
# binaries alternating in every round, with nginx and Redis measured in the same rounds, and
# the server's CPU time per request; IR=1 adds user-space instructions per request under
# callgrind. Writes benches/out/write-path.md. Not part of CI.
#
# Usage: QUINCE_BINS="before=/tmp/quince-before after=target/release/quince" \
#          bash benches/write-path.sh          (ROUNDS, DURATION, IR, IR_REQUESTS)
#        bash benches/write-path.sh            (target/release/quince alone)
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx-light)
command -v redis-server >/dev/null || need+=(redis-server)
command -v ab >/dev/null || need+=(apache2-utils)
if [ "${IR:-0}" = 1 ]; then command -v valgrind >/dev/null || need+=(valgrind); fi
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
if [ -z "${QUINCE_BINS:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BINS="current=target/release/quince"
fi
export QUINCE_BINS
exec python3 benches/lib/write_path_bench.py "$@"
