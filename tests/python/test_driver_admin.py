"""python-arango's database-admin methods against Quince: target version, log entries and log
levels (raising a topic to debug really logs its debug lines, lowering it stops them), the
structured log parameters, recent API calls, options, support info, compaction of every
collection, routing reload, JWT secrets (read and reloaded from the secret folder), tasks and
the engine.

One session server for most tests; the JWT tests start their own with a secret folder."""

import hashlib
import time

import pytest
from arango import ArangoClient
from arango.exceptions import (
    JWTSecretListError,
    ServerCurrentOptionsGetError,
    ServerReadLogError,
    TaskCreateError,
    TaskGetError,
)

from conftest import REQUEST_TIMEOUT_S, Http, unique, wait_for
from quince_server import ROOT_PASSWORD, superuser_jwt

MIB = 1024 * 1024
FILLER = "c" * 4000


def test_target_version(sys_db):
    assert sys_db.required_db_version() == "31200"


def test_engine_is_rocksdb_on_the_wire_and_journal_underneath(sys_db):
    engine = sys_db.engine()
    assert engine["name"] == "rocksdb"
    assert engine["quince"]["engine"] == "journal"
    assert "persistent" in engine["supports"]["indexes"]


def test_routing_reload(sys_db):
    assert sys_db.reload_routing() is True


def test_tasks_list_none_and_creating_one_needs_javascript(sys_db):
    assert sys_db.tasks() == []
    with pytest.raises(TaskCreateError) as err:
        sys_db.create_task("t", "console.log(1)")
    assert err.value.http_code == 403 and err.value.error_code == 36
    with pytest.raises(TaskGetError) as err:
        sys_db.task("nosuchtask")
    assert err.value.http_code == 404 and err.value.error_code == 1852
    assert sys_db.delete_task("nosuchtask", ignore_missing=True) is False


@pytest.fixture
def log_levels_restored(sys_db):
    yield
    sys_db.reset_log_levels()
    sys_db.set_log_settings(database=False, url=False, username=False)


def touch(url, marker):
    """A request whose path carries `marker` (404: no such collection; still recorded)."""
    Http(url).get(f"/_api/collection/{marker}")


def lines_with(sys_db, marker, **kwargs):
    entries = sys_db.read_log_entries(search=marker, **kwargs)
    return entries["messages"]


def test_raising_a_topic_to_debug_logs_its_lines_and_lowering_it_stops_them(sys_db, url, log_levels_restored):
    levels = sys_db.log_levels()
    assert levels["requests"] == "INFO" and levels["queries"] == "INFO"
    assert set(levels.values()) <= {"FATAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE"}
    # The url parameter puts each request's path into its debug line.
    assert sys_db.set_log_settings(url=True) == {"database": False, "url": True, "username": False}

    quiet = unique("quiet")
    touch(url, quiet)
    assert lines_with(sys_db, quiet, upto="debug") == []

    assert sys_db.set_log_levels(requests="DEBUG")["requests"] == "DEBUG"
    loud = unique("loud")
    touch(url, loud)
    lines = wait_for(lambda: lines_with(sys_db, loud, upto="debug"), "the debug line")
    assert lines[0]["topic"] == "requests" and lines[0]["level"] == "DEBUG"
    assert f"url=/_api/collection/{loud}" in lines[0]["message"]
    assert isinstance(lines[0]["id"], int) and lines[0]["date"].endswith("Z")
    # `upto` defaults to info: debug lines are not listed without it.
    assert lines_with(sys_db, loud) == []
    assert lines_with(sys_db, loud, level="debug") == lines

    assert sys_db.set_log_levels(requests="INFO")["requests"] == "INFO"
    again = unique("again")
    touch(url, again)
    assert lines_with(sys_db, again, upto="debug") == []

    # A string sets `general`; `all` every topic; DELETE goes back to the startup levels.
    assert sys_db.set_log_levels(all="WARNING")["queries"] == "WARNING"
    assert set(sys_db.reset_log_levels().values()) == {"INFO"}


