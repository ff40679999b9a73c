"""The 1mDocsPerSec seed against one server: `quince bench --test-case docs1m` (20 attributes of
26 characters, 100,000 preloaded documents K0 ..., the client's 47-step read/write interleave)
for 100 % reads, 100 % writes and 50/50, time-bound, with median and p95 latency. Reports the
true merged percentiles and, as the seed's eval.js did, the mean of the per-connection
medians and p95s. Writes docs/benchmarks/cluster-1m.md and cluster-1m.svg.
See benches/cluster-1m.sh.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from bench_tools import Quince, bench, chart, machine_description, remove, temp_dir, write_doc  # noqa: E402

FULL = bool(os.environ.get("FULL"))
DURATION = int(os.environ.get("DURATION", "30" if FULL else "10"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "80" if FULL else "16"))
PRELOAD = int(os.environ.get("PRELOAD", "100000"))
TESTS = [("read", 100), ("write", 0), ("mixed", 50)]

# The seed's smallest cluster (4 load servers, 640 connections over 8 coordinators): the
# cluster-wide figures, for the shape of the comparison only.
SEED = {"read": (161.727, 0.0, 1.818, 13.449), "write": (0.0, 105.881, 2.843, 22.567),
        "mixed": (59.146, 59.124, 2.592, 20.577)}


def main():
    machine = machine_description()
    print(f"machine: {machine}; {CONNECTIONS} connections, {DURATION} s per test, {PRELOAD:,} preloaded")
    data = temp_dir("quince-cluster-1m-")
    server = Quince(data)
    server.start()
    rows = []
    try:
        for i, (name, read_percent) in enumerate(TESTS):
            # The first test drops, creates and preloads the collection; the others reuse it.
            report = bench(server.url, "--test-case", "docs1m", "--collection", "c", "--preload", PRELOAD,
                           "--read-percent", read_percent, "--concurrency", CONNECTIONS, "--duration", DURATION,
                           "--create-collection", "true" if i == 0 else "false")
            elapsed = report["results"]["timeSinceStart"]
            methods = report["operationsByMethod"]
            s = report["serviceTime"]
            row = {"name": name, "reads": methods.get("GET", 0) / elapsed, "writes": methods.get("POST", 0) / elapsed,
                   "p50": s["p50Ms"], "p95": s["p95Ms"], "p99": s["p99Ms"],
                   "mean_p50": report["perThreadMeanMedianMs"], "mean_p95": report["perThreadMeanP95Ms"],
                   "failures": report["results"]["failures"]}
            rows.append(row)
            print(f"{name:6} reads {row['reads']:>10,.0f}/s writes {row['writes']:>10,.0f}/s  median {row['p50']:.2f} ms "
                  f"p95 {row['p95']:.2f} ms  failures {row['failures']}")
    finally:
        server.stop()
        remove(data)

    lines = [
        "# 1mDocsPerSec workload on one server (seed: cluster-1m-writes.txt)",
        "",
        f"Machine: {machine}. One Quince release server; client `quince bench --test-case docs1m` with "
        f"{CONNECTIONS} keep-alive connections (closed loop, one thread each), {DURATION} s per test, "
        f"{PRELOAD:,} preloaded documents `K0 ...` of 20 attributes holding the 26-letter alphabet; reads "
        "`GET /_api/document/c/K<n>` with n advancing by 1447, writes `POST /_api/document?collection=c` with a "
        "server key, chosen by the client's action counter (+47 mod 100). Produced by "
        "`bash benches/cluster-1m.sh` (`FULL=1`: 80 connections, 30 s, as per coordinator in the seed).",
        "",
        "| test | reads/s | writes/s | median ms | p95 ms | p99 ms | mean of per-connection median / p95 ms | failures |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['name']} | {r['reads']:,.0f} | {r['writes']:,.0f} | {r['p50']:.2f} | {r['p95']:.2f} | "
                     f"{r['p99']:.2f} | {r['mean_p50']:.2f} / {r['mean_p95']:.2f} | {r['failures']:,} |")
    lines += [
        "",
        "The seed's percentiles were the mean of per-process medians and p95s (eval.js), shown in the last "
        "column for comparison; the median and p95 columns are true percentiles over every request "
        "(HdrHistograms merged across connections).",
        "",
        "The seed's smallest cluster (8 coordinators and 8 DB servers of 8 vCPUs, 640 connections), for scale:",
        "",
        "| test | reads kDocs/s | writes kDocs/s | median ms | p95 ms |",
        "|---|---|---|---|---|",
        *[f"| {n} | {v[0]:.1f} | {v[1]:.1f} | {v[2]:.3f} | {v[3]:.3f} |" for n, v in SEED.items()],
        "",
        "A cluster run follows when Quince has a cluster; the script then spreads the connections over "
        "the coordinators with repeated `--server.endpoint`.",
        "",
        "![docs1m](cluster-1m.svg)",
        "",
    ]
    write_doc("cluster-1m.md", "\n".join(lines))
    chart({
        "title": f"1mDocsPerSec workload, one server, {CONNECTIONS} connections",
        "panels": [
            {"title": "documents per second", "kind": "bar", "x_label": "documents per second",
             "categories": [r["name"] for r in rows],
             "series": [{"name": "reads/s", "values": [r["reads"] for r in rows]},
                        {"name": "writes/s", "values": [r["writes"] for r in rows]}]},
            {"title": "latency (ms)", "kind": "bar", "x_label": "milliseconds",
             "categories": [r["name"] for r in rows],
             "series": [{"name": "median", "values": [r["p50"] for r in rows]},
                        {"name": "p95", "values": [r["p95"] for r in rows]}]},
        ],
    }, "cluster-1m.svg")


if __name__ == "__main__":
    main()
