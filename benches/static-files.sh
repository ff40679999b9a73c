#!/usr/bin/env bash
# Issue 4's static-file benchmark: `ab -k -c C -n 100000` for C = 1..512 against Quince
# (--http.static-dir) and nginx serving the same file, in the same run. Writes
# docs/benchmarks/static-files.md and docs/benchmarks/static-files.svg. Not part of CI.
#
# Usage: bash benches/static-files.sh          (builds the release binary first)
#        QUINCE_BIN=path RUNS=3 REQUESTS=100000 FILE_SIZE=4096 bash benches/static-files.sh
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v ab >/dev/null || need+=(apache2-utils)
command -v nginx >/dev/null || need+=(nginx-light)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
# ab -c 512 needs more descriptors than some shells allow by default.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/static_bench.py "$@"
