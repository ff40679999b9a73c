"""`quince dump` and `quince restore` as commands, against real servers.

What it is: a hand-written dump in arangodump 3.12's format restored into Quince (documents,
edges, indexes, collection types), an envelope-format dump with removals, dump -> restore ->
compare (every document with `_key`, `_from`/`_to`, the collection properties, the indexes) with
compression on and off, two threads and small batches, `--all-databases` between two fresh
servers, `--include-system-collections`, the `--collection` filter, the `--overwrite` rules, a
dump taken while a writer keeps changing the collection, and the exit status and message for a
bad endpoint, a missing directory, bad credentials and an unknown option.

What it is not: the format's unit tests (crates/dump/src/format.rs and files.rs).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import threading
from pathlib import Path

import pytest
import requests

from conftest import Http, unique
from quince_server import ROOT_PASSWORD, quince_bin

TIMEOUT_S = 120
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def run_tool(url: str, tool: str, *args, password: str = ROOT_PASSWORD):
    command = [
        str(quince_bin()),
        tool,
        "--server.endpoint",
        url.replace("http://", "tcp://"),
        "--server.password",
        password,
        *args,
    ]
    return subprocess.run(command, capture_output=True, timeout=TIMEOUT_S, text=True)


def ok(proc):
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    return proc


def stem(name: str) -> str:
    return f"{name}_{hashlib.md5(name.encode()).hexdigest()}"


def documents(http: Http, db: str, name: str) -> list[dict]:
    """Every document of a collection, by key, without `_rev` (a restore gives new ones)."""
    body = {"query": "FOR d IN @@c SORT d._key RETURN UNSET(d, '_rev')", "bindVars": {"@c": name},
            "batchSize": 1000}
    reply = http.post(f"/_db/{db}/_api/cursor", json=body)
    assert reply.status_code == 201, reply.text
    result = reply.json()
    assert not result["hasMore"]
    return result["result"]


PROPERTY_KEYS = ("type", "waitForSync", "schema", "computedValues", "cacheEnabled", "journalSize", "isSystem")


def properties(http: Http, db: str, name: str) -> dict:
    reply = http.get(f"/_db/{db}/_api/collection/{name}/properties")
    assert reply.status_code == 200, reply.text
    body = reply.json()
    key_options = {k: v for k, v in body["keyOptions"].items() if k != "lastValue"}
    return {**{k: body.get(k) for k in PROPERTY_KEYS}, "keyOptions": key_options}


def indexes(http: Http, db: str, name: str) -> list[dict]:
    reply = http.get(f"/_db/{db}/_api/index", params={"collection": name})
    assert reply.status_code == 200, reply.text
    keep = ("type", "fields", "unique", "sparse", "name")
    return sorted(({k: i.get(k) for k in keep} for i in reply.json()["indexes"]), key=lambda i: i["name"])


def collection_names(http: Http, db: str) -> set[str]:
    reply = http.get(f"/_db/{db}/_api/collection", params={"excludeSystem": "false"})
    return {c["name"] for c in reply.json()["result"]}


def make_database(http: Http) -> str:
    name = unique("dumpdb")
    assert http.post("/_api/database", json={"name": name}).status_code == 201
    return name


@pytest.fixture
def source(http):
    """A database with a document collection (schema, waitForSync, autoincrement keys, two
    persistent indexes) and an edge collection (a persistent index) with varied documents."""
    db = make_database(http)
    people = {"name": "people", "waitForSync": True,
              "keyOptions": {"type": "autoincrement", "increment": 5, "offset": 10, "allowUserKeys": True},
              "schema": {"rule": {"type": "object", "properties": {"n": {"type": "integer"}}},
                         "level": "moderate", "message": "n must be an integer"}}
    assert http.post(f"/_db/{db}/_api/collection", json=people).status_code == 200
    assert http.post(f"/_db/{db}/_api/collection", json={"name": "links", "type": 3}).status_code == 200
    for body in ({"type": "persistent", "fields": ["email"], "unique": True, "name": "byEmail"},
                 {"type": "persistent", "fields": ["city", "n"], "sparse": True, "name": "byCityN"}):
        assert http.post(f"/_db/{db}/_api/index", params={"collection": "people"}, json=body).status_code == 201
    body = {"type": "persistent", "fields": ["weight"], "name": "byWeight"}
    assert http.post(f"/_db/{db}/_api/index", params={"collection": "links"}, json=body).status_code == 201
    docs = [{"_key": str(1000 + i), "n": i, "email": f"p{i}@example.com", "name": "Zoë ☃ " * (i % 4),
             "nested": {"list": list(range(i % 7)), "flag": i % 2 == 0, "none": None, "big": 2**53 - i},
             **({"city": f"city{i % 5}"} if i % 3 else {})} for i in range(400)]
    docs.append({"email": "generated@example.com", "n": -1})
    assert http.post(f"/_db/{db}/_api/document/people", json=docs).status_code in (201, 202)
    edges = [{"_key": f"e{i}", "_from": f"people/{1000 + i}", "_to": f"people/{1000 + (i * 7) % 400}",
              "weight": i / 3} for i in range(250)]
    assert http.post(f"/_db/{db}/_api/document/links", json=edges).status_code in (201, 202)
    yield db
    http.delete(f"/_api/database/{db}")


def assert_same(http: Http, source_db: str, target_db: str, names):
    for name in names:
        assert properties(http, target_db, name) == properties(http, source_db, name), name
        assert indexes(http, target_db, name) == indexes(http, source_db, name), name
        original = documents(http, source_db, name)
        assert len(original) > 0
        assert documents(http, target_db, name) == original, name


def test_restores_the_arangodump_312_fixture(url, http):
    target = unique("shop")
    proc = ok(run_tool(url, "restore", "--input-directory", str(FIXTURES / "arangodump-3.12"),
                       "--server.database", target, "--create-database", "true"))
    assert "Restored 2 collection(s), 7 documents" in proc.stdout
    try:
        customers = documents(http, target, "customers")
        assert [d["_key"] for d in customers] == ["ada", "alan", "grace", "kaethe:1"]
        assert customers[0] == {"_key": "ada", "_id": "customers/ada", "name": "Ada Lovelace",
                                "email": "ada@example.com", "tags": ["math", "engines"], "born": 1815}
        assert customers[1]["address"] == {"city": "Wilmslow", "zip": None}
        assert customers[3]["name"] == "Käthe Kollwitz" and customers[3]["emoji"] == "\U0001F33C"
        knows = documents(http, target, "knows")
        assert [(e["_key"], e["_from"], e["_to"]) for e in knows] == [
            ("e1", "customers/ada", "customers/alan"),
            ("e2", "customers/alan", "customers/grace"),
            ("e3", "customers/grace", "customers/kaethe:1"),
        ]
        assert knows[1]["weight"] == 2.5 and "since" not in knows[2]
        assert properties(http, target, "customers")["type"] == 2
        assert properties(http, target, "customers")["waitForSync"] is True
        assert properties(http, target, "knows")["type"] == 3
        assert indexes(http, target, "customers") == [
            {"type": "persistent", "fields": ["email"], "unique": True, "sparse": False, "name": "byEmail"},
            {"type": "primary", "fields": ["_key"], "unique": True, "sparse": False, "name": "primary"},
        ]
        assert {"type": "persistent", "fields": ["since"], "unique": False, "sparse": True,
                "name": "bySince"} in indexes(http, target, "knows")
        # The unique index works on the restored data.
        dup = http.post(f"/_db/{target}/_api/document/customers", json={"email": "ada@example.com"})
        assert dup.status_code == 409 and dup.json()["errorNum"] == 1210
    finally:
        http.delete(f"/_api/database/{target}")


def test_restores_envelope_dumps_applying_removals_in_order(url, http):
    target = make_database(http)
    try:
        ok(run_tool(url, "restore", "--input-directory", str(FIXTURES / "arangodump-envelope"),
                    "--server.database", target))
        assert documents(http, target, "items") == [
            {"_key": "a", "_id": "items/a", "n": 10},
            {"_key": "b", "_id": "items/b", "n": 20},
        ]
    finally:
        http.delete(f"/_api/database/{target}")


@pytest.mark.parametrize("compress,extra", [
    ("true", ()),
    ("false", ("--threads", "2", "--batch-size", "2048")),
])
def test_dump_then_restore_gives_the_same_collections(url, http, source, tmp_path, compress, extra):
    out = tmp_path / "dump"
    proc = ok(run_tool(url, "dump", "--server.database", source, "--output-directory", str(out),
                       "--compress-output", compress, *extra))
    assert "Dumped 2 collection(s), 651 documents" in proc.stdout
    files = {p.name for p in out.iterdir()}
    suffix = ".data.json.gz" if compress == "true" else ".data.json"
    assert files == {"dump.json", "ENCRYPTION", *(stem(n) + s for n in ("people", "links")
                                                   for s in (".structure.json", suffix))}
    assert (out / "ENCRYPTION").read_text() == "none"
    meta = json.loads((out / "dump.json").read_text())
    assert meta["database"] == source and meta["useEnvelope"] is False
    assert meta["properties"]["name"] == source
    structure = json.loads((out / (stem("links") + ".structure.json")).read_text())
    assert structure["parameters"]["name"] == "links" and structure["parameters"]["type"] == 3
    assert [i["name"] for i in structure["indexes"]] == ["byWeight"]
    data = (out / (stem("links") + suffix)).read_bytes()
    if compress == "true":
        data = gzip.decompress(data)
    lines = [json.loads(line) for line in data.decode().splitlines()]
    assert len(lines) == 250 and all(set(line) >= {"_key", "_from", "_to", "_rev"} for line in lines)

    target = unique("restored")
    try:
        proc = ok(run_tool(url, "restore", "--server.database", target, "--create-database", "true",
                           "--input-directory", str(out), *extra))
        assert "Restored 2 collection(s), 651 documents" in proc.stdout
        assert_same(http, source, target, ["people", "links"])
        # The key generator goes on after the restored keys.
        created = http.post(f"/_db/{target}/_api/document/people", json={"n": 1}).json()
        assert created["_key"] not in {d["_key"] for d in documents(http, source, "people")}
        # Restoring again (overwrite is the default) drops and recreates: same result.
        ok(run_tool(url, "restore", "--server.database", target, "--input-directory", str(out), *extra))
        assert_same(http, source, target, ["people", "links"])
    finally:
        http.delete(f"/_api/database/{target}")


def test_collection_filter_on_dump_and_restore(url, http, source, tmp_path):
    out = tmp_path / "dump"
    ok(run_tool(url, "dump", "--server.database", source, "--output-directory", str(out),
                "--collection", "links", "--collection", "nosuch"))
    assert {p.name for p in out.iterdir()} == {
        "dump.json", "ENCRYPTION", stem("links") + ".structure.json", stem("links") + ".data.json.gz"}
    full = tmp_path / "full"
    ok(run_tool(url, "dump", "--server.database", source, "--output-directory", str(full)))
    target = make_database(http)
    try:
        proc = ok(run_tool(url, "restore", "--server.database", target, "--input-directory", str(full),
                           "--collection", "people"))
        assert "Restored 1 collection(s), 401 documents" in proc.stdout
        assert collection_names(http, target) == {"people"}
        assert_same(http, source, target, ["people"])
        missing = run_tool(url, "restore", "--server.database", target, "--input-directory", str(full),
                           "--collection", "nosuch")
        assert missing.returncode == 1
        assert "none of the requested collections were found in the dump" in missing.stderr
    finally:
        http.delete(f"/_api/database/{target}")


def test_overwrite_rules(url, http, source, tmp_path):
    out = tmp_path / "dump"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    refused = run_tool(url, "dump", "--server.database", source, "--output-directory", str(out))
    assert refused.returncode == 1
    assert "already exists and is not empty; use --overwrite true" in refused.stderr
    assert {p.name for p in out.iterdir()} == {"keep.txt"}
    ok(run_tool(url, "dump", "--server.database", source, "--output-directory", str(out), "--overwrite"))
    assert (out / "dump.json").is_file()
    # An empty existing directory is fine without --overwrite.
    empty = tmp_path / "empty"
    empty.mkdir()
    ok(run_tool(url, "dump", "--server.database", source, "--output-directory", str(empty)))
    # Restore: an existing collection is an error with --overwrite false, and stays untouched.
    refused = run_tool(url, "restore", "--server.database", source, "--input-directory", str(out),
                       "--overwrite", "false", "--collection", "links")
    assert refused.returncode == 1
    assert f"collection '{source}/links': the collection exists (use --overwrite true" in refused.stderr
    assert len(documents(http, source, "links")) == 250


def test_all_databases_between_two_servers(server_factory, tmp_path):
    first = server_factory()
    second = server_factory()
    http1, http2 = Http(first.url), Http(second.url)
    names = ["alpha", "beta"]
    for i, db in enumerate(names):
        assert http1.post("/_api/database", json={"name": db}).status_code == 201
        assert http1.post(f"/_db/{db}/_api/collection", json={"name": "things"}).status_code == 200
        docs = [{"_key": f"k{j}", "db": db, "j": j} for j in range(10 * (i + 1))]
        assert http1.post(f"/_db/{db}/_api/document/things", json=docs).status_code in (201, 202)
    assert http1.post("/_api/collection", json={"name": "root_things"}).status_code == 200
    assert http1.post("/_api/document/root_things", json={"_key": "r"}).status_code in (201, 202)
    out = tmp_path / "all"
    refused = run_tool(first.url, "dump", "--all-databases", "--server.database", "alpha",
                       "--output-directory", str(out))
    assert refused.returncode == 1 and "--all-databases at the same time" in refused.stderr
    proc = ok(run_tool(first.url, "dump", "--all-databases", "--output-directory", str(out)))
    assert "Dumped 3 collection(s), 31 documents" in proc.stdout
    assert {p.name for p in out.iterdir()} == {"_system", "alpha", "beta"}
    assert json.loads((out / "beta" / "dump.json").read_text())["database"] == "beta"
    missing = run_tool(second.url, "restore", "--all-databases", "--input-directory", str(out))
    assert missing.returncode == 1 and "database 'alpha' does not exist" in missing.stderr
    proc = ok(run_tool(second.url, "restore", "--all-databases", "--create-database",
                       "--input-directory", str(out)))
    assert "Restored 3 collection(s), 31 documents" in proc.stdout
    for db in names:
        assert documents(http2, db, "things") == documents(http1, db, "things")
    assert documents(http2, "_system", "root_things") == [{"_key": "r", "_id": "root_things/r"}]


def test_include_system_collections(url, http, source, tmp_path):
    body = {"name": "_audit", "isSystem": True}
    assert http.post(f"/_db/{source}/_api/collection", json=body).status_code == 200
    assert http.post(f"/_db/{source}/_api/document/_audit", json={"_key": "a1", "what": "login"}).status_code in (201, 202)
    without = tmp_path / "without"
    ok(run_tool(url, "dump", "--server.database", source, "--output-directory", str(without)))
    assert not (without / (stem("_audit") + ".structure.json")).exists()
    with_system = tmp_path / "with"
    proc = ok(run_tool(url, "dump", "--server.database", source, "--output-directory", str(with_system),
                       "--include-system-collections", "true"))
    assert "Dumped 3 collection(s)" in proc.stdout
    assert (with_system / (stem("_audit") + ".structure.json")).is_file()
    target = make_database(http)
    try:
        ok(run_tool(url, "restore", "--server.database", target, "--input-directory", str(with_system)))
        assert "_audit" not in collection_names(http, target)
        ok(run_tool(url, "restore", "--server.database", target, "--input-directory", str(with_system),
                    "--include-system-collections"))
        assert properties(http, target, "_audit")["isSystem"] is True
        assert documents(http, target, "_audit") == [{"_key": "a1", "_id": "_audit/a1", "what": "login"}]
        # A system collection that exists is kept and its documents replaced, not dropped.
        http.post(f"/_db/{target}/_api/document/_audit", json={"_key": "a2"})
        ok(run_tool(url, "restore", "--server.database", target, "--input-directory", str(with_system),
                    "--collection", "_audit"))
        assert [d["_key"] for d in documents(http, target, "_audit")] == ["a1", "a2"]
    finally:
        http.delete(f"/_api/database/{target}")


def check_consistent(out: Path):
    lines = (out / (stem("acct") + ".data.json")).read_text().splitlines()
    docs = {d["_key"]: d for d in map(json.loads, lines)}
    assert len(docs) == len(lines), "a document appears twice"
    assert docs["a"]["v"] + docs["b"]["v"] == 100, (docs["a"], docs["b"])
    return docs


def test_a_collection_written_during_the_dump_is_consistent_or_refused(url, http, tmp_path):
    """A writer keeps moving one unit between two documents in stream transactions (their sum
    stays 100) and inserts more documents. Every dump made meanwhile either holds one state of
    the collection (sum 100, each document once) or fails with exit status 1, a message, and
    no data file; once the writer stops, the dump succeeds."""
    db = make_database(http)
    try:
        assert http.post(f"/_db/{db}/_api/collection", json={"name": "acct"}).status_code == 200
        filler = [{"_key": f"f{i}", "pad": "x" * 200} for i in range(3000)]
        assert http.post(f"/_db/{db}/_api/document/acct", json=filler).status_code in (201, 202)
        http.post(f"/_db/{db}/_api/document/acct", json=[{"_key": "a", "v": 100}, {"_key": "b", "v": 0}])
        stop = threading.Event()
        commits = [0]

        def writer():
            session = requests.Session()
            session.auth = ("root", ROOT_PASSWORD)
            base = f"{url}/_db/{db}"
            while not stop.is_set():
                begin = session.post(f"{base}/_api/transaction/begin",
                                     json={"collections": {"write": ["acct"]}}, timeout=30)
                assert begin.status_code == 201, begin.text
                trx = begin.json()["result"]["id"]
                headers = {"x-arango-trx-id": trx}
                a = session.get(f"{base}/_api/document/acct/a", headers=headers, timeout=30).json()
                b = session.get(f"{base}/_api/document/acct/b", headers=headers, timeout=30).json()
                for key, v in (("a", a["v"] - 1), ("b", b["v"] + 1)):
                    reply = session.patch(f"{base}/_api/document/acct/{key}", headers=headers,
                                          json={"v": v}, timeout=30)
                    assert reply.ok, reply.text
                assert session.put(f"{base}/_api/transaction/{trx}", timeout=30).ok
                commits[0] += 1
                session.post(f"{base}/_api/document/acct", json={"pad": "y"}, timeout=30)

        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        outcomes = []
        try:
            for round_ in range(3):
                out = tmp_path / f"d{round_}"
                proc = run_tool(url, "dump", "--server.database", db, "--output-directory", str(out),
                                "--compress-output", "false", "--batch-size", "4096")
                if proc.returncode == 0:
                    check_consistent(out)
                    outcomes.append("consistent")
                else:
                    assert proc.returncode == 1, proc.stderr
                    assert "changed during each of 5 reads, so no consistent copy" in proc.stderr
                    assert not any(p.name.startswith("acct_") for p in out.iterdir()), list(out.iterdir())
                    outcomes.append("refused")
        finally:
            stop.set()
            thread.join(timeout=60)
        assert not thread.is_alive()
        assert commits[0] > 0, "the writer never committed: the test did not test anything"
        out = tmp_path / "quiet"
        ok(run_tool(url, "dump", "--server.database", db, "--output-directory", str(out),
                    "--compress-output", "false"))
        docs = check_consistent(out)
        assert docs["b"]["v"] == commits[0]
        print("outcomes under writes:", outcomes, "commits:", commits[0])
    finally:
        http.delete(f"/_api/database/{db}")


def test_errors_have_messages_and_exit_status(url, http, source, tmp_path):
    bad = run_tool("tcp://127.0.0.1:1", "dump", "--output-directory", str(tmp_path / "x"))
    assert bad.returncode == 1
    assert "cannot reach the server at tcp://127.0.0.1:1" in bad.stderr
    assert not (tmp_path / "x").exists(), "nothing is written when the server cannot be reached"
    bad = run_tool("tcp://127.0.0.1:1", "restore", "--input-directory", str(FIXTURES / "arangodump-3.12"))
    assert bad.returncode == 1 and "cannot reach the server" in bad.stderr
    refused = run_tool(url, "dump", "--server.database", source, "--output-directory", str(tmp_path / "y"),
                       password="wrong")
    assert refused.returncode == 1
    assert "refused the credentials of user 'root'" in refused.stderr
    refused = run_tool(url, "restore", "--server.database", source, "--input-directory",
                       str(FIXTURES / "arangodump-3.12"), password="wrong")
    assert refused.returncode == 1 and "refused the credentials" in refused.stderr
    missing = run_tool(url, "restore", "--input-directory", str(tmp_path / "nope"))
    assert missing.returncode == 1
    assert f"input directory '{tmp_path / 'nope'}' does not exist" in missing.stderr
    (tmp_path / "notadump").mkdir()
    not_dump = run_tool(url, "restore", "--server.database", source, "--input-directory",
                        str(tmp_path / "notadump"))
    assert not_dump.returncode == 1 and "has no dump.json" in not_dump.stderr
    no_db = run_tool(url, "dump", "--server.database", "no_such_db", "--output-directory",
                     str(tmp_path / "z"))
    assert no_db.returncode == 1 and "database not found" in no_db.stderr
    unknown = run_tool(url, "dump", "--no-such-option", "1")
    assert unknown.returncode == 2 and "--no-such-option" in unknown.stderr
    # A TLS endpoint whose CA file does not exist stops the tool before it connects.
    ssl = run_tool("ssl://127.0.0.1:8529", "dump", "--ssl.cafile", str(tmp_path / "no-such-ca.pem"))
    assert ssl.returncode == 1 and "no-such-ca.pem" in ssl.stderr, ssl.stderr
