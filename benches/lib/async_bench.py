"""Issue 4's asynchronous-execution benchmark; see benches/async.sh.

Single-document inserts (ten string attributes, arangob's "document" case) at concurrency 1,
synchronous and fire-and-forget (`x-arango-async: true`), in the same run against the same
server. For the asynchronous run it reports both what the client sees (202 replies per
second, as arangob measures it in seeds/insert-performance.txt) and the end-to-end rate:
documents stored per second from the start of the run until the queue has drained (polled
through the collection count). Writes docs/benchmarks/async.md."""

import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import AUTH, Quince, machine_description  # noqa: E402

DURATION = int(os.environ.get("DURATION", "10"))
CONCURRENCIES = [int(c) for c in os.environ.get("CONCURRENCIES", "1,8").split(",")]
HERE = os.path.dirname(os.path.abspath(__file__))
DRAIN_TIMEOUT_S = 600


def run_wrk(url, connections, extra_headers=()):
    """wrk with the insert script; returns (requests, seconds, non-2xx, p50 ms, p99 ms)."""
    cmd = ["wrk", "-t", "1", "-c", str(connections), "-d", f"{DURATION}s", "--latency",
           "-H", f"Authorization: {AUTH}", "-s", os.path.join(HERE, "insert.lua")]
    for header in extra_headers:
        cmd += ["-H", header]
    cmd.append(url)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)", out)
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[m.group(3)]
    requests, seconds = int(m.group(1)), float(m.group(2)) * scale
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)

    def pct(p):
        pm = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not pm:
            return float("nan")
        v, unit = float(pm.group(1)), pm.group(2)
        return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v

    return requests, seconds, int(bad.group(1)) if bad else 0, pct(50), pct(99)


def count(q, collection):
    return q.request("GET", f"/_db/_system/_api/collection/{collection}/count")["count"]


def main():
    threads = os.cpu_count()
    print(f"machine: {machine_description()}")
    data = tempfile.mkdtemp(prefix="quince-bench-async-")
    q = Quince(data, ["--server.threads", str(threads), "--server.maximal-queue-size", "1000000"])
    q.start()
    rows = []
    try:
        for c in CONCURRENCIES:
            sync_name, async_name = f"sync_c{c}", f"async_c{c}"
            q.request("POST", "/_api/collection", {"name": sync_name})
            q.request("POST", "/_api/collection", {"name": async_name})

            s_req, s_sec, s_bad, s50, s99 = run_wrk(
                f"{q.url}/_db/_system/_api/document/{sync_name}", c)
            stored_sync = count(q, sync_name)

            started = time.monotonic()
            a_req, a_sec, a_bad, a50, a99 = run_wrk(
                f"{q.url}/_db/_system/_api/document/{async_name}", c, ["x-arango-async: true"])
            accepted = a_req - a_bad
            # wrk may stop with requests still on the wire; they count once they are stored.
            deadline = time.monotonic() + DRAIN_TIMEOUT_S
            last, stable_since = -1, time.monotonic()
            while True:
                stored = count(q, async_name)
                now = time.monotonic()
                if stored != last:
                    last, stable_since = stored, now
                if stored >= accepted and now - stable_since > 0.5:
                    break
                if now > deadline:
                    raise RuntimeError(f"queue did not drain: {stored} of {accepted}")
                time.sleep(0.05)
            drained = stable_since - started
            rows.append({
                "c": c,
                "sync_rps": s_req / s_sec, "sync_p50": s50, "sync_p99": s99, "sync_bad": s_bad,
                "sync_stored": stored_sync,
                "async_rps": a_req / a_sec, "async_p50": a50, "async_p99": a99,
                "async_bad": a_bad, "async_stored": last, "drained_s": drained,
                "e2e_rps": last / drained,
            })
            print(rows[-1])
    finally:
        q.stop("TERM")

    lines = [
        "# Asynchronous execution (issue 4)",
        "",
        f"Machine: {machine_description()}. Quince release build, `--server.threads {threads}`,",
        "`--server.maximal-queue-size 1000000`; wrk (1 thread) on loopback sends arangob's",
        "\"document\" insert (ten string attributes) for "
        f"{DURATION} s per run, first synchronously, then with `x-arango-async: true`,",
        "each run into its own empty collection. Produced by `bash benches/async.sh`.",
        "",
        "\"accepted/s\" is what the client measures (202 replies per second, as arangob does in",
        "ArangoDB's \"Insert Performance Measurement\" article, where fire-and-forget at",
        "concurrency 1 was 1.7x the",
        "synchronous rate); \"stored/s, end to end\" counts documents in the collection from the",
        "start of the run until the job queue has drained.",
        "",
        "| concurrency | sync req/s | sync p50 / p99 ms | async accepted/s | async p50 / p99 ms "
        "| async/sync (client view) | async stored/s, end to end | drain done after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        bad = f" ({r['async_bad']} non-2xx)" if r["async_bad"] else ""
        sbad = f" ({r['sync_bad']} non-2xx)" if r["sync_bad"] else ""
        lines.append(
            f"| {r['c']} | {r['sync_rps']:,.0f}{sbad} | {r['sync_p50']:.3f} / {r['sync_p99']:.3f} "
            f"| {r['async_rps']:,.0f}{bad} | {r['async_p50']:.3f} / {r['async_p99']:.3f} "
            f"| {r['async_rps'] / r['sync_rps']:.2f}x | {r['e2e_rps']:,.0f} "
            f"| {r['drained_s']:.1f} s ({r['async_stored']:,} docs) |")
    lines += [
        "",
        "Jobs run on `threads - 1` worker tasks (at least one), so the stored rate of a",
        "fire-and-forget stream is bounded by those workers while the accept rate is bounded",
        "by the connection; the queue in between is bounded by `--server.maximal-queue-size`",
        "(beyond it: 503, errorNum 21003).",
        "",
        "Why fire-and-forget need not beat synchronous inserts here: the 1.7x of the seed came",
        "from ArangoDB 1.4 handing every request from its I/O thread to a scheduler thread and",
        "back; a fire-and-forget request skipped the way back. Quince runs a synchronous insert",
        "inline on the connection's task (no thread hop to save), and an asynchronous one adds",
        "the job bookkeeping; the job runs on the same thread right after the 202 is written. It",
        "can only win when a spare core runs jobs while the connection reads the next request;",
        "with two cores, one of them taken by the client, there is none.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    out = os.path.join(HERE, "..", "..", "docs", "benchmarks", "async.md")
    with open(out, "w") as f:
        f.write(text)
    print(f"wrote {os.path.normpath(out)}")


if __name__ == "__main__":
    main()
