"""Issue 2's single-server benchmarks; see benches/single-server.sh. Prints each figure beside
its peer and writes docs/benchmarks/single-server.md."""

import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import Nginx, Quince, Redis, machine_description, wrk  # noqa: E402

DURATION = int(os.environ.get("DURATION", "10"))
ROUNDS = int(os.environ.get("ROUNDS", "2"))
DOCS_MEMORY = int(os.environ.get("DOCS_MEMORY", "1000000"))
GET_KEYS = 10000
HERE = os.path.dirname(os.path.abspath(__file__))
ATTRS = {f"test{i}": "some test value" for i in range(1, 11)}


def load(q, collection, count, batch=1000, key_prefix=None):
    for start in range(0, count, batch):
        docs = []
        for i in range(start, min(start + batch, count)):
            d = dict(ATTRS)
            if key_prefix is not None:
                d["_key"] = f"{key_prefix}{i}"
            docs.append(d)
        out = q.request("POST", f"/_db/_system/_api/document/{collection}?silent=true", docs)
        assert out == [] or out == {}, f"load failed: {str(out)[:200]}"


def median(results):
    """The run with the median rate among `results` (wrk-shaped tuples)."""
    ordered = sorted(results, key=lambda r: r[0])
    return ordered[len(ordered) // 2]


def main():
    threads = os.cpu_count()
    rows = []
    print(f"machine: {machine_description()}")
    data = tempfile.mkdtemp(prefix="quince-bench-")
    q = Quince(data, ["--server.threads", str(threads)])
    q.start()
    q.request("POST", "/_api/collection", {"name": "bench"})
    q.request("POST", "/_api/collection", {"name": "reads"})
    load(q, "reads", GET_KEYS, key_prefix="k")
    sample = q.request("GET", "/_db/_system/_api/document/reads/k1")
    static_doc = json.dumps(sample, separators=(",", ":")).encode()

    ng = Nginx(threads)
    ng.start({"doc.json": static_doc})
    rd = Redis()
    rd.start()
    insert_body = json.dumps(ATTRS, separators=(",", ":")).encode()
    try:
        insert_lua = os.path.join(HERE, "insert.lua")
        get_lua = os.path.join(HERE, "get.lua")
        # Each round runs every side once, alternating; the tables show each side's median.
        runs = {}
        for _ in range(ROUNDS):
            for c in (1, 8):
                runs.setdefault(("insert", c), []).append(
                    wrk(f"{q.url}/_db/_system/_api/document/bench", c, DURATION, insert_lua))
                runs.setdefault(("nginx insert", c), []).append(
                    wrk(f"{ng.url}/insert", c, DURATION, insert_lua))
                runs.setdefault(("redis set", c), []).append(
                    rd.bench("set", c, DURATION, len(insert_body), GET_KEYS))
            runs.setdefault("get", []).append(
                wrk(f"{q.url}/_db/_system/_api/document/reads/", 8, DURATION, get_lua,
                    env={"BENCH_KEYS": str(GET_KEYS)}))
            runs.setdefault("nginx get", []).append(
                wrk(f"{ng.url}/static/doc.json", 8, DURATION))
            runs.setdefault("redis get", []).append(
                rd.bench("get", 8, DURATION, len(static_doc), GET_KEYS))
        for c in (1, 8):
            name = f"insert, 10 attributes, concurrency {c}, waitForSync false"
            rows.append((name, median(runs[("insert", c)]), median(runs[("nginx insert", c)]),
                         "nginx fixed 202 reply"))
            rows.append((name, median(runs[("insert", c)]), median(runs[("redis set", c)]),
                         f"Redis SET ({len(insert_body)}-byte value, AOF)"))
        rows.append(("get by key, concurrency 8", median(runs["get"]), median(runs["nginx get"]),
                     f"nginx static file ({len(static_doc)} bytes)"))
        rows.append(("get by key, concurrency 8", median(runs["get"]), median(runs["redis get"]),
                     f"Redis GET ({len(static_doc)}-byte value)"))
        sync1 = wrk(f"{q.url}/_db/_system/_api/document/bench?waitForSync=true", 1, DURATION,
                    insert_lua)
        sync64 = wrk(f"{q.url}/_db/_system/_api/document/bench?waitForSync=true", 64, DURATION,
                     insert_lua)
    finally:
        ng.stop()
        rd.stop()

    # Memory and restart with DOCS_MEMORY documents, alone: the collections written above are
    # dropped first, so the figures after a restart count only these documents.
    for name in ("bench", "reads"):
        q.request("DELETE", f"/_api/collection/{name}")
    q.request("POST", "/_api/collection", {"name": "memory"})
    rss_before = q.rss_bytes()
    t0 = time.monotonic()
    load(q, "memory", DOCS_MEMORY)
    load_s = time.monotonic() - t0
    rss_after = q.rss_bytes()
    figures = q.request("GET", "/_api/collection/memory/figures")["figures"]
    q.stop("TERM")
    restart_clean = q.start()
    count = q.request("GET", "/_api/collection/memory/count")["count"]
    rss_restarted = q.rss_bytes()
    q.stop("KILL")
    restart_crash = q.start()
    count_crash = q.request("GET", "/_api/collection/memory/count")["count"]
    q.stop("TERM")
    shutil.rmtree(data, ignore_errors=True)
    assert count == DOCS_MEMORY and count_crash == DOCS_MEMORY, (count, count_crash)

    lines = [
        "# Single-server benchmarks (issue 2)",
        "",
        f"Machine: {machine_description()}. Quince release build, `--server.threads {threads}`,",
        f"nginx with {threads} worker processes, Redis 7 (one I/O thread, append-only file "
        f"with `appendfsync no`, no snapshots), all on loopback; load generator wrk "
        f"({DURATION} s per run, `--latency`) for Quince and nginx, with the same request "
        f"bytes, and `redis-benchmark --threads 2` (no pipelining, {GET_KEYS:,} random keys, "
        f"values as long as Quince's request or reply body) for Redis. {ROUNDS} rounds, each "
        f"side once per round, alternating; each figure is the side's median round.",
        "Produced by `bash benches/single-server.sh`.",
        "",
        "| workload | Quince req/s | p50 / p99 ms | peer | peer req/s | p50 / p99 ms | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (qrps, q50, q99, qerr), (nrps, n50, n99, nerr), peer in rows:
        assert nerr == 0, f"the peer answered {nerr} non-2xx replies in {name!r}"
        note = f" ({qerr} non-2xx)" if qerr else ""
        lines.append(f"| {name} | {qrps:,.0f}{note} | {q50:.2f} / {q99:.2f} | {peer} | "
                     f"{nrps:,.0f} | {n50:.2f} / {n99:.2f} | {qrps / nrps:.2f}x |")
    lines += [
        "",
        "Group commit (`waitForSync=true` on every insert; each reply only after an fsync):",
        "",
        "| concurrency | Quince req/s | p50 / p99 ms |",
        "|---|---|---|",
        f"| 1 | {sync1[0]:,.0f} | {sync1[1]:.2f} / {sync1[2]:.2f} |",
        f"| 64 | {sync64[0]:,.0f} | {sync64[1]:.2f} / {sync64[2]:.2f} |",
        f"| ratio 64 / 1 | {sync64[0] / sync1[0]:.1f}x | |",
        "",
        f"Memory and restart with {DOCS_MEMORY:,} documents of 10 string attributes "
        f"(loaded in {load_s:.1f} s through multi-document POSTs of 1,000):",
        "",
        "| figure | value |",
        "|---|---|",
        f"| RSS growth per document while loading | "
        f"{(rss_after - rss_before) / DOCS_MEMORY:.0f} bytes |",
        f"| RSS per document after a restart | {rss_restarted / DOCS_MEMORY:.0f} bytes |",
        f"| stored bytes per document (figures.alive.size / count) | "
        f"{figures['alive']['size'] / DOCS_MEMORY:.0f} bytes |",
        f"| primary index (figures.indexes.size / count) | "
        f"{figures['indexes']['size'] / DOCS_MEMORY:.0f} bytes |",
        f"| datafiles / journals | {figures['datafiles']['count']} / "
        f"{figures['journals']['count']} |",
        f"| restart after SIGTERM (process start to listening) | {restart_clean:.2f} s |",
        f"| restart after kill -9 | {restart_crash:.2f} s |",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    out = os.path.join(HERE, "..", "..", "docs", "benchmarks", "single-server.md")
    with open(out, "w") as f:
        f.write(text)
    print(f"wrote {os.path.normpath(out)}")


if __name__ == "__main__":
    main()
