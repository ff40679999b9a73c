"""Databases through python-arango: create, list, has, properties, delete, and their errors."""

import pytest
from arango.exceptions import (
    DatabaseCreateError,
    DatabaseDeleteError,
    DatabaseListError,
    DatabasePropertiesError,
)

from conftest import unique
from quince_server import ROOT_PASSWORD


def test_system_database_always_exists(sys_db):
    assert "_system" in sys_db.databases()
    assert sys_db.has_database("_system") is True
    props = sys_db.properties()
    assert props["name"] == "_system"
    assert props["system"] is True
    for key in ("id", "path"):
        assert key in props


def test_create_list_has_properties_delete(client, sys_db):
    name = unique("db")
    assert sys_db.has_database(name) is False
    assert sys_db.create_database(name) is True
    assert name in sys_db.databases()
    assert sys_db.has_database(name) is True
    assert name in sys_db.databases_accessible_to_user()

    db = client.db(name, username="root", password=ROOT_PASSWORD)
    props = db.properties()
    assert props["name"] == name
    assert props["system"] is False
    assert isinstance(props["id"], str) and props["id"]
    assert "path" in props
    # A new database starts without user collections.
    assert [c for c in db.collections() if not c["system"]] == []

    assert sys_db.delete_database(name) is True
    assert sys_db.has_database(name) is False
    assert name not in sys_db.databases()


def test_databases_are_isolated(client, sys_db):
    first, second = unique("db_a"), unique("db_b")
    sys_db.create_database(first)
    sys_db.create_database(second)
    try:
        db_a = client.db(first, username="root", password=ROOT_PASSWORD)
        db_b = client.db(second, username="root", password=ROOT_PASSWORD)
        db_a.create_collection("shared_name")
        assert db_a.has_collection("shared_name")
        assert not db_b.has_collection("shared_name")
        db_b.create_collection("shared_name")
        db_a.collection("shared_name").insert({"_key": "only_in_a"})
        assert db_a.collection("shared_name").count() == 1
        assert db_b.collection("shared_name").count() == 0
    finally:
        sys_db.delete_database(first, ignore_missing=True)
        sys_db.delete_database(second, ignore_missing=True)


def test_create_duplicate_is_1207(sys_db):
    name = unique("db")
    sys_db.create_database(name)
    try:
        with pytest.raises(DatabaseCreateError) as err:
            sys_db.create_database(name)
        assert err.value.http_code == 409
        assert err.value.error_code == 1207
    finally:
        sys_db.delete_database(name)


@pytest.mark.parametrize("bad", ["1starts_with_digit", "_underscore", "has/slash", "has:colon", " lead", "a" * 200])
def test_create_bad_name_is_1229(sys_db, bad):
    with pytest.raises(DatabaseCreateError) as err:
        sys_db.create_database(bad)
    assert err.value.http_code == 400
    assert err.value.error_code == 1229


def test_extended_name_is_accepted(client, sys_db):
    name = "Quince db " + unique("ü")
    assert sys_db.create_database(name) is True
    try:
        assert name in sys_db.databases()
        db = client.db(name, username="root", password=ROOT_PASSWORD)
        assert db.properties()["name"] == name
        db.create_collection("c").insert({"_key": "k"})
        assert db.collection("c").get("k")["_id"] == "c/k"
    finally:
        sys_db.delete_database(name, ignore_missing=True)


def test_delete_missing_is_1228(sys_db):
    name = unique("missing_db")
    with pytest.raises(DatabaseDeleteError) as err:
        sys_db.delete_database(name)
    assert err.value.http_code == 404
    assert err.value.error_code == 1228
    assert sys_db.delete_database(name, ignore_missing=True) is False


def test_system_database_cannot_be_dropped(sys_db):
    with pytest.raises(DatabaseDeleteError) as err:
        sys_db.delete_database("_system")
    assert err.value.http_code in (400, 403)
    assert "_system" in sys_db.databases()


def test_database_management_only_from_system(db):
    with pytest.raises(DatabaseCreateError) as err:
        db.create_database(unique("nested"))
    assert err.value.http_code == 403
    assert err.value.error_code == 1230
    with pytest.raises(DatabaseListError) as err:
        db.databases()
    assert err.value.http_code == 403
    assert err.value.error_code == 1230
    with pytest.raises(DatabaseDeleteError) as err:
        db.delete_database("_system")
    assert err.value.http_code == 403
    assert err.value.error_code == 1230


def test_missing_database_is_1228(client):
    ghost = client.db(unique("ghost"), username="root", password=ROOT_PASSWORD)
    with pytest.raises(DatabasePropertiesError) as err:
        ghost.properties()
    assert err.value.http_code == 404
    assert err.value.error_code == 1228


def test_deleted_database_is_gone_for_its_handles(client, sys_db):
    name = unique("db")
    sys_db.create_database(name)
    db = client.db(name, username="root", password=ROOT_PASSWORD)
    db.create_collection("c")
    sys_db.delete_database(name)
    with pytest.raises(DatabasePropertiesError) as err:
        db.properties()
    assert err.value.error_code == 1228
    # Re-creating the name gives an empty database, not the old contents.
    sys_db.create_database(name)
    try:
        assert not db.has_collection("c")
    finally:
        sys_db.delete_database(name)
