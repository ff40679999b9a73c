"""`quince bench` test cases against the session server: after a small run, the server holds
exactly what the case implies (documents created, patched, removed, with arangob's keys and
bodies), and the report counts what happened.

Runs with one thread are exact; runs with several threads check the per-thread key ranges
(arangobench's offset: requests / threads + 1, rounded up to 1000, plus 10000).
"""

from __future__ import annotations

import time

import pytest
from bench_support import run_bench
from conftest import unique

SHAPES_VALUE = "some bogus string value to fill up the datafile..."
ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def bench(url, db_name, case, *args, **kw):
    return run_bench(url, "--server.database", db_name, "--test-case", case, *args, **kw)


def documents(db, name, keys):
    """The documents among `keys` that exist (the server has no listing API without AQL)."""
    col = db.collection(name)
    found = {key: col.get(key) for key in keys}
    return {key: doc for key, doc in found.items() if doc is not None}


def bench_keys(count, start=0):
    return [f"testkey{i}" for i in range(start, start + count)]


@pytest.fixture
def cname(db):
    name = unique("bench")
    yield name
    for suffix in ("", "1", "2"):
        db.delete_collection(name + suffix, ignore_missing=True)


def test_version_counts_every_request(url, db_name):
    run = bench(url, db_name, "version", "--requests", "60", "--concurrency", "3")
    assert run.code == 0, run.explain()
    assert "Operations per second rate: " in run.stdout
    assert "Elapsed time since start: " in run.stdout
    assert "Errors: none" in run.stdout
    assert run.report["totalNumberOfOperations"] == 60
    assert run.report["requests"] == 60
    assert run.report["operationsByMethod"] == {"GET": 60}


def test_document_inserts_complexity_attributes(url, db, db_name, cname):
    # Server-generated keys: an autoincrement collection makes them known (1, 2, ...).
    db.create_collection(cname, key_generator="autoincrement", key_increment=1, key_offset=0)
    run = bench(url, db_name, "document", "--requests", "30", "--complexity", "3", "--collection", cname,
                "--concurrency", "3", "--create-collection", "false")
    assert run.code == 0, run.explain()
    assert db.collection(cname).count() == 30
    docs = documents(db, cname, [str(i) for i in range(0, 32)])
    assert len(docs) == 30
    for doc in docs.values():
        assert {k: v for k, v in doc.items() if not k.startswith("_")} == {
            "test1": "some test value", "test2": "some test value", "test3": "some test value"}


def test_crud_leaves_nothing(url, db, db_name, cname):
    run = bench(url, db_name, "crud", "--requests", "50", "--complexity", "2", "--collection", cname)
    assert run.code == 0, run.explain()
    assert db.collection(cname).count() == 0
    assert run.report["operationsByMethod"] == {"POST": 10, "GET": 20, "PATCH": 10, "DELETE": 10}


def test_crud_append_patches_every_document(url, db, db_name, cname):
    run = bench(url, db_name, "crud-append", "--requests", "40", "--complexity", "2", "--collection", cname)
    assert run.code == 0, run.explain()
    assert db.collection(cname).count() == 10
    docs = documents(db, cname, bench_keys(10))
    assert len(docs) == 10
    for doc in docs.values():
        assert doc["value1"] is False and doc["value2"] is False


def test_crud_write_read_inserts_half(url, db, db_name, cname):
    run = bench(url, db_name, "crud-write-read", "--requests", "20", "--collection", cname)
    assert run.code == 0, run.explain()
    assert db.collection(cname).count() == 10
    docs = documents(db, cname, bench_keys(10))
    assert len(docs) == 10
    assert all(d["value1"] is True for d in docs.values())


def test_threads_use_their_own_key_ranges(url, db, db_name, cname):
    # 40 operations over 2 threads: step 40/2 + 1 = 21, rounded up to 1000, plus 10000 =
    # 11000, so thread 1 starts at g = 11000, key testkey5500 (period 2).
    run = bench(url, db_name, "crud-write-read", "--requests", "40", "--concurrency", "2", "--collection", cname)
    assert run.code == 0, run.explain()
    keys = set(documents(db, cname, bench_keys(22) + bench_keys(22, 5500)))
    assert len(keys) == db.collection(cname).count()
    first = {k for k in keys if int(k[len("testkey"):]) < 5500}
    second = keys - first
    assert first == {f"testkey{i}" for i in range(len(first))}
    assert second == {f"testkey{5500 + i}" for i in range(len(second))}
    # Each thread inserted on its even operations: 20 inserts in all, however the 40
    # operations were shared between the threads (a thread's odd count adds one insert).
    assert 20 <= len(keys) <= 21


