"""Curl-level admin endpoints: status codes, bodies and who may call them (`/_admin/log*`,
`/_admin/options*`, `/_admin/support-info`, `/_admin/compact`, `/_admin/server/api-calls`,
`/_admin/server/jwt`, `/_admin/routing/reload`, `/_admin/database/target-version`,
`/_api/tasks`): administrators get answers, a user without `rw` on `_system` gets 403/11,
wrong methods 405, bad parameters 400."""

import pytest

from conftest import Http, unique
from http_checks import assert_error, assert_success
from quince_server import superuser_jwt

PASSWORD = "ops-pw"


@pytest.fixture(scope="module")
def user_http(sys_db, url, db_name):
    """A user with `rw` on the module's database and `ro` on `_system`: no administrator."""
    name = unique("ops_user")
    sys_db.create_user(name, PASSWORD)
    sys_db.update_permission(name, "rw", db_name)
    sys_db.update_permission(name, "ro", "_system")
    yield Http(url, auth=(name, PASSWORD))
    sys_db.delete_user(name, ignore_missing=True)


ADMIN_ONLY = [
    ("GET", "/_admin/log"),
    ("GET", "/_admin/log/entries"),
    ("GET", "/_admin/log/level"),
    ("PUT", "/_admin/log/level"),
    ("DELETE", "/_admin/log/level"),
    ("GET", "/_admin/log/structured"),
    ("PUT", "/_admin/log/structured"),
    ("GET", "/_admin/options"),  # the default policy: the superuser only
    ("GET", "/_admin/options-description"),
    ("GET", "/_admin/support-info"),
    ("PUT", "/_admin/compact"),
    ("GET", "/_admin/server/api-calls"),
    ("GET", "/_admin/server/jwt"),
    ("POST", "/_admin/server/jwt"),
]


@pytest.mark.parametrize("method,path", ADMIN_ONLY)
def test_non_administrators_get_403(user_http, method, path):
    assert_error(user_http.request(method, path, json={}), 403, 11)


@pytest.mark.parametrize("method,path", ADMIN_ONLY[:-2])
def test_unauthenticated_callers_get_401(url, method, path):
    assert_error(Http(url, auth=None).request(method, path, json={}), 401, 11)


@pytest.mark.parametrize(
    "method,path",
    [
        ("POST", "/_admin/log/entries"),
        ("POST", "/_admin/log/level"),
        ("DELETE", "/_admin/log/structured"),
        ("POST", "/_admin/options"),
        ("PUT", "/_admin/support-info"),
        ("GET", "/_admin/compact"),
        ("POST", "/_admin/server/api-calls"),
        ("DELETE", "/_admin/server/jwt"),
        ("GET", "/_admin/routing/reload"),
        ("POST", "/_admin/database/target-version"),
        ("PATCH", "/_api/tasks"),
    ],
)
def test_wrong_methods_are_405(http, method, path):
    assert_error(http.request(method, path), 405, 405)


def test_log_entries_shape_and_bad_levels(http):
    body = assert_success(http.get("/_admin/log/entries?upto=trace&size=3"), 200)
    assert set(body) == {"total", "messages"}
    assert len(body["messages"]) <= 3
    for message in body["messages"]:
        assert set(message) == {"id", "topic", "level", "date", "message"}
    assert_error(http.get("/_admin/log/entries?upto=loud"), 400, 400)
    assert_error(http.get("/_admin/log/entries?level=9"), 400, 400)
    assert_error(http.get("/_admin/log/entries?sort=up"), 400, 400)
    assert_error(http.get("/_admin/log/entries?size=-1"), 400, 400)


def test_legacy_log_has_parallel_arrays(http):
    body = assert_success(http.get("/_admin/log?upto=4&size=5"), 200)
    assert set(body) == {"totalAmount", "lid", "topic", "level", "timestamp", "text"}
    n = len(body["lid"])
    assert n <= 5 and all(len(body[k]) == n for k in ("topic", "level", "timestamp", "text"))
    assert all(isinstance(level, int) and 0 <= level <= 4 for level in body["level"])


def test_log_levels_by_string_object_and_all(http):
    try:
        assert assert_success(http.put("/_admin/log/level", json="debug"), 200)["general"] == "DEBUG"
        body = assert_success(http.put("/_admin/log/level", json={"queries": "trace", "nosuchtopic": "debug", "requests": "loud"}), 200)
        assert body["queries"] == "TRACE" and body["requests"] == "INFO" and "nosuchtopic" not in body
        body = assert_success(http.put("/_admin/log/level", json={"all": "error"}), 200)
        assert set(body.values()) == {"ERROR"}
        assert_error(http.put("/_admin/log/level", json=[1]), 400, 400)
        body = assert_success(http.put("/_admin/log/level?withAppenders=true", json={"global": {"queries": "debug"}}), 200)
        assert body["global"]["queries"] == "DEBUG" and body["appenders"] == {"-": body["global"]}
        assert assert_success(http.get("/_admin/log/level?withAppenders=true"), 200) == body
    finally:
        body = assert_success(http.delete("/_admin/log/level"), 200)
    assert set(body.values()) == {"INFO"}


