"""The 1mDocsPerSec experiment of ArangoDB's 2015 white paper/blog (DC/OS benchmark: 1.1M writes/s
on 80 nodes of 8 vCPUs) against a Quince cluster on this machine: `quince start` with a small
layout, `quince bench --test-case docs1m` (20 attributes of 26 characters, preloaded documents
K0 ..., the client's 47-step read/write interleave) for 100 % reads, 100 % writes and 50/50 with
the connections spread over every coordinator, for replicationFactor 1, replicationFactor 2
synchronous and replicationFactor 2 asynchronous; plus one plain server for reference.

Besides throughput and latency it measures the CPU each process role spends per request
(/proc/<pid>/stat before and after each run, less the role's idle rate, the run's tail of
asynchronous replication included) and the client's (getrusage of the bench process), and
from the write runs models the cluster-wide writes/s of 1 .. 80 nodes. Writes
docs/benchmarks/cluster-1m.md and cluster-1m.svg. See benches/cluster-1m.sh.
"""

import json
import os
import resource
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_starter import Cluster, process_cpu_s  # noqa: E402
from bench_tools import Quince, bench, chart, machine_description, remove, temp_dir, write_doc  # noqa: E402

FULL = bool(os.environ.get("FULL"))
DURATION = int(os.environ.get("DURATION", "30" if FULL else "10"))
CONNECTIONS = int(os.environ.get("CONNECTIONS", "80" if FULL else "16"))
PRELOAD = int(os.environ.get("PRELOAD", "100000"))
ROUNDS = int(os.environ.get("ROUNDS", "2" if FULL else "1"))
SHARDS = int(os.environ.get("SHARDS", "1"))
# etcd members, DB servers, coordinators; the first layout is the one the model uses.
LAYOUTS = [tuple(int(n) for n in spec.split(",")) for spec in
           os.environ.get("LAYOUTS", "1,2,2 3,3,2" if FULL else "1,2,2").split()]
SINGLE = os.environ.get("SINGLE", "1") != "0"
PRELOAD_WARNINGS = []  # (layout, event) of the servers' warnings while preloading
IDLE_S = 5.0
SETTLE_MAX_S = 30.0
VCPUS = os.cpu_count()
NODE_VCPUS = 8  # the white paper's i2.2xlarge nodes
TESTS = [("read", 100), ("write", 0), ("mixed", 50)]
CONFIGS = [("rf1", 1, "synchronous"), ("rf2-sync", 2, "synchronous"), ("rf2-async", 2, "asynchronous")]

# ArangoDB's 2015 white paper: writes/s per vCPU it reports for itself and the competitors it quotes.
QUOTED = [("ArangoDB 2015 (RF 2 async)", 1730), ("Aerospike", 2500), ("Couchbase (RF 2)", 1375),
          ("Cassandra (RF 3, CL One)", 965), ("FoundationDB (no replication)", 750)]
TARGET = 3 * 1730
# The white paper's 100 % write runs: (ArangoDB nodes, writes/s); 8 vCPUs per node, load servers apart.
PAPER_WRITES = [(8, 105881), (16, 221468), (24, 319681), (32, 429624), (40, 537005), (48, 672502),
                (56, 781421), (64, 904561), (72, 1023445), (80, 1105655)]


def settle(snapshot_fn, idle_rate):
    """Waits (at most SETTLE_MAX_S) until the servers' CPU rate is back near idle, so that the
    replication a run left queued counts towards it; returns the last snapshot and its time."""
    started = time.monotonic()
    before, t_before = snapshot_fn(), time.monotonic()
    while True:
        time.sleep(0.5)
        after, t_after = snapshot_fn(), time.monotonic()
        busy = sum(after.get(k, 0.0) - before.get(k, 0.0) for k in after) / (t_after - t_before)
        if busy <= sum(idle_rate.values()) + 0.1 or t_after - started > SETTLE_MAX_S:
            return after, t_after, t_after - started
        before, t_before = after, t_after


