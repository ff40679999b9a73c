"""Users through python-arango: CRUD as root, users listed when a database is created, what a
normal user sees of accounts and databases, password changes, JWT login as a normal user."""

import pytest
from arango.exceptions import (
    DatabaseCreateError,
    DatabaseListError,
    JWTAuthError,
    UserCreateError,
    UserDeleteError,
    UserGetError,
    UserListError,
    UserReplaceError,
    UserUpdateError,
)

from conftest import unique
from quince_server import ROOT_PASSWORD


@pytest.fixture
def username(sys_db):
    name = unique("user")
    yield name
    sys_db.delete_user(name, ignore_missing=True)


def test_user_crud_as_root(sys_db, username):
    created = sys_db.create_user(username, "pw1", active=True, extra={"team": "blue"})
    assert created == {"username": username, "active": True, "extra": {"team": "blue"}}
    assert sys_db.user(username) == created
    assert sys_db.has_user(username)
    listed = {u["username"]: u for u in sys_db.users()}
    assert listed[username] == created
    assert "root" in listed
    with pytest.raises(UserCreateError) as err:
        sys_db.create_user(username, "other")
    assert err.value.http_code == 409 and err.value.error_code == 1702

    # PATCH merges `extra` and changes only what is given.
    updated = sys_db.update_user(username, active=False, extra={"floor": 3})
    assert updated == {"username": username, "active": False, "extra": {"team": "blue", "floor": 3}}
    # PUT replaces `extra`, and `active` defaults to true.
    replaced = sys_db.replace_user(username, "pw2", extra={"only": True})
    assert replaced == {"username": username, "active": True, "extra": {"only": True}}

    assert sys_db.delete_user(username) is True
    assert sys_db.delete_user(username, ignore_missing=True) is False
    with pytest.raises(UserDeleteError) as err:
        sys_db.delete_user(username)
    assert err.value.http_code == 404 and err.value.error_code == 1703
    with pytest.raises(UserGetError) as err:
        sys_db.user(username)
    assert err.value.error_code == 1703
    with pytest.raises(UserUpdateError):
        sys_db.update_user(username, active=True)
    with pytest.raises(UserReplaceError):
        sys_db.replace_user(username, "x")


def test_user_attributes_are_checked(sys_db, http):
    with pytest.raises(UserCreateError) as err:
        sys_db.create_user("", "pw")
    assert err.value.http_code == 400 and err.value.error_code == 1700
    name = unique("user")
    resp = http.post("/_api/user", json={"user": name, "active": "yes"})
    assert resp.status_code == 400
    resp = http.post("/_api/user", json={"user": name, "extra": [1]})
    assert resp.status_code == 400
    assert not sys_db.has_user(name)


def test_password_is_never_returned(sys_db, http, username):
    sys_db.create_user(username, "very-secret-password")
    for path in ("/_api/user", f"/_api/user/{username}", f"/_api/user/{username}/database?full=true"):
        text = http.get(path).text
        assert "very-secret-password" not in text
        assert "argon2" not in text and "passwordHash" not in text


def test_root_cannot_be_deleted(sys_db):
    with pytest.raises(UserDeleteError) as err:
        sys_db.delete_user("root")
    assert err.value.http_code == 403
    assert sys_db.has_user("root")


def test_database_users_get_rw_and_see_only_their_databases(client, sys_db):
    db_name = unique("db_users")
    alice, bob, carol = unique("alice"), unique("bob"), unique("carol")
    try:
        assert sys_db.create_database(
            db_name,
            users=[
                {"username": alice, "password": "a-pw"},
                {"username": bob, "password": "b-pw", "active": True},
                {"username": carol, "password": "c-pw", "active": False},
            ],
        )
        assert sys_db.permission(alice, db_name) == "rw"
        alice_db = client.db(db_name, username=alice, password="a-pw", verify=True)
        col = alice_db.create_collection(unique("col"))
        col.insert({"_key": "k", "v": 1})
        assert col.get("k")["v"] == 1
        assert alice_db.databases_accessible_to_user() == [db_name]
        # A normal user does not list other users, and cannot create users or databases.
        assert [u["username"] for u in alice_db.users()] == [alice]
        with pytest.raises(UserCreateError) as err:
            alice_db.create_user(unique("x"), "pw")
        assert err.value.http_code == 403
        alice_sys = client.db("_system", username=alice, password="a-pw")
        with pytest.raises(DatabaseCreateError) as err:
            alice_sys.create_database(unique("nope"))
        assert err.value.http_code in (401, 403)
        with pytest.raises(DatabaseListError) as err:
            alice_sys.databases()
        assert err.value.http_code == 401
        # An inactive user cannot authenticate at all.
        carol_db = client.db(db_name, username=carol, password="c-pw")
        with pytest.raises(Exception) as err:
            carol_db.collections()
        assert getattr(err.value, "http_code", None) == 401
    finally:
        sys_db.delete_database(db_name, ignore_missing=True)
        for user in (alice, bob, carol):
            sys_db.delete_user(user, ignore_missing=True)


