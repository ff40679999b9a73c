"""`/_api/transaction` and `x-arango-trx-id` over raw HTTP: exact statuses and bodies.

What it is: begin, status, list, commit and abort replies; the errors of bad begins, unknown
ids and finished transactions; isolation (read committed plus own writes, write-write
conflicts refused at once with 409/1200, two transactions racing for one key); exclusive
collections and `lockTimeout` (500/18); `maxTransactionSize` (400/32); the idle timeout on a
server of its own; all-or-nothing imports (`complete=true`) and imports inside a transaction;
multi-document requests inside a transaction; JavaScript transactions (403/36).

What it is not: the driver's view (`test_driver_transactions.py`).

Waiting is a bounded poll of an observable state (a transaction's status), never a fixed sleep
used as synchronisation.
"""

from __future__ import annotations

import json
import select
import threading
import time

import pytest

from conftest import Http, unique, wait_for
from http_checks import assert_error, assert_success, error_codes_header
from quince_server import RawConnection, basic_auth_header

DEADLINE_S = 15.0
OCTETS = {"content-type": "application/octet-stream"}


def trx(tid: str) -> dict:
    return {"x-arango-trx-id": tid}


def begin(http: Http, db_name: str, body: dict) -> str:
    resp = http.post(f"/_db/{db_name}/_api/transaction/begin", json=body)
    reply = assert_success(resp, 201)
    assert set(reply) == {"code", "error", "result"}, reply
    assert reply["code"] == 201 and reply["error"] is False
    tid = reply["result"]["id"]
    assert isinstance(tid, str) and tid.isdigit(), reply
    assert reply["result"] == {"id": tid, "status": "running"}
    return tid


def writes(*names: str) -> dict:
    return {"collections": {"write": list(names)}}


def assert_state(resp, status: int, tid: str, state: str) -> None:
    body = assert_success(resp, status)
    assert body == {"code": status, "error": False, "result": {"id": tid, "status": state}}


def running_ids(http: Http, db_name: str) -> list[str]:
    body = assert_success(http.get(f"/_db/{db_name}/_api/transaction"), 200)
    assert set(body) == {"transactions"}, body
    for entry in body["transactions"]:
        assert set(entry) == {"id", "state"} and entry["state"] == "running", entry
    return [entry["id"] for entry in body["transactions"]]


def count(http: Http, db_name: str, name: str, headers=None) -> int:
    body = assert_success(http.get(f"/_db/{db_name}/_api/collection/{name}/count", headers=headers), 200)
    return body["count"]


@pytest.fixture(autouse=True)
def no_running_transactions(http, db_name):
    """Aborts what a failed test left running, so its locks and keys cannot leak into the next."""
    yield
    for tid in running_ids(http, db_name):
        http.delete(f"/_db/{db_name}/_api/transaction/{tid}")


@pytest.fixture
def api(db_name) -> str:
    return f"/_db/{db_name}/_api"


@pytest.fixture
def col2(db):
    collection = db.create_collection(unique("col2"))
    yield collection
    db.delete_collection(collection.name, ignore_missing=True)


# -- life cycle ------------------------------------------------------------------------------


def test_begin_status_list_commit(http, db_name, api, col):
    tid = begin(http, db_name, {"collections": {"write": col.name, "read": [col.name]}, "waitForSync": False,
                                "allowImplicit": True, "lockTimeout": 5, "maxTransactionSize": 1 << 20,
                                "skipFastLockRound": True})
    assert_state(http.get(f"{api}/transaction/{tid}"), 200, tid, "running")
    assert running_ids(http, db_name) == [tid]

    assert_state(http.put(f"{api}/transaction/{tid}"), 200, tid, "committed")
    # Idempotent, and the status stays.
    assert_state(http.put(f"{api}/transaction/{tid}"), 200, tid, "committed")
    assert_state(http.get(f"{api}/transaction/{tid}"), 200, tid, "committed")
    body = assert_error(http.delete(f"{api}/transaction/{tid}"), 400, 1653)
    assert tid in body["errorMessage"]
    assert running_ids(http, db_name) == []


