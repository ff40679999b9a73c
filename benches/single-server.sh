#!/usr/bin/env bash
# Single-server benchmarks of issue 2, each figure beside its peer measured in the same run:
# inserts vs nginx answering the same POST with a fixed 202 and vs Redis SET, reads vs nginx
# serving a static file and vs Redis GET, waitForSync group commit (concurrency 64 vs 1),
# memory per document and restart time with 1M documents. Writes
# docs/benchmarks/single-server.md. Not part of CI.
#
# Usage: bash benches/single-server.sh            (builds the release binary first)
#        QUINCE_BIN=path DURATION=10 bash benches/single-server.sh
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || need+=(nginx-light)
command -v redis-server >/dev/null || need+=(redis-server)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/single_server.py "$@"