def measure(urls, collection, read_percent, snapshot_fn, idle_rate, roles_of, extra=(), warnings_fn=None):
    """One bench run; returns its figures and the CPU seconds per request of each role."""
    load = os.getloadavg()[0]
    cpu0, t0 = snapshot_fn(), time.monotonic()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = bench(urls, "--test-case", "docs1m", "--collection", collection, "--preload", PRELOAD,
                   "--read-percent", read_percent, "--concurrency", CONNECTIONS, "--duration", DURATION,
                   *extra, allow_failures=True)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu1, t1, settle_s = settle(snapshot_fn, idle_rate)
    elapsed = report["results"]["timeSinceStart"]
    methods = report["operationsByMethod"]
    requests = sum(methods.values())
    role_cpu = {}
    for key, end in cpu1.items():
        used = end - cpu0.get(key, 0.0) - idle_rate.get(key, 0.0) * (t1 - t0)
        role = roles_of(key)
        role_cpu[role] = role_cpu.get(role, 0.0) + max(used, 0.0)
    role_cpu["client"] = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    s = report["serviceTime"]
    warnings = warnings_fn() if warnings_fn else []
    for role, port, line in warnings[:5]:
        print(f"  {role} {port}: {line[:300]}")
    return {"warnings": len(warnings), "events": sorted({event_of(line) for _, _, line in warnings}),
            "reads": methods.get("GET", 0) / elapsed, "writes": methods.get("POST", 0) / elapsed,
            "requests": requests, "rps": requests / elapsed, "p50": s["p50Ms"], "p95": s["p95Ms"],
            "p99": s["p99Ms"], "failures": report["results"]["failures"], "load": load, "settle": settle_s,
            "cpu_ms": {role: 1000.0 * v / max(requests, 1) for role, v in role_cpu.items()},
            "cpu_share": sum(role_cpu.values()) / ((t1 - t0) * VCPUS), "wall": t1 - t0}


def event_of(line):
    """The `event=` field of a log line, else its first 80 characters."""
    for field in line.split():
        if field.startswith("event="):
            return field[len("event="):].strip('"')
    return line[:80]


def idle_rates(snapshot_fn):
    """CPU seconds per second of each process while nothing is asked of it."""
    before, t0 = snapshot_fn(), time.monotonic()
    time.sleep(IDLE_S)
    after, t1 = snapshot_fn(), time.monotonic()
    return {k: max(after[k] - before.get(k, after[k]), 0.0) / (t1 - t0) for k in after}


def preload(cluster, collection):
    """Inserts K0 .. K<PRELOAD-1> as the bench's docs1m preload does, alternating coordinators."""
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    batch = 1000
    for n, first in enumerate(range(0, PRELOAD, batch)):
        docs = [{"_key": f"K{i}", **{f"value{a}": alphabet for a in range(1, 21)}, "value": i}
                for i in range(first, min(first + batch, PRELOAD))]
        url = cluster.urls[n % len(cluster.urls)]
        answer = cluster.request("POST", f"/_api/document?collection={collection}", docs, url=url)
        failed = [r for r in answer if r.get("error")]
        if failed:
            raise RuntimeError(f"preload of {collection}: {len(failed)} refused, first {failed[0]}")
    count = cluster.request("GET", f"/_api/collection/{collection}/count")["count"]
    last = cluster.request("GET", f"/_api/document/{collection}/K{PRELOAD - 1}", url=cluster.urls[-1])
    if count != PRELOAD or last["value"] != PRELOAD - 1:
        raise RuntimeError(f"preload of {collection}: count {count}, last {last}")


