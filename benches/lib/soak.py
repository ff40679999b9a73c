"""Soak benchmark (see benches/soak.sh): arangob's crud cycle (insert, read, patch, read,
remove, by key) at CONCURRENCY connections against one server for DURATION seconds, cut into
INTERVAL-second slices. Each slice is one `quince bench --duration INTERVAL` run against the
same server, so each row's throughput and latency percentiles are that interval's own figures
(`quince bench` reports only whole runs). A thread samples the server's RSS and open file
descriptors every second while a slice runs; between slices the script counts the live
documents, truncates the leftovers (see `next_slice`), and takes the idle descriptor count
and the data directory's disk use. Prints a table as it goes, then writes
docs/benchmarks/soak.md and benches/out/soak-<time>.csv. Exit status 1 when an operation
failed or the server stopped answering.

What it is not: a throughput benchmark. The client shares the machine with the server, and
each slice opens its connections afresh: about 0.3 s between slices without load (a second
more when a burst of connects overflows the server's listen backlog and a SYN is resent),
reported as the load's share of wall time.
"""

import csv
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(__file__))
from bench_tools import REPO, Quince, bench, machine_description, remove, temp_dir, write_doc  # noqa: E402
from group_commit import cpu_seconds  # noqa: E402

DURATION = int(os.environ.get("DURATION", "600"))
INTERVAL = int(os.environ.get("INTERVAL", "10"))
CONCURRENCY = int(os.environ.get("CONCURRENCY", "256"))
COMPLEXITY = int(os.environ.get("COMPLEXITY", "10"))
COLLECTION = "soak"
# Seconds between two samples of RSS and descriptors while a slice runs.
SAMPLE_S = 1.0
# A request unanswered this long counts as failed (a transport timeout) instead of stalling
# the slice for bench's default 20 minutes.
REQUEST_TIMEOUT_S = 60
# Only sets the key ranges here (`--duration` makes the operation count unbounded): a
# connection's keys start at about index * KEY_SPACE / CONCURRENCY (arangob's thread offset),
# so ten million operations per connection and slice never reach the next connection's keys.
KEY_SPACE = CONCURRENCY * 10_000_000
MIB = 2**20

COLUMNS = [
    # (CSV name, table heading, width, format)
    ("interval", "#", 3, "{:d}"),
    ("end_s", "end s", 6, "{:.0f}"),
    ("ops_per_s", "ops/s", 8, "{:,.0f}"),
    ("p50_ms", "p50 ms", 7, "{:.2f}"),
    ("p99_ms", "p99 ms", 7, "{:.2f}"),
    ("max_ms", "max ms", 8, "{:.1f}"),
    ("errors", "errors", 6, "{:d}"),
    ("rss_mib", "RSS MiB", 7, "{:.1f}"),
    ("fds", "fds", 5, "{:d}"),
    ("idle_rss_mib", "idle RSS MiB", 12, "{:.1f}"),
    ("idle_fds", "idle fds", 8, "{:d}"),
    ("docs", "docs", 5, "{:d}"),
    ("disk_mib", "disk MiB", 8, "{:.1f}"),
    ("cpu_pct", "server CPU %", 12, "{:.0f}"),
]
CSV_ONLY = ["ops", "load_s", "p95_ms", "p99_9_ms", "connections"]


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def settled_fd_count(pid, timeout_s=2.0):
    """Open descriptors once the count stops changing: the server closes the client's sockets
    shortly after the client has exited."""
    last = fd_count(pid)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = fd_count(pid)
        if now == last:
            return now
        last = now
    return last


