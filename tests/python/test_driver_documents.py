"""Single-document operations through python-arango, with every option and their errors."""

import re

import pytest
from arango.exceptions import (
    DocumentDeleteError,
    DocumentGetError,
    DocumentInsertError,
    DocumentReplaceError,
    DocumentRevisionError,
    DocumentUpdateError,
)

REV = re.compile(r"^[-_A-Za-z0-9]{1,11}$")


def test_insert_returns_meta_and_get_returns_document(col):
    meta = col.insert({"_key": "k1", "name": "quince", "n": 1})
    assert set(meta) == {"_id", "_key", "_rev"}
    assert meta["_key"] == "k1"
    assert meta["_id"] == f"{col.name}/k1"
    assert REV.match(meta["_rev"]), meta["_rev"]
    doc = col.get("k1")
    assert doc == {"_key": "k1", "_id": f"{col.name}/k1", "_rev": meta["_rev"], "name": "quince", "n": 1}
    assert list(doc)[:3] == ["_key", "_id", "_rev"]
    # By id and by dict as well.
    assert col.get(f"{col.name}/k1") == doc
    assert col.get({"_key": "k1"}) == doc


def test_generated_key_and_rev_ignored_in_body(col):
    meta = col.insert({"_rev": "bogus", "v": 1})
    assert meta["_key"]
    assert meta["_rev"] != "bogus"
    assert col.get(meta["_key"])["_rev"] == meta["_rev"]


def test_values_round_trip(col):
    value = {
        "_key": "values",
        "unicode": "Grüße, 世界 🚀",
        "nested": {"a": [1, 2, {"b": None}], "t": True, "f": False},
        "int": 9007199254740991,
        "neg": -42,
        "float": 3.25,
        "empty_obj": {},
        "empty_arr": [],
        "null": None,
    }
    col.insert(value)
    doc = col.get("values")
    for name, expected in value.items():
        assert doc[name] == expected, name


def test_revisions_change_on_every_write(col):
    revs = [col.insert({"_key": "r", "v": 0})["_rev"]]
    revs.append(col.update({"_key": "r", "v": 1})["_rev"])
    revs.append(col.replace({"_key": "r", "v": 2})["_rev"])
    assert len(set(revs)) == 3
    assert all(REV.match(r) for r in revs)


def test_insert_return_new_and_sync(col):
    meta = col.insert({"_key": "n", "a": 1}, return_new=True, sync=True)
    assert meta["new"] == {"_key": "n", "_id": f"{col.name}/n", "_rev": meta["_rev"], "a": 1}
    assert "old" not in meta


def test_insert_silent(col):
    assert col.insert({"_key": "s"}, silent=True) is True
    assert col.has("s")


def test_insert_unique_violation(col):
    col.insert({"_key": "dup"})
    with pytest.raises(DocumentInsertError) as err:
        col.insert({"_key": "dup"})
    assert err.value.http_code == 409
    assert err.value.error_code == 1210
    assert err.value.error_message.startswith("unique constraint violated")


def test_insert_overwrite_legacy_replaces(col):
    first = col.insert({"_key": "o", "a": 1, "b": 1})
    meta = col.insert({"_key": "o", "a": 2}, overwrite=True, return_old=True, return_new=True)
    assert meta["_old_rev"] == first["_rev"]
    assert meta["old"]["a"] == 1 and meta["old"]["b"] == 1
    assert meta["new"]["a"] == 2 and "b" not in meta["new"]
    assert "b" not in col.get("o")


def test_insert_overwrite_mode_ignore(col):
    first = col.insert({"_key": "i", "a": 1})
    meta = col.insert({"_key": "i", "a": 2}, overwrite_mode="ignore", return_new=True, return_old=True)
    assert meta["_key"] == "i"
    assert meta["_rev"] == first["_rev"]
    assert "new" not in meta and "old" not in meta
    assert col.get("i")["a"] == 1


