"""Issue 13's before/after measurement of the request path: two or more `quince` binaries and
the peers, alternating in every round, so all see the same machine state. See
benches/write-path.sh.

Per binary and round: single inserts (10 string attributes, `benches/lib/insert.lua`) at
concurrency 1 and 8, fire-and-forget inserts (`x-arango-async: true`) at concurrency 8, and
reads by key at concurrency 8, each with wrk for DURATION seconds on a fresh server; the
server's CPU time per request (user and system, from /proc) beside the rate. Per round, the
peers: nginx answering the same POST with a fixed 202 and serving the read's document as a
static file, and Redis SET and GET with values as long as Quince's request and reply bodies.
With IR=1 (valgrind installed), also the instructions per request the server executes in user
space (callgrind, authentication off, N requests with `ab -k -c 8` after a warm-up): a figure
that does not depend on the machine's load.

Writes benches/out/write-path.md and prints it. Environment: QUINCE_BINS ("label=path ..."),
ROUNDS (3), DURATION (8), IR (0), IR_REQUESTS (3000).
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import AUTH, Nginx, Quince, Redis, machine_description, wrk  # noqa: E402
from single_server import ATTRS, GET_KEYS, load  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
DURATION = int(os.environ.get("DURATION", "8"))
IR = os.environ.get("IR", "0") == "1"
IR_REQUESTS = int(os.environ.get("IR_REQUESTS", "3000"))
INSERT_LUA = os.path.join(HERE, "insert.lua")
GET_LUA = os.path.join(HERE, "get.lua")
WORKLOADS = [
    ("insert c=1", "insert", 1),
    ("insert c=8", "insert", 8),
    ("async insert c=8", "async", 8),
    ("get c=8", "get", 8),
]


def cpu_seconds(pid):
    """(user, system) CPU seconds of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def run_quince(binary):
    """One fresh server per binary and round; returns {workload: (rps, p50, p99, user us,
    system us)}."""
    os.environ["QUINCE_BIN"] = binary
    data = tempfile.mkdtemp(prefix="quince-write-path-")
    q = Quince(data, ["--server.threads", str(os.cpu_count())])
    q.start()
    out = {}
    try:
        q.request("POST", "/_api/collection", {"name": "bench"})
        q.request("POST", "/_api/collection", {"name": "reads"})
        load(q, "reads", GET_KEYS, key_prefix="k")
        base = f"{q.url}/_db/_system/_api/document"
        for name, kind, c in WORKLOADS:
            before = cpu_seconds(q.proc.pid)
            if kind == "get":
                r = wrk(f"{base}/reads/", c, DURATION, GET_LUA, env={"BENCH_KEYS": str(GET_KEYS)})
            elif kind == "async":
                r = wrk(f"{base}/bench", c, DURATION, INSERT_LUA,
                        headers=["x-arango-async: true"])
            else:
                r = wrk(f"{base}/bench", c, DURATION, INSERT_LUA)
            if kind == "async":
                wait_for_jobs(q)
            after = cpu_seconds(q.proc.pid)
            n = r[0] * DURATION
            out[name] = (r[0], r[1], r[2], (after[0] - before[0]) / n * 1e6,
                         (after[1] - before[1]) / n * 1e6, r[3])
    finally:
        q.stop("TERM")
        shutil.rmtree(data, ignore_errors=True)
    return out


def wait_for_jobs(q, timeout=120):
    """Waits until the fire-and-forget jobs have run (the collection stops growing), so their
    CPU time counts for the workload that queued them."""
    deadline = time.monotonic() + timeout
    last = -1
    while time.monotonic() < deadline:
        count = q.request("GET", "/_api/collection/bench/count")["count"]
        if count == last:
            return
        last = count
        time.sleep(0.5)


def run_peers(ng, rd, body_len, doc_len):
    return {
        "nginx insert c=1": wrk(f"{ng.url}/insert", 1, DURATION, INSERT_LUA),
        "nginx insert c=8": wrk(f"{ng.url}/insert", 8, DURATION, INSERT_LUA),
        "nginx get c=8": wrk(f"{ng.url}/static/doc.json", 8, DURATION),
        "redis set c=1": rd.bench("set", 1, DURATION, body_len, GET_KEYS),
        "redis set c=8": rd.bench("set", 8, DURATION, body_len, GET_KEYS),
        "redis get c=8": rd.bench("get", 8, DURATION, doc_len, GET_KEYS),
    }


