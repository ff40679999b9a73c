"""The graph benchmark: the workload of the 2018 NoSQL performance benchmark (single read, single
write, aggregation, neighbours, neighbours of neighbours with and without data, shortest path)
plus a weighted shortest path and the three shortest paths, on a seeded Pokec-shaped social
graph (benches/lib/graph_data.py), Quince (HTTP and AQL) beside PostgreSQL (jsonb, recursive
CTEs and pgRouting) in the same run. Writes benches/out/graphs.md, from which
docs/benchmarks/graphs.md is updated by hand. Standard library only; the clients are wrk (with
benches/lib/requests.lua), pgbench and psql.

Both servers are loaded once and run side by side; every measurement alternates between them
(for each workload and concurrency: Quince, then PostgreSQL; ROUNDS times). Before anything is
timed, the first CHECKS items of every selected workload are answered by both databases and
compared with the answers computed from the generated graph (graph_data.Graph): any
difference stops the run.

Knobs: VERTICES (200,000), DURATION (10 s per wrk or pgbench run), ROUNDS (2), CONCURRENCIES
("1 8"; the path searches always run at 1), CHECKS (20), WORKLOADS (all; a comma-separated
subset of ALL_WORKLOADS, e.g. read,write,aggregation), QUINCE_WORKLOADS (the workloads whose
Quince side runs and is checked; all the selected ones unless set: the PostgreSQL side of a
workload can be run alone).
"""

import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import urllib.error

sys.path.insert(0, os.path.dirname(__file__))
import graph_data  # noqa: E402
from aql_bench import (DURATION, ROUNDS, fmt_rps, log, merged, pg_timed, pgbench_run, psql, publish, stop_both,  # noqa: E402
                       quince_timed, quince_version, run, stop_on_signal, wrk_run)
from bench_common import ROOT_PASSWORD, Quince, machine_description  # noqa: E402
from bench_tools import endpoint, fmt_int, quince_bin  # noqa: E402
from transactions_bench import Postgres, cpu_of, measured, pg_bin  # noqa: E402

VERTICES = int(os.environ.get("VERTICES", "200000"))
CONCURRENCIES = [int(c) for c in os.environ.get("CONCURRENCIES", "1 8").split()]
CHECKS = int(os.environ.get("CHECKS", "20"))
ITEMS = 1000  # start vertices, and pairs, per graph workload (the published benchmark's count)
BATCH_SIZE = 100000  # every answer in one batch: a cursor left open would outlive wrk's request
HERE = os.path.dirname(os.path.abspath(__file__))

# -- the workloads --------------------------------------------------------------------------------

Q_AGGREGATION = "FOR p IN profiles COLLECT age = p.age WITH COUNT INTO n RETURN {age, n}"
PG_AGGREGATION = "SELECT (doc->>'age')::int, count(*) FROM profiles GROUP BY 1"

# pgbench substitutes `:name` everywhere in a statement, string literals included, so the SQL
# below casts with CAST(... AS ...), and the written document has a space after every colon
# of its JSON and none in its strings.
PG_TWO_HOPS = ("WITH RECURSIVE n(v, d) AS (SELECT CAST(:s AS bigint), 0 UNION "
               "SELECT r.dst, n.d + 1 FROM n JOIN relations r ON r.src = n.v WHERE n.d < 2)")
PG_EDGES_UNIT = "'SELECT id, src AS source, dst AS target, CAST(1 AS float8) AS cost FROM relations'"
PG_EDGES_WEIGHT = "'SELECT id, src AS source, dst AS target, CAST(weight AS float8) AS cost FROM relations'"
PG_ENDS = "CAST(:s AS bigint), CAST(:t AS bigint)"  # typed: pgRouting's functions are overloaded
PATH_DEPTH_MAX = 6  # the recursive CTE's bound on the unweighted shortest path


