#!/usr/bin/env bash
# Import benchmark of issue 4: 1M ten-attribute documents through `quince import` (client
# included) beside the same file sent with curl to /_api/import (the server alone), in the same
# run. Writes docs/benchmarks/import.md. Not part of CI.
#
# Usage: bash benches/import.sh                   (builds the release binary first)
#        QUINCE_BIN=path DOCS=200000 RUNS=1 THREADS=2 bash benches/import.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v curl >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl
fi
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/import_bench.py "$@"
