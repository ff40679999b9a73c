"""Stream transactions through python-arango: `db.begin_transaction(...)`, the transaction's
collections, commit, abort, status, `list_transactions` and `fetch_transaction`.

What it is: the driver's view of the contract. Writes inside a transaction are seen by the
transaction (reads, `has`, `count`) and by no one else until commit; commit publishes all of
them with the revisions the transaction answered, abort drops all of them; a second writer of
a key the transaction wrote fails at once with 1200; finished transactions refuse further work
(1653 once committed, 1654 once aborted); unknown ids are 1655.

What it is not: the exact HTTP replies (`test_http_transactions.py`), nor the idle timeout,
which needs a server of its own (also there).
"""

from __future__ import annotations

import time

import pytest
from arango.exceptions import (
    DocumentDeleteError,
    DocumentGetError,
    DocumentInsertError,
    DocumentUpdateError,
    TransactionAbortError,
    TransactionCommitError,
    TransactionExecuteError,
    TransactionFetchError,
    TransactionInitError,
    TransactionStatusError,
)

from conftest import unique


@pytest.fixture(autouse=True)
def no_running_transactions(db):
    """Aborts what a failed test left running, so its locks and keys cannot leak into the next."""
    yield
    for listed in db.list_transactions():
        db.fetch_transaction(listed["id"]).abort_transaction()


@pytest.fixture
def col2(db):
    collection = db.create_collection(unique("col2"))
    yield collection
    db.delete_collection(collection.name, ignore_missing=True)


def assert_raises_code(exc_type, error_code, http_code, call, *args, **kwargs):
    with pytest.raises(exc_type) as info:
        call(*args, **kwargs)
    assert info.value.error_code == error_code, (info.value.error_code, info.value.error_message)
    assert info.value.http_code == http_code, (info.value.http_code, info.value.error_message)
    return info.value


def listed_ids(db) -> set[str]:
    ids = set()
    for entry in db.list_transactions():
        assert entry["state"] == "running", entry
        ids.add(entry["id"])
    return ids


def test_begin_is_running_and_listed_until_it_ends(db, col):
    first = db.begin_transaction(write=col.name)
    second = db.begin_transaction(read=[col.name])
    assert first.transaction_id.isdigit() and second.transaction_id.isdigit()
    assert first.transaction_id != second.transaction_id
    assert first.transaction_status() == "running"
    assert listed_ids(db) == {first.transaction_id, second.transaction_id}

    assert first.commit_transaction() is True
    assert first.transaction_status() == "committed"
    assert listed_ids(db) == {second.transaction_id}
    assert second.abort_transaction() is True
    assert second.transaction_status() == "aborted"
    assert listed_ids(db) == set()


def test_commit_publishes_every_write_with_its_revision(db, col):
    col.insert_many([{"_key": "upd", "v": 0}, {"_key": "rep", "v": 0}, {"_key": "del", "v": 0}])
    before = {key: col.get(key)["_rev"] for key in ("upd", "rep", "del")}

    trx = db.begin_transaction(write=col.name)
    tcol = trx.collection(col.name)
    new = tcol.insert({"_key": "new", "v": 1})
    upd = tcol.update({"_key": "upd", "w": 2})
    rep = tcol.replace({"_key": "rep", "r": 3})
    tcol.delete("del")
    many = tcol.insert_many([{"_key": "m1"}, {"_key": "m2"}])
    assert [m["_key"] for m in many] == ["m1", "m2"]

    # Inside: the transaction's own writes over the committed data.
    assert tcol.get("new")["v"] == 1
    assert tcol.get("upd") == {"_key": "upd", "_id": f"{col.name}/upd", "_rev": upd["_rev"], "v": 0, "w": 2}
    assert tcol.get("rep") == {"_key": "rep", "_id": f"{col.name}/rep", "_rev": rep["_rev"], "r": 3}
    assert tcol.get("del") is None and tcol.has("del") is False
    assert tcol.has("m2") is True
    assert tcol.count() == 5

    # Outside: nothing of it.
    assert col.count() == 3
    assert col.get("new") is None and col.has("m1") is False
    assert {key: col.get(key)["_rev"] for key in ("upd", "rep", "del")} == before
    assert col.get("rep")["v"] == 0

    assert trx.commit_transaction() is True
    assert col.count() == 5
    assert col.get("new")["_rev"] == new["_rev"]
    assert col.get("upd") == {"_key": "upd", "_id": f"{col.name}/upd", "_rev": upd["_rev"], "v": 0, "w": 2}
    assert col.get("rep") == {"_key": "rep", "_id": f"{col.name}/rep", "_rev": rep["_rev"], "r": 3}
    assert col.get("del") is None
    assert col.get("m2")["_rev"] == many[1]["_rev"]


