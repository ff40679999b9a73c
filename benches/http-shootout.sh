#!/usr/bin/env bash
# Reproduces seeds/http-layer-shootout.txt: `ab -k` fetching one static file from Quince,
# nginx, Apache httpd (event, worker and prefork MPMs) and Mongrel2 where Debian packages it,
# at rising concurrency; then checks that `quince bench` is not the bottleneck (against wrk).
# Writes docs/benchmarks/http-shootout.{md,svg} and docs/benchmarks/bench-vs-wrk.md.
# Installs ab (apache2-utils), nginx, apache2, wrk and curl with apt-get when missing.
# Not part of CI.
#
# Usage: bash benches/http-shootout.sh          (20,000 requests, concurrency 1, 4, 16, 64, 256; ~2 minutes)
#        FULL=1 bash benches/http-shootout.sh   (the seed's 100,000 requests, 1 ... 512, 3 runs each)
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v python3 >/dev/null || need+=(python3)
command -v curl >/dev/null || need+=(curl)
command -v ab >/dev/null || need+=(apache2-utils)
command -v nginx >/dev/null || need+=(nginx-light)
command -v apache2 >/dev/null || need+=(apache2)
command -v wrk >/dev/null || need+=(wrk)
if [ "$(apt-cache policy mongrel2 2>/dev/null | sed -n 's/ *Candidate: //p')" != "" ] &&
   [ "$(apt-cache policy mongrel2 | sed -n 's/ *Candidate: //p')" != "(none)" ]; then
  command -v mongrel2 >/dev/null || need+=(mongrel2)
fi
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
if [ -z "${QUINCE_BIN:-}" ]; then
  cargo build --release -q -p quince-server
  QUINCE_BIN=target/release/quince
fi
export QUINCE_BIN
python3 benches/lib/bench_http_shootout.py
python3 benches/lib/bench_vs_wrk.py
