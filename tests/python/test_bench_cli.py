"""`quince bench` as a command: the JSON report's fields, errors counted and reflected in the
exit status, clear messages and exit status 2 for bad options and unreachable endpoints,
time-bounded and constant-rate runs, and threads spread over several endpoints.
"""

from __future__ import annotations

import json
import socket
import subprocess

from bench_support import endpoint_of, run_bench
from conftest import unique
from quince_server import ROOT_PASSWORD, quince_bin

REPORT_KEYS = {
    "histogram", "totalNumberOfOperations", "runs", "keepAlive", "async", "batchSize", "batchMode",
    "replicationFactor", "numberOfShards", "waitForSync", "concurrencyLevel", "testCase", "complexity",
    "database", "collection", "endpoints", "duration", "rate", "coordinatedOmissionCorrected", "results",
    "min", "avg", "max", "requests", "connectionsOpened", "operationsByMethod", "serviceTime",
    "responseTime", "perThreadMeanMedianMs", "perThreadMeanP95Ms", "errors",
}
RESULT_KEYS = {
    "requestTime", "requestResponseDurationPerThread", "timeNeededPerOperation",
    "timeNeededPerOperationPerThread", "operationsPerSecondRate", "timeSinceStart", "failures",
    "incompleteResults",
}
LATENCY_KEYS = {"count", "minMs", "meanMs", "p50Ms", "p95Ms", "p99Ms", "p99_9Ms", "p99_99Ms", "maxMs"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_report_has_every_field(url):
    run = run_bench(url, "--requests", "40", "--concurrency", "2", "--keep-alive", "false")
    assert run.code == 0, run.explain()
    r = run.report
    assert set(r) == REPORT_KEYS
    assert set(r["results"]) == RESULT_KEYS
    assert set(r["serviceTime"]) == LATENCY_KEYS
    assert set(r["histogram"]) == {"0", "1"}
    assert r["serviceTime"]["count"] == 40
    assert 0 < r["serviceTime"]["p50Ms"] <= r["serviceTime"]["p95Ms"] <= r["serviceTime"]["maxMs"]
    assert r["results"]["failures"] == 0 and r["errors"] == []
    assert r["keepAlive"] is False and r["coordinatedOmissionCorrected"] is False
    # Without keep-alive every request opens its own connection.
    assert r["connectionsOpened"] >= 40
    assert abs(r["results"]["operationsPerSecondRate"] * r["results"]["timeSinceStart"] - 40) < 1e-6 * 40 + 1e-3


def test_wrong_password_is_counted_and_fails_the_run(url):
    run = run_bench(url, "--requests", "25", password="not-the-password")
    assert run.code == 1, run.explain()
    assert run.report["results"]["failures"] == 25
    assert run.report["errors"] == [{"kind": "http", "status": 401, "errorNum": 11, "count": 25}]
    assert "HTTP 401, errorNum 11" in run.stdout
    assert "25 arangob request(s) failed" in run.stderr


def test_setup_refusal_is_a_clear_failure(url):
    run = run_bench(url, "--test-case", "document", "--requests", "5", password="not-the-password")
    assert run.code == 1, run.explain()
    assert "could not set up the test" in run.stderr and "401" in run.stderr


def test_unreachable_endpoint_exits_2():
    run = run_bench(f"http://127.0.0.1:{free_port()}", "--requests", "5")
    assert run.code == 2, run.explain()
    assert "not reachable" in run.stderr
    assert run.report is None


def test_bad_options_exit_2_with_a_message(url, tmp_path):
    cases = [
        (["--no-such-option", "1"], "no-such-option"),
        (["--test-case", "no-such-case"], "unknown test case"),
        (["--test-case", "aqlinsert"], "AQL"),
        (["--concurrency", "0"], "concurrency"),
        (["--async", "maybe"], "maybe"),
        (["--batch-mode", "array", "--batch-size", "2", "--test-case", "crud"], "crud"),
    ]
    for args, needle in cases:
        run = run_bench(url, *args, report=False)
        assert run.code == 2, (args, run.explain())
        assert needle in run.stderr, (args, run.stderr)
    for endpoint in ["ssl://127.0.0.1:1", "127.0.0.1:8529", "tcp://127.0.0.1:notaport"]:
        done = subprocess.run([str(quince_bin()), "bench", "--server.endpoint", endpoint], capture_output=True,
                              text=True, timeout=30)
        assert done.returncode == 2, (endpoint, done.stderr)
        assert "endpoint" in done.stderr
    existing = tmp_path / "exists.json"
    existing.write_text("{}")
    done = subprocess.run([str(quince_bin()), "bench", "--server.endpoint", endpoint_of(url), "--json-report-file",
                           str(existing)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "already exists" in done.stderr
    assert existing.read_text() == "{}"


def test_help_lists_the_test_cases():
    done = subprocess.run([str(quince_bin()), "bench", "--help"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    for name in ["--concurrency", "--server.endpoint", "--rate", "crud-append", "docs1m", "Exit status"]:
        assert name in done.stdout


def test_duration_bounds_the_run(url):
    run = run_bench(url, "--duration", "1", "--concurrency", "2")
    assert run.code == 0, run.explain()
    elapsed = run.report["results"]["timeSinceStart"]
    assert 0.9 <= elapsed < 3.0, elapsed
    assert run.report["totalNumberOfOperations"] > 10
    assert run.report["duration"] == 1


def test_rate_paces_requests_and_measures_from_intended_times(url):
    # 100 requests at 200 per second take about half a second whatever the server's speed.
    run = run_bench(url, "--requests", "100", "--concurrency", "2", "--rate", "200")
    assert run.code == 0, run.explain()
    r = run.report
    assert r["coordinatedOmissionCorrected"] is True and r["rate"] == 200
    assert 0.45 <= r["results"]["timeSinceStart"] < 2.0, r["results"]
    # Response time counts from the intended send time, so it is never below service time.
    assert r["responseTime"]["p50Ms"] >= r["serviceTime"]["p50Ms"] * 0.99
    assert "response time (from intended send, 200/s)" in run.stdout


def test_threads_spread_over_endpoints(url, server_factory, db, db_name):
    # Two servers with the same collection; threads 0 and 2 use the first endpoint, 1 and 3
    # the second, and their key ranges say which thread wrote what.
    other = server_factory()
    name = unique("spread")
    db.create_collection(name)
    from arango import ArangoClient

    other_sys = ArangoClient(hosts=other.url).db("_system", username="root", password=ROOT_PASSWORD)
    other_sys.create_database(db_name)
    other_db = ArangoClient(hosts=other.url).db(db_name, username="root", password=ROOT_PASSWORD)
    other_db.create_collection(name)
    run = run_bench(url, "--server.endpoint", endpoint_of(other.url), "--server.database", db_name,
                    "--test-case", "crud-write-read", "--requests", "2000", "--concurrency", "4",
                    "--collection", name, "--create-collection", "false")
    assert run.code == 0, run.explain()
    assert run.report["endpoints"] == [endpoint_of(url), endpoint_of(other.url)]
    # Step: 2000/4 + 1 = 501, rounded up to 1000, plus 10000 = 11000; period 2: thread t's keys
    # start at testkey<5500 t>. Threads take operations from one shared counter (as arangob's
    # do), so on a loaded machine one thread may get none: assert which endpoint each thread
    # that ran used, and that each endpoint served some thread.
    def threads_of(database):
        col = database.collection(name)
        candidates = [5500 * t + i for t in range(4) for i in range(12)]
        return {n // 5500 for n in candidates if col.has(f"testkey{n}")}

    first, second = threads_of(db), threads_of(other_db)
    assert first and first <= {0, 2}, first
    assert second and second <= {1, 3}, second
    db.delete_collection(name)


def test_text_output_keeps_arangobs_lines(url):
    done = subprocess.run(
        [str(quince_bin()), "bench", "--server.endpoint", endpoint_of(url), "--server.password", ROOT_PASSWORD,
         "--requests", "10"],
        capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "starting threads..."
    assert lines[1] == "executing tests..."
    assert lines[2].startswith("Total number of operations: 10, runs: 1, keep alive: yes, async: no, batch size: 0")
    for label in ["Test case: version, complexity: 1, database: '_system', collection: 'ArangoBenchmark'",
                  "Time needed per operation: ", "Operations per second rate: ", "Elapsed time since start: ",
                  "Min request time: ", "Avg request time: ", "Max request time: "]:
        assert any(line.startswith(label) for line in lines), label
    assert "median" in done.stdout and "Errors: none" in done.stdout