def run_cluster(layout, rows):
    agency, dbservers, coordinators = layout
    label = f"{agency}/{dbservers}/{coordinators}"
    data = temp_dir("quince-cluster-1m-")
    cluster = Cluster(data, agency, dbservers, coordinators)
    started = time.monotonic()
    cluster.start()
    print(f"cluster {label} ready in {time.monotonic() - started:.1f} s: {','.join(cluster.urls)}")
    try:
        leaders = {}
        for name, rf, mode in CONFIGS:
            collection = "docs_" + name.replace("-", "_")
            if rf > dbservers:
                continue
            props = cluster.request("POST", "/_api/collection",
                                    {"name": collection, "numberOfShards": SHARDS, "replicationFactor": rf,
                                     "replicationMode": mode})
            if props.get("replicationMode", mode) != mode or props.get("replicationFactor") != rf:
                raise RuntimeError(f"{collection}: created with {props}")
            t = time.monotonic()
            preload(cluster, collection)
            print(f"  {collection}: {PRELOAD:,} preloaded in {time.monotonic() - t:.1f} s")
            shards = cluster.request("GET", f"/_api/collection/{collection}/shards?details=true")["shards"]
            leaders[name] = {servers[0] for servers in shards.values()}
        ids = cluster.server_ids()
        for role, port, line in cluster.new_warnings():
            print(f"  during the preload: {role} {port}: {line[:300]}")
            PRELOAD_WARNINGS.append((label, event_of(line)))
        idle = idle_rates(cluster.cpu_by_process)
        print(f"  idle CPU: {sum(idle.values()):.3f} cores")
        for rnd in range(ROUNDS):
            for name, rf, mode in CONFIGS:
                if name not in leaders:
                    continue
                leader_ports = {ids[i] for i in leaders[name]}

                def roles_of(key, leader_ports=leader_ports):
                    role, port = key
                    if role == "dbserver":
                        if SHARDS > 1:
                            return "dbserver"
                        return "leader" if port in leader_ports else "follower"
                    return role

                for test, read_percent in TESTS:
                    row = measure(cluster.urls, "docs_" + name.replace("-", "_"), read_percent,
                                  cluster.cpu_by_process, idle, roles_of, ("--create-collection", "false"),
                                  cluster.new_warnings)
                    row.update(layout=label, config=name, test=test, round=rnd + 1)
                    rows.append(row)
                    print_row(row)
    finally:
        cluster.stop()
        remove(data)


def run_single(rows):
    data = temp_dir("quince-cluster-1m-single-")
    server = Quince(data)
    server.start()
    try:
        pid = server.proc.pid

        def snapshot():
            return {("server", None): process_cpu_s(pid) or 0.0}

        # Creates and preloads the collection, outside the measured runs.
        bench([server.url], "--test-case", "docs1m", "--collection", "c", "--preload", PRELOAD,
              "--read-percent", 100, "--concurrency", 1, "--requests", 1)
        idle = idle_rates(snapshot)
        for test, read_percent in TESTS:
            row = measure([server.url], "c", read_percent, snapshot, idle, lambda key: "server",
                          ("--create-collection", "false"))
            row.update(layout="one server", config="single", test=test, round=1)
            rows.append(row)
            print_row(row)
    finally:
        server.stop()
        remove(data)


def print_row(r):
    cpu = " ".join(f"{k} {v:.3f}" for k, v in sorted(r["cpu_ms"].items()))
    print(f"  {r['layout']:>10} {r['config']:9} {r['test']:6} r{r['round']}: reads {r['reads']:>8,.0f}/s "
          f"writes {r['writes']:>8,.0f}/s p50 {r['p50']:.2f} p95 {r['p95']:.2f} ms failures {r['failures']} "
          f"load {r['load']:.1f} settle {r['settle']:.1f} s | CPU ms/request: {cpu}")


def mean_rows(rows):
    """One row per (layout, config, test): the mean of its rounds."""
    groups = {}
    for r in rows:
        groups.setdefault((r["layout"], r["config"], r["test"]), []).append(r)
    out = []
    for (layout, config, test), rs in groups.items():
        roles = sorted({k for r in rs for k in r["cpu_ms"]})
        out.append({
            "layout": layout, "config": config, "test": test, "rounds": len(rs),
            **{k: statistics.mean(r[k] for r in rs) for k in
               ("reads", "writes", "rps", "p50", "p95", "p99", "load", "settle", "cpu_share")},
            "failures": sum(r["failures"] for r in rs),
            "warnings": sum(r["warnings"] for r in rs),
            "events": sorted({e for r in rs for e in r["events"]}),
            "cpu_ms": {k: statistics.mean(r["cpu_ms"].get(k, 0.0) for r in rs) for k in roles},
        })
    return out


def mark_clean(rows):
    """A run is clean when the servers logged no warning during it, and neither it nor the run
    before it (in the same cluster) ended with the servers still busy after SETTLE_MAX_S (a
    catch-up of a dropped follower runs on into the next run)."""
    previous = None
    for r in rows:
        busy = lambda x: x is not None and x["settle"] >= SETTLE_MAX_S  # noqa: E731
        same = previous is not None and previous["layout"] == r["layout"]
        r["clean"] = r["warnings"] == 0 and not busy(r) and not (same and busy(previous))
        previous = r