def workload_table():
    """name -> {title, items ('vertices': the read's permutation of all profiles, 'starts',
    'pairs', None), heavy (c=1 only), quince: {variant: (method, path suffix, AQL query or None)},
    pg: {variant: (pgbench -M mode, SQL, PGOPTIONS)}, pairs: [(quince variant, pg variant)]}."""
    two_hops = 'FOR v IN 1..2 OUTBOUND @start relations OPTIONS {order: "bfs", uniqueVertices: "global"} '
    return {
        "read": {
            "title": "single read: one profile by key",
            "items": "vertices", "heavy": False,
            "quince": {"GET /_api/document": ("GET", None, None)},
            "pg": {"-M prepared": ("prepared", "SELECT doc FROM profiles WHERE id = :s;", ""),
                   "-M simple": ("simple", "SELECT doc FROM profiles WHERE id = :s;", "")},
            "pairs": [("GET /_api/document", "-M prepared"), ("GET /_api/document", "-M simple")],
        },
        "write": {
            "title": "single write: insert a new profile",
            "items": None, "heavy": False,
            "quince": {"waitForSync=false (default)": ("POST", "", None),
                       "waitForSync=true": ("POST", "?waitForSync=true", None)},
            "pg": {"synchronous_commit=off": ("prepared", PG_WRITE, "-c synchronous_commit=off"),
                   "synchronous_commit=on (default)": ("prepared", PG_WRITE, "")},
            "pairs": [("waitForSync=false (default)", "synchronous_commit=off"),
                      ("waitForSync=true", "synchronous_commit=on (default)")],
        },
        "neighbors": {
            "title": "neighbours: distinct out-neighbours of a profile",
            "items": "starts", "heavy": False,
            "quince": {"AQL": ("POST", None, "FOR v IN 1..1 OUTBOUND @start relations RETURN DISTINCT v._key")},
            "pg": {"SELECT DISTINCT": ("prepared", "SELECT DISTINCT dst FROM relations WHERE src = :s;", "")},
            "pairs": [("AQL", "SELECT DISTINCT")],
        },
        "neighbors2": {
            "title": "neighbours of neighbours: distinct profiles at depth 1 or 2",
            "items": "starts", "heavy": False,
            "quince": {"AQL": ("POST", None, two_hops + "RETURN DISTINCT v._key")},
            "pg": {"recursive CTE": ("prepared", PG_TWO_HOPS + " SELECT DISTINCT v FROM n WHERE v <> :s;", "")},
            "pairs": [("AQL", "recursive CTE")],
        },
        "neighbors2-data": {
            "title": "neighbours of neighbours with data: their whole profiles",
            "items": "starts", "heavy": False,
            "quince": {"AQL": ("POST", None, two_hops + "RETURN DISTINCT v")},
            "pg": {"recursive CTE, join": ("prepared", PG_TWO_HOPS + " SELECT p.id, p.doc FROM profiles p "
                                           "WHERE p.id IN (SELECT v FROM n WHERE v <> :s);", "")},
            "pairs": [("AQL", "recursive CTE, join")],
        },
        "shortest-path": {
            "title": "shortest path (unweighted, hops)",
            "items": "pairs", "heavy": True,
            "quince": {"AQL": ("POST", None, "FOR v IN OUTBOUND SHORTEST_PATH @start TO @target relations "
                                             "RETURN v._key")},
            "pg": {f"recursive CTE (BFS, depth <= {PATH_DEPTH_MAX})": (
                       "prepared", "WITH RECURSIVE b(v, d) AS (SELECT CAST(:s AS bigint), 0 UNION "
                       "SELECT r.dst, b.d + 1 FROM b JOIN relations r ON r.src = b.v "
                       f"WHERE b.d < {PATH_DEPTH_MAX}) SELECT d FROM b WHERE v = :t LIMIT 1;", ""),
                   "pgr_dijkstra, unit costs": (
                       "prepared", f"SELECT node, agg_cost FROM pgr_dijkstra({PG_EDGES_UNIT}, {PG_ENDS}, true);", ""),
                   "pgr_bdDijkstra, unit costs": (
                       "prepared", f"SELECT node, agg_cost FROM pgr_bdDijkstra({PG_EDGES_UNIT}, {PG_ENDS}, true);",
                       "")},
            "pairs": [("AQL", f"recursive CTE (BFS, depth <= {PATH_DEPTH_MAX})"), ("AQL", "pgr_dijkstra, unit costs"),
                      ("AQL", "pgr_bdDijkstra, unit costs")],
        },
        "weighted-path": {
            "title": "weighted shortest path (cost = weight)",
            "items": "pairs", "heavy": True,
            "quince": {"AQL": ("POST", None, "FOR v, e IN OUTBOUND SHORTEST_PATH @start TO @target relations "
                                             'OPTIONS {weightAttribute: "weight"} RETURN [v._key, e.weight]')},
            "pg": {"pgr_dijkstra": (
                "prepared", f"SELECT node, agg_cost FROM pgr_dijkstra({PG_EDGES_WEIGHT}, {PG_ENDS}, true);", "")},
            "pairs": [("AQL", "pgr_dijkstra")],
        },
        "k-paths": {
            "title": "the 3 shortest paths (cost = weight)",
            "items": "pairs", "heavy": True,
            "quince": {"AQL": ("POST", None, "FOR p IN OUTBOUND K_SHORTEST_PATHS @start TO @target relations "
                                             'OPTIONS {weightAttribute: "weight"} LIMIT 3 '
                                             "RETURN {weight: p.weight, vertices: p.vertices[*]._key}")},
            "pg": {"pgr_KSP": (
                "prepared", f"SELECT path_id, node, agg_cost FROM pgr_KSP({PG_EDGES_WEIGHT}, {PG_ENDS}, 3, true);", "")},
            "pairs": [("AQL", "pgr_KSP")],
        },
    }


