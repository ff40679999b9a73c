"""The AQL benchmark: lookups through a persistent index and by key, a full-scan filter and a
100-group COLLECT over DOCS ten-attribute documents, Quince (`POST /_api/cursor`) beside
PostgreSQL (the same documents as `jsonb`) in the same run. Writes benches/out/aql.md, from which
docs/benchmarks/aql.md is updated by hand. Standard library only; the clients are wrk (with
benches/lib/cursor.lua and get.lua), pgbench and psql.

Both servers are loaded once and run side by side; every measurement alternates between them
(Quince, PostgreSQL, Quince, PostgreSQL, ... for each workload, ROUNDS times). Knobs: DOCS
(1,000,000), DURATION (10 s per wrk or pgbench run), ROUNDS (2).
"""

import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import AUTH, ROOT_PASSWORD, Quince, machine_description  # noqa: E402
from bench_tools import endpoint, fmt_int, quince_bin  # noqa: E402
from transactions_bench import Postgres, children, cpu_of, measured, pg_bin, tree_cpu  # noqa: E402

DOCS = int(os.environ.get("DOCS", "1000000"))
DURATION = int(os.environ.get("DURATION", "10"))
ROUNDS = int(os.environ.get("ROUNDS", "2"))
CONCURRENCIES = (1, 8)
TIMED_RUNS = 3  # the scans and the COLLECT: best of 3 per round
HERE = os.path.dirname(os.path.abspath(__file__))
COLL = "c"
PG_USER = "postgres"
A2_MULT = 2654435761  # a prime: i -> (i * A2_MULT + A2_ADD) % DOCS is a permutation of 0 .. DOCS-1
A2_ADD = 12345
COLORS = ["red", "green", "blue", "yellow", "cyan", "magenta", "black"]
WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()

Q_A2 = "FOR d IN c FILTER d.a2 == @v RETURN d"
Q_KEY = "FOR d IN c FILTER d._key == @k RETURN d"
Q_SCAN = 'FOR d IN c FILTER d.a3 == "no such value" RETURN d'
Q_COLLECT = "FOR d IN c COLLECT g = d.a1 WITH COUNT INTO n RETURN {g, n}"
PG_INDEX = "CREATE INDEX t_a2 ON t (((doc->>'a2')::bigint))"
PG_A2 = "SELECT doc FROM t WHERE (doc->>'a2')::bigint = :v;"
PG_KEY = "SELECT doc FROM t WHERE id = 'k' || :k;"
PG_SCAN_COUNT = "SELECT count(*) FROM t WHERE doc->>'a3' = 'no such value'"
PG_SCAN_ROWS = "SELECT doc FROM t WHERE doc->>'a3' = 'no such value'"
PG_GROUP = "SELECT doc->>'a1', count(*) FROM t GROUP BY 1"


def a2_of(i):
    return (i * A2_MULT + A2_ADD) % DOCS


def document(i):
    """The i-th document: ten attributes, about 200 bytes of JSON."""
    return {
        "_key": f"k{i}",
        "a0": i,                                   # unique integer
        "a1": i % 100,                             # 100 groups
        "a2": a2_of(i),                            # unique, random-looking: the indexed field
        "a3": f"name-{i:08d}",                     # unique string: the full scan's filter
        "a4": round(i * 0.37, 2),
        "a5": COLORS[i % len(COLORS)],
        "a6": (i * 7919) % 1000,
        "a7": " ".join(WORDS[(i + j) % len(WORDS)] for j in range(6)),
        "a8": i % 3 == 0,
        "a9": f"{(i * 40503) % 65536:05d}-{WORDS[i % len(WORDS)]}-{i % 997:03d}-padding-text",
    }


def write_data(work):
    """The JSON-lines file for `quince import` and the COPY file (text format: key TAB json)
    for PostgreSQL; returns their paths and the mean document size in bytes."""
    if math.gcd(A2_MULT, DOCS) != 1:
        raise RuntimeError(f"DOCS={DOCS} shares a factor with {A2_MULT}")
    jsonl, tsv = os.path.join(work, "docs.jsonl"), os.path.join(work, "docs.tsv")
    size = 0
    with open(jsonl, "w") as fj, open(tsv, "w") as ft:
        for i in range(DOCS):
            d = document(i)
            line = json.dumps(d, separators=(",", ":"))
            size += len(line)
            fj.write(line + "\n")
            body = dict(d)
            del body["_key"]
            # No backslashes, tabs or newlines in the documents: the JSON is valid COPY text as is.
            ft.write(f"{d['_key']}\t{json.dumps(body, separators=(',', ':'))}\n")
    return jsonl, tsv, size / DOCS


