#!/usr/bin/env bash
# Graph benchmark: the 2018 NoSQL performance benchmark's workload (single read and write,
# aggregation, neighbours, neighbours of neighbours with and without data, shortest path) plus
# a weighted shortest path and the 3 shortest paths, on a seeded Pokec-shaped graph of VERTICES
# profiles and about 19 relations each; Quince (HTTP, AQL traversals, driven by wrk) beside
# PostgreSQL (jsonb, recursive CTEs, pgRouting; pgbench) in the same run, measurements
# alternating, answers checked against the generated graph first. Writes benches/out/graphs.md
# (docs/benchmarks/graphs.md is updated from it by hand). Not part of CI.
#
# Usage: bash benches/graphs.sh                    (builds the release binary first)
#        VERTICES=20000 DURATION=2 ROUNDS=1 CONCURRENCIES=1 bash benches/graphs.sh   (a smoke run)
#        WORKLOADS=read,write,aggregation bash benches/graphs.sh
#        QUINCE_WORKLOADS=read,write,aggregation bash benches/graphs.sh   (PostgreSQL alone for the rest)
set -euo pipefail
cd "$(dirname "$0")/.."

pg_found() {
  command -v pgbench >/dev/null && { command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
}
pg_major() {
  ls /usr/lib/postgresql | sort -n | tail -1
}
pgrouting_found() {
  ls /usr/share/postgresql/"$(pg_major)"/extension/pgrouting.control >/dev/null 2>&1
}
missing=()
pg_found || missing+=(postgresql)
command -v wrk >/dev/null || missing+=(wrk)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
pg_found || { echo "PostgreSQL (pgbench, initdb) is needed as the peer and could not be installed" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is needed and could not be installed" >&2; exit 1; }
if ! pgrouting_found; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-$(pg_major)-pgrouting"
fi
pgrouting_found || { echo "pgRouting (postgresql-$(pg_major)-pgrouting) is needed and could not be installed" >&2; exit 1; }
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/graph_bench.py "$@"
