"""Group-commit benchmark (see benches/group-commit.sh): wrk inserts with waitForSync=true at
concurrency 1 (-t1 -c1) and 64 (-t2 -c64) against each binary in QUINCE_BINS, REPEAT times,
alternating binaries so background noise hits all alike; the median of each is reported."""

import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import Quince, machine_description, wrk  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DURATION = int(os.environ.get("DURATION", "5"))
REPEAT = int(os.environ.get("REPEAT", "3"))
# The data directory must be on a real disk: fsync on tmpfs costs nothing.
DATA_PARENT = os.environ.get("BENCH_DATA_DIR", os.path.join(os.getcwd(), "target"))


def cpu_seconds(pid):
    """User + system CPU time of a process so far, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured_wrk(q, url, connections, script, threads):
    """wrk figures plus the server's CPU microseconds per request (robust to a busy machine,
    where requests per second mostly measure the neighbours)."""
    before = cpu_seconds(q.proc.pid)
    rps, p50, p99, bad = wrk(url, connections, DURATION, script, threads=threads)
    cpu_us = (cpu_seconds(q.proc.pid) - before) * 1e6 / max(rps * DURATION, 1)
    return rps, p99, bad, cpu_us


def measure(binary):
    """One run: (c1 rps, c1 p99 ms, c64 rps, c64 p99 ms, c64 CPU us/request) on a fresh
    server."""
    os.environ["QUINCE_BIN"] = binary
    data = tempfile.mkdtemp(prefix="quince-bench-gc-", dir=DATA_PARENT)
    q = Quince(data)
    q.start()
    try:
        q.request("POST", "/_api/collection", {"name": "bench"})
        url = f"{q.url}/_db/_system/_api/document/bench?waitForSync=true"
        script = os.path.join(HERE, "insert.lua")
        c1 = measured_wrk(q, url, 1, script, 1)
        c64 = measured_wrk(q, url, 64, script, 2)
        if c1[2] or c64[2]:
            raise RuntimeError(f"non-2xx replies: {c1[2]} at c1, {c64[2]} at c64")
        return c1[0], c1[1], c64[0], c64[1], c64[3]
    finally:
        q.stop()
        shutil.rmtree(data, ignore_errors=True)


def main():
    binaries = os.environ["QUINCE_BINS"].split()
    runs = {b: [] for b in binaries}
    for _ in range(REPEAT):
        for b in binaries:
            runs[b].append(measure(b))
            print(b, "c1 %.0f req/s p99 %.2f ms, c64 %.0f req/s p99 %.2f ms, %.0f us CPU/req"
                  % runs[b][-1], file=sys.stderr)
    print(f"Machine: {machine_description()}; wrk {DURATION} s per point, median of {REPEAT}.\n")
    print("| binary | c=1 req/s | c=1 p99 ms | c=64 req/s | c=64 p99 ms | ratio 64/1 "
          "| c=64 server CPU per request |")
    print("|---|---|---|---|---|---|---|")
    for b, r in runs.items():
        med = [statistics.median(x[i] for x in r) for i in range(5)]
        print(f"| {b} | {med[0]:,.0f} | {med[1]:.2f} | {med[2]:,.0f} | {med[3]:.2f} "
              f"| {med[2] / med[0]:.1f}x | {med[4]:.0f} µs |")


if __name__ == "__main__":
    main()
