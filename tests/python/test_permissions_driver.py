"""Permissions through python-arango and raw HTTP: database and collection levels (`rw`, `ro`,
`none`, `*`), their effect on reads and writes, the listing with `?full=true`, grants of dropped
databases, the hidden `_users` collection, and the read-only server mode."""

import pytest
import requests
from arango.exceptions import (
    CollectionCreateError,
    CollectionListError,
    CollectionPropertiesError,
    DocumentGetError,
    DocumentInsertError,
    PermissionGetError,
    PermissionListError,
    PermissionResetError,
    PermissionUpdateError,
)

from conftest import Http, unique
from http_checks import assert_error, assert_success
from quince_server import JWT_SECRET, ROOT_PASSWORD, superuser_jwt

PASSWORD = "perm-pw"


@pytest.fixture
def setup(client, sys_db):
    """A database created with a user listed (so the user has `rw` on it), two collection
    names, and handles for root and for the user."""
    db_name = unique("perm_db")
    user = unique("perm_user")
    sys_db.create_database(db_name, users=[{"username": user, "password": PASSWORD, "active": True}])
    yield {
        "db_name": db_name,
        "user": user,
        "root_db": client.db(db_name, username="root", password=ROOT_PASSWORD),
        "user_db": client.db(db_name, username=user, password=PASSWORD),
        "bad_db": client.db(unique("missing_db"), username=user, password=PASSWORD),
    }
    sys_db.delete_database(db_name, ignore_missing=True)
    sys_db.delete_user(user, ignore_missing=True)


def test_database_levels_govern_collection_creation_and_visibility(sys_db, setup):
    db_name, user, db, bad_db = setup["db_name"], setup["user"], setup["user_db"], setup["bad_db"]
    c1, c2 = unique("c1"), unique("c2")
    assert isinstance(sys_db.permissions(user), dict)
    assert sys_db.permission(user, db_name) == "rw"
    assert sys_db.permission(user, db_name, c1) == "rw"
    for call in (lambda: bad_db.permissions(user), lambda: bad_db.permission(user, db_name)):
        with pytest.raises((PermissionListError, PermissionGetError)) as err:
            call()
        assert err.value.error_code in {11, 1228}
    with pytest.raises(PermissionUpdateError):
        bad_db.update_permission(user, "ro", db_name)

    assert sys_db.update_permission(user, "ro", db_name) is True
    assert sys_db.permission(user, db_name) == "ro"
    with pytest.raises(CollectionCreateError) as err:
        db.create_collection(c2)
    assert err.value.http_code == 403 and err.value.error_code == 11
    assert c2 not in [c["name"] for c in db.collections()]

    with pytest.raises(PermissionResetError) as err:
        bad_db.reset_permission(user, db_name)
    assert err.value.error_code in {11, 1228}
    assert sys_db.reset_permission(user, db_name) is True
    assert sys_db.permission(user, db_name) == "none"
    with pytest.raises(CollectionCreateError) as err:
        db.create_collection(c1)
    assert err.value.http_code == 401 and err.value.error_code == 11
    with pytest.raises(CollectionListError) as err:
        db.collections()
    assert err.value.http_code == 401

    assert sys_db.update_permission(user, "rw", db_name) is True
    assert db.create_collection(c1) is not None
    assert db.create_collection(c2) is not None
    assert {c1, c2} <= {c["name"] for c in db.collections()}


def test_collection_levels_fall_back_to_the_database_level(sys_db, setup):
    db_name, user, db = setup["db_name"], setup["user"], setup["user_db"]
    c1, c2 = unique("c1"), unique("c2")
    col1, col2 = db.create_collection(c1), db.create_collection(c2)
    for col in (col1, col2):
        assert isinstance(col.properties(), dict)
        assert isinstance(col.insert({}), dict)

    assert sys_db.update_permission(user, "ro", db_name, c1)
    assert sys_db.permission(user, db_name, c1) == "ro"
    assert isinstance(col1.properties(), dict)
    assert col1.count() == 1
    with pytest.raises(DocumentInsertError) as err:
        col1.insert({})
    assert err.value.http_code == 403 and err.value.error_code == 11
    assert isinstance(col2.insert({}), dict)

    assert sys_db.update_permission(user, "none", db_name, c1)
    assert sys_db.permission(user, db_name, c1) == "none"
    with pytest.raises(CollectionPropertiesError) as err:
        col1.properties()
    assert err.value.http_code == 403
    with pytest.raises(DocumentInsertError) as err:
        col1.insert({})
    assert err.value.http_code == 403
    with pytest.raises(DocumentGetError) as err:
        col1.get("anything")
    assert err.value.http_code == 403
    assert c1 not in [c["name"] for c in db.collections()], "invisible collections are not listed"
    assert isinstance(col2.properties(), dict)

    assert sys_db.reset_permission(user, db_name, c1) is True
    assert sys_db.permission(user, db_name, c1) == "rw"
    assert isinstance(col1.insert({}), dict)

    # A collection grant may also give more than the database level.
    assert sys_db.update_permission(user, "ro", db_name)
    assert sys_db.update_permission(user, "rw", db_name, c2)
    assert isinstance(col2.insert({}), dict)
    with pytest.raises(DocumentInsertError):
        col1.insert({})