def test_structured_parameters(http):
    try:
        body = assert_success(http.put("/_admin/log/structured", json={"database": True, "bogus": True}), 200)
        assert body == {"database": True, "url": False, "username": False}
        assert assert_success(http.get("/_admin/log/structured"), 200) == body
        assert_error(http.put("/_admin/log/structured", json="database"), 400, 400)
    finally:
        http.put("/_admin/log/structured", json={"database": False})


def test_options_and_support_info_only_in_system(http, db_name):
    for path in ("/_admin/options", "/_admin/options-description", "/_admin/support-info"):
        assert_error(http.get(f"/_db/{db_name}{path}"), 403, 1230)


@pytest.mark.parametrize(
    "policy,root,user,superuser",
    [("disabled", 403, 403, 403), ("jwt", 403, 403, 200), ("admin", 200, 403, 200), ("public", 200, 200, 200)],
)
def test_options_api_policies(server_factory, policy, root, user, superuser):
    srv = server_factory(extra_args=["--server.options-api", policy, "--server.support-info-api", policy])
    root_http = Http(srv.url)
    name = unique("policy_user")
    assert_success(root_http.post("/_api/user", json={"user": name, "passwd": "p"}), 201)
    assert_success(root_http.put(f"/_api/user/{name}/database/_system", json={"grant": "ro"}), 200)
    su = Http(srv.url, auth=None)
    su.session.headers["Authorization"] = f"bearer {superuser_jwt()}"
    for caller, status in ((root_http, root), (Http(srv.url, auth=(name, "p")), user), (su, superuser)):
        for path in ("/_admin/options", "/_admin/options-description", "/_admin/support-info"):
            resp = caller.get(path)
            if status == 200:
                assert_success(resp, 200)
            else:
                assert_error(resp, 403, 11)


@pytest.mark.parametrize("switch,root,superuser", [("false", 403, 403), ("jwt", 403, 200), ("true", 200, 200)])
def test_log_and_recording_api_switches(server_factory, switch, root, superuser):
    srv = server_factory(extra_args=["--log.api-enabled", switch, "--log.recording-api-enabled", switch])
    su = Http(srv.url, auth=None)
    su.session.headers["Authorization"] = f"bearer {superuser_jwt()}"
    for caller, status in ((Http(srv.url), root), (su, superuser)):
        for path in ("/_admin/log/entries", "/_admin/log/level", "/_admin/server/api-calls"):
            resp = caller.get(path)
            if status == 200:
                assert_success(resp, 200)
            else:
                assert_error(resp, 403, 11)


def test_compact_checks_its_options(http):
    assert assert_success(http.put("/_admin/compact"), 200) == {"error": False, "code": 200}
    assert_success(http.put("/_admin/compact", json={"changeLevel": False}), 200)
    assert_error(http.put("/_admin/compact", json={"changeLevel": "yes"}), 400, 400)
    assert_error(http.put("/_admin/compact", json=[]), 400, 400)


def test_api_calls_shape(http):
    body = assert_success(http.get("/_admin/server/api-calls"), 200)
    assert body["code"] == 200 and isinstance(body["result"]["calls"], list)
    assert set(body["result"]["calls"][0]) == {"timeStamp", "requestType", "path", "database"}


def test_api_call_recording_can_be_switched_off(server_factory):
    srv = server_factory(extra_args=["--server.api-call-recording", "false"])
    http = Http(srv.url)
    http.get("/_api/version")
    assert assert_success(http.get("/_admin/server/api-calls"), 200)["result"]["calls"] == []


def test_jwt_needs_a_superuser_token(http, url):
    assert_error(http.get("/_admin/server/jwt"), 403, 11)
    su = Http(url, auth=None)
    su.session.headers["Authorization"] = f"bearer {superuser_jwt()}"
    body = assert_success(su.get("/_admin/server/jwt"), 200)
    assert len(body["result"]["active"]["sha256"]) == 64 and body["result"]["passive"] == []
    # The session server has a keyfile: a reload reads it again and keeps the same secret.
    assert assert_success(su.post("/_admin/server/jwt"), 200) == body


def test_routing_reload_and_target_version(http, user_http):
    resp = http.post("/_admin/routing/reload")
    assert resp.status_code == 204 and resp.content == b""
    assert user_http.post("/_admin/routing/reload").status_code == 204
    assert assert_success(http.get("/_admin/database/target-version"), 200)["version"] == "31200"


def test_tasks(http, user_http, db_name):
    assert assert_success(http.get("/_api/tasks"), 200) == []
    assert_error(http.post("/_api/tasks", json={"name": "t", "command": "1"}), 403, 36)
    assert_error(http.put("/_api/tasks/mytask", json={"name": "t", "command": "1"}), 403, 36)
    assert_error(http.get("/_api/tasks/mytask"), 404, 1852)
    assert_error(http.delete("/_api/tasks/mytask"), 404, 1852)
    assert_error(http.get("/_api/tasks/a/b"), 404, 404)
    # Creating needs write access to the database before anything else is said.
    assert_error(user_http.post("/_api/tasks", json={"name": "t", "command": "1"}), 403, 11)
    assert_error(user_http.post(f"/_db/{db_name}/_api/tasks", json={"name": "t", "command": "1"}), 403, 36)