def written_profile():
    """The document every write inserts (no key: each database picks it). Its times are
    written with dots (pgbench would read `:27` in "14:27" as a variable)."""
    doc = graph_data.profile(VERTICES + 1, random.Random(0))
    return {k: v.replace(":", ".") if isinstance(v, str) else v for k, v in doc.items()}


PG_WRITE = ("INSERT INTO profiles (id, doc) VALUES (nextval('profile_ids'), '"
            + json.dumps(written_profile()) + "');")
WORKLOADS = workload_table()
ALL_WORKLOADS = ["read", "write", "aggregation", *[name for name in WORKLOADS if name not in ("read", "write")]]


def selection(variable, default):
    return [w.strip() for w in os.environ.get(variable, ",".join(default)).split(",") if w.strip()]


SELECTED = selection("WORKLOADS", ALL_WORKLOADS)
QUINCE_SELECTED = selection("QUINCE_WORKLOADS", SELECTED)


def item_count(items):
    return VERTICES if items == "vertices" else ITEMS


def item(items, j):
    """(start, target) of item j; target is None but for pairs."""
    return graph_data.start_of(j, VERTICES), graph_data.target_of(j, VERTICES) if items == "pairs" else None


# -- Quince ---------------------------------------------------------------------------------------


def quince_load(server, work, edges):
    """Imports the profiles, then the relations (an edge collection); returns the seconds each took."""
    took = []
    for name, kind, count in (("profiles", "document", VERTICES), ("relations", "edge", edges)):
        started = time.monotonic()
        out = run([quince_bin(), "import", "--server.endpoint", endpoint(server.url), "--server.password",
                   ROOT_PASSWORD, "--file", os.path.join(work, f"{name}.jsonl"), "--type", "jsonl",
                   "--collection", name, "--create-collection", "true", "--create-collection-type", kind,
                   "--progress", "false"], 3600)
        took.append(time.monotonic() - started)
        if f"created: {count}," not in out:
            raise RuntimeError(f"quince import {name}: {out}")
    return took


def quince_count(server, name):
    return server.request("GET", f"/_api/collection/{name}/count")["count"]


def quince_body(query, start, target):
    body = {"query": query, "batchSize": BATCH_SIZE}
    if start is not None:
        body["bindVars"] = {"start": f"profiles/{start}"}
    if target is not None:
        body["bindVars"]["target"] = f"profiles/{target}"
    return body


def quince_query(server, query, start=None, target=None):
    try:
        reply = server.request("POST", "/_api/cursor", quince_body(query, start, target))
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"quince: {query} ({start} -> {target}): {e.code} {e.read().decode()}") from None
    if reply.get("hasMore"):
        raise RuntimeError(f"{query}: more than one batch")
    return reply["result"]