def test_log_entries_page_and_sort(sys_db):
    everything = sys_db.read_log_entries(upto="trace")
    assert everything["total"] >= 1
    ids = [m["id"] for m in everything["messages"]]
    assert ids == sorted(ids)
    desc = sys_db.read_log_entries(upto="trace", sort="desc", size=2)
    assert [m["id"] for m in desc["messages"]] == sorted(ids, reverse=True)[:2]
    page = sys_db.read_log_entries(upto="trace", offset=1, size=1)
    assert len(page["messages"]) <= 1 and page["total"] == everything["total"]
    start = sys_db.read_log_entries(upto="trace", start=ids[-1])
    assert all(m["id"] >= ids[-1] for m in start["messages"])
    with pytest.raises(ServerReadLogError):
        sys_db.read_log_entries(upto="loudest")


def test_server_start_is_in_the_log(sys_db):
    started = sys_db.read_log_entries(search="server.ready")
    assert any(m["topic"] == "startup" and m["level"] == "INFO" for m in started["messages"])


def test_api_calls_are_recorded(sys_db, db, url):
    marker = unique("recorded")
    Http(url).get(f"/_db/{db.name}/_api/collection/{marker}")
    calls = sys_db.api_calls()["calls"]
    mine = [c for c in calls if c["path"] == f"/_api/collection/{marker}"]
    assert mine and mine[0]["database"] == db.name and mine[0]["requestType"] == "GET"
    assert mine[0]["timeStamp"].endswith("Z")
    # Newest first: the call that listed them is at the top.
    assert calls[0]["path"] == "/_admin/server/api-calls"


def test_options_and_their_descriptions(client, sys_db):
    # arangod's default --server.options-api is jwt: the superuser only.
    with pytest.raises(ServerCurrentOptionsGetError) as err:
        sys_db.options()
    assert err.value.http_code == 403
    superuser = client.db("_system", superuser_token=superuser_jwt())
    options = superuser.options()
    assert options["server.endpoint"].startswith("tcp://")
    # Options that hold passwords or secrets are left out, as arangod leaves them out.
    assert not [name for name in options if "password" in name or "secret" in name]
    assert ROOT_PASSWORD not in str(options)
    assert options["server.maximal-queue-size"] == 4096
    assert options["server.authentication"] is True
    assert options["server.options-api"] == "jwt"
    described = superuser.options_available()
    assert set(options) < set(described) and "database.password" in described
    queue = described["server.maximal-queue-size"]
    assert queue["section"] == "server" and queue["type"] == "uint64" and queue["default"] == 4096
    assert queue["description"]
    for key in ("section", "description", "category", "type", "os", "component", "introducedIn", "dynamic"):
        assert key in queue, key


def test_support_info(sys_db):
    info = sys_db.support_info()
    assert info["deployment"]["type"] == "single"
    assert info["deployment"]["databases"] >= 1
    assert info["deployment"]["collections"] >= 1
    host = info["host"]
    assert host["role"] == "SINGLE" and host["engine"] == "rocksdb" and host["quinceEngine"] == "journal"
    assert host["version"].startswith("3.12.")
    assert host["numberOfCores"]["value"] >= 1
    assert host["physicalMemory"]["value"] > 0
    assert host["processStats"]["residentSetSize"] > 0
    assert host["processStats"]["processUptime"] > 0
    assert host["engineStats"]["diskBytes"] > 0


def fill_and_thin(http, database, name):
    """A collection of 1 MiB journals with sealed datafiles, nine in ten documents removed."""
    resp = http.post(f"/_db/{database}/_api/collection", json={"name": name, "journalSize": MIB})
    assert resp.status_code == 200, resp.text
    for batch in range(8):
        docs = [{"_key": f"k{batch}_{i}", "fill": FILLER} for i in range(100)]
        assert http.post(f"/_db/{database}/_api/document/{name}", json=docs).status_code == 202
    doomed = [{"_key": f"k{b}_{i}"} for b in range(8) for i in range(100) if i % 10]
    assert http.delete(f"/_db/{database}/_api/document/{name}", json=doomed).status_code == 202


