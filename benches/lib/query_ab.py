"""AQL queries before and after a change (`benches/query-ab.sh`): each binary gets a server of
its own with the same DOCS ten-attribute documents; every round times each query once on
each server, the order of the servers alternating between rounds; the report gives the best
and the median per query and binary, and each binary's best beside the first one's.

Knobs: QUINCE_BINS ("name=path name=path"), DOCS (300,000), ROUNDS (7). Standard library
only.
"""

import json
import os
import statistics
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import AUTH, Quince, machine_description  # noqa: E402
from bench_tools import remove, temp_dir  # noqa: E402

DOCS = int(os.environ.get("DOCS", "300000"))
ROUNDS = int(os.environ.get("ROUNDS", "7"))
QUERIES = {
    "full-scan filter": 'FOR d IN c FILTER d.a3 == "no such value" RETURN d',
    "COLLECT WITH COUNT, 100 groups": "FOR d IN c COLLECT g = d.a1 WITH COUNT INTO n RETURN {g, n}",
    "SORT over every document, LIMIT 1": "FOR d IN c SORT d.a0 DESC LIMIT 1 RETURN d.a0",
    "100,000 documents returned": "FOR d IN c LIMIT 100000 RETURN d",
    "range loop, 3,000,000 numbers": "FOR i IN 1..3000000 FILTER i == -1 RETURN i",
    "subquery of 100,000 values": "LET s = (FOR d IN c LIMIT 100000 RETURN d.a0) RETURN LENGTH(s)",
}
OUT = os.path.join(os.path.dirname(__file__), "..", "out", "query-ab.md")


def document(i):
    return {"_key": f"k{i}", "a0": i, "a1": i % 100, "a2": (i * 7919) % DOCS, "a3": f"name-{i}",
            "a4": "lorem ipsum dolor", "a5": i * 1.5, "a6": i % 2 == 0, "a7": [1, 2, 3],
            "a8": {"x": i}, "a9": "sit amet"}


def post(url, path, body, content_type="application/json"):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method="POST",
                                 headers={"Authorization": AUTH, "Content-Type": content_type})
    with urllib.request.urlopen(req, timeout=600) as resp:
        return json.loads(resp.read())


def main():
    bins = [entry.split("=", 1) for entry in os.environ["QUINCE_BINS"].split()]
    lines = "\n".join(json.dumps(document(i)) for i in range(DOCS)).encode()
    servers, dirs = {}, []
    for name, path in bins:
        directory = temp_dir(f"query-ab-{name}")
        dirs.append(directory)
        os.environ["QUINCE_BIN"] = path
        server = Quince(directory)
        server.start()
        post(server.url, "/_api/collection", {"name": "c"})
        post(server.url, "/_api/import?collection=c&type=documents", lines, "application/x-ndjson")
        servers[name] = server
    times = {(q, n): [] for q in QUERIES for n in servers}
    try:
        for rnd in range(ROUNDS):
            order = list(servers.items()) if rnd % 2 == 0 else list(servers.items())[::-1]
            for query, text in QUERIES.items():
                for name, server in order:
                    started = time.perf_counter()
                    post(server.url, "/_api/cursor", {"query": text, "batchSize": 100000})
                    times[(query, name)].append(time.perf_counter() - started)
    finally:
        for server in servers.values():
            server.stop()
        for directory in dirs:
            remove(directory)
    first = bins[0][0]
    rows = []
    for query in QUERIES:
        cells = []
        for name, _ in bins:
            best, median = min(times[(query, name)]), statistics.median(times[(query, name)])
            ratio = best / min(times[(query, first)])
            cells.append(f"{best * 1000:,.1f} / {median * 1000:,.1f} ms ({ratio:.2f}x)")
        rows.append(f"| {query} | " + " | ".join(cells) + " |")
    header = "| query | " + " | ".join(f"{n}: best / median (best vs {first})" for n, _ in bins) + " |"
    text = "\n".join([
        "# AQL queries before and after",
        "",
        f"Machine: {machine_description()}. {DOCS:,} documents, {ROUNDS} rounds, servers",
        "alternating; each query timed end to end over HTTP (`batchSize` 100,000).",
        "",
        header,
        "|---|" + "---|" * len(bins),
        *rows,
        "",
    ])
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