def test_abort_is_idempotent_and_final(http, db_name, api, col):
    tid = begin(http, db_name, writes(col.name))
    assert_state(http.delete(f"{api}/transaction/{tid}"), 200, tid, "aborted")
    assert_state(http.delete(f"{api}/transaction/{tid}"), 200, tid, "aborted")
    assert_error(http.put(f"{api}/transaction/{tid}"), 400, 1653)
    assert_state(http.get(f"{api}/transaction/{tid}"), 200, tid, "aborted")
    assert running_ids(http, db_name) == []


def test_list_names_only_running_transactions_of_the_database(http, db_name, api, col):
    first = begin(http, db_name, writes(col.name))
    second = begin(http, db_name, {"collections": {"read": col.name}})
    assert sorted(running_ids(http, db_name)) == sorted([first, second])
    assert first not in running_ids(http, "_system") and second not in running_ids(http, "_system")
    http.delete(f"{api}/transaction/{first}")
    assert running_ids(http, db_name) == [second]


@pytest.mark.parametrize(
    "body, status, error_num",
    [
        ([], 400, 10),
        ({"collections": []}, 400, 10),
        ({"collections": {"write": 5}}, 400, 10),
        ({"collections": {"read": [1]}}, 400, 10),
        ({"waitForSync": "yes"}, 400, 10),
        ({"allowImplicit": 1}, 400, 10),
        ({"lockTimeout": -1}, 400, 10),
        ({"maxTransactionSize": "big"}, 400, 10),
        ({"collections": {"write": "no_such_collection"}}, 404, 1203),
        ({"collections": {"read": ["no_such_collection"]}}, 404, 1203),
    ],
)
def test_bad_begins(http, api, body, status, error_num):
    assert_error(http.post(f"{api}/transaction/begin", json=body), status, error_num)


def test_begin_without_body(http, api):
    assert_error(http.post(f"{api}/transaction/begin"), 400, 600)


def test_unknown_ids(http, db_name, api, col):
    tid = "123456789"
    for method in ("GET", "PUT", "DELETE"):
        body = assert_error(http.request(method, f"{api}/transaction/{tid}"), 404, 1655)
        assert tid in body["errorMessage"]
    assert_error(http.get(f"{api}/document/{col.name}/k", headers=trx(tid)), 404, 1655)
    assert_error(http.post(f"{api}/document/{col.name}", json={}, headers=trx(tid)), 404, 1655)
    assert_error(http.get(f"{api}/collection/{col.name}/count", headers=trx(tid)), 404, 1655)
    assert count(http, db_name, col.name) == 0
    # A transaction belongs to its database.
    tid = begin(http, db_name, writes(col.name))
    assert_error(http.get(f"/_db/_system/_api/transaction/{tid}"), 404, 1655)
    assert_error(http.put(f"/_db/_system/_api/transaction/{tid}"), 404, 1655)
    assert_state(http.get(f"{api}/transaction/{tid}"), 200, tid, "running")


@pytest.mark.parametrize("tid", ["not-a-number", "0"])
def test_illegal_ids(http, api, tid):
    for method in ("GET", "PUT", "DELETE"):
        assert_error(http.request(method, f"{api}/transaction/{tid}"), 400, 10)


def test_methods_and_paths(http, api):
    assert_error(http.patch(f"{api}/transaction/1"), 405, 405)
    assert_error(http.patch(f"{api}/transaction"), 405, 405)
    assert_error(http.get(f"{api}/transaction/1/2"), 404, 404)


def test_javascript_transactions_are_disabled(http, db_name, api, col):
    body = {"collections": {"write": [col.name]}, "action": "function () { return 1; }"}
    reply = assert_error(http.post(f"{api}/transaction", json=body), 403, 36)
    assert "/_api/transaction/begin" in reply["errorMessage"]
    assert count(http, db_name, col.name) == 0


# -- operations and visibility ---------------------------------------------------------------