def instructions_per_request(binary, kind):
    """User-space instructions per request under callgrind, authentication off."""
    data = tempfile.mkdtemp(prefix="quince-ir-")
    body_file = os.path.join(data, "body.json")
    with open(body_file, "w") as f:
        json.dump(ATTRS, f, separators=(",", ":"))
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no",
         f"--callgrind-out-file={data}/cg.out", binary, "serve", "--server.endpoint",
         "tcp://127.0.0.1:0", "--database.directory", f"{data}/db",
         "--server.authentication", "false", "--log.level", "warn", "--server.threads",
         str(os.cpu_count())],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = re.search(r"(http://\S+)", proc.stdout.readline()).group(1)

        def call(method, path, body=None):
            req = urllib.request.Request(url + path, method=method, data=body)
            return urllib.request.urlopen(req, timeout=120).read()

        call("POST", "/_api/collection", b'{"name":"bench"}')
        call("POST", "/_api/document/bench", b'{"_key":"k7","a":"some test value"}')
        post = ["-p", body_file, "-T", "application/json", f"{url}/_api/document/bench"]
        get = [f"{url}/_api/document/bench/k7"]
        target = {"insert": post, "async": ["-H", "x-arango-async: true"] + post,
                  "get": get}[kind]
        subprocess.run(["ab", "-k", "-n", "300", "-c", "8"] + target, check=True,
                       capture_output=True)
        subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True,
                       capture_output=True)
        subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True,
                       capture_output=True)
        subprocess.run(["ab", "-k", "-n", str(IR_REQUESTS), "-c", "8"] + target, check=True,
                       capture_output=True)
        if kind == "async":
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                count = json.loads(call("GET", "/_api/collection/bench/count"))["count"]
                if count >= IR_REQUESTS + 301:
                    break
                time.sleep(0.2)
        subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True,
                       capture_output=True)
        total = 0
        for name in os.listdir(data):
            if name.startswith("cg.out"):
                with open(os.path.join(data, name)) as f:
                    for line in f:
                        if line.startswith("totals:"):
                            total += int(line.split()[1])
        return total / IR_REQUESTS
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(data, ignore_errors=True)


def median_of(runs, key, index):
    return statistics.median(run[key][index] for run in runs)


def main():
    binaries = [b.split("=", 1) for b in os.environ["QUINCE_BINS"].split()]
    machine = machine_description()
    print(f"machine: {machine}", flush=True)
    body_len = len(json.dumps(ATTRS, separators=(",", ":")))
    results = {label: [] for label, _ in binaries}
    peers = []
    ng, rd = Nginx(os.cpu_count()), Redis()
    # The read's document as Quince stores it: the same bytes for nginx's static file.
    doc = {"_key": "k1", "_id": "reads/k1", "_rev": "_iLbcLsa---", **ATTRS}
    doc_bytes = json.dumps(doc, separators=(",", ":")).encode()
    ng.start({"doc.json": doc_bytes})
    rd.start()
    try:
        for round_ in range(1, ROUNDS + 1):
            for label, binary in binaries:
                results[label].append(run_quince(binary))
                print(f"round {round_} {label}: " + ", ".join(
                    f"{k} {v[0]:,.0f}/s {v[3] + v[4]:.1f} us" for k, v in
                    results[label][-1].items()), flush=True)
            peers.append(run_peers(ng, rd, body_len, len(doc_bytes)))
            print(f"round {round_} peers: " + ", ".join(
                f"{k} {v[0]:,.0f}/s" for k, v in peers[-1].items()), flush=True)
    finally:
        ng.stop()
        rd.stop()
    peer_of = {"insert c=1": ("nginx insert c=1", "redis set c=1"),
               "insert c=8": ("nginx insert c=8", "redis set c=8"),
               "async insert c=8": ("nginx insert c=8", "redis set c=8"),
               "get c=8": ("nginx get c=8", "redis get c=8")}
    lines = [
        "# The request path before and after (issue 13)",
        "",
        f"Machine: {machine}. {ROUNDS} rounds; in each, every binary once on a fresh server "
        f"(`--server.threads {os.cpu_count()}`), then the peers; wrk {DURATION} s per run; "
        "medians over the rounds. CPU is the server's user + system time per request "
        "(fire-and-forget inserts: until their jobs ran). Produced by "
        "`bash benches/write-path.sh`.",
        "",
        "| workload | binary | req/s | p50 / p99 ms | server CPU per request (user + sys) | "
        "vs nginx | vs Redis |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, _, _ in WORKLOADS:
        nginx_key, redis_key = peer_of[name]
        n_rps = statistics.median(p[nginx_key][0] for p in peers)
        r_rps = statistics.median(p[redis_key][0] for p in peers)
        for label, _ in binaries:
            runs = results[label]
            rps = median_of(runs, name, 0)
            user, system = median_of(runs, name, 3), median_of(runs, name, 4)
            lines.append(
                f"| {name} | {label} | {rps:,.0f} | {median_of(runs, name, 1):.2f} / "
                f"{median_of(runs, name, 2):.2f} | {user + system:.1f} µs ({user:.1f} + "
                f"{system:.1f}) | {rps / n_rps:.2f}x | {rps / r_rps:.2f}x |")
    lines += ["", "Peers (medians): " + ", ".join(
        f"{k} {statistics.median(p[k][0] for p in peers):,.0f}/s" for k in peers[0]) + "."]
    if IR:
        lines += ["", f"User-space instructions per request (callgrind, {IR_REQUESTS:,} "
                  "requests, `ab -k -c 8`, authentication off):", "",
                  "| workload | " + " | ".join(label for label, _ in binaries) + " |",
                  "|---|" + "---|" * len(binaries)]
        for kind in ("insert", "async", "get"):
            cells = [f"{instructions_per_request(binary, kind):,.0f}"
                     for _, binary in binaries]
            lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    out_dir = os.path.join(HERE, "..", "out")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "write-path.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
