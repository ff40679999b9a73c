#!/usr/bin/env bash
# CPU per single-document write of each process of a small cluster (1 etcd member, 2 DB servers,
# 1 coordinator; replicationFactor 2, synchronous), with context switches, optionally against a
# baseline build in alternation. Prints JSON lines and a Markdown table; writes no file.
#
# Usage: bash benches/write-cost.sh
#        BASELINE_BIN=/path/to/old/quince ROUNDS=3 DURATION=10 CONNECTIONS=16 MODE=synchronous \
#        bash benches/write-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
exec python3 benches/lib/bench_write_cost.py "$@"
