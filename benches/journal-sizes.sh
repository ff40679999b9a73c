#!/usr/bin/env bash
# Reproduces seeds/journal-sizes.txt: insert, get, update and delete of 10,000 and 100,000
# documents, one request each, at several concurrency levels, for several journal sizes.
# Writes docs/benchmarks/journal-sizes.md and journal-sizes-{insert,get,update,delete}.svg.
# Not part of CI.
#
# Usage: bash benches/journal-sizes.sh          (1, 4, 32 MiB; concurrency 1, 4, 16, 64; some minutes)
#        FULL=1 bash benches/journal-sizes.sh   (the seed's 1 ... 32 MiB and concurrency 1 ... 64)
#        JOURNAL_SIZES_MIB=1,32 COUNTS=10000 CONCURRENCY=1,8 bash benches/journal-sizes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3; }
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/bench_journal_sizes.py "$@"
