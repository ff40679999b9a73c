"""Secondary indexes through python-arango 8: `add_index` for every type and alias this server
has (persistent, hash, skiplist, ttl) with their options, `add_persistent_index`,
`add_ttl_index`, `indexes()`, `get_index`, `delete_index`, and unique constraints as the driver
reports them (exception types, error and HTTP codes) for single, multi, import and stream
transaction writes.

What it is: the driver's view of the contract. python-arango 8 has no `add_hash_index` or
`add_skiplist_index` any more; the aliases are reached through `add_index`.

What it is not: the exact HTTP replies (`test_http_indexes.py`).
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest
from arango import ArangoClient
from arango.exceptions import (
    DocumentInsertError,
    DocumentUpdateError,
    IndexCreateError,
    IndexDeleteError,
    IndexGetError,
    TransactionCommitError,
)

from conftest import unique, wait_for
from quince_server import ROOT_PASSWORD


def test_add_index_for_each_type_and_alias(col):
    persistent = col.add_index(
        {"type": "persistent", "fields": ["a", "b.c"], "unique": True, "sparse": True,
         "name": "ab", "storedValues": ["d"], "cacheEnabled": True, "estimates": False,
         "inBackground": True}
    )
    assert persistent["type"] == "persistent"
    assert persistent["fields"] == ["a", "b.c"]
    assert (persistent["unique"], persistent["sparse"], persistent["name"]) == (True, True, "ab")
    assert persistent["storedValues"] == ["d"]
    assert persistent["cacheEnabled"] is True
    assert persistent["estimates"] is False
    assert persistent["isNewlyCreated"] is True
    assert persistent["id"].isdigit()
    assert "code" not in persistent and "error" not in persistent

    for alias in ("hash", "skiplist"):
        made = col.add_index({"type": alias, "fields": [alias], "deduplicate": False})
        assert made["type"] == "persistent"
        assert made["deduplicate"] is False
        assert made["name"] == f"idx_{made['id']}"

    ttl = col.add_index({"type": "ttl", "fields": ["expires"], "expireAfter": 3600})
    assert (ttl["type"], ttl["expireAfter"], ttl["sparse"], ttl["unique"]) == ("ttl", 3600, True, False)

    again = col.add_index({"type": "hash", "fields": ["hash"], "deduplicate": False})
    assert again["isNewlyCreated"] is False

    listed = col.indexes()
    assert [i["type"] for i in listed] == ["primary", "persistent", "persistent", "persistent", "ttl"]
    assert listed[0]["id"] == "0" and listed[0]["fields"] == ["_key"]
    assert listed[1]["name"] == "ab" and listed[1]["unique"] is True


def test_add_persistent_and_ttl_index_helpers(col):
    made = col.add_persistent_index(fields=["tags[*]"], name="tags", in_background=True)
    assert made["type"] == "persistent" and made["name"] == "tags" and made["new"] is True
    assert made["selectivity"] == 1
    col.insert_many([{"tags": ["x", "y"]}, {"tags": ["x"]}])
    [described] = [i for i in col.indexes() if i["name"] == "tags"]
    assert described["selectivity"] == pytest.approx(2 / 3)

    ttl = col.add_ttl_index(fields=["at"], expiry_time=60, name="ttl")
    assert ttl["type"] == "ttl" and ttl["expiry_time"] == 60 and ttl["name"] == "ttl"


def test_geo_and_fulltext_indexes_as_conftest_creates_them(col):
    # The bodies python-arango's own test suite sends; `add_index` hands back the raw body.
    text = col.add_index({"type": "fulltext", "fields": ["text"]})
    assert text["type"] == "fulltext" and text["fields"] == ["text"] and text["isNewlyCreated"] is True
    assert text["minLength"] == 2 and text["sparse"] is True and text["unique"] is False
    geo = col.add_index({"type": "geo", "fields": ["loc"]})
    assert geo["type"] == "geo" and geo["fields"] == ["loc"] and geo["isNewlyCreated"] is True
    assert geo["geoJson"] is False and geo["sparse"] is True
    assert (geo["bestIndexedLevel"], geo["worstIndexedLevel"], geo["maxNumCoverCells"]) == (17, 4, 8)
    again = col.add_index({"type": "geo", "fields": ["loc"]})
    assert again["id"] == geo["id"] and again["isNewlyCreated"] is False
    pair = col.add_index({"type": "geo", "fields": ["lat", "lng"], "name": "pair"})
    assert pair["fields"] == ["lat", "lng"] and pair["name"] == "pair"
    listed = col.indexes()
    assert [i["type"] for i in listed] == ["primary", "fulltext", "geo", "geo"]
    assert listed[2]["geo_json"] is False and listed[1]["min_length"] == 2
    # The deprecated helper formats its answer.
    with pytest.warns(DeprecationWarning):
        legacy = col.add_geo_index(fields=["where"], geo_json=True, legacyPolygons=True)
    assert legacy["geo_json"] is True and legacy["legacyPolygons"] is True and legacy["new"] is True
    words = col.add_index({"type": "fulltext", "fields": ["body"], "minLength": 3})
    assert words["minLength"] == 3


def test_bad_definitions_raise_index_create_error(col):
    for bad in (
        {"type": "mdi", "fields": ["loc"]},
        {"type": "geo", "fields": ["a", "b", "c"]},
        {"type": "fulltext", "fields": ["a", "b"]},
        {"type": "persistent", "fields": []},
        {"type": "ttl", "fields": ["at"]},
        {"fields": ["a"]},
    ):
        with pytest.raises(IndexCreateError) as info:
            col.add_index(bad)
        assert (info.value.http_code, info.value.error_code) == (400, 10), bad
    with pytest.raises(IndexCreateError) as info:
        col.add_index({"type": "inverted", "fields": ["loc"]})
    assert "'inverted'" in info.value.error_message


def test_get_and_delete_index(col):
    made = col.add_persistent_index(fields=["x"], name="byX")
    assert col.get_index(made["id"])["name"] == "byX"
    assert col.get_index("byX")["id"] == made["id"]
    assert col.delete_index(made["id"]) is True
    with pytest.raises(IndexGetError) as info:
        col.get_index(made["id"])
    assert (info.value.http_code, info.value.error_code) == (404, 1212)
    with pytest.raises(IndexDeleteError) as info:
        col.delete_index(made["id"])
    assert (info.value.http_code, info.value.error_code) == (404, 1212)
    assert col.delete_index(made["id"], ignore_missing=True) is False
    with pytest.raises(IndexDeleteError) as info:
        col.delete_index("0")
    assert info.value.error_code == 1212
    assert [i["type"] for i in col.indexes()] == ["primary"]


def test_unique_violations_for_single_multi_and_update(col):
    index = col.add_persistent_index(fields=["email"], unique=True)
    col.insert({"_key": "a", "email": "a@x"})
    with pytest.raises(DocumentInsertError) as info:
        col.insert({"_key": "b", "email": "a@x"})
    assert (info.value.http_code, info.value.error_code) == (409, 1210)
    assert info.value.error_message == (
        f"unique constraint violated - in index {index['name']} of type persistent over "
        "'email'; conflicting key: a"
    )
    results = col.insert_many([{"_key": "c", "email": "c@x"}, {"_key": "d", "email": "c@x"}])
    assert results[0]["_key"] == "c"
    assert isinstance(results[1], DocumentInsertError) and results[1].error_code == 1210
    with pytest.raises(DocumentUpdateError) as info:
        col.update({"_key": "c", "email": "a@x"})
    assert info.value.error_code == 1210
    assert col.count() == 2


def test_unique_violations_in_import_and_a_stream_transaction(db, col):
    col.add_persistent_index(fields=["u"], unique=True)
    result = col.import_bulk([{"_key": "a", "u": 1}, {"_key": "b", "u": 1}, {"_key": "c", "u": 2}],
                             halt_on_error=False, details=True)
    assert (result["created"], result["errors"]) == (2, 1)
    assert any("unique constraint violated" in d for d in result["details"])

    trx = db.begin_transaction(write=col.name)
    trx.collection(col.name).insert({"_key": "t", "u": 2})
    with pytest.raises(TransactionCommitError) as info:
        trx.commit_transaction()
    assert info.value.error_code == 1210
    assert col.has("t") is False
    assert trx.transaction_status() == "aborted"


def test_indexes_survive_a_restart_and_ttl_documents_expire(server_factory):
    srv = server_factory(extra_args=["--ttl.frequency", "100"])
    client = ArangoClient(hosts=srv.url)
    sys_db = client.db("_system", username="root", password=ROOT_PASSWORD)
    name = unique("ttl")
    col = sys_db.create_collection(name)
    col.add_ttl_index(fields=["at"], expiry_time=0)
    col.add_persistent_index(fields=["u"], unique=True, name="byU")
    past = (datetime.now(timezone.utc) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    col.insert_many([
        {"_key": "old", "at": past, "u": 1},
        {"_key": "old2", "at": time.time() - 10, "u": 2},
        {"_key": "later", "at": time.time() + 3600, "u": 3},
        {"_key": "never", "u": 4},
    ])
    wait_for(lambda: col.count() == 2, "expired documents to be removed")
    assert col.has("later") and col.has("never") and not col.has("old")

    data_dir = srv.data_dir
    assert srv.stop() == 0
    srv = server_factory(data_dir=data_dir)
    client = ArangoClient(hosts=srv.url)
    col = client.db("_system", username="root", password=ROOT_PASSWORD).collection(name)
    assert [i["type"] for i in col.indexes()] == ["primary", "ttl", "persistent"]
    with pytest.raises(DocumentInsertError) as info:
        col.insert({"u": 3})
    assert info.value.error_code == 1210
    col.insert({"u": 1})
