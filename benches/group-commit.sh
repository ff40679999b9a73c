#!/usr/bin/env bash
# Group commit under wrk: single inserts with `waitForSync=true` at concurrency 1 and 64, each
# repeated (median reported), for one or more `quince` binaries in the same run (e.g. a build
# before and after a change). Prints a markdown table; not part of CI.
#
# Usage: bash benches/group-commit.sh                      (builds and measures target/release)
#        QUINCE_BINS="/tmp/old/quince target/release/quince" REPEAT=3 DURATION=5 \
#          bash benches/group-commit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
if [ -z "${QUINCE_BINS:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BINS=target/release/quince
fi
export QUINCE_BINS
exec python3 benches/lib/group_commit.py "$@"
