#!/usr/bin/env bash
# Reproduces the 1mDocsPerSec runs of seeds/cluster-1m-writes.txt against one server: the
# docs1m workload (100,000 preloaded documents of 20 x 26 characters) for 100 % reads,
# 100 % writes and 50/50, with median and p95 latency. Writes docs/benchmarks/cluster-1m.md
# and cluster-1m.svg. Not part of CI.
#
# Usage: bash benches/cluster-1m.sh          (16 connections, 10 s per test, under a minute)
#        FULL=1 bash benches/cluster-1m.sh   (80 connections, 30 s per test)
#        CONNECTIONS=32 DURATION=20 PRELOAD=100000 bash benches/cluster-1m.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { apt-get update -qq && apt-get install -y -qq python3; }
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/bench_cluster_1m.py "$@"
