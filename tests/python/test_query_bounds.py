"""The bounds of a query: every kind of long query stops within a second of a kill or of its
`maxRuntime`, and memory is counted at its real size, per query (`--query.memory-limit`,
`memoryLimit`) and for all queries together (`--query.global-memory-limit`), measured as the
server's resident memory (`VmHWM`, the most it ever held).

Each server here is its own (module-scoped), so its memory is this module's alone.
"""

from __future__ import annotations

import threading
import time

import pytest
import requests

from conftest import unique, wait_for, write_keyfile
from quince_server import ROOT_PASSWORD, QuinceServer

MB = 1_000_000
AUTH = ("root", ROOT_PASSWORD)

# A 12-vertex complete graph: more simple paths between two vertices than any test can wait for.
GRAPH_VERTICES = 12


def start_server(tmp_path_factory, *args: str) -> QuinceServer:
    base = tmp_path_factory.mktemp(unique("bounds"))
    srv = QuinceServer(base / "data", jwt_keyfile=write_keyfile(base), extra_args=args)
    srv.start()
    return srv


def memory(pid: int) -> dict[str, int]:
    """The server's resident memory now (`VmRSS`) and at its most (`VmHWM`), in bytes."""
    out = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                out[name] = int(value.split()[0]) * 1024
    return out


def cursor(url: str, query: str, **options) -> requests.Response:
    body = {"query": query}
    body.update(options)
    return requests.post(f"{url}/_api/cursor", json=body, auth=AUTH, timeout=120)


# --- kill and maxRuntime ------------------------------------------------------------------


@pytest.fixture(scope="module")
def killer(tmp_path_factory):
    """A server with a complete graph `v`/`e` to search."""
    srv = start_server(tmp_path_factory)
    url = srv.url
    for name, kind in (("v", 2), ("e", 3)):
        assert requests.post(f"{url}/_api/collection", json={"name": name, "type": kind}, auth=AUTH).status_code == 200
    vertices = [{"_key": str(i)} for i in range(GRAPH_VERTICES)]
    edges = [
        {"_from": f"v/{a}", "_to": f"v/{b}", "w": 1 + (a * 7 + b) % 5}
        for a in range(GRAPH_VERTICES)
        for b in range(GRAPH_VERTICES)
        if a != b
    ]
    assert requests.post(f"{url}/_api/document/v", json=vertices, auth=AUTH).status_code == 202
    assert requests.post(f"{url}/_api/document/e", json=edges, auth=AUTH).status_code == 202
    yield srv
    assert srv.stop() == 0


LONG = "abcdefghij" * 4000
LONG_QUERIES = {
    "nested_ranges": "FOR i IN 1..1e7 FOR j IN 1..1e7 COLLECT WITH COUNT INTO n RETURN n",
    "range_streamed": "FOR i IN 1..1e15 FILTER i == 0 RETURN i",
    "array_loops": (
        "LET a = (FOR i IN 1..20000 RETURN i) FOR x IN a FOR y IN a FILTER x == -y "
        "RETURN x"
    ),
    "k_shortest_paths": (
        f"FOR p IN OUTBOUND K_SHORTEST_PATHS 'v/0' TO 'v/{GRAPH_VERTICES - 1}' e "
        "OPTIONS {weightAttribute: 'w'} COLLECT WITH COUNT INTO n RETURN n"
    ),
    "k_paths": (
        f"FOR p IN 1..{GRAPH_VERTICES} OUTBOUND K_PATHS 'v/0' TO 'v/{GRAPH_VERTICES - 1}' e "
        "COLLECT WITH COUNT INTO n RETURN n"
    ),
    "all_shortest_paths_in_a_loop": (
        "FOR i IN 1..1e9 FOR p IN ANY ALL_SHORTEST_PATHS 'v/0' TO 'v/1' e "
        "COLLECT WITH COUNT INTO n RETURN n"
    ),
    "traversal": (
        f"FOR v IN 1..{GRAPH_VERTICES} OUTBOUND 'v/0' e OPTIONS {{uniqueVertices: 'path'}} "
        "COLLECT WITH COUNT INTO n RETURN n"
    ),
    "function_loop": "RETURN LEVENSHTEIN_DISTANCE(@a, @b)",
    "window": (
        "FOR i IN 1..1e6 WINDOW i WITH {preceding: 1e9, following: 1e9} "
        "AGGREGATE s = SUM(i) COLLECT WITH COUNT INTO n RETURN n"
    ),
    "sleep": "RETURN SLEEP(600)",
}
BINDS = {"function_loop": {"a": LONG, "b": LONG[::-1]}}


