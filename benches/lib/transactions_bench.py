"""The transactions benchmark: stream transactions of 10 documents over 3 collections (begin, one
array insert of 4, 3 and 3 documents per collection, commit) per second, at concurrency 1 and 8,
with and without waitForSync, beside PostgreSQL doing the same 3-table 10-row transaction with
pgbench in the same run; then arangob's `multi-collection` case (begin, one insert into each of
two collections, commit) at concurrency 1 and 8. Writes benches/out/transactions.md, from
which docs/benchmarks/transactions.md is updated by hand.
Standard library only.

The Quince client is `quince bench --test-case stream-trx` (mio, one thread per core), the
PostgreSQL client is pgbench (simple protocol: one round trip per statement, five per
transaction, as Quince's five HTTP requests). Both run on the same machine as their server;
the CPU each client used is measured and reported beside the server's, to show whether the
client is the limit. Each configuration writes into fresh collections (tables).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import Quince, free_port, machine_description  # noqa: E402
from bench_tools import bench, endpoint, fmt_int, fmt_ms, quince_bin  # noqa: E402,F401

DURATION = int(os.environ.get("DURATION", "8"))
CONCURRENCIES = [int(c) for c in os.environ.get("CONCURRENCIES", "1 8").split()]
PG_USER = "postgres"
DOC = '{"value":%d,"name":"some test value"}'
SHARES = [4, 3, 3]  # documents per collection (table): 10 in all, as stream-trx splits them


def tick_seconds(ticks):
    return ticks / os.sysconf("SC_CLK_TCK")


def cpu_of(pid):
    """(own, reaped children) CPU seconds of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return tick_seconds(int(fields[11]) + int(fields[12])), tick_seconds(int(fields[13]) + int(fields[14]))