def dead_size(http, database, name):
    return http.get(f"/_db/{database}/_api/collection/{name}/figures").json()["figures"]["dead"]["size"]


def test_compact_compacts_every_collection_of_every_database(sys_db, db, http):
    places = [("_system", unique("compact_sys")), (db.name, unique("compact_db"))]
    for database, name in places:
        fill_and_thin(http, database, name)
    before = {place: dead_size(http, *place) for place in places}
    assert all(size > 0 for size in before.values()), before
    try:
        assert sys_db.compact(change_level=True, compact_bottom_most_level=True) == {}
        for place in places:
            assert dead_size(http, *place) < before[place], place
            assert http.get(f"/_db/{place[0]}/_api/collection/{place[1]}/count").json()["count"] == 80
    finally:
        for database, name in places:
            http.delete(f"/_db/{database}/_api/collection/{name}")


@pytest.fixture
def jwt_server(server_factory, tmp_path):
    folder = tmp_path / unique("secrets")
    folder.mkdir()
    (folder / "1-a").write_text("secret-a\n")
    srv = server_factory(jwt=False, extra_args=["--server.jwt-secret-folder", str(folder)])
    return srv, folder


def superuser_db(srv, secret):
    client = ArangoClient(hosts=srv.url, request_timeout=REQUEST_TIMEOUT_S)
    return client.db("_system", superuser_token=superuser_jwt(secret))


def sha(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def test_jwt_secrets_are_listed_and_reloaded_from_the_folder(jwt_server):
    srv, folder = jwt_server
    db_a = superuser_db(srv, "secret-a")
    assert db_a.jwt_secrets() == {"active": {"sha256": sha("secret-a")}, "passive": []}

    # A new first file signs from the reload on; the old one still verifies.
    (folder / "0-b").write_text("secret-b")
    reloaded = db_a.reload_jwt_secrets()
    assert reloaded == {"active": {"sha256": sha("secret-b")}, "passive": [{"sha256": sha("secret-a")}]}
    db_b = superuser_db(srv, "secret-b")
    assert db_b.jwt_secrets()["active"]["sha256"] == sha("secret-b")
    assert db_a.collections() is not None
    # Logins are now signed with the new secret.
    jwt = Http(srv.url, auth=None).post("/_open/auth", json={"username": "root", "password": ROOT_PASSWORD}).json()["jwt"]

    # Removing the old file and reloading retires its tokens at once.
    (folder / "1-a").unlink()
    assert db_b.reload_jwt_secrets()["passive"] == []
    assert Http(srv.url, auth=None).get("/_api/version", headers={"Authorization": f"bearer {superuser_jwt('secret-a')}"}).status_code == 401
    assert Http(srv.url, auth=None).get("/_api/version", headers={"Authorization": f"bearer {jwt}"}).status_code == 200

    # Root with a password administers the server but is not the superuser.
    root = ArangoClient(hosts=srv.url, request_timeout=REQUEST_TIMEOUT_S).db("_system", username="root", password=ROOT_PASSWORD)
    with pytest.raises(JWTSecretListError) as err:
        root.jwt_secrets()
    assert err.value.http_code == 403


def test_a_reload_that_finds_no_secret_changes_nothing(jwt_server):
    srv, folder = jwt_server
    db_a = superuser_db(srv, "secret-a")
    (folder / "1-a").unlink()
    resp = Http(srv.url, auth=None).post("/_admin/server/jwt", headers={"Authorization": f"bearer {superuser_jwt('secret-a')}"})
    assert resp.status_code == 400, resp.text
    assert db_a.jwt_secrets()["active"]["sha256"] == sha("secret-a")
