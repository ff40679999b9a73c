#!/usr/bin/env bash
# Reproduces the 1mDocsPerSec experiment of ArangoDB's 2015 white paper (1.1M writes/s on 80
# nodes) against a Quince cluster on this machine: `quince start` (1 etcd member, 2 DB servers,
# 2 coordinators), the docs1m workload (100,000 preloaded documents of 20 x 26 characters) for
# 100 % reads, 100 % writes and 50/50 with the connections spread over every coordinator, for
# replicationFactor 1, 2 synchronous and 2 asynchronous; plus one plain server for reference.
# Measures the CPU per request of each process role and the client, models the 80-node figure,
# and writes docs/benchmarks/cluster-1m.md and cluster-1m.svg. Not part of CI.
#
# Usage: bash benches/cluster-1m.sh          (16 connections, 10 s per test, one round: ~5 min)
#        FULL=1 bash benches/cluster-1m.sh   (80 connections, 30 s per test, two rounds, and the
#                                             default 3/3/2 layout too: ~30 min)
#        CONNECTIONS=32 DURATION=20 PRELOAD=100000 ROUNDS=3 SHARDS=1 SINGLE=0 \
#        LAYOUTS="1,2,2 3,3,2" bash benches/cluster-1m.sh   (layouts: etcd,dbservers,coordinators)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3; }
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/bench_cluster_1m.py "$@"
