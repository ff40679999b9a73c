"""journalSize and figures through python-arango (raw HTTP where the driver drops the key),
journals sealing into datafiles as a collection grows, and everything surviving a restart.

Each test runs its own server (`server_factory`) because it stops and restarts it.
"""

import time

import requests
from arango import ArangoClient

from conftest import Http, unique
from quince_server import ROOT_PASSWORD

MIB = 1024 * 1024
DEFAULT_JOURNAL_SIZE = 32 * MIB
DOC_COUNT = 800
FILLER = "q" * 4000


def connect(srv, db_name="_system"):
    client = ArangoClient(hosts=srv.url, request_timeout=60)
    return client.db(db_name, username="root", password=ROOT_PASSWORD)


def raw_properties(srv, db_name, col_name) -> dict:
    resp = Http(srv.url).get(f"/_db/{db_name}/_api/collection/{col_name}/properties")
    assert resp.status_code == 200, resp.text
    return resp.json()


def create_with_journal_size(srv, db_name, col_name, journal_size) -> requests.Response:
    return Http(srv.url).post(
        f"/_db/{db_name}/_api/collection", json={"name": col_name, "journalSize": journal_size}
    )


def settled_figures(col, deadline_s: float = 30.0) -> dict:
    """The figures once every full journal was sealed: a full journal is handed off by the
    write that fills it and sealed by the next maintenance pass (every 100 ms), so until then it
    counts among the journals."""
    end = time.monotonic() + deadline_s
    while True:
        current = figures(col)
        if current["journals"]["count"] <= 1:
            return current
        if time.monotonic() > end:
            raise AssertionError(f"full journals not sealed within {deadline_s} s: {current}")
        time.sleep(0.01)


def figures(col) -> dict:
    return col.statistics()


def test_journal_size_property(server_factory):
    srv = server_factory()
    sys_db = connect(srv)
    db_name = unique("jdb")
    sys_db.create_database(db_name)
    db = connect(srv, db_name)
    http = Http(srv.url)

    # Default: the server's --database.maximal-journal-size (32 MiB unless configured).
    plain = db.create_collection(unique("plain"))
    assert raw_properties(srv, db_name, plain.name)["journalSize"] == DEFAULT_JOURNAL_SIZE
    # python-arango's formatter drops keys it does not know; where it keeps one, it must agree.
    driver_props = db.collection(plain.name).properties()
    assert driver_props["name"] == plain.name
    for key in ("journalSize", "journal_size"):
        if key in driver_props:
            assert driver_props[key] == DEFAULT_JOURNAL_SIZE

    name = unique("small")
    resp = create_with_journal_size(srv, db_name, name, MIB)
    assert resp.status_code == 200, resp.text
    assert resp.json()["journalSize"] == MIB
    assert raw_properties(srv, db_name, name)["journalSize"] == MIB

    # Changeable through PUT properties, and validated there too.
    resp = http.put(f"/_db/{db_name}/_api/collection/{name}/properties", json={"journalSize": 2 * MIB})
    assert resp.status_code == 200, resp.text
    assert resp.json()["journalSize"] == 2 * MIB
    assert raw_properties(srv, db_name, name)["journalSize"] == 2 * MIB

    for too_small in (MIB - 1, 0, 4096):
        resp = http.put(f"/_db/{db_name}/_api/collection/{name}/properties", json={"journalSize": too_small})
        assert resp.status_code == 400, resp.text
        assert resp.json()["error"] is True
        resp = create_with_journal_size(srv, db_name, unique("tiny"), too_small)
        assert resp.status_code == 400, resp.text
        assert resp.json()["error"] is True
    assert raw_properties(srv, db_name, name)["journalSize"] == 2 * MIB

    # A configure() through the driver leaves journalSize alone.
    db.collection(name).configure(sync=True)
    props = raw_properties(srv, db_name, name)
    assert props["journalSize"] == 2 * MIB and props["waitForSync"] is True

    # Persisted across a restart.
    assert srv.stop() == 0
    srv.start()
    assert raw_properties(srv, db_name, name)["journalSize"] == 2 * MIB
    assert raw_properties(srv, db_name, name)["waitForSync"] is True
    assert raw_properties(srv, db_name, plain.name)["journalSize"] == DEFAULT_JOURNAL_SIZE


def test_server_default_journal_size_option(server_factory):
    srv = server_factory(extra_args=["--database.maximal-journal-size", str(2 * MIB)])
    db = connect(srv)
    col = db.create_collection(unique("defaulted"))
    assert raw_properties(srv, "_system", col.name)["journalSize"] == 2 * MIB


