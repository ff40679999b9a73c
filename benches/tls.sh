#!/usr/bin/env bash
# Issue 12's TLS benchmark: requests per second over TLS with keep-alive, Quince (an ssl://
# endpoint, GET of a small stored document) against nginx (the same certificate, a static file
# of the same size), with wrk at a few concurrencies, alternating, in one run. Writes
# docs/benchmarks/tls.md. Not part of CI.
#
# Usage: bash benches/tls.sh          (builds the release binary first)
#        QUINCE_BIN=path RUNS=3 DURATION=5 CONCURRENCIES=1,8,64 bash benches/tls.sh
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx-light)
command -v openssl >/dev/null || need+=(openssl)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/tls_bench.py "$@"
