"""Collections through python-arango: create (document/edge, key generators), list, properties,
configure, rename, truncate, count, checksum, revision, statistics, load/unload, delete, errors."""

import re

import pytest
from arango.exceptions import (
    CollectionConfigureError,
    CollectionCreateError,
    CollectionDeleteError,
    CollectionPropertiesError,
    CollectionRenameError,
    DocumentInsertError,
)

from conftest import unique


def test_create_document_collection(db):
    name = unique("docs")
    col = db.create_collection(name)
    props = col.properties()
    assert props["name"] == name
    assert props["edge"] is False
    assert props["type"] == 2
    assert props["system"] is False
    assert props["sync"] is False
    assert props["status"] == 3
    assert props["key_options"]["key_generator"] == "traditional"
    assert props["key_options"]["user_keys"] is True
    assert isinstance(props["id"], str) and props["id"].isdigit()
    assert props["global_id"]
    assert db.has_collection(name)
    listed = {c["name"]: c for c in db.collections()}
    assert listed[name]["type"] == "document"
    assert listed[name]["system"] is False
    db.delete_collection(name)


def test_create_edge_collection(db):
    name = unique("edges")
    col = db.create_collection(name, edge=True)
    props = col.properties()
    assert props["edge"] is True
    assert props["type"] == 3
    assert {c["name"]: c["type"] for c in db.collections()}[name] == "edge"
    db.delete_collection(name)


def test_info_has_basic_fields(col):
    info = col.info()
    for key in ("id", "name", "system", "type", "status", "global_id"):
        assert key in info, key
    assert info["name"] == col.name


def test_create_with_wait_for_sync_and_configure(db):
    col = db.create_collection(unique("sync"), sync=True)
    try:
        assert col.properties()["sync"] is True
        assert col.configure(sync=False)["sync"] is False
        assert col.properties()["sync"] is False
        assert col.configure(sync=True)["sync"] is True
        # Writes still work in both modes.
        col.insert({"_key": "a"})
        col.configure(sync=False)
        col.insert({"_key": "b"})
        assert col.count() == 2
    finally:
        db.delete_collection(col.name)


def test_traditional_generator_keys_increase(db):
    col = db.create_collection(unique("trad"), key_generator="traditional")
    try:
        keys = [col.insert({})["_key"] for _ in range(5)]
        assert all(k.isdigit() for k in keys)
        numbers = [int(k) for k in keys]
        assert numbers == sorted(numbers) and len(set(numbers)) == 5
        # A numeric user key is tracked: later generated keys exceed it.
        high = numbers[-1] + 1_000_000
        col.insert({"_key": str(high)})
        assert int(col.insert({})["_key"]) > high
        assert int(col.properties()["key_options"]["key_last_value"]) >= high
    finally:
        db.delete_collection(col.name)


def test_autoincrement_generator_offset_and_increment(db):
    col = db.create_collection(unique("auto"), key_generator="autoincrement", key_increment=5, key_offset=100)
    try:
        options = col.properties()["key_options"]
        assert options["key_generator"] == "autoincrement"
        assert options["key_increment"] == 5
        assert options["key_offset"] == 100
        keys = [col.insert({})["_key"] for _ in range(3)]
        assert keys == ["100", "105", "110"]
        # User keys must be all digits with this generator.
        with pytest.raises(DocumentInsertError) as err:
            col.insert({"_key": "abc"})
        assert err.value.error_code == 1221
    finally:
        db.delete_collection(col.name)


def test_padded_generator_is_sortable_hex(db):
    col = db.create_collection(unique("padded"), key_generator="padded")
    try:
        keys = [col.insert({})["_key"] for _ in range(5)]
        for key in keys:
            assert re.fullmatch(r"[0-9a-f]{16}", key), key
        assert keys == sorted(keys) and len(set(keys)) == 5
        assert col.properties()["key_options"]["key_generator"] == "padded"
    finally:
        db.delete_collection(col.name)


def test_uuid_generator(db):
    col = db.create_collection(unique("uuid"), key_generator="uuid")
    try:
        keys = [col.insert({})["_key"] for _ in range(5)]
        for key in keys:
            assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", key), key
        assert len(set(keys)) == 5
        assert col.properties()["key_options"]["key_generator"] == "uuid"
    finally:
        db.delete_collection(col.name)


def test_user_keys_forbidden(db):
    col = db.create_collection(unique("nouser"), user_keys=False)
    try:
        assert col.properties()["key_options"]["user_keys"] is False
        with pytest.raises(DocumentInsertError) as err:
            col.insert({"_key": "mine"})
        assert err.value.http_code == 400
        assert err.value.error_code == 1222
        assert col.insert({})["_key"]
    finally:
        db.delete_collection(col.name)


