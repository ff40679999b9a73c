#!/usr/bin/env bash
# Reproduces seeds/insert-performance.txt: arangob's `document` case (complexity 10) in the
# seed's ten configurations (serial, concurrency 8, batches of 2 and 4, async, and their
# combinations up to batch 128 + async + concurrency 8), Quince's figure beside the seed's.
# Writes docs/benchmarks/insert-performance.md and insert-performance.svg. Not part of CI.
#
# Usage: bash benches/insert-performance.sh           (100,000 documents per run, about a minute)
#        FULL=1 bash benches/insert-performance.sh    (the seed's 500,000)
#        QUINCE_BIN=path DOCS=20000 bash benches/insert-performance.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3; }
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/bench_insert_performance.py "$@"