def start_job(url: str, query: str, bind_vars: dict, **options) -> str:
    r = requests.post(
        f"{url}/_api/cursor",
        json={"query": query, "bindVars": bind_vars, "options": options},
        headers={"x-arango-async": "store"},
        auth=AUTH,
        timeout=30,
    )
    assert r.status_code == 202, r.text
    return r.headers["x-arango-async-id"]


def job_result(url: str, job: str):
    """The job's answer in a tuple (a `Response` is falsy for a 4xx status), or None while
    it runs."""
    r = requests.put(f"{url}/_api/job/{job}", auth=AUTH, timeout=30)
    return None if r.status_code == 204 else (r,)


@pytest.mark.parametrize("kind", list(LONG_QUERIES))
def test_a_killed_query_ends_within_a_second(killer, kind):
    url = killer.url
    query = LONG_QUERIES[kind]
    job = start_job(url, query, BINDS.get(kind, {}))
    running = wait_for(
        lambda: [q for q in requests.get(f"{url}/_api/query/current", auth=AUTH).json() if q["query"] == query],
        f"{kind} to run",
    )
    time.sleep(0.3)  # let it get deep into its work: the kill must interrupt it there
    assert job_result(url, job) is None, f"{kind} finished before the kill"
    killed = requests.delete(f"{url}/_api/query/{running[0]['id']}", auth=AUTH)
    assert killed.status_code == 200, killed.text
    started = time.monotonic()
    (result,) = wait_for(lambda: job_result(url, job), f"{kind} to end", deadline_s=30)
    took = time.monotonic() - started
    assert result.status_code == 410 and result.json()["errorNum"] == 1500, result.text
    assert took < 1.0, f"{kind} ran on for {took:.2f} s after the kill"


@pytest.mark.parametrize("kind", list(LONG_QUERIES))
def test_max_runtime_ends_every_kind_of_query(killer, kind):
    started = time.monotonic()
    r = requests.post(
        f"{killer.url}/_api/cursor",
        json={"query": LONG_QUERIES[kind], "bindVars": BINDS.get(kind, {}), "options": {"maxRuntime": 0.5}},
        auth=AUTH,
        timeout=60,
    )
    took = time.monotonic() - started
    assert r.status_code == 410 and r.json()["errorNum"] == 1500, r.text
    assert took < 1.5, f"{kind} with maxRuntime 0.5 took {took:.2f} s"


def test_a_killed_stream_query_answers_1500_and_ends(killer):
    url = killer.url
    query = "FOR i IN 1..1e12 RETURN i"
    first = cursor(url, query, batchSize=2, options={"stream": True})
    assert first.status_code == 201 and first.json()["result"] == [1, 2], first.text
    running = wait_for(
        lambda: [q for q in requests.get(f"{url}/_api/query/current", auth=AUTH).json() if q["query"] == query],
        "the stream query to be listed",
    )
    assert running[0]["stream"] is True
    assert requests.delete(f"{url}/_api/query/{running[0]['id']}", auth=AUTH).status_code == 200
    more = requests.post(f"{url}/_api/cursor/{first.json()['id']}", auth=AUTH, timeout=30)
    assert more.status_code == 410 and more.json()["errorNum"] == 1500, more.text
    wait_for(
        lambda: not [q for q in requests.get(f"{url}/_api/query/current", auth=AUTH).json() if q["query"] == query],
        "the killed stream query to end",
    )