def children(root):
    """The pids whose parent is `root`."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == root:
                    found.add(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def tree_cpu(root, settled=None):
    """CPU seconds of `root` and its children, the reaped ones included (PostgreSQL forks a
    backend per connection; its CPU joins the postmaster's once the backend is reaped). With
    `settled` (the children before the run), first waits (at most 5 s) until the run's
    backends are gone, so their CPU is counted."""
    deadline = time.monotonic() + 5
    while settled is not None and children(root) - settled and time.monotonic() < deadline:
        time.sleep(0.01)
    own, reaped = cpu_of(root)
    total = own + reaped
    for pid in children(root):
        try:
            total += sum(cpu_of(pid))
        except (OSError, ValueError, IndexError):
            continue
    return total


def client_cpu():
    usage = os.times()
    return usage.children_user + usage.children_system


def measured(run, server_cpu):
    """Runs `run()`; returns (its result, client CPU s, server CPU s, wall s)."""
    client0, server0, wall0 = client_cpu(), server_cpu(), time.monotonic()
    result = run()
    wall = time.monotonic() - wall0
    return result, client_cpu() - client0, server_cpu() - server0, wall


# -- Quince ---------------------------------------------------------------------------------------


def quince_runs(work):
    server = Quince(os.path.join(work, "quince"))
    server.start()
    rows = []
    try:
        for sync in (False, True):
            for c in CONCURRENCIES:
                coll = f"trx_{'sync' if sync else 'nosync'}_c{c}"
                report, client_s, server_s, wall = measured(lambda: bench(
                    server.url, "--test-case", "stream-trx", "--complexity", 10, "--concurrency", c,
                    "--duration", DURATION, "--collection", coll, "--wait-for-sync", str(sync).lower()),
                    lambda: sum(cpu_of(server.proc.pid)))
                rows.append(quince_row("stream-trx", sync, c, report, client_s, server_s, wall))
                counts = [server.request("GET", f"/_api/collection/{coll}{i}/count")["count"] for i in (1, 2, 3)]
                done = report["totalNumberOfOperations"]
                if counts != [share * done for share in SHARES]:
                    raise RuntimeError(f"{coll}: counts {counts} after {done} transactions")
        for c in CONCURRENCIES:
            coll = f"multi_c{c}"
            report, client_s, server_s, wall = measured(lambda: bench(
                server.url, "--test-case", "multi-collection", "--concurrency", c, "--duration", DURATION,
                "--collection", coll), lambda: sum(cpu_of(server.proc.pid)))
            rows.append(quince_row("multi-collection", False, c, report, client_s, server_s, wall))
    finally:
        server.stop()
    return rows


def quince_row(case, sync, c, report, client_s, server_s, wall):
    if report["results"]["failures"]:
        raise RuntimeError(f"{case} c={c}: {report['results']['failures']} failures: {report['errors']}")
    elapsed = report["results"]["timeSinceStart"]
    service = report["serviceTime"]
    row = {"who": "Quince", "case": case, "sync": sync, "c": c,
           "tps": report["totalNumberOfOperations"] / elapsed,
           "p50": service["p50Ms"], "p99": service["p99Ms"], "avg": service["meanMs"],
           "requests": report["requests"], "ops": report["totalNumberOfOperations"],
           "client_cpu": client_s / wall, "server_cpu": server_s / wall}
    print(f"{case:16} sync={sync!s:5} c={c}: {row['tps']:,.0f} tx/s, p50 {row['p50']:.2f} ms, "
          f"p99 {row['p99']:.2f} ms; client {row['client_cpu']:.0%}, server {row['server_cpu']:.0%} of a core",
          flush=True)
    return row


# -- PostgreSQL -----------------------------------------------------------------------------------


def pg_bin(name):
    found = shutil.which(name)
    if found:
        return found
    for version in sorted(os.listdir("/usr/lib/postgresql"), reverse=True):
        path = f"/usr/lib/postgresql/{version}/bin/{name}"
        if os.path.exists(path):
            return path
    raise RuntimeError(f"{name} not found")


def as_postgres(cmd, **kw):
    """Runs `cmd` as the postgres user when we are root (PostgreSQL refuses to run as root)."""
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", PG_USER, "--", *cmd]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


class Postgres:
    """A PostgreSQL cluster of its own (initdb) on a free port, default settings (fsync on)."""

    def __init__(self, work):
        self.dir = os.path.join(work, "pg")
        self.port = free_port()

    def start(self):
        os.makedirs(self.dir)
        if os.geteuid() == 0:
            shutil.chown(self.dir, PG_USER, PG_USER)
        as_postgres([pg_bin("initdb"), "-D", os.path.join(self.dir, "data"), "-A", "trust", "-U", PG_USER,
                     "--no-instructions"])
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c max_connections=50"
        as_postgres([pg_bin("pg_ctl"), "-D", os.path.join(self.dir, "data"), "-o", options, "-l",
                     os.path.join(self.dir, "log"), "-w", "start"])
        with open(os.path.join(self.dir, "data", "postmaster.pid")) as f:
            self.pid = int(f.readline())

    def psql(self, sql):
        subprocess.run([pg_bin("psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", PG_USER, "-q", "-v",
                        "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True, text=True)

    def count(self, table):
        out = subprocess.run([pg_bin("psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", PG_USER, "-At",
                              "-c", f"SELECT count(*) FROM {table}"], check=True, capture_output=True, text=True)
        return int(out.stdout.strip())

    def stop(self):
        as_postgres([pg_bin("pg_ctl"), "-D", os.path.join(self.dir, "data"), "-m", "fast", "stop"])

    def version(self):
        out = subprocess.run([pg_bin("postgres"), "--version"], capture_output=True, text=True)
        return out.stdout.strip()


def pg_runs(work):
    pg = Postgres(work)
    pg.start()
    rows = []
    try:
        script = os.path.join(work, "trx.sql")
        with open(script, "w") as f:
            f.write("BEGIN;\n")
            for table, share in enumerate(SHARES, 1):
                values = ", ".join(f"('{DOC % i}')" for i in range(share))
                f.write(f"INSERT INTO @T@{table} (doc) VALUES {values};\n")
            f.write("COMMIT;\n")
        for sync in (False, True):
            for c in CONCURRENCIES:
                prefix = f"trx_{'sync' if sync else 'nosync'}_c{c}_"
                for table in (1, 2, 3):
                    pg.psql(f"CREATE TABLE {prefix}{table} (id bigserial PRIMARY KEY, doc jsonb NOT NULL)")
                with open(script) as f:
                    text = f.read().replace("@T@", prefix)
                run_script = os.path.join(work, f"{prefix}.sql")
                with open(run_script, "w") as f:
                    f.write(text)
                env = {**os.environ, "PGOPTIONS": f"-c synchronous_commit={'on' if sync else 'off'}"}
                cmd = [pg_bin("pgbench"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", PG_USER, "-n", "-f",
                       run_script, "-c", str(c), "-j", str(min(c, os.cpu_count() or 1)), "-T", str(DURATION),
                       "postgres"]
                settled = children(pg.pid)
                done, client_s, server_s, wall = measured(
                    lambda: subprocess.run(cmd, check=True, capture_output=True, text=True, env=env),
                    lambda: tree_cpu(pg.pid, settled))
                rows.append(pg_row(done.stdout, sync, c, client_s, server_s, wall))
                count = pg.count(f"{prefix}1")
                if count != SHARES[0] * rows[-1]["ops"]:
                    raise RuntimeError(f"{prefix}1: {count} rows after {rows[-1]['ops']} transactions")
    finally:
        pg.stop()
    return rows, pg.version()


def pg_row(out, sync, c, client_s, server_s, wall):
    figures = {}
    for line in out.splitlines():
        if line.startswith("number of transactions actually processed:"):
            figures["ops"] = int(line.split(":")[1].split()[0])
        elif line.startswith("number of failed transactions:"):
            figures["failed"] = int(line.split(":")[1].split()[0])
        elif line.startswith("latency average"):
            figures["avg"] = float(line.split("=")[1].split()[0])
        elif line.startswith("tps ="):
            figures["tps"] = float(line.split("=")[1].split()[0])
    if figures.get("failed"):
        raise RuntimeError(f"pgbench: {figures['failed']} failed transactions\n{out}")
    row = {"who": "PostgreSQL", "case": "3 tables, 10 rows", "sync": sync, "c": c, "tps": figures["tps"],
           "avg": figures["avg"], "p50": None, "p99": None, "ops": figures["ops"],
           "client_cpu": client_s / wall, "server_cpu": server_s / wall}
    print(f"{'postgres':16} sync={sync!s:5} c={c}: {row['tps']:,.0f} tx/s, avg {row['avg']:.2f} ms; "
          f"client {row['client_cpu']:.0%}, server {row['server_cpu']:.0%} of a core", flush=True)
    return row


# -- the document ---------------------------------------------------------------------------------


def pct(value):
    return f"{value * 100:.0f} %"


def document(machine, quince, pg, pg_version):
    by = {(r["case"], r["sync"], r["c"]): r for r in quince}
    pg_by = {(r["sync"], r["c"]): r for r in pg}
    lines = [
        "# Stream transactions",
        "",
        f"Machine: {machine}. Quince release build; {pg_version} (default settings: fsync on,",
        "`max_connections=50`); client and server on the same machine, loopback. Produced by",
        f"`bash benches/transactions.sh` ({DURATION} s per configuration; `DURATION` and `CONCURRENCIES` change it).",
        "",
        "The transaction: 10 documents over 3 collections (tables), 4, 3 and 3. Quince: `quince bench",
        "--test-case stream-trx` (`POST /_api/transaction/begin` writing the 3 collections, one",
        "array `POST /_api/document` of 4, 3, 3 documents `{\"value\":i,\"name\":\"some test value\"}` per",
        "collection with `x-arango-trx-id`, `PUT /_api/transaction/{id}`: 5 requests). PostgreSQL:",
        "pgbench, simple protocol (one round trip per statement, 5 per transaction) running `BEGIN;`,",
        "one multi-row `INSERT` of the same JSON into a `jsonb` column per table (`bigserial` key),",
        "`COMMIT;`. waitForSync (Quince: collections created with `waitForSync: true`, so every commit",
        "waits for its fsync, shared by concurrent commits) pairs with `synchronous_commit=on`;",
        "without it, Quince's commit is in the page cache (synced within `--database.sync-interval`)",
        "and PostgreSQL's `synchronous_commit=off` leaves the WAL flush to the WAL writer. Each",
        "configuration writes into fresh collections (tables); the counts are checked afterwards.",
        "",
        "Transactions per second (tx/s), Quince's service time per transaction (all 5 requests;",
        "PostgreSQL's pgbench gives the mean only), and the CPU of each client and server in shares",
        "of one core over the run:",
        "",
        "| waitForSync | concurrency | Quince tx/s | Quince p50 / p99 / mean ms | PostgreSQL tx/s | PostgreSQL mean ms | Quince / PostgreSQL | CPU Quince client / server | CPU pgbench / PostgreSQL |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for sync in (False, True):
        for c in CONCURRENCIES:
            q, p = by[("stream-trx", sync, c)], pg_by[(sync, c)]
            lines.append(
                f"| {'yes' if sync else 'no'} | {c} | {fmt_int(q['tps'])} | {q['p50']:.2f} / {q['p99']:.2f} / "
                f"{q['avg']:.2f} | {fmt_int(p['tps'])} | {p['avg']:.2f} | {q['tps'] / p['tps']:.2f}x | "
                f"{pct(q['client_cpu'])} / {pct(q['server_cpu'])} | {pct(p['client_cpu'])} / {pct(p['server_cpu'])} |")
    lines += [
        "",
        "Is the client the limit? The machine has 2 cores shared by client and server. At",
        "concurrency 8 the two clients cost about the same share of a core (Quince's `quince bench`",
        "and pgbench, both native, event-driven or threaded), and client plus server use nearly both",
        "cores: each server gets the CPU its own client leaves, so the comparison is even, but",
        "neither figure is what a server alone on 2 cores would reach. At concurrency 1 each",
        "transaction is 5 round trips in sequence and the client is idle most of the time.",
        "",
        "arangob's `multi-collection` case (`quince bench --test-case multi-collection`, complexity 1:",
        "begin on two collections, one single-document insert `{\"value0\":0}` into each, commit: 4",
        "requests; arangob sends one JavaScript transaction instead, which Quince does not run), without",
        "waitForSync:",
        "",
        "| concurrency | tx/s | p50 / p99 / mean ms | requests/s | CPU client / server |",
        "|---|---|---|---|---|",
    ]
    for c in CONCURRENCIES:
        q = by[("multi-collection", False, c)]
        lines.append(f"| {c} | {fmt_int(q['tps'])} | {q['p50']:.2f} / {q['p99']:.2f} / {q['avg']:.2f} | "
                     f"{fmt_int(q['tps'] * q['requests'] / q['ops'])} | {pct(q['client_cpu'])} / {pct(q['server_cpu'])} |")
    lines += [
        "",
        "Figures on this shared machine vary by about ±20 % between runs. A commit that writes more",
        "than one collection is atomic and durable when it answers: two fsync rounds under the",
        "participants' writer locks (docs/transactions.md).",
    ]
    return "\n".join(lines) + "\n"


def main():
    for tool in ("pgbench", "initdb", "pg_ctl", "psql", "postgres"):
        pg_bin(tool)
    machine = machine_description()
    print(f"machine: {machine}; binary {quince_bin()}", flush=True)
    work = tempfile.mkdtemp(prefix="quince-bench-trx-")
    os.chmod(work, 0o755)
    try:
        quince = quince_runs(work)
        pg, pg_version = pg_runs(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = document(machine, quince, pg, pg_version)
    print(text)
    # The figures go to benches/out/; docs/benchmarks/transactions.md is the curated reading of
    # a run (it explains the figures), updated by hand from this output.
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "out")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "transactions.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