def disk_bytes(path):
    """Bytes allocated under `path` (as du counts them, so preallocated journals count whole)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass  # compaction removed it meanwhile
    return total


class Sampler:
    """Samples the server's RSS and open descriptors every SAMPLE_S seconds on a thread; the
    peaks since `__enter__` are what a slice reports."""

    def __init__(self, server):
        self.server = server
        self.rss_max = 0
        self.fds_max = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def sample(self):
        try:
            self.rss_max = max(self.rss_max, self.server.rss_bytes())
            self.fds_max = max(self.fds_max, fd_count(self.server.proc.pid))
        except (OSError, RuntimeError):
            pass  # the server is gone; the slice's end notices

    def run(self):
        while not self.stop.wait(SAMPLE_S):
            self.sample()

    def __enter__(self):
        self.sample()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.sample()


def slice_row(server, data, index, seconds, started):
    """Runs one slice of `seconds` and measures around it; returns its row and its error
    kinds. The first slice creates the collection."""
    pid = server.proc.pid
    cpu_before, wall_before = cpu_seconds(pid), time.monotonic()
    with Sampler(server) as peaks:
        report = bench(server.url, "--test-case", "crud", "--collection", COLLECTION,
                       "--complexity", COMPLEXITY, "--concurrency", CONCURRENCY,
                       "--duration", seconds, "--requests", KEY_SPACE,
                       "--server.request-timeout", REQUEST_TIMEOUT_S,
                       "--create-collection", "true" if index == 1 else "false",
                       allow_failures=True, timeout=seconds + REQUEST_TIMEOUT_S + 120)
    cpu = cpu_seconds(pid) - cpu_before
    wall = time.monotonic() - wall_before
    results, service = report["results"], report["serviceTime"]
    errors = Counter()
    for e in report["errors"]:
        what = (f"HTTP {e['status']}, errorNum {e['errorNum']}" if e["kind"] == "http"
                else f"{e['kind']}: {e['message']}")
        errors[what] += e["count"]
    docs = next_slice(server)
    row = {
        "interval": index, "end_s": time.monotonic() - started,
        "ops": report["totalNumberOfOperations"], "load_s": results["timeSinceStart"],
        "ops_per_s": results["operationsPerSecondRate"],
        "p50_ms": service["p50Ms"], "p95_ms": service["p95Ms"], "p99_ms": service["p99Ms"],
        "p99_9_ms": service["p99_9Ms"], "max_ms": service["maxMs"],
        "errors": results["failures"], "connections": report["connectionsOpened"],
        "rss_mib": peaks.rss_max / MIB, "fds": peaks.fds_max,
        "idle_rss_mib": server.rss_bytes() / MIB, "idle_fds": settled_fd_count(pid),
        "docs": docs, "disk_mib": disk_bytes(data) / MIB, "cpu_pct": 100 * cpu / wall,
    }
    return row, errors


def next_slice(server):
    """Counts the collection's documents, then truncates it (without compacting). A slice
    stops its connections mid-cycle, leaving at most one document per connection; the next
    slice starts every connection at its first key again, and its insert would collide with
    such a leftover (409). Returns the count before truncation."""
    count = server.request("GET", f"/_api/collection/{COLLECTION}/count")["count"]
    server.request("PUT", f"/_api/collection/{COLLECTION}/truncate?compact=false")
    return count


def commit():
    def git(*args):
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{head} (with uncommitted changes)" if dirty else head


def table_line(cells):
    return "  ".join(f"{c:>{w}}" for c, (_, _, w, _) in zip(cells, COLUMNS))


def cells(row):
    return [fmt.format(row[name]) for name, _, _, fmt in COLUMNS]


def spread(rows, name):
    """first, last and max of a column, and its max over each half of the run: a leak keeps
    raising the second half's max, while a sawtooth (compaction, allocator) repeats itself."""
    values = [r[name] for r in rows]
    half = (len(values) + 1) // 2
    return values[0], values[-1], max(values), max(values[:half]), max(values[half:] or values[-1:])


def summary_lines(rows, errors, health, wall_s):
    load_s = sum(r["load_s"] for r in rows)
    ops = sum(r["ops"] for r in rows)
    p99 = [r["p99_ms"] for r in rows]
    lines = [
        f"Operations: {ops:,} in {len(rows)} intervals, {ops / load_s if load_s else 0:,.0f}/s over the "
        f"time under load; load covered {100 * load_s / wall_s if wall_s else 0:.1f} % of the "
        f"{wall_s:.0f} s (the rest: starting each slice's client, counting, truncating).",
        f"p99 per interval: min {min(p99):.2f} ms, median {statistics.median(p99):.2f} ms, "
        f"max {max(p99):.2f} ms; the slowest request took {max(r['max_ms'] for r in rows):.1f} ms.",
        "Errors: " + (", ".join(f"{k}: {v:,}" for k, v in sorted(errors.items())) or "none") + ".",
        f"Server at the end: {health}.",
    ]
    for name, label, unit in [("rss_mib", "RSS under load (peak)", " MiB"),
                              ("idle_rss_mib", "RSS idle (after each interval)", " MiB"),
                              ("fds", "open descriptors under load (peak)", ""),
                              ("idle_fds", "open descriptors idle (after each interval)", ""),
                              ("disk_mib", "data directory on disk", " MiB")]:
        number = "{:.1f}" if unit else "{:d}"
        first, last, most, early_max, late_max = (number.format(v) for v in spread(rows, name))
        lines.append(f"{label}: first {first}{unit}, last {last}{unit}, max {most}{unit}; max in the "
                     f"first half {early_max}{unit}, in the second half {late_max}{unit}.")
    return lines