def test_huge_max_runtime_is_no_deadline_and_not_an_error(killer):
    r = cursor(killer.url, "RETURN 1", options={"maxRuntime": 1e300})
    assert r.status_code == 201 and r.json()["result"] == [1], r.text


def test_a_streamed_range_is_not_built(killer):
    """`FOR i IN 1..1e9` counts through the range (ArangoDB streams ranges); `LIMIT` ends it."""
    r = cursor(killer.url, "FOR i IN 1..1e9 LIMIT 3 RETURN i")
    assert r.status_code == 201 and r.json()["result"] == [1, 2, 3], r.text
    r = cursor(killer.url, "FOR i IN 1e9..1 LIMIT 2 RETURN i")
    assert r.json()["result"] == [1000000000, 999999999], r.text


# --- memory ---------------------------------------------------------------------------------

QUERY_LIMIT = 100 * MB
GLOBAL_LIMIT = 400 * MB

# Queries that try to hold far more than 100 MB, in every way the issue found. Rows carry a
# kilobyte (`@pad`) where the point is how many rows are held, so the limit is reached in a
# hundred thousand rows rather than millions.
HUNGRY = {
    "range_value": "LET a = 1..(1e7 - 0) RETURN LENGTH(a)",
    "ranges_in_a_function": "RETURN LENGTH(FLATTEN([1..(1e7 - 0), 1..(1e7 - 0)]))",
    "range_function": "RETURN LENGTH(RANGE(1, 1e7 - 0))",
    "substitute": (
        "RETURN LENGTH(SUBSTITUTE(CONCAT_SEPARATOR('', (FOR i IN 1..2000 RETURN 'aaaaaaaaaa')), "
        "'a', CONCAT_SEPARATOR('', (FOR i IN 1..10000 RETURN 'bbbbbbbbbb'))))"
    ),
    "concat_separator": (
        "RETURN LENGTH(CONCAT_SEPARATOR(CONCAT_SEPARATOR('', (FOR i IN 1..10000 RETURN 'xxxxxxxxxx')), "
        "(FOR i IN 1..100000 RETURN i)))"
    ),
    "regex_groups": "RETURN REGEX_MATCHES(@text, @pattern)",
    "collect_into": "FOR i IN 1..1e7 COLLECT k = i % 1000 INTO g = CONCAT(@pad, i) RETURN LENGTH(g)",
    "sort": "FOR i IN 1..1e7 LET s = CONCAT(i, @pad) SORT i DESC LIMIT 1 RETURN s",
    "results": "FOR i IN 1..1e7 RETURN {i, s: @pad}",
    "subquery": "LET s = (FOR i IN 1..1e7 RETURN CONCAT(@pad, i)) RETURN LENGTH(s)",
    "distinct": "FOR i IN 1..1e7 RETURN DISTINCT [i, @pad]",
    "split": "RETURN LENGTH(SPLIT(CONCAT_SEPARATOR('', (FOR i IN 1..400000 RETURN 'abcdefghij')), ''))",
    "replace_nth": "RETURN LENGTH(REPLACE_NTH([], 5e6, 1, 0))",
}
PAD = "p" * 1000
HUNGRY_BINDS = {"regex_groups": {"text": "a" * 17000, "pattern": "(a)?" * 4000}}


def hungry_binds(name: str) -> dict:
    return HUNGRY_BINDS.get(name, {"pad": PAD} if "@pad" in HUNGRY[name] else {})


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    srv = start_server(
        tmp_path_factory,
        "--query.memory-limit",
        str(QUERY_LIMIT),
        "--query.global-memory-limit",
        str(GLOBAL_LIMIT),
    )
    assert cursor(srv.url, "RETURN 1").status_code == 201
    yield srv
    assert srv.stop() == 0


def refused_for_memory(r: requests.Response) -> bool:
    body = r.json()
    return r.status_code == 400 and body.get("errorNum") == 32 and "memory" in body.get("errorMessage", "")


