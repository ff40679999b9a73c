"""Group-commit scaling, binary against binary: `waitForSync=true` single inserts with wrk at
several concurrencies on a fresh collection, for two or more server binaries, alternating over
rounds. Besides wrk's rate and latencies it reports figures that depend little on how busy the
machine is: the server's CPU time per request (/proc utime+stime) and the journal fsyncs
(`quince_journal_syncs_total` from the metrics endpoint), as fsyncs per second and requests per
fsync. Prints one line per point; writes nothing.

Usage: QUINCE_BINS="old-binary new-binary" python3 benches/lib/group_commit_scaling.py
       (ROUNDS, DURATION, CONNECTIONS change the run; BENCH_DATA_DIR must be on a real disk).
"""

import os
import re
import shutil
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import AUTH, Quince, machine_description, wrk  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "3"))
DURATION = int(os.environ.get("DURATION", "5"))
CONNECTIONS = [int(c) for c in os.environ.get("CONNECTIONS", "1 8 16 64").split()]
DATA_PARENT = os.environ.get("BENCH_DATA_DIR", os.path.join(os.getcwd(), "target"))
HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_seconds(pid):
    """User + system CPU time of a process so far, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def journal_syncs(url):
    """The server's journal fsyncs since start."""
    req = urllib.request.Request(f"{url}/_admin/metrics/v2", headers={"Authorization": AUTH})
    with urllib.request.urlopen(req, timeout=60) as resp:
        text = resp.read().decode()
    return int(float(re.search(r"^quince_journal_syncs_total\s+(\S+)", text, re.M).group(1)))


def point(q, c):
    """One wrk run at concurrency `c`: (req/s, p50 ms, p99 ms, CPU us/req, fsyncs/s, req/fsync)."""
    url = f"{q.url}/_db/_system/_api/document/b?waitForSync=true"
    cpu0, syncs0 = cpu_seconds(q.proc.pid), journal_syncs(q.url)
    rps, p50, p99, bad = wrk(url, c, DURATION, os.path.join(HERE, "insert.lua"))
    cpu1, syncs1 = cpu_seconds(q.proc.pid), journal_syncs(q.url)
    if bad:
        raise RuntimeError(f"{bad} non-2xx replies at c={c}")
    requests = rps * DURATION
    syncs = max(syncs1 - syncs0, 1)
    return rps, p50, p99, (cpu1 - cpu0) * 1e6 / max(requests, 1), syncs / DURATION, requests / syncs


def main():
    binaries = os.environ["QUINCE_BINS"].split()
    print(f"machine: {machine_description()}; wrk {DURATION} s per point", flush=True)
    for round_ in range(1, ROUNDS + 1):
        for binary in binaries:
            os.environ["QUINCE_BIN"] = binary
            data = tempfile.mkdtemp(prefix="quince-gc-scaling-", dir=DATA_PARENT)
            q = Quince(data)
            q.start()
            try:
                q.request("POST", "/_api/collection", {"name": "b"})
                for c in CONNECTIONS:
                    rps, p50, p99, cpu, fps, per = point(q, c)
                    print(f"round {round_} {binary}: c={c} {rps:,.0f}/s p50 {p50:.2f} ms "
                          f"p99 {p99:.2f} ms, {cpu:.0f} us CPU/req, {fps:,.0f} fsyncs/s, "
                          f"{per:.1f} req/fsync", flush=True)
            finally:
                q.stop("TERM")
                shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