def test_key_generators_listed(db):
    assert sorted(db.key_generators()) == ["autoincrement", "padded", "traditional", "uuid"]


def test_duplicate_collection_is_1207(db, col):
    with pytest.raises(CollectionCreateError) as err:
        db.create_collection(col.name)
    assert err.value.http_code == 409
    assert err.value.error_code == 1207


@pytest.mark.parametrize("bad", ["has/slash", "has:colon", "1digit", ".dot", "a" * 300])
def test_bad_collection_name_is_1208(db, bad):
    with pytest.raises(CollectionCreateError) as err:
        db.create_collection(bad)
    assert err.value.http_code == 400
    assert err.value.error_code == 1208


def test_missing_collection_errors(db):
    ghost = db.collection(unique("ghost"))
    with pytest.raises(CollectionPropertiesError) as err:
        ghost.properties()
    assert err.value.http_code == 404
    assert err.value.error_code == 1203
    with pytest.raises(CollectionDeleteError) as err:
        db.delete_collection(ghost.name)
    assert err.value.error_code == 1203
    assert db.delete_collection(ghost.name, ignore_missing=True) is False
    with pytest.raises(DocumentInsertError) as err:
        ghost.insert({})
    assert err.value.http_code == 404
    assert err.value.error_code == 1203


def test_rename(db):
    old_name = unique("before")
    col = db.create_collection(old_name)
    col.insert({"_key": "k", "v": 1})
    new_name = unique("after")
    try:
        assert col.rename(new_name) is True
        assert col.name == new_name
        assert db.has_collection(new_name)
        assert not db.has_collection(old_name)
        assert db.collection(new_name).get("k")["v"] == 1
        assert db.collection(new_name).get("k")["_id"] == f"{new_name}/k"
        # Renaming to the current name succeeds.
        assert col.rename(new_name) is True
    finally:
        db.delete_collection(new_name, ignore_missing=True)


def test_rename_onto_existing_is_1207(db, col):
    other = db.create_collection(unique("other"))
    try:
        with pytest.raises(CollectionRenameError) as err:
            col.rename(other.name)
        assert err.value.http_code == 409
        assert err.value.error_code == 1207
    finally:
        db.delete_collection(other.name)


def test_count_truncate_recalculate(col):
    col.insert_many([{"_key": str(i)} for i in range(25)])
    assert col.count() == 25
    assert len(col) == 25
    assert col.truncate() is True
    assert col.count() == 0
    assert col.get("3") is None
    col.insert({"_key": "3", "again": True})
    assert col.count() == 1
    assert col.recalculate_count() is True
    assert col.count() == 1


def test_checksum_and_revision(col):
    assert col.checksum() == "0"
    rev_empty = col.revision()
    assert isinstance(rev_empty, str)
    col.insert({"_key": "a", "v": 1})
    first = col.checksum()
    assert int(first) != 0
    rev_one = col.revision()
    assert rev_one != rev_empty
    # The checksum depends on the keys only by default, on the data when asked.
    col.update({"_key": "a", "v": 2})
    assert col.checksum() == first
    with_data = col.checksum(with_data=True)
    col.update({"_key": "a", "v": 3})
    assert col.checksum(with_data=True) != with_data
    assert col.revision() != rev_one
    col.delete("a")
    assert col.checksum() == "0"


def test_statistics_shape(col):
    col.insert_many([{"n": i} for i in range(10)])
    stats = col.statistics()
    assert "indexes" in stats
    assert stats["indexes"]["count"] >= 1
    for section in ("alive", "dead", "datafiles", "journals", "compactors"):
        assert "count" in stats[section], section
    assert stats["alive"]["count"] == 10
    assert stats["documents_size"] > 0


def test_edge_collections_count_the_primary_and_the_edge_index(ecol):
    assert ecol.statistics()["indexes"]["count"] == 2


def test_load_unload_compact_are_accepted(col):
    col.insert({"_key": "x"})
    assert col.load() is True
    assert col.unload() is True
    col.compact()
    assert col.get("x")["_key"] == "x"


def test_delete_collection(db):
    col = db.create_collection(unique("gone"))
    col.insert({"_key": "x"})
    assert db.delete_collection(col.name) is True
    assert not db.has_collection(col.name)
    # The name is free again, and the new collection is empty.
    again = db.create_collection(col.name)
    try:
        assert again.count() == 0
    finally:
        db.delete_collection(col.name)


def test_configure_missing_collection(db):
    with pytest.raises(CollectionConfigureError) as err:
        db.collection(unique("ghost")).configure(sync=True)
    assert err.value.error_code == 1203