def write_outputs(rows, errors, health, wall_s, machine, started_at):
    out_dir = os.path.join(REPO, "benches", "out")
    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, f"soak-{time.strftime('%Y%m%d-%H%M%S', started_at)}.csv")
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[c[0] for c in COLUMNS] + CSV_ONLY)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()})
    print(f"wrote {os.path.relpath(csv_path, REPO)}")
    if not rows:
        return
    lines = [
        f"# Soak: mixed reads and writes at concurrency {CONCURRENCY}",
        "",
        f"Machine: {machine}. Started {time.strftime('%Y-%m-%d %H:%M:%S %Z', started_at)}; commit "
        f"{commit()}. Produced by `DURATION={DURATION} INTERVAL={INTERVAL} CONCURRENCY={CONCURRENCY} "
        f"COMPLEXITY={COMPLEXITY} bash benches/soak.sh` (defaults: 600 s, 10 s, 256, 10).",
        "",
        f"One Quince release server (fresh data directory, authentication on). Load: `quince bench "
        f"--test-case crud --complexity {COMPLEXITY} --concurrency {CONCURRENCY}`, arangob's cycle of "
        f"insert, read, patch, read and remove by key (documents of {COMPLEXITY} boolean attributes), "
        f"closed loop, keep-alive, in consecutive runs of `--duration {INTERVAL}` on the same server: "
        "each row is one run, so its ops/s and latency percentiles (service time, all connections "
        "merged) are that interval's alone. Between runs the script counts the live documents (at "
        "most one per connection: a run stops its connections mid-cycle), truncates them without "
        "compacting, since the next run restarts every connection at its first key, and waits for "
        "the descriptor count to settle. The client runs on the same machine.",
        "",
        "RSS and fds are the peaks of samples taken every second while the interval ran (VmRSS and "
        f"the entries of /proc/PID/fd, the latter including the {CONCURRENCY} client connections); "
        "the idle columns are taken after the interval's client has exited; disk is the space "
        "allocated in the data directory; server CPU % is the server's CPU time over the "
        "interval's wall time (100 % is one core).",
        "",
        "| " + " | ".join(h for _, h, _, _ in COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
        *["| " + " | ".join(cells(r)) + " |" for r in rows],
        "",
        *[f"- {line}" for line in summary_lines(rows, errors, health, wall_s)],
        "",
    ]
    write_doc("soak.md", "\n".join(lines))


def main():
    # A TERM or HUP (benches/soak.sh's trap signals the whole process group) unwinds through
    # the `finally` below, which stops the server and removes the data directory.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: sys.exit(128 + signum))
    if DURATION < 1 or INTERVAL < 1 or CONCURRENCY < 1:
        sys.exit("DURATION, INTERVAL and CONCURRENCY must be at least 1")
    slices = [INTERVAL] * (DURATION // INTERVAL) + ([DURATION % INTERVAL] if DURATION % INTERVAL else [])
    machine = machine_description()
    started_at = time.localtime()
    print(f"machine: {machine}")
    print(f"soak: crud, complexity {COMPLEXITY}, concurrency {CONCURRENCY}, {DURATION} s in "
          f"{len(slices)} intervals of {INTERVAL} s")
    data = os.environ.get("SOAK_DATA_DIR") or temp_dir("quince-soak-")
    server = Quince(data)
    rows, errors, health, healthy = [], Counter(), "not checked", False
    started = time.monotonic()
    try:
        server.start()
        started = time.monotonic()  # the table's clock starts with the first interval
        print(f"server {server.url}, pid {server.proc.pid}, data {data}")
        print(table_line([h for _, h, _, _ in COLUMNS]), flush=True)
        for index, seconds in enumerate(slices, 1):
            row, kinds = slice_row(server, data, index, seconds, started)
            rows.append(row)
            errors.update(kinds)
            print(table_line(cells(row)), flush=True)
        version = server.request("GET", "/_api/version")
        healthy = server.proc.poll() is None and "version" in version
        health = (f"GET /_api/version answered {version.get('server')} {version.get('version')}"
                  if healthy else f"unhealthy: GET /_api/version answered {version}")
    except Exception as e:  # noqa: BLE001 -- the rows so far still get written
        exited = server.proc is not None and server.proc.poll() is not None
        health = f"FAILED: {e}" + (f" (server exited with {server.proc.returncode})" if exited else "")
        print(health, file=sys.stderr)
    finally:
        wall_s = time.monotonic() - started
        server.stop()
        remove(data)
    print()
    for line in summary_lines(rows, errors, health, wall_s) if rows else [health]:
        print(line)
    write_outputs(rows, errors, health, wall_s, machine, started_at)
    sys.exit(0 if healthy and not errors else 1)


if __name__ == "__main__":
    main()