def test_insert_overwrite_mode_replace(col):
    first = col.insert({"_key": "p", "a": 1, "b": 1})
    meta = col.insert({"_key": "p", "a": 2}, overwrite_mode="replace", return_old=True)
    assert meta["_old_rev"] == first["_rev"]
    assert meta["old"]["b"] == 1
    doc = col.get("p")
    assert doc["a"] == 2 and "b" not in doc


def test_insert_overwrite_mode_update_merge_and_keep_null(col):
    col.insert({"_key": "u", "a": 1, "obj": {"x": 1, "y": 1}, "gone": 1})
    meta = col.insert(
        {"_key": "u", "obj": {"y": 2, "z": 3}, "gone": None, "new": True},
        overwrite_mode="update",
        keep_none=False,
        return_new=True,
    )
    assert "_old_rev" in meta
    assert meta["new"]["obj"] == {"x": 1, "y": 2, "z": 3}
    assert "gone" not in meta["new"]
    assert meta["new"]["a"] == 1 and meta["new"]["new"] is True

    col.insert({"_key": "u", "obj": {"only": 1}}, overwrite_mode="update", merge=False)
    assert col.get("u")["obj"] == {"only": 1}


def test_insert_overwrite_mode_update_on_fresh_key_is_plain_insert(col):
    meta = col.insert({"_key": "fresh", "a": 1}, overwrite_mode="update", return_old=True)
    assert "_old_rev" not in meta and "old" not in meta
    assert col.get("fresh")["a"] == 1


def test_insert_overwrite_mode_conflict(col):
    col.insert({"_key": "c"})
    with pytest.raises(DocumentInsertError) as err:
        col.insert({"_key": "c"}, overwrite_mode="conflict")
    assert err.value.error_code == 1210


@pytest.mark.parametrize("bad_key", ["has space", "a/b", "x" * 255, "", "ümlaut", "tab\t"])
def test_insert_invalid_key(col, bad_key):
    with pytest.raises(DocumentInsertError) as err:
        col.insert({"_key": bad_key})
    assert err.value.http_code == 400
    assert err.value.error_code == 1221


@pytest.mark.parametrize("bad_key", [123, None, True, ["k"], {"k": 1}])
def test_insert_non_string_key(col, bad_key):
    with pytest.raises(DocumentInsertError) as err:
        col.insert({"_key": bad_key})
    assert err.value.http_code == 400
    assert err.value.error_code == 1221


def test_key_with_every_allowed_punctuation(col):
    key = "Az09_-.@()+,=;$!*':"
    meta = col.insert({"_key": key, "v": 1})
    assert meta["_key"] == key
    assert col.get(key)["v"] == 1
    assert col.has(key)
    assert col.update({"_key": key, "v": 2})["_key"] == key
    assert col.delete(key)["_key"] == key
    assert col.get(key) is None


def test_key_of_254_bytes_is_allowed(col):
    key = "k" * 254
    col.insert({"_key": key})
    assert col.get(key)["_key"] == key


def test_get_missing_returns_none(col):
    assert col.get("missing") is None
    assert col.has("missing") is False


def test_get_and_has_with_rev(col):
    meta = col.insert({"_key": "g", "v": 1})
    assert col.get("g", rev=meta["_rev"])["v"] == 1
    assert col.has("g", rev=meta["_rev"]) is True
    stale = meta["_rev"]
    col.update({"_key": "g", "v": 2})
    with pytest.raises(DocumentRevisionError) as err:
        col.get("g", rev=stale)
    assert err.value.http_code == 412
    assert err.value.error_code == 1200
    with pytest.raises(DocumentRevisionError):
        col.has("g", rev=stale)
    # Without the revision check the stale revision does not matter.
    assert col.get({"_key": "g", "_rev": stale}, check_rev=False)["v"] == 2
    # An impossible revision is a failed precondition, not a server error.
    with pytest.raises(DocumentRevisionError):
        col.get("g", rev=meta["_rev"] + "0")