# -- running things -------------------------------------------------------------------------------


def run(cmd, timeout, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def wrk_run(url, connections, script, env):
    """wrk with --latency; returns {rps, p50, p99} (ms) and raises on errors."""
    threads = min(connections, 2)
    cmd = ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{DURATION}s", "--latency",
           "--timeout", "10s", "-H", f"Authorization: {AUTH}", "-s", script, url]
    out = run(cmd, DURATION + 60, env={**os.environ, **env})

    def pct(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        v, unit = float(m.group(1)), m.group(2)
        return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v

    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    sock = re.search(r"Socket errors:.*", out)
    if bad or sock:
        raise RuntimeError(f"wrk {url}: errors\n{out}")
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "ops": int(re.search(r"(\d+) requests in", out).group(1)), "p50": pct(50), "p99": pct(99)}


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))]


# -- Quince ---------------------------------------------------------------------------------------


def quince_load(server, jsonl):
    started = time.monotonic()
    out = run([quince_bin(), "import", "--server.endpoint", endpoint(server.url), "--server.password",
               ROOT_PASSWORD, "--file", jsonl, "--type", "jsonl", "--collection", COLL,
               "--create-collection", "true", "--progress", "false"], 3600)
    load_s = time.monotonic() - started
    if f"created: {DOCS}," not in out:
        raise RuntimeError(f"quince import: {out}")
    started = time.monotonic()
    index = server.request("POST", f"/_api/index?collection={COLL}", {"type": "persistent", "fields": ["a2"]})
    index_s = time.monotonic() - started
    count = server.request("GET", f"/_api/collection/{COLL}/count")["count"]
    if count != DOCS:
        raise RuntimeError(f"quince: {count} documents after the import")
    return load_s, index_s, index["id"]


def cursor(server, query, bind_vars=None):
    body = {"query": query, "batchSize": 1000}
    if bind_vars:
        body["bindVars"] = bind_vars
    reply = server.request("POST", "/_api/cursor", body)
    if reply.get("hasMore"):
        raise RuntimeError(f"{query}: more than one batch")
    return reply


def quince_version():
    done = subprocess.run([quince_bin(), "--version"], capture_output=True, text=True, timeout=60)
    return done.stdout.strip() or "unknown version"


def quince_explain(server, query, bind_vars):
    plan = server.request("POST", "/_api/explain", {"query": query, "bindVars": bind_vars})["plan"]
    nodes = []
    for node in plan["nodes"]:
        if node["type"] == "IndexNode":
            idx = node.get("indexes", [{}])[0]
            nodes.append(f"IndexNode ({idx.get('type')} on {','.join(idx.get('fields', []))})")
        elif node["type"] not in ("SingletonNode", "ReturnNode", "CalculationNode"):
            nodes.append(node["type"])
    return ", ".join(nodes)