def request_lines(name, variant, work):
    """Writes the file of requests wrk sends (requests.lua); returns (method, URL path, file)."""
    spec = WORKLOADS[name]
    method, suffix, query = spec["quince"][variant]
    path = os.path.join(work, f"{name}-{len(os.listdir(work))}.requests")
    with open(path, "w") as f:
        if name == "read":
            for j in range(VERTICES):
                f.write(f"/_api/document/profiles/{graph_data.start_of(j, VERTICES)}\n")
            return method, "/", path
        if name == "write":
            f.write(json.dumps(written_profile(), separators=(",", ":")) + "\n")
            return method, "/_api/document/profiles" + suffix, path
        for j in range(ITEMS):
            f.write(json.dumps(quince_body(query, *item(spec["items"], j)), separators=(",", ":")) + "\n")
    return method, "/_api/cursor", path


def quince_run(server, method, url_path, lines, c):
    env = {"BENCH_REQUESTS": lines, "BENCH_METHOD": method, "BENCH_THREADS": str(min(c, 2))}
    result, client_s, server_s, wall = measured(
        lambda: wrk_run(server.url + url_path, c, os.path.join(HERE, "requests.lua"), env),
        lambda: sum(cpu_of(server.proc.pid)))
    return {**result, "client_cpu": client_s / wall, "server_cpu": server_s / wall}


# -- PostgreSQL -----------------------------------------------------------------------------------


def pg_load(pg, work):
    """COPY of both tables, then the relations' indexes; returns (COPY s, index s)."""
    psql(pg, "CREATE TABLE profiles (id bigint PRIMARY KEY, doc jsonb NOT NULL);\n"
             "CREATE TABLE relations (id bigint PRIMARY KEY, src bigint NOT NULL, dst bigint NOT NULL,"
             " weight integer NOT NULL);\n"
             f"CREATE SEQUENCE profile_ids START {VERTICES + 1};\n")
    started = time.monotonic()
    for name in ("profiles", "relations"):
        psql(pg, f"\\copy {name} FROM '{os.path.join(work, name + '.csv')}' WITH (FORMAT csv)")
    copy_s = time.monotonic() - started
    started = time.monotonic()
    psql(pg, "CREATE INDEX relations_src ON relations (src);\nCREATE INDEX relations_dst ON relations (dst);")
    index_s = time.monotonic() - started
    # pgRouting requires PostGIS (installed with it), hence CASCADE.
    psql(pg, "VACUUM ANALYZE profiles;\nVACUUM ANALYZE relations;\nCREATE EXTENSION pgrouting CASCADE;")
    return copy_s, index_s


def pg_count(pg, name):
    return int(psql(pg, f"SELECT count(*) FROM {name};").strip())


def fill(sql, start, target):
    """One pgbench statement with its variables filled in, for psql."""
    return re.sub(r":t\b", str(target), re.sub(r":s\b", str(start), sql))


def pg_rows(pg, sql):
    """The rows of one statement, as lists of strings."""
    return [line.split("|") for line in psql(pg, sql + ";").splitlines() if line]


def pg_rows_many(pg, sql, items):
    """The rows of one pgbench statement for each (start, target), in one psql session."""
    separator = "--- next item ---"
    script = "".join(f"{fill(sql, s, t)}\n\\echo {separator}\n" for s, t in items)
    answers, rows = [], []
    for line in psql(pg, script).splitlines():
        if line == separator:
            answers.append(rows)
            rows = []
        elif line:
            rows.append(line.split("|"))
    if len(answers) != len(items):
        raise RuntimeError(f"psql: {len(answers)} answers to {len(items)} statements")
    return answers


def pg_script(name, sql, c):
    """The pgbench script: client k runs items k, k + c, k + 2c, ... (j counts its
    transactions, from -D j=0), the same order wrk's Lua walks them."""
    items = WORKLOADS[name]["items"]
    if items is None:
        return sql + "\n"
    lines = [f"\\set i (:j * {c} + :client_id) % {item_count(items)}", "\\set j :j + 1",
             f"\\set s 1 + (:i * {graph_data.START_MULT} + {graph_data.START_ADD}) % {VERTICES}"]
    if items == "pairs":
        lines.append(f"\\set t 1 + (:i * {graph_data.TARGET_MULT} + {graph_data.TARGET_ADD}) % {VERTICES}")
    return "\n".join(lines + [sql]) + "\n"


def pg_run(pg, work, name, variant, c):
    mode, sql, options = WORKLOADS[name]["pg"][variant]
    env = {"PGOPTIONS": options} if options else None
    return pgbench_run(pg, work, name, pg_script(name, sql, c), c, mode, env=env, defines=("j=0",),
                       timeout=DURATION + 900)