def test_edge_creates_edges(url, db, db_name, cname):
    run = bench(url, db_name, "edge", "--requests", "20", "--collection", cname)
    assert run.code == 0, run.explain()
    assert db.collection(cname).properties()["type"] in ("edge", 3)
    assert db.collection(cname).count() == 5
    docs = documents(db, cname, bench_keys(5))
    assert len(docs) == 5
    assert docs["testkey1"]["_from"] == f"{cname}/testfrom4"
    assert docs["testkey1"]["_to"] == f"{cname}/testto4"
    assert docs["testkey1"]["value1"] is False


def test_shapes_remove_and_shapes_append_keep(url, db, db_name, cname):
    run = bench(url, db_name, "shapes", "--requests", "30", "--complexity", "2", "--collection", cname)
    assert run.code == 0, run.explain()
    assert db.collection(cname).count() == 0
    run = bench(url, db_name, "shapes-append", "--requests", "20", "--complexity", "2", "--collection", cname)
    assert run.code == 0, run.explain()
    assert db.collection(cname).count() == 10
    docs = documents(db, cname, bench_keys(10))
    assert len(docs) == 10
    # Operation g = 2 (key testkey1) names its attributes value<(g + i) mod 100>.
    assert {k: v for k, v in docs["testkey1"].items() if not k.startswith("_")} == {
        "value3": SHAPES_VALUE, "value4": SHAPES_VALUE}


def test_random_shapes_removes_what_it_inserts(url, db, db_name, cname):
    run = bench(url, db_name, "random-shapes", "--requests", "30", "--complexity", "3", "--collection", cname)
    assert run.code == 0, run.explain()
    assert db.collection(cname).count() == 0
    assert run.report["operationsByMethod"] == {"POST": 10, "GET": 10, "DELETE": 10}


def test_hash_patches_values_and_reports_the_index_request(url, db, db_name, cname):
    run = bench(url, db_name, "hash", "--requests", "20", "--collection", cname)
    assert db.collection(cname).count() == 5
    docs = documents(db, cname, bench_keys(5))
    # The patch of cycle k is thread operation 4k + 2, whose counter is the value.
    assert all(docs[f"testkey{k}"]["value"] == 4 * k + 2 for k in range(5))
    index_errors = [e for e in run.report["errors"] if e["kind"] == "setup"]
    if index_errors:
        # A server without /_api/index: the run goes on, and the refusal is counted.
        assert run.code == 1, run.explain()
        assert "POST /_api/index" in index_errors[0]["message"]
        assert run.report["results"]["failures"] == 1
    else:
        assert run.code == 0, run.explain()


def test_collection_creates_numbered_collections(url, db, db_name, cname):
    run = bench(url, db_name, "collection", "--requests", "4", "--collection", cname)
    assert run.code == 0, run.explain()
    names = {c["name"] for c in db.collections()}
    assert {f"{cname}{i}" for i in range(1, 5)} <= names
    for i in range(1, 5):
        db.delete_collection(f"{cname}{i}")


def test_array_batches_insert_every_document(url, db, db_name, cname):
    run = bench(url, db_name, "document", "--requests", "23", "--batch-size", "5", "--batch-mode", "array",
                "--collection", cname)
    assert run.code == 0, run.explain()
    assert db.collection(cname).count() == 23
    # 23 operations in batches of 5: 4 full requests and one of 3.
    assert run.report["requests"] == 5
    assert run.report["totalNumberOfOperations"] == 23


def test_multipart_batches_insert_every_document(url, db, db_name, cname):
    run = bench(url, db_name, "crud-write-read", "--requests", "20", "--batch-size", "4", "--collection", cname)
    assert run.code == 0, run.explain()
    assert run.report["requests"] == 5
    assert db.collection(cname).count() == 10
    assert len(documents(db, cname, bench_keys(10))) == 10


