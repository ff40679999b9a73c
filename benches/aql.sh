#!/usr/bin/env bash
# AQL benchmark: lookups through a persistent index (concurrency 1 and 8) and by key, a full-scan
# filter and a 100-group COLLECT over DOCS ten-attribute documents, Quince (`POST /_api/cursor`,
# driven by wrk) beside PostgreSQL (the same documents as jsonb, pgbench and psql) in the same
# run, measurements alternating. Writes benches/out/aql.md (docs/benchmarks/aql.md is updated
# from it by hand). Not part of CI.
#
# Usage: bash benches/aql.sh                       (builds the release binary first)
#        QUINCE_BIN=path DOCS=1000000 DURATION=10 ROUNDS=2 bash benches/aql.sh
set -euo pipefail
cd "$(dirname "$0")/.."

pg_found() {
  command -v pgbench >/dev/null && { command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
}
missing=()
pg_found || missing+=(postgresql)
command -v wrk >/dev/null || missing+=(wrk)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
pg_found || { echo "PostgreSQL (pgbench, initdb) is needed as the peer and could not be installed" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is needed and could not be installed" >&2; exit 1; }
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/aql_bench.py "$@"