def test_a_user_sees_and_changes_only_themself(client, sys_db, db_name):
    me, other = unique("me"), unique("other")
    try:
        sys_db.create_user(me, "old-pw")
        sys_db.create_user(other, "o-pw")
        sys_db.update_permission(me, "rw", db_name)
        mine = client.db(db_name, username=me, password="old-pw")
        assert mine.user(me)["username"] == me
        with pytest.raises(UserGetError) as err:
            mine.user(other)
        assert err.value.http_code == 403
        with pytest.raises(UserListError):
            client.db(db_name, username=me, password="wrong").users()
        # Users may change their own password; the old one stops working at once.
        mine.update_user(me, password="new-pw")
        with pytest.raises(Exception) as err:
            mine.collections()
        assert getattr(err.value, "http_code", None) == 401
        renewed = client.db(db_name, username=me, password="new-pw")
        assert isinstance(renewed.collections(), list)
        with pytest.raises(UserUpdateError) as err:
            renewed.update_user(other, password="hijack")
        assert err.value.http_code == 403
        with pytest.raises(UserUpdateError) as err:
            renewed.update_user(me, active=False)
        assert err.value.http_code == 403
    finally:
        sys_db.delete_user(me, ignore_missing=True)
        sys_db.delete_user(other, ignore_missing=True)


def test_jwt_login_as_a_normal_user(client, sys_db, db_name, username):
    sys_db.create_user(username, "jwt-pw")
    sys_db.update_permission(username, "rw", db_name)
    db = client.db(db_name, username=username, password="jwt-pw", auth_method="jwt", verify=True)
    col = db.create_collection(unique("col"))
    assert col.insert({"x": 1})["_key"]
    assert db.databases_accessible_to_user() == [db_name]
    with pytest.raises(JWTAuthError) as err:
        client.db(db_name, username=username, password="wrong", auth_method="jwt")
    assert err.value.http_code == 401 and err.value.error_code == 401


def test_root_password_from_the_option_applies_only_at_first_start(server_factory, tmp_path):
    data = tmp_path / "data"
    srv = server_factory(data_dir=data)
    srv.stop()
    from quince_server import QuinceServer

    other = QuinceServer(data, password="a-different-password")
    other.start()
    try:
        import requests

        assert requests.get(other.url + "/_api/version", auth=("root", ROOT_PASSWORD), timeout=30).status_code == 200
        assert requests.get(other.url + "/_api/version", auth=("root", "a-different-password"), timeout=30).status_code == 401
    finally:
        assert other.stop() == 0


def test_an_administrator_gets_rw_on_the_databases_it_creates(client, sys_db):
    admin, db_name = unique("admin"), unique("admin_db")
    try:
        sys_db.create_user(admin, "adm-pw")
        sys_db.update_permission(admin, "rw", "_system")
        admin_sys = client.db("_system", username=admin, password="adm-pw")
        assert admin_sys.create_database(db_name) is True
        assert sys_db.permission(admin, db_name) == "rw"
        created = client.db(db_name, username=admin, password="adm-pw")
        assert created.create_collection(unique("col")) is not None
        assert sys_db.permission("root", db_name) == "rw"
    finally:
        sys_db.delete_database(db_name, ignore_missing=True)
        sys_db.delete_user(admin, ignore_missing=True)
