#!/usr/bin/env bash
# Stream transactions per second (10 documents over 3 collections: begin, one array insert per
# collection, commit) at concurrency 1 and 8, with and without waitForSync, beside PostgreSQL
# running the same 3-table 10-row transaction with pgbench in the same run; and arangob's
# multi-collection case. Writes benches/out/transactions.md (docs/benchmarks/transactions.md is
# updated from it by hand). Not part of CI.
#
# Usage: bash benches/transactions.sh            (builds the release binary first)
#        QUINCE_BIN=path DURATION=8 CONCURRENCIES="1 8" bash benches/transactions.sh
set -euo pipefail
cd "$(dirname "$0")/.."

pg_found() {
  command -v pgbench >/dev/null && { command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
}
if ! pg_found; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql
fi
pg_found || { echo "PostgreSQL (pgbench, initdb) is needed as the peer and could not be installed" >&2; exit 1; }
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/transactions_bench.py "$@"