def quince_check(server):
    """The lookups find their one document; the scan nothing; the COLLECT 100 groups."""
    for i in (0, 1, DOCS // 2, DOCS - 1):
        got = cursor(server, Q_A2, {"v": a2_of(i)})["result"]
        if [d["_key"] for d in got] != [f"k{i}"]:
            raise RuntimeError(f"a2 lookup of k{i}: {got}")
        got = cursor(server, Q_KEY, {"k": f"k{i}"})["result"]
        if [d["a0"] for d in got] != [i]:
            raise RuntimeError(f"_key lookup of k{i}: {got}")
    if cursor(server, Q_SCAN)["result"]:
        raise RuntimeError("the scan found something")
    groups = cursor(server, Q_COLLECT)["result"]
    if len(groups) != min(100, DOCS) or sum(g["n"] for g in groups) != DOCS:
        raise RuntimeError(f"COLLECT: {groups[:5]}...")


def quince_lookup(server, lookup, c):
    script = os.path.join(HERE, "cursor.lua")
    env = {"BENCH_KEYS": str(DOCS), "BENCH_LOOKUP": lookup, "BENCH_COLLECTION": COLL}
    url = f"{server.url}/_api/cursor"
    if lookup == "get":
        script, url = os.path.join(HERE, "get.lua"), f"{server.url}/_api/document/{COLL}/"
    result, client_s, server_s, wall = measured(lambda: wrk_run(url, c, script, env),
                                                lambda: sum(cpu_of(server.proc.pid)))
    return {**result, "client_cpu": client_s / wall, "server_cpu": server_s / wall}


def quince_timed(server, query):
    """Best of TIMED_RUNS, seconds, end to end (one HTTP request, the whole result)."""
    best = None
    for _ in range(TIMED_RUNS):
        started = time.monotonic()
        cursor(server, query)
        took = time.monotonic() - started
        best = took if best is None else min(best, took)
    return best


# -- PostgreSQL -----------------------------------------------------------------------------------


def psql(pg, sql, timeout=3600):
    """Runs `sql` (a script) in one session; returns psql's unaligned, tuples-only output."""
    return run([pg_bin("psql"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", PG_USER, "-X", "-q", "-At",
                "-v", "ON_ERROR_STOP=1", "postgres"], timeout, input=sql)


def pg_load(pg, tsv):
    psql(pg, "CREATE TABLE t (id text PRIMARY KEY, doc jsonb NOT NULL);")
    started = time.monotonic()
    psql(pg, f"\\copy t (id, doc) FROM '{tsv}'")
    load_s = time.monotonic() - started
    started = time.monotonic()
    psql(pg, PG_INDEX + ";")
    index_s = time.monotonic() - started
    psql(pg, "VACUUM ANALYZE t;")
    count = int(psql(pg, "SELECT count(*) FROM t;").strip())
    if count != DOCS:
        raise RuntimeError(f"postgres: {count} rows after COPY")
    return load_s, index_s


def pg_explain(pg, sql):
    plan = psql(pg, f"EXPLAIN (COSTS OFF) {sql};").strip().splitlines()
    return "; ".join(line.strip().lstrip("-> ") for line in plan)


def pg_check(pg):
    for i in (0, 1, DOCS // 2, DOCS - 1):
        got = psql(pg, PG_A2.replace(":v", str(a2_of(i)))).strip().splitlines()
        if len(got) != 1 or json.loads(got[0])["a0"] != i:
            raise RuntimeError(f"a2 lookup of {i}: {got}")
        got = psql(pg, PG_KEY.replace(":k", f"'{i}'")).strip().splitlines()
        if len(got) != 1 or json.loads(got[0])["a0"] != i:
            raise RuntimeError(f"key lookup of {i}: {got}")
    if psql(pg, PG_SCAN_COUNT + ";").strip() != "0" or psql(pg, PG_SCAN_ROWS + ";").strip():
        raise RuntimeError("the scan found something")
    groups = psql(pg, PG_GROUP + ";").strip().splitlines()
    if len(groups) != min(100, DOCS) or sum(int(g.split("|")[1]) for g in groups) != DOCS:
        raise RuntimeError(f"GROUP BY: {groups[:5]}...")


def pg_lookup(pg, work, which, c, mode):
    """pgbench with a random value per transaction."""
    var = "v" if which == "a2" else "k"
    text = f"\\set {var} random(0, {DOCS - 1})\n{PG_A2 if which == 'a2' else PG_KEY}\n"
    return pgbench_run(pg, work, which, text, c, mode)


def pgbench_run(pg, work, name, text, c, mode, env=None, defines=(), timeout=None):
    """pgbench -f (the script `text`) for DURATION s at concurrency c; returns {rps, ops, p50,
    p99} (ms) from the per-transaction log, and the CPU shares. `defines` are pgbench -D
    settings, `env` extra environment (PGOPTIONS)."""
    script = os.path.join(work, f"{name}.sql")
    with open(script, "w") as f:
        f.write(text)
    logs = tempfile.mkdtemp(prefix="pgbench-log-", dir=work)
    cmd = [pg_bin("pgbench"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", PG_USER, "-n", "-f", script,
           "-c", str(c), "-j", str(min(c, 2)), "-T", str(DURATION), "-M", mode, "-l",
           "--log-prefix", os.path.join(logs, "tx"), *[arg for d in defines for arg in ("-D", d)], "postgres"]
    settled = children(pg.pid)
    out, client_s, server_s, wall = measured(
        lambda: run(cmd, timeout or DURATION + 60, cwd=logs, env={**os.environ, **(env or {})}),
        lambda: tree_cpu(pg.pid, settled))
    failed = re.search(r"number of failed transactions:\s+(\d+)", out)
    if failed and int(failed.group(1)):
        raise RuntimeError(f"pgbench: failed transactions\n{out}")
    latencies = []
    for log_name in os.listdir(logs):
        with open(os.path.join(logs, log_name)) as f:
            latencies += [int(line.split()[2]) for line in f if line.strip()]
    shutil.rmtree(logs, ignore_errors=True)
    latencies.sort()
    tps = float(re.search(r"^tps = ([\d.]+)", out, re.M).group(1))
    return {"rps": tps, "ops": len(latencies), "p50": percentile(latencies, 50) / 1000,
            "p99": percentile(latencies, 99) / 1000, "client_cpu": client_s / wall, "server_cpu": server_s / wall}


def pg_shape(pg, sql, workers):
    """Serial, or parallel with the workers the plan asks for (EXPLAIN, not run)."""
    setting = "" if workers is None else f"SET max_parallel_workers_per_gather = {workers};\n"
    plan = psql(pg, setting + f"EXPLAIN (COSTS OFF) {sql};")
    m = re.search(r"Workers Planned: (\d+)", plan)
    return f"parallel, {m.group(1)} workers" if m else "serial"


def pg_timed(pg, sql, workers):
    """Best of TIMED_RUNS, seconds, as psql's \\timing sees them (query sent to result read)."""
    setting = "" if workers is None else f"SET max_parallel_workers_per_gather = {workers};\n"
    out = psql(pg, setting + "\\timing on\n" + f"{sql};\n" * TIMED_RUNS)
    times = [float(t) for t in re.findall(r"^Time: ([\d.]+) ms", out, re.M)]
    if len(times) != TIMED_RUNS:
        raise RuntimeError(f"psql timing: {out}")
    return min(times) / 1000


# -- the workloads --------------------------------------------------------------------------------


def log(text):
    print(text, flush=True)


def lookups(quince, pg, work, results):
    """Workloads 1 and 4: wrk against Quince, pgbench against PostgreSQL, alternating."""
    for r in range(ROUNDS):
        for which, quince_kinds in (("a2", ("cursor",)), ("key", ("cursor", "get"))):
            for c in CONCURRENCIES:
                for kind in quince_kinds:
                    lookup = "get" if kind == "get" else which
                    row = quince_lookup(quince, lookup, c)
                    results.setdefault(("quince", which, kind, c), []).append(row)
                    log(f"round {r + 1} {which:3} c={c} quince {kind:9}: {fmt_row(row)}")
                for mode in ("prepared", "simple"):
                    row = pg_lookup(pg, work, which, c, mode)
                    results.setdefault(("pg", which, mode, c), []).append(row)
                    log(f"round {r + 1} {which:3} c={c} pg {mode:13}: {fmt_row(row)}")


def fmt_row(row):
    return (f"{row['rps']:,.0f}/s, p50 {row['p50']:.3f} ms, p99 {row['p99']:.3f} ms; "
            f"client {row['client_cpu']:.0%}, server {row['server_cpu']:.0%} of a core")


def timed(quince, pg, results):
    """Workloads 2 and 3: best of 3 per round, alternating; the best over the rounds."""
    cases = [("scan", Q_SCAN, [("count", PG_SCAN_COUNT), ("rows", PG_SCAN_ROWS)]),
             ("collect", Q_COLLECT, [("group", PG_GROUP)])]
    for case, _, pg_queries in cases:
        for name, sql in pg_queries:
            for workers in (None, 0):
                results[("plan", case, name, workers)] = pg_shape(pg, sql, workers)
    for r in range(ROUNDS):
        for case, query, pg_queries in cases:
            took = quince_timed(quince, query)
            results.setdefault(("quince", case), []).append(took)
            log(f"round {r + 1} {case:7} quince: {took * 1000:.1f} ms ({DOCS / took:,.0f} docs/s)")
            for name, sql in pg_queries:
                for workers in (None, 0):
                    took = pg_timed(pg, sql, workers)
                    results.setdefault(("pg", case, name, workers), []).append(took)
                    log(f"round {r + 1} {case:7} pg {name} workers={'default' if workers is None else workers}: "
                        f"{took * 1000:.1f} ms ({DOCS / took:,.0f} docs/s)")


# -- the document ---------------------------------------------------------------------------------


def merged(rows):
    """Over the rounds: mean throughput with its range, median of the latencies and CPU."""
    rps = [r["rps"] for r in rows]
    return {"rps": statistics.mean(rps), "lo": min(rps), "hi": max(rps),
            "p50": statistics.median(r["p50"] for r in rows), "p99": statistics.median(r["p99"] for r in rows),
            "client_cpu": statistics.median(r["client_cpu"] for r in rows),
            "server_cpu": statistics.median(r["server_cpu"] for r in rows)}


def fmt_rps(m):
    if len({round(m["lo"]), round(m["hi"])}) == 1:
        return fmt_int(m["rps"])
    return f"{fmt_int(m['rps'])} ({fmt_int(m['lo'])}–{fmt_int(m['hi'])})"


def pct(value):
    return f"{value * 100:.0f} %"


def lookup_table(results, which, quince_kinds, names):
    lines = [
        "| concurrency | Quince | req/s | p50 / p99 ms | PostgreSQL | req/s | p50 / p99 ms | Quince / PostgreSQL req/s | CPU Quince wrk / server | CPU pgbench / PostgreSQL |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in CONCURRENCIES:
        for kind in quince_kinds:
            q = merged(results[("quince", which, kind, c)])
            for mode in ("prepared", "simple"):
                p = merged(results[("pg", which, mode, c)])
                lines.append(
                    f"| {c} | {names[kind]} | {fmt_rps(q)} | {q['p50']:.3f} / {q['p99']:.3f} | pgbench `-M {mode}` | "
                    f"{fmt_rps(p)} | {p['p50']:.3f} / {p['p99']:.3f} | {q['rps'] / p['rps']:.2f}x | "
                    f"{pct(q['client_cpu'])} / {pct(q['server_cpu'])} | {pct(p['client_cpu'])} / {pct(p['server_cpu'])} |")
    return lines


def report(machine, pg_version, setup, results):
    def best(key):
        return min(results[key])

    def ms_docs(s):
        return f"{s * 1000:,.1f} ms ({fmt_int(DOCS / s)} docs/s)"

    q_scan, q_collect = best(("quince", "scan")), best(("quince", "collect"))
    a2_c1 = merged(results[("quince", "a2", "cursor", 1)])
    lines = [
        "# AQL queries beside PostgreSQL",
        "",
        f"Machine: {machine}.",
        "",
        f"Quince release build ({quince_version()}), its default settings, Basic authentication",
        f"(verified once, then cached). {pg_version}, default settings (`shared_buffers` 128 MB,",
        "`max_parallel_workers_per_gather` 2) but `max_connections=50`, `trust` authentication.",
        "Clients and servers on the same machine over loopback TCP. Produced by `bash benches/aql.sh`",
        f"(DOCS={DOCS}, DURATION={DURATION} s per wrk or pgbench run, ROUNDS={ROUNDS}). Both servers",
        "are loaded once and run side by side; each measurement alternates Quince, PostgreSQL, Quince,",
        "PostgreSQL, ... Throughputs are the mean over the rounds (range in parentheses), latencies",
        "and CPU shares their median; the timed queries are the best of 3 per round, best over the rounds.",
        "",
        "## Data",
        "",
        f"{fmt_int(DOCS)} documents `{{_key: \"k<i>\", a0..a9}}`, {setup['doc_bytes']:.0f} bytes of JSON on average:",
        "`a0` = i, `a1` = i % 100 (100 groups), `a2` = (i × 2654435761 + 12345) mod DOCS (unique,",
        "random-looking: the looked-up field), `a3` = `\"name-<i>\"`, strings, numbers and a boolean",
        "for the rest (`benches/lib/aql_bench.py`, `document`).",
        "",
        "| | Quince | PostgreSQL |",
        "|---|---|---|",
        "| storage | collection `c` | `t(id text PRIMARY KEY, doc jsonb NOT NULL)`, `id` = `_key` |",
        f"| load | `quince import` (JSON lines): {setup['q_load']:.1f} s ({fmt_int(DOCS / setup['q_load'])} docs/s) | "
        f"`\\copy` (COPY): {setup['pg_load']:.1f} s ({fmt_int(DOCS / setup['pg_load'])} docs/s), then `VACUUM ANALYZE` |",
        f"| index | `POST /_api/index` `{{\"type\":\"persistent\",\"fields\":[\"a2\"]}}`: {setup['q_index']:.1f} s | "
        f"`{PG_INDEX}`: {setup['pg_index']:.1f} s |",
        f"| lookup plan | {setup['q_plan']} | {setup['pg_plan']} |",
        "",
        "PostgreSQL's index is on the expression `((doc->>'a2')::bigint)`, the one the query",
        "`WHERE (doc->>'a2')::bigint = $1` uses (an index on `(doc->'a2')` would need the query",
        "written `doc->'a2' = to_jsonb($1)`; the cast form is the one people write for numbers).",
        "",
        "## 1. Equality lookup through the persistent index",
        "",
        "Quince: wrk (`benches/lib/cursor.lua`) sending `POST /_api/cursor`",
        f"`{{\"query\":\"{Q_A2}\",\"bindVars\":{{\"v\":<random 0..DOCS-1>}}}}`",
        "(one document found per request, the cursor closed in the same answer). PostgreSQL: pgbench",
        f"`\\set v random(0, DOCS-1)` `{PG_A2}`. wrk `-t 1 -c 1` / `-t 2 -c 8`,",
        "pgbench `-c 1` / `-c 8 -j 2`. pgbench's latencies come from its per-transaction",
        "log (`-l`). `-M prepared` parses and plans once per connection, PostgreSQL's best case;",
        "`-M simple` parses and plans every query, as Quince does (it keeps no plans between queries):",
        "the like-for-like comparison is simple, both are shown.",
        "",
        *lookup_table(results, "a2", ("cursor",), {"cursor": "cursor"}),
        "",
        f"Target (the issue): Quince's median under 0.5 ms at concurrency 1: {a2_c1['p50']:.3f} ms, "
        f"{'met' if a2_c1['p50'] < 0.5 else 'not met'}; throughput at or above PostgreSQL's: "
        + ", ".join(
            f"c={c} {merged(results[('quince', 'a2', 'cursor', c)])['rps'] / merged(results[('pg', 'a2', m, c)])['rps']:.2f}x of {m}"
            for c in CONCURRENCIES for m in ("prepared", "simple")) + ".",
        "",
        "## 2. Full-scan filter",
        "",
        f"Quince: `{Q_SCAN}` (`POST /_api/cursor`, timed end to end; it returns nothing). PostgreSQL:",
        "the same condition on `doc->>'a3'` (no index on it), timed by psql's `\\timing`, at the default",
        "`max_parallel_workers_per_gather` (2: a Gather with two workers beside the leader, so up",
        "to all cores) and at 0 (one core, as Quince's one query thread). Documents per second = DOCS / time.",
        "",
        "| PostgreSQL query | `max_parallel_workers_per_gather` (plan) | Quince | PostgreSQL | Quince / PostgreSQL docs/s |",
        "|---|---|---|---|---|",
    ]
    for name, sql in (("count", PG_SCAN_COUNT), ("rows", PG_SCAN_ROWS)):
        for workers in (None, 0):
            p = best(("pg", "scan", name, workers))
            lines.append(f"| `{sql}` | {'default, 2' if workers is None else workers} "
                         f"({results[('plan', 'scan', name, workers)]}) | {ms_docs(q_scan)} | "
                         f"{ms_docs(p)} | {p / q_scan:.2f}x |")
    lines += [
        "",
        "## 3. COLLECT, 100 groups",
        "",
        f"Quince: `{Q_COLLECT}`; PostgreSQL: `{PG_GROUP}`; both return 100 rows.",
        "",
        "| PostgreSQL `max_parallel_workers_per_gather` (plan) | Quince | PostgreSQL | Quince / PostgreSQL docs/s |",
        "|---|---|---|---|",
    ]
    for workers in (None, 0):
        p = best(("pg", "collect", "group", workers))
        lines.append(f"| {'default, 2' if workers is None else workers} ({results[('plan', 'collect', 'group', workers)]}) | "
                     f"{ms_docs(q_collect)} | {ms_docs(p)} | "
                     f"{p / q_collect:.2f}x |")
    lines += [
        "",
        "## 4. Lookup by key, for reference",
        "",
        f"Quince: `{Q_KEY}` through `POST /_api/cursor` (`cursor.lua`, `k` = `\"k<random>\"`), and",
        "`GET /_api/document/c/k<random>` (`benches/lib/get.lua`), both with wrk as above. PostgreSQL:",
        f"pgbench `\\set k random(0, DOCS-1)` `{PG_KEY}` (the primary key's index).",
        "",
        *lookup_table(results, "key", ("cursor", "get"), {"cursor": "cursor", "get": "`GET /_api/document`"}),
        "",
        "The machine's 2 cores are shared by the client and the server: at concurrency 8 client and",
        "server together use about both, so neither side's figure is what a server alone would reach;",
        "the CPU columns show how much each client took. Figures on this shared machine vary by",
        "about ±20 % between runs.",
    ]
    return "\n".join(lines) + "\n"


def stop_on_signal(signum, _frame):
    """SIGTERM (timeout, kill) and SIGHUP end the run through the `finally`s, which stop the
    servers and remove the work directory."""
    raise SystemExit(128 + signum)


def main():
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGHUP, stop_on_signal)
    for tool in ("pgbench", "initdb", "pg_ctl", "psql", "postgres"):
        pg_bin(tool)
    if shutil.which("wrk") is None:
        raise RuntimeError("wrk is needed")
    machine = machine_description()
    log(f"machine: {machine}; binary {quince_bin()}; DOCS={DOCS} DURATION={DURATION} ROUNDS={ROUNDS}")
    work = tempfile.mkdtemp(prefix="quince-bench-aql-")
    os.chmod(work, 0o755)  # the postgres user reads nothing here (\copy reads as us), but pg's dir is inside
    quince = Quince(os.path.join(work, "quince"))
    pg = Postgres(work)
    results = {}
    try:
        started = time.monotonic()
        jsonl, tsv, doc_bytes = write_data(work)
        log(f"data: {DOCS:,} documents, {doc_bytes:.0f} bytes each on average ({time.monotonic() - started:.1f} s)")
        quince.start()
        pg.start()
        setup = {"doc_bytes": doc_bytes}
        setup["q_load"], setup["q_index"], _ = quince_load(quince, jsonl)
        log(f"quince: import {setup['q_load']:.1f} s, index {setup['q_index']:.1f} s")
        setup["pg_load"], setup["pg_index"] = pg_load(pg, tsv)
        log(f"postgres: COPY {setup['pg_load']:.1f} s, index {setup['pg_index']:.1f} s")
        os.unlink(jsonl)
        os.unlink(tsv)
        quince_check(quince)
        pg_check(pg)
        setup["q_plan"] = quince_explain(quince, Q_A2, {"v": 1})
        setup["pg_plan"] = pg_explain(pg, PG_A2.rstrip(";").replace(":v", "1"))
        log(f"plans: quince {setup['q_plan']}; postgres {setup['pg_plan']}")
        lookups(quince, pg, work, results)
        timed(quince, pg, results)
        pg_version = pg.version()
    finally:
        stop_both(quince, pg, work)
    publish("aql.md", report(machine, pg_version, setup, results))


def stop_both(quince, pg, work):
    """Stops Quince and PostgreSQL (if it started) and removes `work`, whatever fails."""
    try:
        quince.stop()
    finally:
        try:
            if getattr(pg, "pid", None):
                pg.stop()
        finally:
            shutil.rmtree(work, ignore_errors=True)


def publish(name, text):
    """Prints a report and writes it to benches/out/`name`."""
    print(text)
    out = os.path.join(HERE, "..", "out")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