def test_abort_drops_every_write(db, col):
    col.insert_many([{"_key": "a", "v": 0}, {"_key": "b", "v": 0}])
    snapshot = col.get_many(["a", "b", "c"])
    assert len(snapshot) == 2

    trx = db.begin_transaction(write=col.name)
    tcol = trx.collection(col.name)
    tcol.update({"_key": "a", "v": 1})
    tcol.delete("b")
    tcol.insert({"_key": "c"})
    assert tcol.count() == 2
    assert trx.abort_transaction() is True
    assert trx.transaction_status() == "aborted"

    assert col.get_many(["a", "b", "c"]) == snapshot
    assert col.count() == 2
    # The keys it wrote are free again.
    assert col.insert({"_key": "c"})["_key"] == "c"
    col.update({"_key": "a", "v": 5})
    assert col.get("a")["v"] == 5


def test_truncate_and_delete_many_inside(db, col):
    col.insert_many([{"_key": f"k{i}"} for i in range(5)])
    trx = db.begin_transaction(write=col.name)
    tcol = trx.collection(col.name)
    tcol.delete_many([{"_key": "k0"}, {"_key": "k1"}])
    assert tcol.count() == 3
    tcol.truncate()
    assert tcol.count() == 0
    tcol.insert({"_key": "after"})
    assert tcol.count() == 1
    assert col.count() == 5
    trx.commit_transaction()
    assert col.count() == 1
    assert col.has("after")


def test_reads_see_committed_data_of_others(db, col):
    """Read committed: a plain write made after the begin is seen inside (no snapshot)."""
    trx = db.begin_transaction(read=col.name)
    tcol = trx.collection(col.name)
    assert tcol.get("late") is None
    col.insert({"_key": "late", "v": 7})
    assert tcol.get("late")["v"] == 7
    assert tcol.count() == 1
    trx.commit_transaction()


def test_a_plain_write_of_a_written_key_conflicts(db, col):
    col.insert({"_key": "held", "v": 0})
    trx = db.begin_transaction(write=col.name)
    tcol = trx.collection(col.name)
    tcol.insert({"_key": "k", "v": 1})
    tcol.update({"_key": "held", "v": 1})

    assert_raises_code(DocumentInsertError, 1200, 409, col.insert, {"_key": "k"})
    assert_raises_code(DocumentUpdateError, 1200, 409, col.update, {"_key": "held", "v": 9})
    assert_raises_code(DocumentDeleteError, 1200, 409, col.delete, "held")
    # Other keys are not held.
    col.insert({"_key": "free"})

    trx.commit_transaction()
    assert col.get("held")["v"] == 1
    # Committed: the key exists now, so a second insert is a unique-constraint violation.
    assert_raises_code(DocumentInsertError, 1210, 409, col.insert, {"_key": "k"})


def test_two_transactions_writing_one_key(db, col):
    one = db.begin_transaction(write=col.name)
    two = db.begin_transaction(write=col.name)
    one.collection(col.name).insert({"_key": "k", "who": 1})
    assert_raises_code(DocumentInsertError, 1200, 409, two.collection(col.name).insert, {"_key": "k", "who": 2})
    two.collection(col.name).insert({"_key": "only2"})

    # Each sees only its own writes.
    assert one.collection(col.name).get("only2") is None
    assert two.collection(col.name).get("k") is None
    assert two.collection(col.name).get("only2") is not None

    two.commit_transaction()
    one.commit_transaction()
    assert col.get("k")["who"] == 1
    assert col.has("only2")


def test_fetch_transaction_shares_the_transaction(db, col):
    trx = db.begin_transaction(write=col.name)
    trx.collection(col.name).insert({"_key": "x"})
    fetched = db.fetch_transaction(trx.transaction_id)
    assert fetched.transaction_id == trx.transaction_id
    assert fetched.transaction_status() == "running"
    assert fetched.collection(col.name).get("x")["_key"] == "x"
    fetched.collection(col.name).insert({"_key": "y"})
    assert trx.collection(col.name).count() == 2
    assert fetched.commit_transaction() is True
    assert trx.transaction_status() == "committed"
    assert col.count() == 2


def test_committed_transaction_refuses_work(db, col):
    trx = db.begin_transaction(write=col.name)
    trx.collection(col.name).insert({"_key": "x"})
    trx.commit_transaction()
    # Commit is idempotent; abort after commit is refused.
    assert trx.commit_transaction() is True
    assert_raises_code(TransactionAbortError, 1653, 400, trx.abort_transaction)
    assert_raises_code(DocumentInsertError, 1653, 400, trx.collection(col.name).insert, {"_key": "y"})
    assert_raises_code(DocumentGetError, 1653, 400, trx.collection(col.name).get, "x")
    assert trx.transaction_status() == "committed"
    assert col.has("x") and not col.has("y")