def test_update_merges_and_keeps_null_by_default(col):
    first = col.insert({"_key": "u", "a": 1, "obj": {"x": 1, "y": 1}})
    meta = col.update({"_key": "u", "obj": {"y": 2}, "b": None}, return_new=True, return_old=True)
    assert meta["_old_rev"] == first["_rev"]
    assert meta["_rev"] != first["_rev"]
    assert meta["old"]["obj"] == {"x": 1, "y": 1}
    assert meta["new"]["obj"] == {"x": 1, "y": 2}
    assert meta["new"]["b"] is None
    assert meta["new"]["a"] == 1
    assert col.get("u") == meta["new"]


def test_update_keep_none_false_and_merge_false(col):
    col.insert({"_key": "u", "a": 1, "obj": {"x": 1, "drop": 1}, "arr": [{"n": None}]})
    col.update({"_key": "u", "a": None, "obj": {"drop": None, "z": 1}}, keep_none=False)
    doc = col.get("u")
    assert "a" not in doc
    assert doc["obj"] == {"x": 1, "z": 1}
    col.update({"_key": "u", "obj": {"only": True}}, merge=False)
    assert col.get("u")["obj"] == {"only": True}
    assert col.get("u")["arr"] == [{"n": None}]


def test_update_with_check_rev(col):
    meta = col.insert({"_key": "cr", "v": 1})
    col.update({"_key": "cr", "v": 2})
    with pytest.raises(DocumentRevisionError) as err:
        col.update({"_key": "cr", "_rev": meta["_rev"], "v": 3}, check_rev=True)
    assert err.value.http_code == 412
    assert err.value.error_code == 1200
    assert col.get("cr")["v"] == 2
    col.update({"_key": "cr", "_rev": meta["_rev"], "v": 4}, check_rev=False)
    assert col.get("cr")["v"] == 4


def test_update_silent_and_sync(col):
    col.insert({"_key": "s", "v": 1})
    assert col.update({"_key": "s", "v": 2}, silent=True, sync=True) is True
    assert col.get("s")["v"] == 2


def test_update_missing(col):
    with pytest.raises(DocumentUpdateError) as err:
        col.update({"_key": "nope", "v": 1})
    assert err.value.http_code == 404
    assert err.value.error_code == 1202


def test_replace(col):
    first = col.insert({"_key": "r", "a": 1, "b": 2})
    meta = col.replace({"_key": "r", "c": 3}, return_old=True, return_new=True)
    assert meta["_old_rev"] == first["_rev"]
    assert meta["old"]["a"] == 1
    assert meta["new"] == {"_key": "r", "_id": f"{col.name}/r", "_rev": meta["_rev"], "c": 3}
    assert col.get("r") == meta["new"]


def test_replace_with_check_rev_and_missing(col):
    meta = col.insert({"_key": "r", "v": 1})
    col.replace({"_key": "r", "v": 2})
    with pytest.raises(DocumentRevisionError):
        col.replace({"_key": "r", "_rev": meta["_rev"], "v": 3})
    assert col.get("r")["v"] == 2
    assert col.replace({"_key": "r", "_rev": meta["_rev"], "v": 3}, check_rev=False)["_key"] == "r"
    with pytest.raises(DocumentReplaceError) as err:
        col.replace({"_key": "nope", "v": 1})
    assert err.value.error_code == 1202
    assert col.replace({"_key": "r", "v": 9}, silent=True) is True


def test_delete(col):
    meta = col.insert({"_key": "d", "v": 1})
    result = col.delete("d", return_old=True)
    assert result["_key"] == "d"
    assert result["_rev"] == meta["_rev"]
    assert result["old"]["v"] == 1
    assert col.get("d") is None
    assert col.count() == 0


def test_delete_missing_and_ignore_missing(col):
    with pytest.raises(DocumentDeleteError) as err:
        col.delete("nope")
    assert err.value.http_code == 404
    assert err.value.error_code == 1202
    assert col.delete("nope", ignore_missing=True) is False


def test_delete_with_rev(col):
    meta = col.insert({"_key": "d", "v": 1})
    col.update({"_key": "d", "v": 2})
    with pytest.raises(DocumentRevisionError) as err:
        col.delete({"_key": "d", "_rev": meta["_rev"]})
    assert err.value.http_code == 412
    assert col.has("d")
    current = col.get("d")["_rev"]
    assert col.delete("d", rev=current, sync=True)["_key"] == "d"
    assert not col.has("d")