# -- correctness ----------------------------------------------------------------------------------


def expect(what, got, want):
    if got != want:
        raise RuntimeError(f"{what}: got {got!r}, expected {want!r}")


def check_read(quince, pg, graph):
    for j in range(CHECKS):
        v = graph_data.start_of(j, VERTICES)
        doc = quince.request("GET", f"/_api/document/profiles/{v}")
        expect(f"quince profile {v} key", doc.pop("_key"), str(v))
        doc = {k: value for k, value in doc.items() if not k.startswith("_")}
        pg_doc = json.loads(pg_rows(pg, f"SELECT doc FROM profiles WHERE id = {v}")[0][0])
        expect(f"profile {v}, quince against postgres", doc, pg_doc)


def check_aggregation(quince, pg, _graph):
    q = {g["age"]: g["n"] for g in quince_query(quince, Q_AGGREGATION)}
    p = {int(age): int(n) for age, n in pg_rows(pg, PG_AGGREGATION)}
    expect("profiles by age, quince against postgres", q, p)
    expect("profiles counted by age", sum(p.values()), VERTICES)


def check_graph(quince, pg, graph, name):
    """The first CHECKS items: both databases against the answer computed from the graph."""
    spec = WORKLOADS[name]
    answer = {"neighbors": lambda s, t: graph.neighbours(s), "neighbors2": lambda s, t: graph.two_hop(s),
              "neighbors2-data": lambda s, t: graph.two_hop(s), "shortest-path": graph.hops,
              "weighted-path": graph.weighted, "k-paths": graph.weighted}[name]
    items = [item(spec["items"], j) for j in range(CHECKS)]
    wants = [answer(s, t) for s, t in items]
    pg_answers = {}
    for variant, (_, sql, _) in spec["pg"].items():
        pg_answers[variant] = pg_rows_many(pg, sql, items)
        for j, ((s, t), want, rows) in enumerate(zip(items, wants, pg_answers[variant])):
            expect(f"{name} item {j} ({s} -> {t}), postgres {variant}", pg_answer(name, variant, rows, want), want)
    if name not in QUINCE_SELECTED:
        return
    for variant, (_, _, query) in spec["quince"].items():
        for j, ((s, t), want) in enumerate(zip(items, wants)):
            result = quince_query(quince, query, s, t)
            expect(f"{name} item {j} ({s} -> {t}), quince {variant}", quince_answer(name, result), want)
            if name == "k-paths":  # beyond the first path's weight: the same 3 weights as pgr_KSP
                expect(f"{name} item {j} ({s} -> {t}), the 3 weights, quince against postgres",
                       [p["weight"] for p in result], k_path_costs(pg_answers["pgr_KSP"][j]))


def pg_answer(name, variant, rows, want):
    if name.startswith("neighbors"):
        return {int(r[0]) for r in rows}
    if name == "shortest-path" and variant.startswith("recursive CTE"):
        # Beyond the CTE's depth bound it finds nothing: that agrees with any longer path.
        found = int(rows[0][0]) if rows else None
        return want if found is None and (want is None or want > PATH_DEPTH_MAX) else found
    if name == "k-paths":
        costs = k_path_costs(rows)
        return costs[0] if costs else None
    return round(float(rows[-1][1])) if rows else None


def quince_answer(name, result):
    if name == "neighbors2-data":
        keys = {int(v["_key"]) for v in result}
        if len(keys) != len(result):
            raise RuntimeError("quince: a profile twice")
        return keys
    if name.startswith("neighbors"):
        return {int(k) for k in result}
    if name == "shortest-path":
        return len(result) - 1 if result else None
    if name == "weighted-path":
        return sum(w for _, w in result[1:]) if result else None
    weights = [p["weight"] for p in result]
    if weights != sorted(weights) or len(weights) > 3:
        raise RuntimeError(f"quince k paths: {weights}")
    return weights[0] if weights else None


def k_path_costs(rows):
    """pgr_KSP's rows (path_id, node, agg_cost) -> the paths' costs, in its order (the last row
    of a path carries its whole cost)."""
    costs = {}
    for path_id, _node, agg_cost in rows:
        costs[int(path_id)] = round(float(agg_cost))
    found = list(costs.values())
    if found != sorted(found) or len(found) > 3:
        raise RuntimeError(f"pgr_KSP: {rows}")
    return found


