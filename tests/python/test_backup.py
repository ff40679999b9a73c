"""Hot backups through python-arango's `db.backup` (`/_admin/backup/*`), on servers of their own
(a restore replaces every database, so the session server is never restored).

What it covers: create with a label, list, get by id, restore bringing back the data as it was
after modifications (documents, collections, databases), delete, errors for unknown ids (404,
errorNum 7007); with authentication on, a restore brings users and passwords back with the data
and login still works; only administrators may use backups; open cursors are invalidated by a
restore; malformed bodies are 400.
"""

from __future__ import annotations

import pytest
from arango import ArangoClient
from arango.exceptions import (
    BackupCreateError,
    BackupDeleteError,
    BackupGetError,
    BackupRestoreError,
    CursorNextError,
    ServerConnectionError,
)

from conftest import REQUEST_TIMEOUT_S, Http
from quince_server import ROOT_PASSWORD


def connect(srv, name="_system", user="root", password=ROOT_PASSWORD, verify=False):
    client = ArangoClient(hosts=srv.url, request_timeout=REQUEST_TIMEOUT_S)
    return client.db(name, username=user, password=password, verify=verify)


def contents(db, collection):
    return {d["_key"]: d for d in db.collection(collection).all()}


def test_create_list_get_restore_delete(server_factory):
    srv = server_factory()
    sys_db = connect(srv)
    sys_db.create_database("shop")
    shop = connect(srv, "shop")
    items = shop.create_collection("items")
    items.insert_many([{"_key": f"k{i}", "n": i} for i in range(50)])
    items.add_persistent_index(fields=["n"], unique=True)
    before = contents(shop, "items")

    created = sys_db.backup.create(label="first", allow_inconsistent=False, timeout=30)
    backup_id = created["backup_id"]
    assert backup_id.endswith("_first")
    assert created["potentially_inconsistent"] is False
    assert created["size_in_bytes"] > 0
    assert created["file_count"] > 0
    assert created["dbserver_count"] == 1
    assert len(created["datetime"]) == 20

    listed = sys_db.backup.get()["list"]
    assert backup_id in listed
    assert listed[backup_id]["backup_id"] == backup_id
    assert listed[backup_id]["potentially_inconsistent"] is False
    one = sys_db.backup.get(backup_id=backup_id)["list"]
    assert list(one) == [backup_id]

    # Modify everything: documents, a new collection, a dropped and a new database.
    items.update({"_key": "k1", "n": 1000})
    items.delete("k2")
    items.insert({"_key": "new", "n": -1})
    shop.create_collection("later")
    sys_db.create_database("newer")
    assert contents(shop, "items") != before

    restored = sys_db.backup.restore(backup_id)
    assert restored["backup_id"] == backup_id
    assert restored["previous"]
    assert contents(shop, "items") == before
    assert not shop.has_collection("later")
    assert "newer" not in sys_db.databases()
    # The unique index came back with its definition, and is enforced.
    assert any(i["type"] == "persistent" and i["unique"] for i in items.indexes())
    with pytest.raises(Exception):
        items.insert({"_key": "dup", "n": 3})
    # Writes go on after the restore.
    items.insert({"_key": "after", "n": 5000})

    # The state the restore replaced is kept as a backup; restoring it goes back.
    listed = sys_db.backup.get()["list"]
    assert restored["previous"] in listed
    sys_db.backup.restore(restored["previous"])
    assert shop.has_collection("later")
    assert contents(shop, "items")["k1"]["n"] == 1000

    assert sys_db.backup.delete(backup_id) is True
    assert backup_id not in sys_db.backup.get()["list"]


def test_unknown_ids_are_404_7007(server_factory):
    srv = server_factory()
    sys_db = connect(srv)
    for call, error in (
        (lambda: sys_db.backup.get(backup_id="2026-01-01T00.00.00Z_nope"), BackupGetError),
        (lambda: sys_db.backup.restore("2026-01-01T00.00.00Z_nope"), BackupRestoreError),
        (lambda: sys_db.backup.delete("nope"), BackupDeleteError),
        (lambda: sys_db.backup.delete("../databases"), BackupDeleteError),
    ):
        with pytest.raises(error) as caught:
            call()
        assert caught.value.http_code == 404
        assert caught.value.error_code == 7007


def test_restore_with_authentication_brings_users_back(server_factory):
    srv = server_factory()
    sys_db = connect(srv)
    sys_db.create_database("shop")
    sys_db.create_user("alice", password="first-pw")
    sys_db.update_permission("alice", "rw", "shop")
    sys_db.update_permission("alice", "ro", "_system")
    connect(srv, "shop", "alice", "first-pw").create_collection("mine").insert({"_key": "a"})
    backup_id = sys_db.backup.create(label="auth")["backup_id"]

    sys_db.update_user("alice", password="second-pw")
    sys_db.create_user("bob", password="bob-pw")
    connect(srv, "shop", "alice", "second-pw", verify=True)

    # Only administrators (rw on _system) may use backups.
    alice_sys = connect(srv, "_system", "alice", "second-pw")
    with pytest.raises(BackupCreateError) as caught:
        alice_sys.backup.create(label="not-mine")
    assert caught.value.http_code == 403

    sys_db.backup.restore(backup_id)
    # root logs in as before (basic auth and a JWT from /_open/auth).
    connect(srv, verify=True)
    http = Http(srv.url)
    login = http.post("/_open/auth", json={"username": "root", "password": ROOT_PASSWORD})
    assert login.status_code == 200 and login.json()["jwt"]
    # Alice's password is the one at backup time again; bob does not exist.
    alice = connect(srv, "shop", "alice", "first-pw", verify=True)
    assert alice.collection("mine").has("a")
    with pytest.raises(ServerConnectionError):
        connect(srv, "shop", "alice", "second-pw", verify=True)
    with pytest.raises(ServerConnectionError):
        connect(srv, "_system", "bob", "bob-pw", verify=True)
    assert "bob" not in {u["username"] for u in sys_db.users()}


def test_a_restore_invalidates_open_cursors(server_factory):
    srv = server_factory()
    sys_db = connect(srv)
    col = sys_db.create_collection("c")
    col.insert_many([{"_key": str(i)} for i in range(20)])
    backup_id = sys_db.backup.create(label="cursor")["backup_id"]
    cursor = sys_db.aql.execute("FOR d IN c RETURN d", batch_size=2)
    streaming = sys_db.aql.execute("FOR d IN c RETURN d", batch_size=2, stream=True)
    sys_db.backup.restore(backup_id)
    for open_cursor in (cursor, streaming):
        with pytest.raises(CursorNextError) as caught:
            while True:
                open_cursor.next()
        assert caught.value.error_code == 1600


def test_malformed_requests(server_factory):
    srv = server_factory()
    http = Http(srv.url)
    for path, body in (
        ("/_admin/backup/create", {"label": 5}),
        ("/_admin/backup/create", {"timeout": -1}),
        ("/_admin/backup/create", {"allowInconsistent": "yes"}),
        ("/_admin/backup/create", {"label": "a/b"}),
        ("/_admin/backup/create", [1]),
        ("/_admin/backup/restore", {}),
        ("/_admin/backup/delete", {"id": 7}),
    ):
        reply = http.post(path, json=body)
        assert reply.status_code == 400, (path, body, reply.text)
        assert reply.json()["errorNum"] == 10
    assert http.get("/_admin/backup/list").status_code == 405
    assert http.post("/_admin/backup/upload", json={}).status_code == 404
    empty = http.post("/_admin/backup/list")
    assert empty.status_code == 200 and empty.json()["result"] == {"list": {}}