def test_wildcard_grants_apply_to_everything_without_a_grant_of_its_own(client, sys_db, setup):
    db_name, user = setup["db_name"], setup["user"]
    c1 = unique("c1")
    setup["root_db"].create_collection(c1)
    assert sys_db.reset_permission(user, db_name) is True
    assert sys_db.update_permission(user, "ro", "*") is True
    assert sys_db.permission(user, db_name) == "ro"
    assert sys_db.permission(user, "_system") == "ro"
    db = client.db(db_name, username=user, password=PASSWORD)
    assert db.collection(c1).count() == 0
    with pytest.raises(DocumentInsertError):
        db.collection(c1).insert({})
    assert sys_db.update_permission(user, "rw", db_name, "*")
    assert isinstance(db.collection(c1).insert({}), dict)
    full = sys_db.permissions(user)
    assert full["*"] == {"permission": "ro"}
    assert full[db_name]["permission"] == "ro"
    assert full[db_name]["collections"]["*"] == "rw"
    assert full[db_name]["collections"][c1] == "rw"
    assert sys_db.reset_permission(user, "*") is True
    assert sys_db.permissions(user)["*"] == {"permission": "none"}


def test_grants_name_existing_users_databases_and_collections(sys_db, setup, http):
    db_name, user = setup["db_name"], setup["user"]
    with pytest.raises(PermissionUpdateError) as err:
        sys_db.update_permission(unique("nobody"), "rw", db_name)
    assert err.value.http_code == 404 and err.value.error_code == 1703
    with pytest.raises(PermissionUpdateError) as err:
        sys_db.update_permission(user, "rw", unique("nodb"))
    assert err.value.error_code == 1228
    with pytest.raises(PermissionUpdateError) as err:
        sys_db.update_permission(user, "rw", db_name, unique("nocol"))
    assert err.value.error_code == 1203
    resp = http.put(f"/_api/user/{user}/database/{db_name}", json={"grant": "admin"})
    assert_error(resp, 400, 400)
    body = assert_success(http.put(f"/_api/user/{user}/database/{db_name}", json={"grant": "ro"}), 200)
    assert body[db_name] == "ro"
    assert_success(http.delete(f"/_api/user/{user}/database/{db_name}"), 202)


def test_a_normal_user_may_not_grant(client, sys_db, setup):
    db = setup["user_db"]
    with pytest.raises(PermissionUpdateError) as err:
        db.update_permission(setup["user"], "rw", "_system")
    assert err.value.http_code in (401, 403)
    assert sys_db.permission(setup["user"], "_system") == "none"


def test_dropped_databases_take_their_grants_along(client, sys_db):
    name, user = unique("drop_db"), unique("drop_user")
    try:
        sys_db.create_database(name, users=[{"username": user, "password": PASSWORD}])
        assert sys_db.permission(user, name) == "rw"
        sys_db.delete_database(name)
        sys_db.create_database(name)
        assert sys_db.permission(user, name) == "none"
        with pytest.raises(CollectionListError) as err:
            client.db(name, username=user, password=PASSWORD).collections()
        assert err.value.http_code == 401
    finally:
        sys_db.delete_database(name, ignore_missing=True)
        sys_db.delete_user(user, ignore_missing=True)


def test_the_users_collection_is_not_reachable_through_the_document_api(url, http):
    root = http
    resp = root.get("/_api/collection/_users/properties")
    assert_error(resp, 403, 11)
    resp = root.post("/_api/document/_users", json={"user": "evil", "passwordHash": "x"})
    assert_error(resp, 403, 11)
    resp = root.delete("/_api/collection/_users?isSystem=true")
    assert_error(resp, 403, 11)
    superuser = Http(url, auth=None)
    headers = {"Authorization": f"bearer {superuser_jwt(JWT_SECRET)}"}
    resp = superuser.post("/_api/document/_users", json={"x": 1}, headers=headers)
    assert_error(resp, 403, 11)
    resp = superuser.delete("/_api/collection/_users?isSystem=true", headers=headers)
    assert_error(resp, 403, 11)
    names = [c["name"] for c in assert_success(root.get("/_api/collection"), 200)["result"]]
    assert "_users" not in names


def test_read_only_server_mode(url, http, sys_db, setup):
    user_http = Http(url, auth=(setup["user"], PASSWORD))
    col = unique("ro_col")
    db_name = setup["db_name"]
    assert_success(http.post(f"/_db/{db_name}/_api/collection", json={"name": col}), 200)
    resp = user_http.put("/_admin/server/mode", json={"mode": "readonly"})
    assert resp.status_code in (401, 403)
    assert_error(http.put("/_admin/server/mode", json={"mode": "sideways"}), 400, 400)
    try:
        body = assert_success(http.put("/_admin/server/mode", json={"mode": "readonly"}), 200)
        assert body["mode"] == "readonly"
        assert assert_success(http.get("/_admin/server/mode"), 200)["mode"] == "readonly"
        assert requests.get(url + "/_admin/server/availability", timeout=30).json()["mode"] == "readonly"
        assert_error(http.post(f"/_db/{db_name}/_api/document/{col}", json={"a": 1}), 403, 1004)
        assert_error(user_http.post(f"/_db/{db_name}/_api/document/{col}", json={"a": 1}), 403, 1004)
        assert_error(http.post(f"/_db/{db_name}/_api/collection", json={"name": unique("c")}), 403, 1004)
        assert_error(http.post("/_api/user", json={"user": unique("u"), "passwd": "p"}), 403, 1004)
        assert_error(http.post("/_api/database", json={"name": unique("d")}), 403, 1004)
        # Reads still work.
        assert_success(http.get(f"/_db/{db_name}/_api/collection/{col}/count"), 200)
    finally:
        assert_success(http.put("/_admin/server/mode", json={"mode": "default"}), 200)
    assert_success(http.post(f"/_db/{db_name}/_api/document/{col}", json={"a": 1}), 202)