def check(quince, pg, graph):
    """Every selected workload's first CHECKS items, before anything is timed (Quince's side
    only for QUINCE_SELECTED)."""
    for name in SELECTED:
        started = time.monotonic()
        if name == "read":
            check_read(quince, pg, graph)
        elif name == "aggregation":
            check_aggregation(quince, pg, graph)
        elif name == "write":
            continue
        else:
            check_graph(quince, pg, graph, name)
        what = "the groups agree" if name == "aggregation" else f"the first {CHECKS} items agree"
        log(f"check {name}: {what} ({time.monotonic() - started:.1f} s)")


# -- the runs -------------------------------------------------------------------------------------


def measure(quince, pg, work, results):
    """For each round, workload and concurrency: Quince's variants, then PostgreSQL's."""
    for r in range(ROUNDS):
        for name in SELECTED:
            if name == "aggregation":
                if name in QUINCE_SELECTED:
                    took = quince_timed(quince, Q_AGGREGATION)
                    results.setdefault(("aggregation", "quince"), []).append(took)
                    log(f"round {r + 1} aggregation quince: {took * 1000:.1f} ms")
                took = pg_timed(pg, PG_AGGREGATION, None)
                results.setdefault(("aggregation", "pg"), []).append(took)
                log(f"round {r + 1} aggregation postgres: {took * 1000:.1f} ms")
                continue
            spec = WORKLOADS[name]
            for c in [1] if spec["heavy"] else CONCURRENCIES:
                for variant in spec["quince"] if name in QUINCE_SELECTED else []:
                    row = quince_run(quince, *request_lines(name, variant, work), c)
                    results.setdefault((name, "quince", variant, c), []).append(row)
                    log(f"round {r + 1} {name} c={c} quince {variant}: {fmt_row(row)}")
                for variant in spec["pg"]:
                    row = pg_run(pg, work, name, variant, c)
                    results.setdefault((name, "pg", variant, c), []).append(row)
                    log(f"round {r + 1} {name} c={c} postgres {variant}: {fmt_row(row)}")


def fmt_row(row):
    return (f"{row['rps']:,.1f}/s ({row['ops']} ops), p50 {row['p50']:.3f} ms, p99 {row['p99']:.3f} ms; "
            f"client {row['client_cpu']:.0%}, server {row['server_cpu']:.0%} of a core")


# -- the document ---------------------------------------------------------------------------------


def fmt_ops(m):
    return fmt_rps(m) if m["rps"] >= 100 else f"{m['rps']:.2f}"


def combined(rows):
    return {**merged(rows), "ops": sum(r["ops"] for r in rows)}