def calibrate(rows, layout, config):
    """CPU ms per write by role for `config`, and where it comes from: the clean write runs;
    else, since a request's cost is linear in the mix, 2 x the clean 50/50 runs less the clean
    read runs; else every write run (marked)."""
    def clean(test):
        return [r for r in rows if r["layout"] == layout and r["config"] == config and r["test"] == test
                and r["clean"]]

    def mean_cpu(rs):
        roles = sorted({k for r in rs for k in r["cpu_ms"]})
        return {k: statistics.mean(r["cpu_ms"].get(k, 0.0) for r in rs) for k in roles}

    if clean("write"):
        return mean_cpu(clean("write")), f"{len(clean('write'))} clean write run(s)"
    if clean("mixed") and clean("read"):
        mixed, read = mean_cpu(clean("mixed")), mean_cpu(clean("read"))
        return ({k: max(2 * mixed.get(k, 0.0) - read.get(k, 0.0), 0.0) for k in set(mixed) | set(read)},
                "2 x the clean 50/50 runs - the clean read runs (no clean write run)")
    every = [r for r in rows if r["layout"] == layout and r["config"] == config and r["test"] == "write"]
    return mean_cpu(every), "every write run, none clean (includes follower catch-ups)"


def model(cpu_ms, rf):
    """CPU ms per write by hop and the per-vCPU rates they imply."""
    c = cpu_ms
    coord, leader, follower = c.get("coordinator", 0.0), c.get("leader", 0.0), c.get("follower", 0.0)
    other = c.get("etcd", 0.0) + c.get("starter", 0.0)
    per_follower = follower / (rf - 1) if rf > 1 else 0.0
    server = coord + leader + follower + other
    return {"coord": coord, "leader": leader, "follower": follower, "per_follower": per_follower,
            "other": other, "client": c["client"], "server": server,
            "server_per_vcpu": 1000.0 / server, "all_per_vcpu": 1000.0 / (server + c["client"])}


CONFIG_NAMES = {"rf1": "replicationFactor 1", "rf2-sync": "replicationFactor 2, synchronous",
                "rf2-async": "replicationFactor 2, asynchronous", "single": "one server (reference)"}