def test_each_hungry_query_is_refused_within_its_limit(limited):
    pid = limited.proc.pid
    base = memory(pid)["VmRSS"]
    for name, query in HUNGRY.items():
        r = cursor(limited.url, query, bindVars=hungry_binds(name))
        assert refused_for_memory(r), f"{name}: {r.status_code} {r.text[:300]}"
        grown = memory(pid)["VmHWM"] - base
        # The limit, and one step past it: a query stops at the step that passes its limit.
        assert grown < 2 * QUERY_LIMIT, f"{name}: the server grew by {grown / MB:.0f} MB"


def test_sixteen_hungry_queries_at_once_stay_under_the_global_limit(limited):
    pid = limited.proc.pid
    base = memory(pid)["VmRSS"]
    names = ["collect_into", "sort", "results", "subquery"]
    answers: list[requests.Response] = []
    lock = threading.Lock()

    def run(i: int) -> None:
        name = names[i % len(names)]
        r = cursor(limited.url, HUNGRY[name], bindVars=hungry_binds(name))
        with lock:
            answers.append(r)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert len(answers) == 16
    for r in answers:
        assert refused_for_memory(r), r.text[:300]
    grown = memory(pid)["VmHWM"] - base
    assert grown < GLOBAL_LIMIT + 4 * QUERY_LIMIT, f"16 queries grew the server by {grown / MB:.0f} MB"
    metrics = requests.get(f"{limited.url}/_admin/metrics/v2", auth=AUTH).text
    assert 'arangodb_aql_global_memory_limit{role="SINGLE"} 400000000' in metrics


def test_peak_memory_is_the_real_size(limited):
    r = cursor(limited.url, "FOR i IN 1..200000 SORT i DESC LIMIT 1 RETURN i")
    assert r.status_code == 201, r.text
    peak = r.json()["extra"]["stats"]["peakMemoryUsage"]
    # 200,000 rows of one number each: a few megabytes in memory, not 0 and not gigabytes.
    assert 1 * MB < peak < 60 * MB, peak


def test_a_query_may_lower_its_limit_but_not_raise_it(limited):
    query = "FOR i IN 1..1e5 SORT i DESC LIMIT 1 RETURN i"
    assert cursor(limited.url, query).status_code == 201
    r = cursor(limited.url, query, memoryLimit=1 * MB)
    assert refused_for_memory(r) and "1000000 bytes" in r.json()["errorMessage"], r.text
    r = cursor(limited.url, HUNGRY["sort"], bindVars=hungry_binds("sort"), memoryLimit=10 * QUERY_LIMIT)
    assert refused_for_memory(r), r.text


@pytest.fixture(scope="module")
def pooled(tmp_path_factory):
    """Queries without a limit of their own, under a global limit of 200 MB."""
    srv = start_server(
        tmp_path_factory, "--query.memory-limit", "0", "--query.global-memory-limit", str(200 * MB)
    )
    yield srv
    assert srv.stop() == 0


def test_results_a_cursor_keeps_count_against_the_global_limit(pooled):
    url = pooled.url
    keep = "FOR i IN 1..1200000 RETURN {i, text: 'a result that a cursor keeps for its client'}"
    held = cursor(url, keep, batchSize=1000)
    assert held.status_code == 201 and held.json()["hasMore"] is True, held.text[:300]
    used = int(
        next(
            line.split()[-1]
            for line in requests.get(f"{url}/_admin/metrics/v2", auth=AUTH).text.splitlines()
            if line.startswith("arangodb_aql_global_memory_usage{")
        )
    )
    assert 80 * MB < used < 200 * MB, used
    # About 110 MB for the kept results, about 115 MB for this sort: each fits alone.
    grow = "FOR i IN 1..5e5 SORT i DESC LIMIT 1 RETURN i"
    refused = cursor(url, grow)
    assert refused_for_memory(refused) and "global-memory-limit" in refused.json()["errorMessage"], refused.text
    deleted = requests.delete(f"{url}/_api/cursor/{held.json()['id']}", auth=AUTH)
    assert deleted.status_code == 202
    assert cursor(url, grow).status_code == 201
