"""The insert-performance seed (arangob `document` case, complexity 10, 500K documents) against
Quince: every configuration of the seed's table, Quince's figure beside the seed's. Writes
docs/benchmarks/insert-performance.md and .svg. See benches/insert-performance.sh.

Async runs measure what arangob measures (enqueueing); the table also gives the time until
every document was stored, polled through the collection's count.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from bench_tools import (Quince, bench, chart, fmt_int, fmt_ms, machine_description, remove,  # noqa: E402
                         temp_dir, wait_for_count, write_doc)

DOCS = int(os.environ.get("DOCS", "500000" if os.environ.get("FULL") else "100000"))
COLLECTION = "test"

# (label, arangob options, the seed's operations per second: ArangoDB 1.4, 8 cores, 2013)
CONFIGS = [
    ("serial", [], 8337.457596),
    ("concurrency 8", ["--concurrency", 8], 34039.341036),
    ("batch 2", ["--batch-size", 2], 10293.982554),
    ("batch 4", ["--batch-size", 4], 12504.588559),
    ("async", ["--async", "true"], 14118.421878),
    ("batch 2, concurrency 8", ["--batch-size", 2, "--concurrency", 8], 49042.297118),
    ("batch 4, concurrency 8", ["--batch-size", 4, "--concurrency", 8], 81930.586113),
    ("async, concurrency 8", ["--async", "true", "--concurrency", 8], 50633.285694),
    ("batch 4, async, concurrency 8", ["--batch-size", 4, "--async", "true", "--concurrency", 8], 56506.120347),
    ("batch 128, async, concurrency 8", ["--batch-size", 128, "--async", "true", "--concurrency", 8],
     1180110.883219),
]


def main():
    machine = machine_description()
    print(f"machine: {machine}; {DOCS:,} documents per run")
    data = temp_dir("quince-insert-perf-")
    server = Quince(data, ["--server.maximal-queue-size", "64000"])
    server.start()
    rows = []
    try:
        for label, options, seed in CONFIGS:
            report = bench(server.url, "--test-case", "document", "--complexity", 10, "--collection", COLLECTION,
                           "--requests", DOCS, *options, allow_failures=True)
            results = report["results"]
            stored_after = None
            if "--async" in options and results["failures"] == 0:
                waited = wait_for_count(server, "_system", COLLECTION, DOCS)
                stored_after = None if waited is None else results["timeSinceStart"] + waited
            count = server.request("GET", f"/_db/_system/_api/collection/{COLLECTION}/count")["count"]
            row = {
                "label": label, "seed": seed, "rate": results["operationsPerSecondRate"],
                "elapsed": results["timeSinceStart"], "stored_after": stored_after,
                "failures": results["failures"], "count": count,
                "p50": report["serviceTime"]["p50Ms"], "p99": report["serviceTime"]["p99Ms"],
                "errors": report["errors"],
            }
            rows.append(row)
            print(f"{label:34} {row['rate']:>12,.0f} ops/s  seed {seed:>12,.0f}  elapsed {row['elapsed']:.2f} s  "
                  f"stored {count:,}  failures {row['failures']}")
    finally:
        server.stop()
        remove(data)

    lines = [
        "# Insert performance (seed: insert-performance.txt)",
        "",
        f"Machine: {machine}. Quince release build, one `quince serve` with "
        "`--server.maximal-queue-size 64000` (as the seed suggests for its last run), client and server on "
        "loopback. Client: `quince bench --test-case document --complexity 10 --collection test` "
        f"(arangob's options) with {DOCS:,} documents per run; the collection is re-created before each run. "
        "Produced by `bash benches/insert-performance.sh` "
        "(`FULL=1` or `DOCS=500000` for the seed's size).",
        "",
        "The seed's figures: ArangoDB 1.4.0-beta2 on an 8-core i7 (2.67 GHz) desktop in 2013, arangob on the same "
        "host, 500,000 documents. This machine has far fewer cores, so compare the shape of the table more "
        "than the absolute figures.",
        "",
        "| configuration | seed ops/s | Quince ops/s | Quince elapsed s | stored (async: all stored after s) | "
        "p50 / p99 ms per request | failed ops |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        stored = f"{r['count']:,}"
        if r["stored_after"] is not None:
            stored += f" (after {r['stored_after']:.2f} s)"
        lines.append(f"| {r['label']} | {fmt_int(r['seed'])} | {fmt_int(r['rate'])} | {r['elapsed']:.2f} | {stored} | "
                     f"{fmt_ms(r['p50'])} / {fmt_ms(r['p99'])} | {r['failures']:,} |")
    failed = [r for r in rows if r["errors"]]
    if failed:
        lines += ["", "Errors reported by the client:", ""]
        for r in failed:
            for e in r["errors"]:
                what = e.get("message") or f"HTTP {e.get('status')}, errorNum {e.get('errorNum')}"
                lines.append(f"- {r['label']}: {what}: {e['count']:,}")
    lines += ["", "With `--async true` the client times only the server's acknowledgements (202), as arangob does; "
              "the last column says when the documents were all in the collection.", "",
              "![insert performance](insert-performance.svg)", ""]
    write_doc("insert-performance.md", "\n".join(lines))
    chart({
        "title": f"Insert performance: arangob document case, complexity 10, {DOCS:,} documents",
        "panel_height": 520,
        "panels": [{
            "title": "operations per second (higher is better)", "kind": "bar", "x_label": "operations per second",
            "categories": [r["label"] for r in rows],
            "series": [
                {"name": "seed: ArangoDB 1.4, 8 cores (2013)", "values": [r["seed"] for r in rows]},
                {"name": "Quince (this machine)", "values": [r["rate"] for r in rows]},
            ],
        }],
    }, "insert-performance.svg")


if __name__ == "__main__":
    main()
