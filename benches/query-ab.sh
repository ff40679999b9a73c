#!/usr/bin/env bash
# AQL queries before and after a change: two or more `quince` binaries on the same data,
# alternating in every round, each query timed end to end (best and median of ROUNDS). For
# the peer (PostgreSQL in the same run), use benches/aql.sh with each binary. Writes
# benches/out/query-ab.md. Not part of CI.
#
# Usage: QUINCE_BINS="before=/tmp/quince-before after=target/release/quince" \
#          bash benches/query-ab.sh            (DOCS, ROUNDS)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${QUINCE_BINS:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BINS="current=target/release/quince"
fi
export QUINCE_BINS
exec python3 benches/lib/query_ab.py "$@"