def test_own_writes_are_seen_inside_only(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    assert_success(http.post(doc, json={"_key": "old", "v": 0}), 202)
    tid = begin(http, db_name, writes(col.name))
    h = trx(tid)

    created = assert_success(http.post(doc, json={"_key": "k", "v": 1}, headers=h), 202)
    assert set(created) == {"_id", "_key", "_rev"}
    inside = assert_success(http.get(f"{doc}/k", headers=h), 200)
    assert inside == {"_key": "k", "_id": f"{col.name}/k", "_rev": created["_rev"], "v": 1}
    assert http.head(f"{doc}/k", headers=h).status_code == 200
    assert_success(http.patch(f"{doc}/old", json={"v": 2}, headers=h), 202)
    assert assert_success(http.get(f"{doc}/old", headers=h), 200)["v"] == 2
    assert count(http, db_name, col.name, h) == 2

    assert_error(http.get(f"{doc}/k"), 404, 1202)
    assert http.head(f"{doc}/k").status_code == 404
    assert assert_success(http.get(f"{doc}/old"), 200)["v"] == 0
    assert count(http, db_name, col.name) == 1

    assert_state(http.put(f"{api}/transaction/{tid}"), 200, tid, "committed")
    assert assert_success(http.get(f"{doc}/k"), 200) == inside
    assert assert_success(http.get(f"{doc}/old"), 200)["v"] == 2
    assert count(http, db_name, col.name) == 2


def test_revision_preconditions_inside(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    tid = begin(http, db_name, writes(col.name))
    h = trx(tid)
    first = assert_success(http.post(doc, json={"_key": "r"}, headers=h), 202)["_rev"]
    second = assert_success(http.patch(f"{doc}/r", json={"v": 1}, headers={**h, "if-match": f'"{first}"'}), 202)
    assert second["_oldRev"] == first
    body = assert_error(http.patch(f"{doc}/r", json={"v": 2}, headers={**h, "if-match": f'"{first}"'}), 412, 1200,
                        extra_keys={"_id", "_key", "_rev"})
    assert body["_rev"] == second["_rev"]
    # Removed inside, then created again inside.
    assert_success(http.delete(f"{doc}/r", headers=h), 202)
    assert_error(http.get(f"{doc}/r", headers=h), 404, 1202)
    assert_success(http.post(doc, json={"_key": "r", "again": True}, headers=h), 202)
    http.put(f"{api}/transaction/{tid}")
    got = assert_success(http.get(f"{doc}/r"), 200)
    assert got["again"] is True and "v" not in got


def test_finished_transactions_refuse_operations(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    committed = begin(http, db_name, writes(col.name))
    assert_success(http.post(doc, json={"_key": "c"}, headers=trx(committed)), 202)
    http.put(f"{api}/transaction/{committed}")
    aborted = begin(http, db_name, writes(col.name))
    assert_success(http.post(doc, json={"_key": "a"}, headers=trx(aborted)), 202)
    http.delete(f"{api}/transaction/{aborted}")

    for tid, status, error_num in ((committed, 400, 1653), (aborted, 410, 1654)):
        h = trx(tid)
        body = assert_error(http.get(f"{doc}/c", headers=h), status, error_num)
        assert tid in body["errorMessage"]
        assert_error(http.post(doc, json={"_key": "x"}, headers=h), status, error_num)
        assert_error(http.patch(f"{doc}/c", json={"v": 1}, headers=h), status, error_num)
        assert_error(http.delete(f"{doc}/c", headers=h), status, error_num)
        assert_error(http.put(f"{api}/collection/{col.name}/truncate", headers=h), status, error_num)
    assert_success(http.get(f"{doc}/c"), 200)
    assert_error(http.get(f"{doc}/a"), 404, 1202)
    assert count(http, db_name, col.name) == 1


def test_count_in_finished_transactions_is_refused(http, db_name, api, col):
    committed = begin(http, db_name, writes(col.name))
    http.put(f"{api}/transaction/{committed}")
    aborted = begin(http, db_name, writes(col.name))
    http.delete(f"{api}/transaction/{aborted}")
    assert_error(http.get(f"{api}/collection/{col.name}/count", headers=trx(aborted)), 410, 1654)
    assert_error(http.get(f"{api}/collection/{col.name}/count", headers=trx(committed)), 400, 1653)


def test_multi_document_request_in_aborted_transaction_is_refused(http, db_name, api, col):
    tid = begin(http, db_name, writes(col.name))
    http.delete(f"{api}/transaction/{tid}")
    doc = f"{api}/document/{col.name}"
    assert_error(http.put(f"{doc}?onlyget=true", json=["a"], headers=trx(tid)), 410, 1654)
    assert_error(http.post(doc, json=[{"_key": "a"}], headers=trx(tid)), 410, 1654)


def test_import_in_aborted_transaction_is_refused(http, db_name, api, col):
    tid = begin(http, db_name, writes(col.name))
    http.delete(f"{api}/transaction/{tid}")
    resp = http.post(f"{api}/import?collection={col.name}&type=documents", data='{"_key":"a"}\n',
                     headers={**OCTETS, **trx(tid)})
    assert_error(resp, 410, 1654)


def test_undeclared_collections(http, db_name, api, col, col2):
    assert_success(http.post(f"{api}/document/{col2.name}", json={"_key": "r"}), 202)
    tid = begin(http, db_name, {"collections": {"write": col.name, "read": col2.name}, "allowImplicit": False})
    h = trx(tid)
    body = assert_error(http.post(f"{api}/document/{col2.name}", json={}, headers=h), 400, 1652)
    assert col2.name in body["errorMessage"]
    assert_success(http.get(f"{api}/document/{col2.name}/r", headers=h), 200)
    other = unique("undeclared")
    assert_success(http.post(f"{api}/collection", json={"name": other}), 200)
    try:
        body = assert_error(http.get(f"{api}/document/{other}/r", headers=h), 400, 1652)
        assert other in body["errorMessage"]
        assert_error(http.post(f"{api}/document/{other}", json={}, headers=h), 400, 1652)
        # With allowImplicit (the default) the read is allowed; the write still is not.
        lenient = begin(http, db_name, writes(col.name))
        assert_error(http.get(f"{api}/document/{other}/r", headers=trx(lenient)), 404, 1202)
        assert_error(http.post(f"{api}/document/{other}", json={}, headers=trx(lenient)), 400, 1652)
    finally:
        http.delete(f"{api}/collection/{other}")


def test_catalog_changes_are_refused_inside(http, db_name, api, col):
    tid = begin(http, db_name, writes(col.name))
    assert_error(http.post(f"{api}/collection", json={"name": unique("intrx")}, headers=trx(tid)), 400, 1653)
    assert_error(http.delete(f"{api}/collection/{col.name}", headers=trx(tid)), 400, 1653)
    assert_state(http.get(f"{api}/transaction/{tid}"), 200, tid, "running")


def test_truncate_inside(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    assert_success(http.post(doc, json=[{"_key": f"k{i}"} for i in range(4)]), 202)
    tid = begin(http, db_name, writes(col.name))
    assert_success(http.put(f"{api}/collection/{col.name}/truncate", headers=trx(tid)), 200)
    assert count(http, db_name, col.name, trx(tid)) == 0
    assert count(http, db_name, col.name) == 4
    # Truncate holds every key it removed.
    assert_error(http.patch(f"{doc}/k0", json={"v": 1}), 409, 1200)
    http.delete(f"{api}/transaction/{tid}")
    assert count(http, db_name, col.name) == 4

    tid = begin(http, db_name, writes(col.name))
    assert_success(http.put(f"{api}/collection/{col.name}/truncate", headers=trx(tid)), 200)
    assert_success(http.post(doc, json={"_key": "new"}, headers=trx(tid)), 202)
    http.put(f"{api}/transaction/{tid}")
    assert count(http, db_name, col.name) == 1
    assert_success(http.get(f"{doc}/new"), 200)


def test_multi_document_requests_inside(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    assert_success(http.post(doc, json={"_key": "old"}), 202)
    one = begin(http, db_name, writes(col.name))
    two = begin(http, db_name, writes(col.name))
    assert_success(http.post(doc, json=[{"_key": "k", "who": 1}, {"_key": "only1"}], headers=trx(one)), 202)

    resp = http.post(doc, json=[{"_key": "k", "who": 2}, {"_key": "only2"}, {"_key": "old"}], headers=trx(two))
    items = assert_success(resp, 202)
    assert error_codes_header(resp) == {"1200": 1, "1210": 1}
    assert items[0] == {"error": True, "errorNum": 1200, "errorMessage": items[0]["errorMessage"]}
    assert items[1]["_key"] == "only2"
    assert items[2]["errorNum"] == 1210

    keys = ["only1", "only2", "k", "old"]
    seen_by = {}
    for name, tid in (("one", one), ("two", two), ("plain", None)):
        headers = trx(tid) if tid else None
        found = assert_success(http.put(f"{doc}?onlyget=true", json=keys, headers=headers), 200)
        seen_by[name] = [key for key, item in zip(keys, found) if "error" not in item]
    assert seen_by == {"one": ["only1", "k", "old"], "two": ["only2", "old"], "plain": ["old"]}

    removed = assert_success(http.delete(doc, json=["old", "only2"], headers=trx(two)), 202)
    assert [r["_key"] for r in removed] == ["old", "only2"]
    assert_success(http.get(f"{doc}/old"), 200)

    assert_state(http.put(f"{api}/transaction/{two}"), 200, two, "committed")
    assert_state(http.put(f"{api}/transaction/{one}"), 200, one, "committed")
    found = assert_success(http.put(f"{doc}?onlyget=true", json=keys), 200)
    assert [item.get("_key") for item in found] == ["only1", None, "k", None]
    assert found[2]["who"] == 1


# -- isolation -------------------------------------------------------------------------------


def test_plain_writes_of_a_held_key_conflict(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    assert_success(http.post(doc, json={"_key": "held", "v": 0}), 202)
    tid = begin(http, db_name, writes(col.name))
    assert_success(http.post(doc, json={"_key": "new"}, headers=trx(tid)), 202)
    assert_success(http.patch(f"{doc}/held", json={"v": 1}, headers=trx(tid)), 202)

    body = assert_error(http.post(doc, json={"_key": "new"}), 409, 1200)
    assert "transaction" in body["errorMessage"]
    assert_error(http.patch(f"{doc}/held", json={"v": 2}), 409, 1200)
    assert_error(http.put(f"{doc}/held", json={"v": 2}), 409, 1200)
    assert_error(http.delete(f"{doc}/held"), 409, 1200)
    assert_success(http.post(doc, json={"_key": "free"}), 202)

    http.delete(f"{api}/transaction/{tid}")
    # The keys are free once the transaction ends.
    assert_success(http.patch(f"{doc}/held", json={"v": 3}), 202)
    assert_success(http.post(doc, json={"_key": "new"}), 202)


def test_two_transactions_one_key(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    one = begin(http, db_name, writes(col.name))
    two = begin(http, db_name, writes(col.name))
    assert_success(http.post(doc, json={"_key": "k", "who": 1}, headers=trx(one)), 202)
    assert_error(http.post(doc, json={"_key": "k", "who": 2}, headers=trx(two)), 409, 1200)
    assert_success(http.post(doc, json={"_key": "mine2"}, headers=trx(two)), 202)
    assert_success(http.post(doc, json={"_key": "mine1"}, headers=trx(one)), 202)

    assert_error(http.get(f"{doc}/mine2", headers=trx(one)), 404, 1202)
    assert_error(http.get(f"{doc}/mine1", headers=trx(two)), 404, 1202)
    assert_error(http.get(f"{doc}/k", headers=trx(two)), 404, 1202)
    assert count(http, db_name, col.name, trx(one)) == 2
    assert count(http, db_name, col.name, trx(two)) == 1

    assert_state(http.put(f"{api}/transaction/{two}"), 200, two, "committed")
    # Read committed: the first now sees what the second committed.
    assert assert_success(http.get(f"{doc}/mine2", headers=trx(one)), 200)["_key"] == "mine2"
    assert_state(http.put(f"{api}/transaction/{one}"), 200, one, "committed")
    assert assert_success(http.get(f"{doc}/k"), 200)["who"] == 1
    assert count(http, db_name, col.name) == 3


def test_racing_transactions_one_winner(url, http, db_name, api, col):
    racers = 8
    tids = [begin(http, db_name, writes(col.name)) for _ in range(racers)]
    barrier = threading.Barrier(racers)
    results: list = [None] * racers

    def race(i: int) -> None:
        client = Http(url)
        barrier.wait(timeout=DEADLINE_S)
        resp = client.post(f"{api}/document/{col.name}", json={"_key": "race", "who": i}, headers=trx(tids[i]))
        results[i] = (resp.status_code, resp.json().get("errorNum"))

    threads = [threading.Thread(target=race, args=(i,)) for i in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE_S)
    assert all(not thread.is_alive() for thread in threads)
    winners = [i for i, result in enumerate(results) if result == (202, None)]
    assert len(winners) == 1, results
    assert sorted(results) == sorted([(202, None)] + [(409, 1200)] * (racers - 1)), results
    for tid in tids:
        http.put(f"{api}/transaction/{tid}")
    assert assert_success(http.get(f"{api}/document/{col.name}/race"), 200)["who"] == winners[0]
    assert count(http, db_name, col.name) == 1


# -- locks and bounds ------------------------------------------------------------------------


def test_exclusive_collection_and_lock_timeout(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    assert_success(http.post(doc, json={"_key": "there"}), 202)
    holder = begin(http, db_name, {"collections": {"exclusive": col.name}})
    assert_success(http.post(doc, json={"_key": "mine"}, headers=trx(holder)), 202)

    for mode in ("write", "exclusive"):
        start = time.monotonic()
        resp = http.post(f"{api}/transaction/begin", json={"collections": {mode: col.name}, "lockTimeout": 0.5})
        waited = time.monotonic() - start
        assert_error(resp, 500, 18)
        assert 0.45 <= waited < 10, waited
    # Plain writes are refused at once; plain reads and read-only transactions are not held up.
    start = time.monotonic()
    assert_error(http.post(doc, json={"_key": "other"}), 500, 18)
    assert_error(http.delete(f"{doc}/there"), 500, 18)
    assert time.monotonic() - start < 5
    assert_success(http.get(f"{doc}/there"), 200)
    reader = begin(http, db_name, {"collections": {"read": col.name}, "lockTimeout": 0.5})
    assert_error(http.get(f"{doc}/mine", headers=trx(reader)), 404, 1202)
    assert running_ids(http, db_name) == sorted([holder, reader], key=int)

    # A begin waiting for the lock gets it when the holder commits.
    waiting: dict = {}
    client = Http(http.url)

    def wait_for_lock() -> None:
        waiting["resp"] = client.post(f"{api}/transaction/begin",
                                      json={"collections": {"write": col.name}, "lockTimeout": DEADLINE_S})

    thread = threading.Thread(target=wait_for_lock)
    thread.start()
    assert_state(http.put(f"{api}/transaction/{holder}"), 200, holder, "committed")
    thread.join(DEADLINE_S)
    assert not thread.is_alive()
    assert waiting["resp"].status_code == 201, waiting["resp"].text
    assert_success(http.post(doc, json={"_key": "other"}), 202)
    assert count(http, db_name, col.name) == 3


def test_max_transaction_size(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    tid = begin(http, db_name, {"collections": {"write": col.name}, "maxTransactionSize": 100})
    assert_success(http.post(doc, json={"_key": "small", "v": "xx"}, headers=trx(tid)), 202)
    body = assert_error(http.post(doc, json={"_key": "big", "v": "x" * 200}, headers=trx(tid)), 400, 32)
    assert "100" in body["errorMessage"]
    assert_state(http.get(f"{api}/transaction/{tid}"), 200, tid, "running")
    assert_error(http.get(f"{doc}/big", headers=trx(tid)), 404, 1202)
    # The refused write holds no key.
    assert_success(http.post(doc, json={"_key": "big"}), 202)
    assert_state(http.put(f"{api}/transaction/{tid}"), 200, tid, "committed")
    assert_success(http.get(f"{doc}/small"), 200)
    assert count(http, db_name, col.name) == 2


def test_idle_transactions_are_aborted(server_factory):
    srv = server_factory(extra_args=["--transaction.streaming-idle-timeout", "1"])
    http = Http(srv.url)
    name = unique("idle")
    assert_success(http.post("/_api/collection", json={"name": name}), 200)
    doc = f"/_api/document/{name}"
    idle = begin(http, "_system", {"collections": {"exclusive": name}})
    assert_success(http.post(doc, json={"_key": "k"}, headers=trx(idle)), 202)
    last_use = time.monotonic()

    def status_of(tid: str) -> str:
        return assert_success(http.get(f"/_api/transaction/{tid}"), 200)["result"]["status"]

    assert wait_for(lambda: status_of(idle) == "aborted", "the idle transaction to be aborted",
                    deadline_s=DEADLINE_S)
    assert time.monotonic() - last_use >= 0.9
    assert running_ids(http, "_system") == []
    assert_error(http.get(f"{doc}/k", headers=trx(idle)), 410, 1654)
    assert_error(http.put(f"/_api/transaction/{idle}"), 400, 1653)
    # Its exclusive lock and its key are given back; its write is gone.
    assert_error(http.get(f"{doc}/k"), 404, 1202)
    assert_success(http.post(doc, json={"_key": "k"}), 202)

    # Idle means without operations, not old: a transaction in use outlives the timeout.
    busy = begin(http, "_system", writes(name))
    started = time.monotonic()
    while time.monotonic() - started < 1.6:
        assert_success(http.get(f"/_api/collection/{name}/count", headers=trx(busy)), 200)
        time.sleep(0.1)
    assert_state(http.get(f"/_api/transaction/{busy}"), 200, busy, "running")
    assert wait_for(lambda: status_of(busy) == "aborted", "the busy transaction to be aborted once idle",
                    deadline_s=DEADLINE_S)


# -- import ----------------------------------------------------------------------------------


def imp(http, api, query, data, headers=None):
    return http.post(f"{api}/import?{query}", data=data, headers={**OCTETS, **(headers or {})})


def test_complete_import_is_all_or_nothing(http, db_name, api, col):
    query = f"collection={col.name}&type=documents&complete=true"
    resp = imp(http, api, query, '{"_key":"a"}\n{"_key":"b"}\nnot json\n{"_key":"c"}\n')
    body = assert_error(resp, 400, 600)
    assert "position 3" in body["errorMessage"]
    resp = imp(http, api, query, '{"_key":"a"}\n{"_key":"b"}\n{"_key":"a"}\n{"_key":"c"}\n')
    assert_error(resp, 409, 1210)
    assert count(http, db_name, col.name) == 0
    assert_error(http.get(f"{api}/document/{col.name}/a"), 404, 1202)
    # The import's own transaction is gone, and its keys with it.
    assert running_ids(http, db_name) == []
    body = assert_success(imp(http, api, query, '{"_key":"a"}\n{"_key":"b"}\n'), 201)
    assert (body["created"], body["errors"]) == (2, 0)
    assert count(http, db_name, col.name) == 2


def test_complete_import_with_overwrite_keeps_old_documents_on_failure(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    old = assert_success(http.post(doc, json=[{"_key": "o1"}, {"_key": "o2"}]), 202)
    query = f"collection={col.name}&type=documents&complete=true&overwrite=true"
    assert_error(imp(http, api, query, '{"_key":"n1"}\n{"_key":"n1"}\n'), 409, 1210)
    assert count(http, db_name, col.name) == 2
    assert [assert_success(http.get(f"{doc}/{d['_key']}"), 200)["_rev"] for d in old] == [d["_rev"] for d in old]
    assert_error(http.get(f"{doc}/n1"), 404, 1202)

    assert_success(imp(http, api, query, '{"_key":"n1"}\n{"_key":"n2"}\n'), 201)
    assert count(http, db_name, col.name) == 2
    assert_error(http.get(f"{doc}/o1"), 404, 1202)
    assert_success(http.get(f"{doc}/n2"), 200)


def test_import_inside_a_transaction(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    tid = begin(http, db_name, writes(col.name))
    query = f"collection={col.name}&type=documents"
    body = assert_success(imp(http, api, query, '{"_key":"t1"}\n{"_key":"t2"}\n', trx(tid)), 201)
    assert (body["created"], body["errors"]) == (2, 0)
    assert_error(http.get(f"{doc}/t1"), 404, 1202)
    assert_success(http.get(f"{doc}/t1", headers=trx(tid)), 200)
    assert count(http, db_name, col.name, trx(tid)) == 2
    assert count(http, db_name, col.name) == 0
    # An overwrite inside the transaction truncates inside it.
    body = assert_success(imp(http, api, f"{query}&overwrite=true", '{"_key":"t3"}\n', trx(tid)), 201)
    assert body["created"] == 1
    assert count(http, db_name, col.name, trx(tid)) == 1
    assert_state(http.put(f"{api}/transaction/{tid}"), 200, tid, "committed")
    assert count(http, db_name, col.name) == 1
    assert_success(http.get(f"{doc}/t3"), 200)


def test_failed_complete_import_aborts_the_request_transaction(http, db_name, api, col):
    doc = f"{api}/document/{col.name}"
    tid = begin(http, db_name, writes(col.name))
    assert_success(http.post(doc, json={"_key": "before"}, headers=trx(tid)), 202)
    query = f"collection={col.name}&type=documents&complete=true"
    assert_success(imp(http, api, query, '{"_key":"i1"}\n', trx(tid)), 201)
    # A successful import does not commit the request's transaction.
    assert_state(http.get(f"{api}/transaction/{tid}"), 200, tid, "running")
    assert_error(http.get(f"{doc}/i1"), 404, 1202)

    assert_error(imp(http, api, query, '{"_key":"i2"}\n{"_key":"i1"}\n', trx(tid)), 409, 1210)
    assert_state(http.get(f"{api}/transaction/{tid}"), 200, tid, "aborted")
    assert count(http, db_name, col.name) == 0
    assert_error(http.post(doc, json={"_key": "after"}, headers=trx(tid)), 410, 1654)


def import_then_next_request(server, db_name: str, collection: str, tid: str) -> tuple[int, int]:
    """Sends an import in transaction `tid` on one keep-alive connection, its head first and its
    body once the server had a chance to answer early, then a second request on the same
    connection. Returns the import's status and errorNum (0 when it succeeded); fails unless
    the connection then serves the second request or the import's reply said
    `Connection: close`."""
    auth = basic_auth_header()
    body = b'{"_key":"raw"}\n'
    head = (f"POST /_db/{db_name}/_api/import?collection={collection}&type=documents HTTP/1.1\r\n"
            f"Host: quince\r\nAuthorization: {auth}\r\nx-arango-trx-id: {tid}\r\n"
            f"Content-Type: application/octet-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    second = f"GET /_api/version HTTP/1.1\r\nHost: quince\r\nAuthorization: {auth}\r\n\r\n".encode()
    with RawConnection(server.host_port) as conn:
        conn.send(head)
        # A bounded wait for an early answer (one that did not need the body); none is fine.
        select.select([conn.sock], [], [], 0.25)
        conn.send(body)
        first = conn.read()
        error_num = json.loads(first.body).get("errorNum", 0)
        if first.headers.get("connection", "").lower() == "close":
            assert conn.peer_closed()
            return first.status, error_num
        conn.send(second)
        assert conn.read().status == 200
    return first.status, error_num


def test_import_in_a_transaction_keeps_the_connection(server, http, db_name, api, col):
    tid = begin(http, db_name, writes(col.name))
    assert import_then_next_request(server, db_name, col.name, tid) == (201, 0)
    assert count(http, db_name, col.name, trx(tid)) == 1


def test_import_with_an_unknown_transaction_keeps_the_connection(server, db_name, col):
    assert import_then_next_request(server, db_name, col.name, "123456789") == (404, 1655)


def test_streaming_cursor_batches_inside_an_exclusive_transaction(http, db_name, api, col):
    """A streaming cursor pauses its scan between batches. Its next fetch names the transaction,
    and used to wait for the paused scan, which waited for that fetch: the server hung (and
    ignored SIGTERM, its workers blocked). Every batch, then the commit, must answer."""
    assert_success(http.post(f"{api}/document/{col.name}", json=[{"v": i} for i in range(50)]), 202)
    tid = begin(http, db_name, {"collections": {"exclusive": [col.name]}})
    query = {"query": "FOR d IN @@c RETURN d.v", "bindVars": {"@c": col.name}, "batchSize": 5,
             "options": {"stream": True}}
    body = assert_success(http.post(f"{api}/cursor", json=query, headers=trx(tid), timeout=DEADLINE_S), 201)
    seen = list(body["result"])
    while body["hasMore"]:
        body = assert_success(http.post(f"{api}/cursor/{body['id']}", headers=trx(tid), timeout=DEADLINE_S), 200)
        seen += body["result"]
    assert sorted(seen) == list(range(50))
    assert_state(http.put(f"{api}/transaction/{tid}", timeout=DEADLINE_S), 200, tid, "committed")