def test_figures_as_journals_seal_and_restart(server_factory, tmp_path):
    data_dir = tmp_path / "journals-data"
    srv = server_factory(data_dir)
    sys_db = connect(srv)
    db_name = unique("figdb")
    sys_db.create_database(db_name)
    col_name = unique("sealing")
    resp = create_with_journal_size(srv, db_name, col_name, MIB)
    assert resp.status_code == 200, resp.text
    db = connect(srv, db_name)
    col = db.collection(col_name)

    start = figures(col)
    assert start["alive"]["count"] == 0
    assert start["datafiles"]["count"] == 0
    assert start["dead"]["count"] == 0

    # About 3.2 MiB of documents into 1 MiB journals: at least two journals must seal.
    datafile_counts = []
    revs = {}
    for batch in range(DOC_COUNT // 100):
        docs = [{"_key": f"d{i:04}", "i": i, "fill": FILLER} for i in range(batch * 100, batch * 100 + 100)]
        for meta in col.insert_many(docs):
            revs[meta["_key"]] = meta["_rev"]
        datafile_counts.append(figures(col)["datafiles"]["count"])
    assert len(revs) == DOC_COUNT
    after_inserts = settled_figures(col)
    datafile_counts.append(after_inserts["datafiles"]["count"])
    assert datafile_counts == sorted(datafile_counts), datafile_counts
    assert datafile_counts[-1] >= 2, datafile_counts
    assert datafile_counts[-1] > datafile_counts[0], datafile_counts
    assert after_inserts["journals"]["count"] == 1
    assert after_inserts["alive"]["count"] == DOC_COUNT
    assert after_inserts["dead"]["count"] == 0
    assert after_inserts["alive"]["size"] >= DOC_COUNT * len(FILLER)
    assert after_inserts["datafiles"]["fileSize"] >= 2 * MIB * 0.5
    assert col.count() == DOC_COUNT

    # Updates and removals leave dead records behind (and tombstones for the removals).
    updated = [f"d{i:04}" for i in range(10)]
    removed = [f"d{i:04}" for i in range(10, 20)]
    for meta in col.update_many([{"_key": k, "updated": True} for k in updated]):
        revs[meta["_key"]] = meta["_rev"]
    for meta in col.delete_many([{"_key": k} for k in removed]):
        assert meta["_key"] in removed
        del revs[meta["_key"]]
    after_writes = figures(col)
    assert after_writes["alive"]["count"] == DOC_COUNT - len(removed)
    assert after_writes["dead"]["count"] >= len(updated) + len(removed), after_writes["dead"]
    assert after_writes["dead"]["deletion"] >= len(removed), after_writes["dead"]
    assert col.count() == DOC_COUNT - len(removed)

    # A graceful restart on the same data directory keeps everything.
    assert srv.stop() == 0
    srv.start()
    db = connect(srv, db_name)
    col = db.collection(col_name)
    assert col_name in [c["name"] for c in db.collections()]
    assert raw_properties(srv, db_name, col_name)["journalSize"] == MIB
    assert col.count() == DOC_COUNT - len(removed)
    restarted = figures(col)
    assert restarted["alive"]["count"] == DOC_COUNT - len(removed)
    assert restarted["datafiles"]["count"] >= 2

    keys = sorted(revs)
    found = {}
    for offset in range(0, len(keys), 200):
        for doc in col.get_many(keys[offset : offset + 200]):
            found[doc["_key"]] = doc
    assert set(found) == set(revs)
    for key, doc in found.items():
        assert doc["_rev"] == revs[key], key
        assert doc["fill"] == FILLER
        assert doc["i"] == int(key[1:])
        assert doc.get("updated", False) == (key in updated)
    for key in removed:
        assert col.get(key) is None

    # The restarted server keeps writing into the same collection.
    col.insert({"_key": "after-restart", "fill": FILLER})
    assert col.count() == DOC_COUNT - len(removed) + 1


def test_compaction_reclaims_dead_space_and_keeps_live_data(server_factory):
    srv = server_factory()
    db = connect(srv)
    col_name = unique("compacting")
    resp = create_with_journal_size(srv, "_system", col_name, MIB)
    assert resp.status_code == 200, resp.text
    col = db.collection(col_name)

    revs = {}
    for batch in range(DOC_COUNT // 100):
        docs = [{"_key": f"c{i:04}", "fill": FILLER} for i in range(batch * 100, batch * 100 + 100)]
        for meta in col.insert_many(docs):
            revs[meta["_key"]] = meta["_rev"]
    # Remove nine documents in ten: the sealed datafiles become mostly dead.
    doomed = [key for index, key in enumerate(sorted(revs)) if index % 10 != 0]
    for offset in range(0, len(doomed), 200):
        col.delete_many([{"_key": k} for k in doomed[offset : offset + 200]])
    for key in doomed:
        del revs[key]
    before = figures(col)
    assert before["alive"]["count"] == len(revs)
    assert before["dead"]["count"] >= len(doomed)

    col.compact()
    after = figures(col)
    assert after["alive"]["count"] == len(revs)
    assert after["dead"]["size"] < before["dead"]["size"], (before["dead"], after["dead"])
    total_before = before["datafiles"]["fileSize"] + before["journals"]["fileSize"]
    total_after = after["datafiles"]["fileSize"] + after["journals"]["fileSize"]
    assert total_after < total_before, (before, after)

    def check_contents():
        docs = col.get_many(sorted(revs))
        assert {d["_key"]: d["_rev"] for d in docs} == revs
        assert all(d["fill"] == FILLER for d in docs)
        assert col.count() == len(revs)
        assert col.get(doomed[0]) is None and col.get(doomed[-1]) is None

    check_contents()
    assert srv.stop() == 0
    srv.start()
    db = connect(srv)
    col = db.collection(col_name)
    check_contents()
    assert figures(col)["alive"]["count"] == len(revs)
