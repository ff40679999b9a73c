"""The journal-sizes seed: insert, get, update and delete of N documents, one HTTP request per
document, at concurrency 1 ... 64, with one server per journal size
(`--database.maximal-journal-size`). Total client time per run, as the seed measured. Writes
docs/benchmarks/journal-sizes.md and one chart per operation. See benches/journal-sizes.sh.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from bench_tools import Quince, bench, chart, machine_description, remove, temp_dir, write_doc  # noqa: E402

FULL = bool(os.environ.get("FULL"))


def numbers(name, default, full):
    text = os.environ.get(name)
    return [int(x) for x in text.split(",")] if text else (full if FULL else default)


SIZES_MIB = numbers("JOURNAL_SIZES_MIB", [1, 4, 32], [1, 2, 4, 8, 16, 32])
COUNTS = numbers("COUNTS", [10000, 100000], [10000, 100000])
CONCURRENCY = numbers("CONCURRENCY", [1, 4, 16, 64], [1, 2, 4, 8, 16, 32, 64])
STEPS = [("insert", "seq-insert"), ("get", "seq-get"), ("update", "seq-update"), ("delete", "seq-remove")]


def main():
    machine = machine_description()
    print(f"machine: {machine}")
    print(f"journal sizes {SIZES_MIB} MiB, documents {COUNTS}, concurrency {CONCURRENCY}")
    # seconds[(operation, count, size)] = [(concurrency, seconds), ...]
    seconds = {}
    for size in SIZES_MIB:
        data = temp_dir("quince-journal-sizes-")
        server = Quince(data, ["--database.maximal-journal-size", str(size << 20)])
        server.start()
        try:
            for count in COUNTS:
                for threads in CONCURRENCY:
                    figures = []
                    for operation, case in STEPS:
                        report = bench(server.url, "--test-case", case, "--requests", count, "--concurrency", threads,
                                       "--complexity", 10, "--collection", "journal")
                        took = report["results"]["timeSinceStart"]
                        seconds.setdefault((operation, count, size), []).append((threads, took))
                        figures.append(f"{operation} {took:.2f} s")
                    print(f"journal {size:>2} MiB, {count:>6} docs, concurrency {threads:>2}: " + ", ".join(figures))
        finally:
            server.stop()
            remove(data)

    lines = [
        "# Journal sizes (seed: journal-sizes.txt)",
        "",
        f"Machine: {machine}. Quince release build; one `quince serve` per journal size "
        "(`--database.maximal-journal-size`), waitForSync off, client on the same host. For each document "
        "count and concurrency, `quince bench` runs the four steps in order over keys `seq0 ...`: insert "
        "(`seq-insert`, 10 string attributes), get, update (PATCH), delete; one HTTP request per document, "
        "as the seed did with httpress. Figures are total client seconds (lower is better).",
        f"Produced by `bash benches/journal-sizes.sh` with journal sizes {SIZES_MIB} MiB, {COUNTS} documents, "
        f"concurrency {CONCURRENCY} (`FULL=1` for the seed's 1 ... 32 MiB and concurrency 1 ... 64).",
        "",
        "The seed (ArangoDB 1.1-alpha, 8 cores, 2012) found journal size irrelevant at 10,000 operations and a "
        "slight advantage of bigger journals for insert, update and delete at 100,000, none for get.",
        "",
    ]
    for operation, _ in STEPS:
        lines += [f"## {operation}", ""]
        for count in COUNTS:
            lines += [f"{count:,} documents, seconds:", "",
                      "| journal | " + " | ".join(f"c={c}" for c in CONCURRENCY) + " |",
                      "|---|" + "---|" * len(CONCURRENCY)]
            for size in SIZES_MIB:
                row = dict(seconds[(operation, count, size)])
                lines.append(f"| {size} MiB | " + " | ".join(f"{row[c]:.2f}" for c in CONCURRENCY) + " |")
            lines.append("")
        lines += [f"![{operation}](journal-sizes-{operation}.svg)", ""]
        chart({
            "title": f"Journal sizes: {operation} (total seconds, lower is better)",
            "panels": [{
                "title": f"{count:,} documents", "kind": "line", "log2_x": True,
                "x_label": "concurrency", "y_label": "seconds",
                "series": [{"name": f"{size} MiB", "points": seconds[(operation, count, size)]} for size in SIZES_MIB],
            } for count in COUNTS],
        }, f"journal-sizes-{operation}.svg")
    write_doc("journal-sizes.md", "\n".join(lines))


if __name__ == "__main__":
    main()
