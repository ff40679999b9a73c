"""Multi-document insert microbenchmark: `POST /_api/document/{c}` with arrays of 1,000
ten-attribute documents over keep-alive connections, for one or more server binaries, reporting
documents/s and the server's CPU time per document. Writes docs/benchmarks/multi-insert.md.
Standard library only.

Usage: QUINCE_BINS="old-binary new-binary" python3 benches/lib/multi_insert_bench.py
       (REQUESTS, BATCH, CONNECTIONS, RUNS change the run; the first binary is the baseline)

Each binary gets a fresh server and data directory; the binaries alternate over RUNS rounds and
the median is reported, so all see the same machine state. Bodies are encoded before the clock
starts, so the client's JSON work is not measured.
"""

import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import AUTH, Quince, machine_description  # noqa: E402

REQUESTS = int(os.environ.get("REQUESTS", "200"))
BATCH = int(os.environ.get("BATCH", "1000"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "2"))
RUNS = int(os.environ.get("RUNS", "3"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "docs", "benchmarks", "multi-insert.md")
CITIES = ["Berlin", "Paris", "Rome", "Madrid", "Oslo", "Vienna", "Prague", "Lisbon"]


def body(request):
    """One request's array of BATCH documents with keys unique to the request."""
    docs = []
    for j in range(BATCH):
        i = request * BATCH + j
        docs.append({"_key": f"u{i}", "name": f"user{i}", "age": i % 90, "city": CITIES[i % 8],
                     "score": round((i * 7919 % 10000) / 100, 2), "active": i % 3 == 0,
                     "email": f"user{i}@example.com", "tags": ["a", "b"] if i % 2 else ["c"],
                     "created": 1700000000 + i, "level": i % 10})
    return json.dumps(docs, separators=(",", ":")).encode()


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sender(url, collection, bodies, errors):
    host, port = url.replace("http://", "").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=300)
    headers = {"Authorization": AUTH, "Content-Type": "application/json"}
    for data in bodies:
        conn.request("POST", f"/_api/document/{collection}", body=data, headers=headers)
        resp = conn.getresponse()
        reply = resp.read()
        if resp.status not in (201, 202) or b'"error":true' in reply:
            errors.append(f"{resp.status}: {reply[:200]!r}")
    conn.close()


def measure(server, bodies, collection):
    """Sends every body over CONNECTIONS connections; returns (seconds, server CPU seconds)."""
    server.request("POST", "/_api/collection", {"name": collection})
    shares = [bodies[k::CONNECTIONS] for k in range(CONNECTIONS)]
    errors = []
    threads = [threading.Thread(target=sender, args=(server.url, collection, share, errors))
               for share in shares]
    cpu_before = cpu_seconds(server.proc.pid)
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - started
    cpu = cpu_seconds(server.proc.pid) - cpu_before
    if errors:
        raise RuntimeError(f"{len(errors)} failed requests, first: {errors[0]}")
    return seconds, cpu


def main():
    binaries = os.environ.get("QUINCE_BINS", "target/release/quince").split()
    print(f"encoding {REQUESTS} bodies of {BATCH} documents", flush=True)
    bodies = [body(r) for r in range(REQUESTS)]
    docs = REQUESTS * BATCH
    work = tempfile.mkdtemp(prefix="quince-bench-multi-")
    servers = {}
    for n, binary in enumerate(binaries):
        os.environ["QUINCE_BIN"] = binary
        servers[binary] = Quince(os.path.join(work, f"data{n}"))
        servers[binary].start()
    results = {b: [] for b in binaries}
    load_before = os.getloadavg()[0]
    try:
        for round_ in range(RUNS):
            for binary in binaries:
                seconds, cpu = measure(servers[binary], bodies, f"m{round_}")
                results[binary].append((seconds, cpu))
                print(f"round {round_ + 1}: {binary}: {docs / seconds:,.0f} docs/s, "
                      f"{cpu / docs * 1e6:.2f} µs server CPU per document", flush=True)
        load_after = os.getloadavg()[0]
    finally:
        for server in servers.values():
            server.stop()
        os.system(f"rm -rf {work}")

    lines = [
        "# Multi-document insert benchmark",
        "",
        f"Machine: {machine_description()}.",
        "",
        f"{REQUESTS} requests `POST /_api/document/{{collection}}`, each an array of {BATCH:,} "
        f"documents with ten attributes (plus `_key`), over {CONNECTIONS} keep-alive "
        "connections, into a fresh collection per round (default options: no waitForSync). "
        f"Median of {RUNS} rounds; the binaries alternate within each round.",
        "",
        f"Load average (1 min) before and after: {load_before:.1f} and {load_after:.1f} on "
        f"{os.cpu_count()} cores; the server's CPU time per document does not depend on other load.",
        "",
        "| binary | documents/s | server CPU per document |",
        "|---|---:|---:|",
    ]
    for binary in binaries:
        seconds = statistics.median(s for s, _ in results[binary])
        cpu = statistics.median(c for _, c in results[binary])
        lines.append(f"| `{os.environ.get('LABEL_' + str(binaries.index(binary)), binary)}` | "
                     f"{docs / seconds:,.0f} | {cpu / docs * 1e6:.2f} µs |")
    lines += ["", "Rerun: `QUINCE_BINS=\"old new\" python3 benches/lib/multi_insert_bench.py`.", ""]
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
