"""Server CPU per single-document insert and per imported document, two binaries side by side
(issue 13). Standard library only; not part of CI.

Usage: python3 benches/lib/insert_cpu_ab.py BEFORE_BIN AFTER_BIN
Environment: ROUNDS (3), DURATION (wrk seconds, 8), CONNECTIONS (8), DOCS (import, 1000000;
0 skips the import).

Each round runs both binaries, in alternating order, each on a fresh server and data
directory: wrk with benches/lib/insert.lua at CONNECTIONS connections for DURATION seconds,
then `quince import --type jsonl` of the import benchmark's file (benches/lib/import_bench.py).
The figures are the server's utime+stime (from /proc/PID/stat) over the measured requests or
documents, which do not depend on other load on the machine the way rates do.
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import import_bench  # noqa: E402
from bench_common import AUTH, ROOT_PASSWORD, Quince  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
DURATION = int(os.environ.get("DURATION", "8"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "8"))
DOCS = int(os.environ.get("DOCS", "1000000"))


def wrk_requests(url, seconds):
    out = subprocess.run(
        ["wrk", "-t", "2", "-c", str(CONNECTIONS), "-d", f"{seconds}s", "-H",
         f"Authorization: {AUTH}", "-s", os.path.join(HERE, "insert.lua"), url],
        check=True, capture_output=True, text=True).stdout
    if "Non-2xx" in out:
        raise RuntimeError(out)
    return int(re.search(r"(\d+) requests in", out).group(1))


def one(binary, work, path):
    os.environ["QUINCE_BIN"] = binary
    data = tempfile.mkdtemp(prefix="data-", dir=work)
    server = Quince(data)
    server.start()
    try:
        server.request("POST", "/_api/collection", {"name": "bench"})
        url = f"{server.url}/_db/_system/_api/document/bench"
        wrk_requests(url, 1)
        before = import_bench.cpu_seconds(server.proc.pid)
        n = wrk_requests(url, DURATION)
        insert_us = (import_bench.cpu_seconds(server.proc.pid) - before) / n * 1e6
        import_us = float("nan")
        if DOCS:
            before = import_bench.cpu_seconds(server.proc.pid)
            proc = subprocess.run(
                [binary, "import", "--server.endpoint", server.url.replace("http", "tcp"),
                 "--server.password", ROOT_PASSWORD, "--file", path, "--type", "jsonl",
                 "--collection", "imported", "--create-collection", "true", "--threads", "2"],
                capture_output=True, text=True)
            if f"created: {DOCS}," not in proc.stdout:
                raise RuntimeError(proc.stdout + proc.stderr)
            import_us = (import_bench.cpu_seconds(server.proc.pid) - before) / DOCS * 1e6
        return insert_us, import_us, n / DURATION
    finally:
        server.stop()
        subprocess.run(["rm", "-rf", data], check=False)


def main():
    bins = {"before": sys.argv[1], "after": sys.argv[2]}
    work = tempfile.mkdtemp(prefix="quince-insert-cpu-")
    path = os.path.join(work, "docs.jsonl")
    if DOCS:
        import_bench.DOCS = DOCS
        import_bench.write_documents(path)
    figures = {name: [] for name in bins}
    try:
        for round_ in range(ROUNDS):
            order = list(bins) if round_ % 2 == 0 else list(reversed(bins))
            for name in order:
                figures[name].append(one(bins[name], work, path))
                ins, imp, rps = figures[name][-1]
                line = (f"round {round_ + 1} {name}: insert {ins:.2f} µs CPU/request "
                        f"({rps:,.0f} req/s)")
                if DOCS:
                    line += f", import {imp:.2f} µs CPU/document"
                print(line, flush=True)
    finally:
        subprocess.run(["rm", "-rf", work], check=False)
    for name, rows in figures.items():
        line = f"{name}: median insert {statistics.median(r[0] for r in rows):.2f} µs CPU/request"
        if DOCS:
            line += f", median import {statistics.median(r[1] for r in rows):.2f} µs CPU/document"
        print(line)


if __name__ == "__main__":
    main()