def test_multipart_batch_part_failures_are_counted(url, db, db_name, cname):
    # The second run inserts the same keys again: every insert part fails with 409/1210,
    # while the batch requests themselves succeed.
    assert bench(url, db_name, "crud-write-read", "--requests", "8", "--batch-size", "4",
                 "--collection", cname).code == 0
    run = bench(url, db_name, "crud-write-read", "--requests", "8", "--batch-size", "4",
                "--collection", cname, "--create-collection", "false")
    assert run.code == 1, run.explain()
    assert run.report["results"]["failures"] == 4
    assert {"kind": "http", "status": 409, "errorNum": 1210, "count": 4} in run.report["errors"]


def test_async_inserts_arrive(url, db, db_name, cname):
    run = bench(url, db_name, "document", "--requests", "20", "--async", "true", "--collection", cname)
    assert run.code == 0, run.explain()
    # Fire-and-forget: the server runs the inserts after answering 202.
    deadline = time.monotonic() + 20
    while db.collection(cname).count() < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert db.collection(cname).count() == 20


def test_import_document_imports_complexity_documents(url, db, db_name, cname):
    run = bench(url, db_name, "import-document", "--requests", "5", "--complexity", "4", "--collection", cname)
    assert run.code == 0, run.explain()
    # Five imports of {"key1": i, "key2": i} for i in 0..3.
    assert db.collection(cname).count() == 20


def test_docs1m_preloads_then_interleaves_reads_and_writes(url, db, db_name, cname):
    run = bench(url, db_name, "docs1m", "--requests", "100", "--preload", "300", "--read-percent", "50",
                "--collection", cname)
    assert run.code == 0, run.explain()
    assert run.report["operationsByMethod"] == {"GET": 50, "POST": 50}
    col = db.collection(cname)
    assert col.count() == 350
    preloaded = col.get("K299")
    assert preloaded["value"] == 299
    assert all(preloaded[f"value{i}"] == ALPHABET for i in range(1, 21))
    assert col.get("K0")["value"] == 0


def test_multi_collection_runs_as_stream_transactions(url, http, db, db_name, cname):
    # arangob sends a JavaScript transaction; here each operation is a stream transaction:
    # begin, one insert into <c>1 and one into <c>2, commit (4 requests, one operation).
    run = bench(url, db_name, "multi-collection", "--requests", "12", "--complexity", "3",
                "--concurrency", "3", "--collection", cname)
    assert run.code == 0, run.explain()
    assert run.report["totalNumberOfOperations"] == 12
    assert run.report["requests"] == 48
    assert run.report["results"]["failures"] == 0
    assert db.collection(cname + "1").count() == 12
    assert db.collection(cname + "2").count() == 12
    # Every transaction was committed: none is left running.
    running = http.get(f"/_db/{db_name}/_api/transaction").json()["transactions"]
    assert running == []


def test_stream_trx_writes_its_documents_over_three_collections(url, db, db_name, cname):
    run = bench(url, db_name, "stream-trx", "--requests", "7", "--concurrency", "2", "--collection", cname)
    assert run.code == 0, run.explain()
    assert run.report["totalNumberOfOperations"] == 7
    assert run.report["requests"] == 35
    # Ten documents per transaction: 4, 3 and 3.
    assert [db.collection(f"{cname}{i}").count() for i in (1, 2, 3)] == [28, 21, 21]
    db.delete_collection(cname + "3")


def test_sequential_steps_touch_every_key_once(url, db, db_name, cname):
    # The journal-sizes steps: keys seq0 ... seq<n-1> from run-wide tickets, so every key is
    # inserted, read, updated and removed exactly once whatever the thread split.
    common = ("--requests", "60", "--concurrency", "4", "--collection", cname)
    run = bench(url, db_name, "seq-insert", *common)
    assert run.code == 0, run.explain()
    col = db.collection(cname)
    assert col.count() == 60
    assert len(documents(db, cname, [f"seq{i}" for i in range(60)])) == 60
    for case in ("seq-get", "seq-update"):
        run = bench(url, db_name, case, *common)
        assert run.code == 0, run.explain()
    assert all("updated" in doc for doc in documents(db, cname, [f"seq{i}" for i in range(60)]).values())
    run = bench(url, db_name, "seq-remove", *common)
    assert run.code == 0, run.explain()
    assert col.count() == 0