def measured_table(results, name):
    spec = WORKLOADS[name]
    lines = ["| c | Quince | ops/s | p50 / p99 ms | ops | PostgreSQL | ops/s | p50 / p99 ms | ops | Quince / PostgreSQL |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in [1] if spec["heavy"] else CONCURRENCIES:
        for q_variant, p_variant in spec["pairs"]:
            q_rows, p_rows = results.get((name, "quince", q_variant, c)), results.get((name, "pg", p_variant, c))
            q = combined(q_rows) if q_rows else None
            p = combined(p_rows) if p_rows else None
            q_cells = (f"{fmt_ops(q)} | {q['p50']:.3f} / {q['p99']:.3f} | {q['ops']}" if q
                       else "to be measured | | ")
            p_cells = f"{fmt_ops(p)} | {p['p50']:.3f} / {p['p99']:.3f} | {p['ops']}" if p else "n/a | | "
            ratio = f"{q['rps'] / p['rps']:.2f}x" if q and p else "n/a"
            lines.append(f"| {c} | {q_variant} | {q_cells} | {p_variant} | {p_cells} | {ratio} |")
    return lines


TARGETS = [  # (workload, Quince variant, PostgreSQL variant, the least ratio the issue asks for)
    ("read", "GET /_api/document", "-M prepared", 1.0),
    ("write", "waitForSync=false (default)", "synchronous_commit=off", 1.0),
    ("write", "waitForSync=true", "synchronous_commit=on (default)", 1.0),
    ("neighbors", "AQL", "SELECT DISTINCT", 2.0),
    ("neighbors2", "AQL", "recursive CTE", 2.0),
    ("shortest-path", "AQL", f"recursive CTE (BFS, depth <= {PATH_DEPTH_MAX})", 10.0),
    ("shortest-path", "AQL", "pgr_dijkstra, unit costs", 1.0),
]


def target_table(results):
    lines = ["| workload | c | against | target | ratio | met |", "|---|---|---|---|---|---|"]
    for name, q_variant, p_variant, least in TARGETS:
        if name not in SELECTED:
            continue
        for c in [1] if WORKLOADS[name]["heavy"] else CONCURRENCIES:
            q, p = results.get((name, "quince", q_variant, c)), results.get((name, "pg", p_variant, c))
            if q and p:
                ratio = merged(q)["rps"] / merged(p)["rps"]
                cells = f"{ratio:.2f}x | {'yes' if ratio >= least else 'no'}"
            else:
                cells = "to be measured |"
            lines.append(f"| {name} | {c} | {p_variant} | >= {least:g}x | {cells} |")
    return lines


def report(machine, pg_version, setup, results):
    lines = [
        "# Graph workloads beside PostgreSQL",
        "",
        f"Machine: {machine}.",
        "",
        f"Quince release build ({quince_version()}), default settings. {pg_version} with pgRouting,",
        "default settings (`shared_buffers` 128 MB) but `max_connections=50`, `trust` authentication.",
        "Clients and servers on the same machine over loopback TCP. Produced by `bash benches/graphs.sh`",
        f"(VERTICES={VERTICES}, DURATION={DURATION} s per wrk or pgbench run, ROUNDS={ROUNDS},",
        f"WORKLOADS={','.join(SELECTED)}, QUINCE_WORKLOADS={','.join(QUINCE_SELECTED)}). Both servers",
        "are loaded once and run side by side; each",
        "measurement alternates Quince, PostgreSQL. ops/s is the mean over the rounds (range in",
        "parentheses), latencies their median, ops the operations completed in all rounds.",
        "",
        "## Targets",
        "",
        *target_table(results),
        "",
        "## Data",
        "",
        f"{fmt_int(VERTICES)} profiles ({setup['profile_bytes']:.0f} bytes of JSON on average) and "
        f"{fmt_int(setup['edges'])} relations (mean out-degree {setup['edges'] / VERTICES:.1f},",
        f"median {setup['degree_median']}, max {setup['degree_max']}, {setup['no_out']:.1%} of profiles without any),",
        f"generated by `benches/lib/graph_data.py` (seed {graph_data.SEED}) in {setup['generate_s']:.1f} s.",
        "",
        "| | Quince | PostgreSQL |",
        "|---|---|---|",
        "| storage | `profiles` (documents, `_key` = 1 .. VERTICES), `relations` (edges, `_from`/`_to` "
        "`profiles/<key>`, `weight`) | `profiles(id bigint PRIMARY KEY, doc jsonb)`, "
        "`relations(id bigint PRIMARY KEY, src bigint, dst bigint, weight integer)` |",
        f"| load | `quince import` (JSON lines): profiles {setup['q_load'][0]:.1f} s, relations "
        f"{setup['q_load'][1]:.1f} s (the edge index included) | `\\copy ... (FORMAT csv)`: "
        f"{setup['pg_copy']:.1f} s, then indexes on `src` and `dst` {setup['pg_index']:.1f} s |",
        "",
        "Items: the graph workloads use 1,000 start vertices (`1 + (j × 2654435761 + 12345) mod VERTICES`)",
        "or pairs (the target `1 + (j × 2246822519 + 777) mod VERTICES`); the read walks all profiles",
        "in that order. Both clients walk the items in the same order (wrk's Lua by thread, pgbench by",
        "client), so a short run covers the same prefix on both sides.",
        "",
        f"Checked before timing: the first {CHECKS} items of each workload, both databases against the",
        "answers computed from the generated graph (distinct neighbour sets, hop counts, least path",
        "weights, the 3 least path weights).",
    ]
    for name in SELECTED:
        if name == "aggregation":
            q, p = results.get(("aggregation", "quince")), results.get(("aggregation", "pg"))
            q_cell = f"{min(q) * 1000:,.1f} ms" if q else "to be measured"
            p_cell = f"{min(p) * 1000:,.1f} ms" if p else "n/a"
            lines += ["", "## aggregation: profiles counted by age", "",
                      f"Quince `{Q_AGGREGATION}`; PostgreSQL `{PG_AGGREGATION}` (default parallel workers).",
                      "Best of 3 per round, best over the rounds.", "",
                      "| Quince | PostgreSQL | Quince / PostgreSQL |", "|---|---|---|",
                      f"| {q_cell} | {p_cell} | {f'{min(p) / min(q):.2f}x' if q and p else 'n/a'} |"]
            continue
        spec = WORKLOADS[name]
        lines += ["", f"## {name}: {spec['title']}", ""]
        for variant, (method, suffix, query) in spec["quince"].items():
            if query:
                lines.append(f"Quince `{query}` (`POST /_api/cursor`, the start and target as bind variables).")
            elif method == "GET":
                lines.append("Quince `GET /_api/document/profiles/<key>`.")
            else:
                lines.append(f"Quince {variant}: `POST /_api/document/profiles{suffix}` with the document below.")
        shown = set()
        for variant, (mode, sql, options) in spec["pg"].items():
            text = "the same statement" if sql in shown else f"`{sql}`"
            shown.add(sql)
            lines.append(f"PostgreSQL {variant}: {text}" + (f" with `PGOPTIONS='{options}'`" if options else "") + ".")
        lines += ["", *measured_table(results, name)]
    lines += ["", "The machine's cores are shared by the client and the server; figures on a shared machine",
              "vary by about ±20 % between runs."]
    return "\n".join(lines) + "\n"


# -- main -----------------------------------------------------------------------------------------


def main():
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGHUP, stop_on_signal)
    unknown = set(SELECTED + QUINCE_SELECTED) - set(ALL_WORKLOADS)
    if unknown:
        raise RuntimeError(f"unknown workloads {sorted(unknown)}; known: {','.join(ALL_WORKLOADS)}")
    for tool in ("pgbench", "initdb", "pg_ctl", "psql", "postgres"):
        pg_bin(tool)
    if shutil.which("wrk") is None:
        raise RuntimeError("wrk is needed")
    graph_data.pairs(ITEMS, VERTICES)
    machine = machine_description()
    log(f"machine: {machine}; binary {quince_bin()}; VERTICES={VERTICES} DURATION={DURATION} ROUNDS={ROUNDS} "
        f"WORKLOADS={','.join(SELECTED)}")
    work = tempfile.mkdtemp(prefix="quince-bench-graphs-")
    os.chmod(work, 0o755)  # PostgreSQL's directory is inside
    quince = Quince(os.path.join(work, "quince"))
    pg = Postgres(work)
    results = {}
    try:
        started = time.monotonic()
        graph = graph_data.generate(VERTICES)
        profile_bytes = graph_data.write_files(graph, work)
        degrees = sorted(len(t) for t in graph.targets[1:])
        setup = {"generate_s": time.monotonic() - started, "profile_bytes": profile_bytes, "edges": graph.edges,
                 "degree_median": degrees[VERTICES // 2], "degree_max": degrees[-1],
                 "no_out": sum(1 for d in degrees if d == 0) / VERTICES}
        log(f"data: {VERTICES:,} profiles, {graph.edges:,} relations ({setup['generate_s']:.1f} s)")
        quince.start()
        pg.start()
        setup["q_load"] = quince_load(quince, work, graph.edges)
        log(f"quince: import profiles {setup['q_load'][0]:.1f} s, relations {setup['q_load'][1]:.1f} s")
        setup["pg_copy"], setup["pg_index"] = pg_load(pg, work)
        log(f"postgres: COPY {setup['pg_copy']:.1f} s, indexes {setup['pg_index']:.1f} s")
        for name in ("profiles", "relations"):
            want = VERTICES if name == "profiles" else graph.edges
            expect(f"quince {name}", quince_count(quince, name), want)
            expect(f"postgres {name}", pg_count(pg, name), want)
            for suffix in ("jsonl", "csv"):
                os.unlink(os.path.join(work, f"{name}.{suffix}"))
        check(quince, pg, graph)
        measure(quince, pg, work, results)
        pg_version = pg.version()
    finally:
        stop_both(quince, pg, work)
    publish("graphs.md", report(machine, pg_version, setup, results))


if __name__ == "__main__":
    main()
