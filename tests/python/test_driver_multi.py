"""Multi-document calls through python-arango: per-item results and per-item errors.

The server answers every item in input order; failed items come back as error objects which the
driver turns into exception instances inside the result list.
"""

import pytest
from arango.exceptions import (
    DocumentDeleteError,
    DocumentInsertError,
    DocumentRevisionError,
    DocumentUpdateError,
)


def assert_item_error(item, exc_type, error_code):
    assert isinstance(item, exc_type), repr(item)
    assert item.error_code == error_code, (item.error_code, item.error_message)
    # The overall request succeeded (202: the collection does not wait for sync).
    assert item.http_code == 202


def test_insert_many_success(col):
    results = col.insert_many([{"_key": f"k{i}", "i": i} for i in range(50)], return_new=True)
    assert [r["_key"] for r in results] == [f"k{i}" for i in range(50)]
    assert all(r["new"]["i"] == i for i, r in enumerate(results))
    assert col.count() == 50


def test_insert_many_mixed_failures(col):
    col.insert({"_key": "taken"})
    results = col.insert_many(
        [
            {"_key": "ok1", "v": 1},
            {"_key": "taken"},
            {"_key": "bad key"},
            {"v": "generated"},
            {"_key": "ok1"},
        ]
    )
    assert len(results) == 5
    assert results[0]["_key"] == "ok1"
    assert_item_error(results[1], DocumentInsertError, 1210)
    assert_item_error(results[2], DocumentInsertError, 1221)
    assert results[3]["_key"]
    # Items are applied in order: the second "ok1" collides with the first.
    assert_item_error(results[4], DocumentInsertError, 1210)
    assert col.count() == 3
    assert col.get("ok1")["v"] == 1


def test_insert_many_every_item_failed_still_succeeds(col):
    col.insert({"_key": "x"})
    results = col.insert_many([{"_key": "x"}, {"_key": "x"}])
    for item in results:
        assert_item_error(item, DocumentInsertError, 1210)


def test_insert_many_raise_on_document_error(col):
    col.insert({"_key": "x"})
    with pytest.raises(DocumentInsertError) as err:
        col.insert_many([{"_key": "y"}, {"_key": "x"}], raise_on_document_error=True)
    assert err.value.error_code == 1210


def test_insert_many_overwrite_modes(col):
    col.insert_many([{"_key": "a", "v": 1, "keep": True}, {"_key": "b", "v": 1}])
    results = col.insert_many(
        [{"_key": "a", "v": 2}, {"_key": "c", "v": 2}], overwrite_mode="update", return_old=True
    )
    assert results[0]["old"]["v"] == 1
    assert "_old_rev" in results[0]
    assert "old" not in results[1]
    doc = col.get("a")
    assert doc["v"] == 2 and doc["keep"] is True

    results = col.insert_many([{"_key": "b", "v": 9}], overwrite_mode="ignore")
    assert results[0]["_key"] == "b"
    assert col.get("b")["v"] == 1

    col.insert_many([{"_key": "a", "v": 3}], overwrite_mode="replace")
    assert "keep" not in col.get("a")


def test_insert_many_silent(col):
    assert col.insert_many([{"_key": "s1"}, {"_key": "s2"}], silent=True) is True
    assert col.count() == 2


def test_update_many_mixed(col):
    metas = col.insert_many([{"_key": "a", "v": 1}, {"_key": "b", "v": 1}, {"_key": "c", "v": 1}])
    col.update({"_key": "c", "v": 2})
    results = col.update_many(
        [
            {"_key": "a", "v": 10, "_rev": metas[0]["_rev"]},
            {"_key": "missing", "v": 10},
            {"_key": "c", "v": 10, "_rev": metas[2]["_rev"]},
        ],
        check_rev=True,
        return_new=True,
        return_old=True,
    )
    assert results[0]["_old_rev"] == metas[0]["_rev"]
    assert results[0]["old"]["v"] == 1 and results[0]["new"]["v"] == 10
    assert_item_error(results[1], DocumentUpdateError, 1202)
    assert_item_error(results[2], DocumentRevisionError, 1200)
    assert col.get("c")["v"] == 2
    assert col.get("b")["v"] == 1


def test_update_many_without_rev_check(col):
    metas = col.insert_many([{"_key": "a", "v": 1}])
    col.update({"_key": "a", "v": 2})
    results = col.update_many([{"_key": "a", "_rev": metas[0]["_rev"], "v": 3}], check_rev=False)
    assert results[0]["_key"] == "a"
    assert col.get("a")["v"] == 3


def test_update_many_keep_none_and_merge(col):
    col.insert_many([{"_key": "a", "o": {"x": 1}, "n": 1}])
    col.update_many([{"_key": "a", "n": None, "o": {"y": 1}}], keep_none=False)
    assert col.get("a")["o"] == {"x": 1, "y": 1}
    assert "n" not in col.get("a")
    col.update_many([{"_key": "a", "o": {"z": 1}}], merge=False)
    assert col.get("a")["o"] == {"z": 1}


def test_replace_many_mixed(col):
    metas = col.insert_many([{"_key": "a", "v": 1, "x": 1}, {"_key": "b", "v": 1}])
    col.update({"_key": "b", "v": 2})
    results = col.replace_many(
        [
            {"_key": "a", "v": 10},
            {"_key": "b", "v": 10, "_rev": metas[1]["_rev"]},
            {"_key": "nope", "v": 10},
        ],
        return_new=True,
    )
    assert results[0]["new"] == {"_key": "a", "_id": f"{col.name}/a", "_rev": results[0]["_rev"], "v": 10}
    assert results[0]["_old_rev"] == metas[0]["_rev"]
    assert results[1].error_code == 1200
    assert results[2].error_code == 1202
    assert col.get("b")["v"] == 2


def test_delete_many_mixed(col):
    metas = col.insert_many([{"_key": str(i), "i": i} for i in range(5)])
    col.update({"_key": "4", "i": 40})
    results = col.delete_many(
        [
            {"_key": "0"},
            f"{col.name}/1",
            {"_key": "missing"},
            {"_key": "4", "_rev": metas[4]["_rev"]},
            "2",
        ],
        return_old=True,
    )
    assert results[0]["_key"] == "0" and results[0]["old"]["i"] == 0
    assert results[1]["_key"] == "1"
    assert_item_error(results[2], DocumentDeleteError, 1202)
    assert_item_error(results[3], DocumentRevisionError, 1200)
    assert results[4]["_key"] == "2"
    assert col.count() == 2
    assert col.has("3") and col.has("4")


def test_get_many(col):
    col.insert_many([{"_key": "a", "v": 1}, {"_key": "b", "v": 2}])
    docs = col.get_many(["a", f"{col.name}/b", "missing", {"_key": "a"}])
    assert [d["_key"] for d in docs] == ["a", "b", "a"]
    assert docs[1]["v"] == 2
    assert col.get_many([]) == []


def test_many_on_missing_collection(db):
    with pytest.raises(DocumentInsertError) as err:
        db.collection("missing_collection_xyz").insert_many([{"a": 1}])
    assert err.value.http_code == 404
    assert err.value.error_code == 1203


def test_many_in_sync_collection_is_201(db):
    from conftest import unique

    col = db.create_collection(unique("synced"), sync=True)
    try:
        col.insert({"_key": "x"})
        results = col.insert_many([{"_key": "x"}, {"_key": "y"}])
        assert results[0].http_code == 201
        assert results[0].error_code == 1210
        assert results[1]["_key"] == "y"
    finally:
        db.delete_collection(col.name)