def test_aborted_transaction_refuses_work(db, col):
    trx = db.begin_transaction(write=col.name)
    trx.collection(col.name).insert({"_key": "x"})
    trx.abort_transaction()
    assert trx.abort_transaction() is True
    assert_raises_code(TransactionCommitError, 1653, 400, trx.commit_transaction)
    assert_raises_code(DocumentInsertError, 1654, 410, trx.collection(col.name).insert, {"_key": "y"})
    assert_raises_code(DocumentGetError, 1654, 410, trx.collection(col.name).get, "x")
    assert trx.transaction_status() == "aborted"
    assert col.count() == 0


def test_unknown_transaction_ids(db, sys_db, col):
    assert_raises_code(TransactionFetchError, 1655, 404, db.fetch_transaction, "123456789")
    # Transactions belong to their database.
    trx = db.begin_transaction(write=col.name)
    assert_raises_code(TransactionFetchError, 1655, 404, sys_db.fetch_transaction, trx.transaction_id)

    # A handle whose id the server does not know (python-arango has no public way to make one:
    # its constructor checks the id, so the checked handle's id is replaced).
    stale = db.fetch_transaction(trx.transaction_id)
    stale._executor._id = "123456789"
    assert_raises_code(TransactionStatusError, 1655, 404, stale.transaction_status)
    assert_raises_code(TransactionCommitError, 1655, 404, stale.commit_transaction)
    assert_raises_code(TransactionAbortError, 1655, 404, stale.abort_transaction)
    assert_raises_code(DocumentInsertError, 1655, 404, stale.collection(col.name).insert, {})
    assert trx.transaction_status() == "running"
    trx.abort_transaction()


def test_undeclared_collections(db, col, col2):
    col2.insert({"_key": "r"})
    trx = db.begin_transaction(read=col2.name, write=col.name)
    assert trx.collection(col2.name).get("r")["_key"] == "r"
    assert_raises_code(DocumentInsertError, 1652, 400, trx.collection(col2.name).insert, {})
    trx.abort_transaction()

    strict = db.begin_transaction(write=col.name, allow_implicit=False)
    assert_raises_code(DocumentGetError, 1652, 400, strict.collection(col2.name).get, "r")
    assert strict.collection(col.name).count() == 0
    strict.abort_transaction()

    # allowImplicit (the default) admits reads of undeclared collections, never writes.
    lenient = db.begin_transaction(write=col.name)
    assert lenient.collection(col2.name).get("r")["_key"] == "r"
    assert_raises_code(DocumentInsertError, 1652, 400, lenient.collection(col2.name).insert, {})
    lenient.abort_transaction()


def test_max_size_fails_the_operation_not_the_transaction(db, col):
    trx = db.begin_transaction(write=col.name, max_size=200)
    tcol = trx.collection(col.name)
    tcol.insert({"_key": "small", "v": "x"})
    assert_raises_code(DocumentInsertError, 32, 400, tcol.insert, {"_key": "big", "v": "x" * 400})
    assert trx.transaction_status() == "running"
    assert tcol.get("big") is None
    trx.commit_transaction()
    assert col.has("small") and not col.has("big")


def test_exclusive_collection_and_lock_timeout(db, col):
    holder = db.begin_transaction(exclusive=col.name)
    holder.collection(col.name).insert({"_key": "mine"})

    start = time.monotonic()
    assert_raises_code(TransactionInitError, 18, 500, db.begin_transaction, write=col.name, lock_timeout=1)
    waited = time.monotonic() - start
    assert 0.9 <= waited < 10, waited
    # A plain write does not wait: it is refused at once, whatever the key.
    start = time.monotonic()
    assert_raises_code(DocumentInsertError, 18, 500, col.insert, {"_key": "other"})
    assert time.monotonic() - start < 5
    assert col.count() == 0

    holder.commit_transaction()
    after = db.begin_transaction(write=col.name, lock_timeout=1)
    after.collection(col.name).insert({"_key": "other"})
    after.commit_transaction()
    assert col.count() == 2


def test_sync_commit(db, col):
    trx = db.begin_transaction(write=[col.name], sync=True, lock_timeout=5, skip_fast_lock_round=True)
    trx.collection(col.name).insert({"_key": "durable"})
    assert not col.has("durable")
    trx.commit_transaction()
    assert col.has("durable")


def test_javascript_transactions_are_disabled(db, col):
    error = assert_raises_code(
        TransactionExecuteError, 36, 403, db.execute_transaction, "function () { return 1; }", write=[col.name]
    )
    assert "stream transaction" in error.error_message