def test_delete_silent(col):
    col.insert({"_key": "d"})
    assert col.delete("d", silent=True) is True
    assert col.get("d") is None


def test_reinsert_after_delete(col):
    col.insert({"_key": "again", "v": 1})
    col.delete("again")
    col.insert({"_key": "again", "v": 2})
    assert col.get("again")["v"] == 2
    assert col.count() == 1


def test_version_attribute_update(col):
    col.insert({"_key": "ver", "version": 5, "v": "five"})
    col.update({"_key": "ver", "version": 3, "v": "three"}, version_attribute="version")
    assert col.get("ver")["v"] == "five"
    col.update({"_key": "ver", "version": 7, "v": "seven"}, version_attribute="version")
    assert col.get("ver")["v"] == "seven"
    col.replace({"_key": "ver", "version": 6, "v": "six"}, version_attribute="version")
    assert col.get("ver")["v"] == "seven"


def test_edges(db, col, ecol):
    col.insert_many([{"_key": "a"}, {"_key": "b"}])
    meta = ecol.insert({"_key": "ab", "_from": f"{col.name}/a", "_to": f"{col.name}/b", "w": 1})
    edge = ecol.get(meta["_key"])
    assert edge["_from"] == f"{col.name}/a"
    assert edge["_to"] == f"{col.name}/b"
    ecol.update({"_key": "ab", "w": 2})
    assert ecol.get("ab")["_from"] == f"{col.name}/a"
    assert ecol.get("ab")["w"] == 2
    ecol.replace({"_key": "ab", "_from": f"{col.name}/b", "_to": f"{col.name}/a"})
    assert ecol.get("ab")["_from"] == f"{col.name}/b"
    ecol.delete("ab")
    assert ecol.count() == 0


@pytest.mark.parametrize(
    "body",
    [
        {"_to": "v/b"},
        {"_from": "v/a"},
        {"_from": "no-slash", "_to": "v/b"},
        {"_from": "v/a", "_to": 42},
        {"_from": "v/a", "_to": "v/"},
    ],
)
def test_edge_attribute_errors(ecol, body):
    with pytest.raises(DocumentInsertError) as err:
        ecol.insert(body)
    assert err.value.http_code == 400
    assert err.value.error_code == 1233


def test_edge_replace_without_to(ecol):
    ecol.insert({"_key": "e", "_from": "v/a", "_to": "v/b"})
    with pytest.raises(DocumentReplaceError) as err:
        ecol.replace({"_key": "e", "_from": "v/a"})
    assert err.value.error_code == 1233


def test_document_collection_accepts_edge_like_attributes(col):
    col.insert({"_key": "x", "_from": "anything", "_to": 1})
    assert col.get("x")["_from"] == "anything"


def test_get_error_on_missing_collection(db):
    with pytest.raises(DocumentGetError) as err:
        db.collection("no_such_collection_here").get("k")
    assert err.value.http_code == 404
    assert err.value.error_code == 1203


def test_concurrent_writers(url, db_name, col):
    from concurrent.futures import ThreadPoolExecutor

    from arango import ArangoClient
    from quince_server import ROOT_PASSWORD

    def writer(thread: int) -> list[str]:
        handle = ArangoClient(hosts=url).db(db_name, username="root", password=ROOT_PASSWORD)
        target = handle.collection(col.name)
        revs = []
        for i in range(50):
            revs.append(target.insert({"_key": f"w{thread}-{i}", "t": thread})["_rev"])
            target.update({"_key": f"w{thread}-{i}", "u": i})
        return revs

    with ThreadPoolExecutor(max_workers=8) as pool:
        all_revs = [rev for revs in pool.map(writer, range(8)) for rev in revs]
    assert len(set(all_revs)) == len(all_revs) == 400
    assert col.count() == 400
    doc = col.get("w7-49")
    assert doc["t"] == 7 and doc["u"] == 49