def write_report(rows, means, machine, loads):
    first = f"{LAYOUTS[0][0]}/{LAYOUTS[0][1]}/{LAYOUTS[0][2]}"
    writes = {r["config"]: r for r in means if r["test"] == "write" and r["layout"] == first}
    single_write = next((r for r in means if r["config"] == "single" and r["test"] == "write"), None)
    sources, models = {}, {}
    for name, rf, _ in CONFIGS:
        if name in writes:
            cpu, sources[name] = calibrate(rows, first, name)
            models[name] = model(cpu, rf)
    per_vcpu = {name: writes[name]["writes"] / VCPUS for name in writes}
    rf2_writes = [r for r in rows if r["layout"] == first and r["config"] in ("rf2-sync", "rf2-async")
                  and r["test"] == "write"]
    rf2_clean = [r for r in rf2_writes if r["clean"]]
    rf2_best = max((r["writes"] / VCPUS for r in (rf2_clean or rf2_writes)), default=0.0)
    met = rf2_best >= TARGET
    dirty = [r for r in rows if not r["clean"]]

    lines = [
        "# The 1mDocsPerSec experiment against a Quince cluster",
        "",
        "ArangoDB's 2015 white paper/blog (DC/OS benchmark, \"Scaling ArangoDB to Gigabyte/s bandwidth "
        "on Mesosphere\") reported 1.1M writes/s on 80 nodes of 8 vCPUs (640 vCPUs, load servers not "
        "counted): about 1,730 writes/s per vCPU, with asynchronous replication (replication factor 2). "
        "This reproduces its workload on one machine against a Quince cluster started by `quince start`, "
        "measures what each hop of a write costs in CPU, and models the 80-node figure from those costs.",
        "",
        f"Machine: {machine}; {VCPUS} vCPUs (`os.cpu_count()`), shared with whatever else ran on it "
        f"(load average {min(loads):.1f} to {max(loads):.1f} at the starts of the runs, the benchmark's "
        "own processes included; the `load` column), so the throughput columns are what the cluster got "
        "of the machine, and the CPU-per-request figures, which depend less on the share it got, are "
        "what the model uses.",
        "",
        "## Setup",
        "",
        f"- Cluster: `quince start` (release build) with layouts (etcd members / DB servers / coordinators) "
        f"{', '.join('/'.join(map(str, layout)) for layout in LAYOUTS)}, on loopback, free ports, a temporary "
        "data directory, `--all.log.level=warn`. 1/2/2 is sized for 2 cores: replication factor 2 needs two "
        "DB servers (a follower sits on a server other than its leader); two coordinators let the client "
        "spread its connections as the white paper's load servers did over every coordinator; one etcd member "
        "suffices because etcd is not on the write path (servers read the Plan from a watch and keep a "
        "heartbeat lease; no document request touches etcd), and three would only add Raft traffic "
        "competing for the two cores. 3/3/2 is `quince start`'s default layout.",
        f"- Collections: `numberOfShards` {SHARDS}, `replicationFactor` 1 or 2, `writeConcern` 1, "
        "`replicationMode` `synchronous` (the leader answers once the follower applied the write) or "
        "`asynchronous` (the leader answers once it applied it; the follower's sender ships behind: the "
        "white paper's mode). Each is created by the script (`quince bench` has no `replicationMode` "
        f"option) and preloaded with {PRELOAD:,} documents `K0 ...` (the bench's preload documents, 1,000 "
        "per request, alternating coordinators, then checked by count and by reading the last one); the "
        "bench runs with `--create-collection false` and the same `--preload` for its read keys."
        + (" With one shard, one DB server leads it and the other follows, so the DB servers' CPU splits "
           "into the leader's and the follower's." if SHARDS == 1 else ""),
        f"- Client: `quince bench --test-case docs1m` on the same machine, {CONNECTIONS} keep-alive "
        f"connections (closed loop, one thread each) spread round-robin over every coordinator "
        f"(`--server.endpoint` repeated), {DURATION} s per test, the tests in the white paper's order (100 % reads, "
        "100 % writes, 50/50) for each configuration in turn, "
        f"{ROUNDS} round{'s' if ROUNDS > 1 else ''} (configurations alternating); figures are the mean "
        "of the rounds. Reads `GET /_api/document/<c>/K<n>`, n advancing by 1447; writes "
        "`POST /_api/document?collection=<c>` with a key the coordinator generates.",
        "- CPU: utime + stime of every process of the cluster (pids from the starter's setup.json) "
        "before and after each run, less each process's idle rate (measured for "
        f"{IDLE_S:.0f} s before the runs: heartbeats, maintenance, etcd), divided by the requests of the "
        "run; after the client ends, the script waits until the servers are back near idle (at most "
        f"{SETTLE_MAX_S:.0f} s, the `settle` column) so that replication a run left queued counts "
        "towards it. The client's CPU is its own getrusage.",
        "- One server: the same tests against one `quince serve` (no cluster), for reference.",
        "",
        "## Throughput and latency",
        "",
        "| layout | configuration | test | reads/s | writes/s | writes/s per vCPU | median ms | p95 ms | p99 ms "
        "| failures | server warnings | load | share of the machine | settle s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in means:
        lines.append(
            f"| {r['layout']} | {CONFIG_NAMES[r['config']]} | {r['test']} | {r['reads']:,.0f} | {r['writes']:,.0f} "
            f"| {r['writes'] / VCPUS:,.0f} | {r['p50']:.2f} | {r['p95']:.2f} | {r['p99']:.2f} | {r['failures']:,} "
            f"| {r['warnings']}{' (' + ', '.join(r['events']) + ')' if r['events'] else ''} "
            f"| {r['load']:.1f} | {100 * r['cpu_share']:.0f} % | {r['settle']:.1f} |")
    lines += [
        "",
        "Writes/s per vCPU is the writes per second divided by this machine's "
        f"{VCPUS} vCPUs, the client included (it runs here too); the white paper counted only its "
        "database nodes, not its load servers. \"Share of the machine\" is the CPU the cluster and the "
        "client used over the run, idle rates excluded, as a share of all vCPUs: the rest went to "
        "other processes on the shared machine. \"Server warnings\" counts the WARN and ERROR lines the "
        "coordinators and DB servers logged during the run (with their events); \"settle\" is how long "
        "the servers stayed busy after the client ended.",
        "",
    ]
    if PRELOAD_WARNINGS:
        lines += [f"While preloading, the servers logged {len(PRELOAD_WARNINGS)} warnings: "
                  + ", ".join(sorted({f'{e} ({layout})' for layout, e in PRELOAD_WARNINGS})) + ".", ""]
    if ROUNDS > 1 or dirty:
        lines += ["Each run, in the order they ran:", "",
                  "| layout | configuration | test | round | reads/s | writes/s | median ms | p95 ms | failures "
                  "| server warnings | settle s | load | clean |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['layout']} | {CONFIG_NAMES[r['config']]} | {r['test']} | {r['round']} "
                         f"| {r['reads']:,.0f} | {r['writes']:,.0f} | {r['p50']:.2f} | {r['p95']:.2f} | {r['failures']:,} "
                         f"| {r['warnings']} | {r['settle']:.1f} | {r['load']:.1f} | {'yes' if r['clean'] else 'no'} |")
        lines.append("")
    if dirty:
        lines += [
            "## A defect: internal connections idle for 30 s fail their next request",
            "",
            f"{len(dirty)} of the {len(rows)} runs are not clean (a server warning, or the servers still "
            "busy long after the client ended). The warnings are `cluster.follower_failed` on the shard's "
            "leader (`did not answer: no reply: tcp://…: connection closed before a whole response`, "
            "1478) and, on coordinators, writes answered 500 with 1457 (`the outcome of the request to "
            "shard … is unknown: … connection closed before a whole response`): the client's failures. "
            "They come at the start of a write run whose collection was not written for more than 30 s "
            "(the read run before it lasts 30 s with `FULL=1`; with the default 10 s, the first "
            "replication-factor-2 write run follows the other collections' runs). Servers close a "
            "keep-alive connection after 30 s idle (also a single server: a connection authenticated "
            "with Basic or a superuser JWT, idle 35 s, is closed, though `--http.keep-alive-timeout` is "
            "300 s), and the cluster's pooled connections (`crates/cluster/src/peers.rs`) are reused "
            "without noticing: the request fails as of unknown outcome. The leader then takes the "
            "follower out of the in-sync set, and the follower's catch-up (comparing every key) keeps "
            "both DB servers busy for tens of seconds (the `settle` column); the coordinator answers "
            "the writes 1457. Reproduce: a 1/2/2 cluster, a collection with replicationFactor 2, a "
            "2-second write burst, 35 s idle, another burst: the second burst has failures and the "
            "leader logs `cluster.follower_failed` (20 s idle: none). The model below leaves these runs "
            "out.",
            "",
        ]
    lines += [
        "## Per vCPU, beside the white paper",
        "",
        "| system | writes/s per vCPU |",
        "|---|---|",
        *[f"| Quince, {first}, {CONFIG_NAMES[n]} (measured, client included) | {v:,.0f} |" for n, v in per_vcpu.items()],
        *([f"| Quince, one server (measured, client included) | {single_write['writes'] / VCPUS:,.0f} |"]
          if single_write else []),
        *[f"| Quince, {CONFIG_NAMES[n]} (from CPU per write, client included) | {m['all_per_vcpu']:,.0f} |"
          for n, m in models.items()],
        *[f"| Quince, {CONFIG_NAMES[n]} (from CPU per write, servers only) | {m['server_per_vcpu']:,.0f} |"
          for n, m in models.items()],
        *[f"| {name} (white paper) | {v:,} |" for name, v in QUOTED],
        "",
        f"Target: at least 3 x ArangoDB's 1,730, i.e. {TARGET:,} writes/s per vCPU, with replication "
        f"factor 2, measured with the client included. Best {'clean ' if rf2_clean else ''}write run "
        f"with replication factor 2 (layout {first}): {rf2_best:,.0f} writes/s per vCPU "
        f"({rf2_best / 1730:.1f} x ArangoDB's figure): the target is **{'met' if met else 'not met'}**.",
        "",
        "## Per-hop costs",
        "",
        "How the CPU per write of each process changed with the issue-14 write-cost work (old and new "
        "build alternating, context switches too): `docs/benchmarks/write-cost.md` "
        "(`benches/write-cost.sh`).",
        "",
        f"CPU milliseconds per request by process role, layout {first}, mean of the rounds "
        "(\"leader\" and \"follower\" are the DB servers that lead and follow the shard):",
        "",
    ]
    roles = ["coordinator", "leader", "follower", "dbserver", "etcd", "starter", "server", "client"]
    present = [k for k in roles if any(k in r["cpu_ms"] for r in means)]
    lines += ["| layout | configuration | test | requests/s | " + " | ".join(present) + " | total |",
              "|---|---|---|---|" + "---|" * (len(present) + 1)]
    for r in means:
        lines.append(f"| {r['layout']} | {CONFIG_NAMES[r['config']]} | {r['test']} | {r['rps']:,.0f} | "
                     + " | ".join(f"{r['cpu_ms'][k]:.3f}" if k in r["cpu_ms"] else "" for k in present)
                     + f" | {sum(r['cpu_ms'].values()):.3f} |")
    lines += [""]
    if models:
        m2 = models.get("rf2-async") or models.get("rf2-sync") or next(iter(models.values()))
        lines += [
            "## A model of the 80-node figure",
            "",
            "A write crosses the client, a coordinator, the shard's leader and each follower (for "
            "replication factor RF, RF - 1 followers). With shards spread evenly over N nodes of v vCPUs, "
            "each node running one coordinator and one DB server, and CPU the limit, every node spends "
            "the same CPU per write whichever hop it plays, so",
            "",
            "    writes/s (N nodes) = N x v / (c_coordinator + c_leader + (RF - 1) x c_follower [+ c_client])",
            "",
            "with the c the CPU seconds per write measured above (layout "
            f"{first}; from " + "; ".join(f"{CONFIG_NAMES[n]}: {src}" for n, src in sources.items())
            + "). Without c_client it counts database nodes only, as the white paper did (its load "
            "servers were extra machines); with it, the clients share the nodes.",
            "",
            "| configuration | coordinator | leader | follower | etcd + starter | client | servers per write | "
            "writes/s per vCPU, servers | with client | 80 nodes x 8 vCPUs, servers | with client |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for n, m in models.items():
            lines.append(
                f"| {CONFIG_NAMES[n]} | {m['coord']:.3f} | {m['leader']:.3f} | {m['follower']:.3f} | {m['other']:.3f} "
                f"| {m['client']:.3f} | {m['server']:.3f} ms | {m['server_per_vcpu']:,.0f} | {m['all_per_vcpu']:,.0f} "
                f"| {80 * NODE_VCPUS * m['server_per_vcpu'] / 1e6:.2f} M | {80 * NODE_VCPUS * m['all_per_vcpu'] / 1e6:.2f} M |")
        lines += [
            "",
            f"For the white paper's configuration (replication factor 2, asynchronous), the model predicts "
            f"{80 * NODE_VCPUS * m2['server_per_vcpu'] / 1e6:.2f}M writes/s on 80 nodes of 8 vCPUs counting "
            f"database nodes only, {80 * NODE_VCPUS * m2['all_per_vcpu'] / 1e6:.2f}M with the clients on the same "
            "nodes, against ArangoDB's 1.1M.",
            "",
            "Assumptions, and where the model breaks:",
            "",
            "- CPU is the limit, and the per-write costs measured on loopback hold across machines. A real "
            "network adds latency (the client needs more connections in flight: by Little's law, "
            "writes/s x latency) and interrupt and NIC work the loopback does not have; the bytes are "
            "small against a node's NIC (the white paper computed about 3 GB/s over its whole switch "
            "fabric at 1.1M writes/s, under 40 MB/s per node).",
            "- Shards are many and spread evenly, so each node leads and follows equal shares; with few "
            "shards per node, the busiest node sets the pace. Single-document writes touch one shard: "
            "no fan-out. Multi-document or AQL writes over many shards cost more coordinator CPU.",
            "- etcd is not on the write path; its cost per node is the servers' heartbeats (one lease "
            "renewal per server per second) and the coordinators' and DB servers' watches, constant in "
            "the write rate and counted as idle here (one member's idle rate on this machine is in "
            "the idle measurement). It breaks when DDL or failover traffic is heavy, or when the number "
            "of servers makes one etcd cluster's watch fan-out the bottleneck: every server watches the "
            "Plan, and each Plan change is sent to all of them.",
            "- The follower's cost per write is measured with one follower; replication factor 3 is "
            "modelled as twice that. Asynchronous replication batches up to 1,000 operations per "
            "request, so its follower cost per write falls as the load rises; synchronous replication "
            "batches only what queued while the previous batch was in flight.",
            "- Disk: the runs do not sync (`waitForSync` false, as the white paper's); the white paper "
            "needed fast local SSDs for about 46 MB/s of writes per node; the model assumes the disk "
            "keeps up.",
            "- Each DB server runs one sender thread per followed shard and follower; with thousands of "
            "shards per server, threads, not CPU per write, would limit first.",
            "- The CPU per request was measured on a shared machine (the `load` column): "
            "contention adds context switches and cache misses per request, and also lets more "
            "requests queue per wake-up (larger batches); on dedicated nodes the costs may differ "
            "either way. A vCPU here is one of `os.cpu_count()`'s; the white paper's were AWS vCPUs "
            "(hyperthreads) of 2015.",
            "",
        ]
    lines += ["![cluster-1m](cluster-1m.svg)", ""]
    write_doc("cluster-1m.md", "\n".join(lines))

    categories = [f"Quince {CONFIG_NAMES[n]}" for n in per_vcpu] + [name for name, _ in QUOTED]
    measured = [per_vcpu[n] for n in per_vcpu] + [None] * len(QUOTED)
    modelled = [models[n]["all_per_vcpu"] for n in per_vcpu] + [None] * len(QUOTED)
    quoted = [None] * len(per_vcpu) + [float(v) for _, v in QUOTED]
    if single_write:
        categories.insert(len(per_vcpu), "Quince one server (no cluster)")
        measured.insert(len(per_vcpu), single_write["writes"] / VCPUS)
        modelled.insert(len(per_vcpu), None)
        quoted.insert(len(per_vcpu), None)
    panels = [{
        "title": "writes/s per vCPU (Quince: this machine, client included; others: as the white paper quotes them)",
        "kind": "bar", "x_label": "writes per second per vCPU", "categories": categories,
        "series": [{"name": "Quince measured", "values": measured},
                   {"name": "Quince from CPU per write", "values": modelled},
                   {"name": "white paper", "values": quoted}],
    }]
    if models:
        nodes = [1, 2] + list(range(4, 81, 4))
        series = [{"name": f"model: {CONFIG_NAMES[n]}, servers only", "points":
                   [(x, x * NODE_VCPUS * m["server_per_vcpu"]) for x in nodes]} for n, m in models.items()]
        series += [{"name": f"model: {CONFIG_NAMES[n]}, clients on the nodes", "points":
                    [(x, x * NODE_VCPUS * m["all_per_vcpu"]) for x in nodes]}
                   for n, m in models.items() if n == "rf2-async"]
        series.append({"name": "ArangoDB 2015, RF 2 async (measured; 1.1M at 80)",
                       "points": [(float(x), float(y)) for x, y in PAPER_WRITES]})
        panels.append({"title": "cluster-wide writes/s, nodes of 8 vCPUs (modelled from CPU per write)",
                       "kind": "line", "x_label": "nodes", "y_label": "writes per second", "series": series})
    chart({"title": f"1mDocsPerSec against a Quince cluster ({first})", "panels": panels}, "cluster-1m.svg")
    return per_vcpu, models, met


def main():
    report_from = os.environ.get("REPORT_FROM")
    if report_from:
        # Rewrites the document from a results file an earlier run saved.
        with open(report_from) as f:
            saved = json.load(f)
        globals().update(saved["settings"])
        mark_clean(saved["rows"])
        write_report(saved["rows"], mean_rows(saved["rows"]), saved["machine"], [r["load"] for r in saved["rows"]])
        return
    machine = machine_description()
    print(f"machine: {machine}; {CONNECTIONS} connections, {DURATION} s per test, {PRELOAD:,} preloaded, "
          f"{ROUNDS} round(s), layouts {LAYOUTS}, {SHARDS} shard(s)")
    rows = []
    for layout in LAYOUTS:
        run_cluster(layout, rows)
    if SINGLE:
        run_single(rows)
    results = os.path.join(tempfile.gettempdir(), f"quince-cluster-1m-results-{os.getpid()}.json")
    with open(results, "w") as f:
        settings = {"DURATION": DURATION, "CONNECTIONS": CONNECTIONS, "PRELOAD": PRELOAD, "ROUNDS": ROUNDS,
                    "SHARDS": SHARDS, "LAYOUTS": LAYOUTS, "PRELOAD_WARNINGS": PRELOAD_WARNINGS}
        json.dump({"machine": machine, "settings": settings, "rows": rows}, f)
    print(f"results saved in {results} (REPORT_FROM={results} rewrites the document from them)")
    mark_clean(rows)
    write_report(rows, mean_rows(rows), machine, [r["load"] for r in rows])


if __name__ == "__main__":
    main()
