"""Query management across users (issue 34, item 3), at the HTTP level with real accounts.

Who sees, kills and configures which queries, as ArangoDB's `methods::Queries` and
`ExecContext::canAccessQuery` decide: a user's own queries are always theirs to list, kill
and clear from the slow log; the queries of other users only for a caller who administers
the server (`rw` on `_system`: root, or any user granted that); `?all=true` only for a
superuser in `_system`. The tracking and results-cache properties are server-wide in
Quince, so changing them needs `rw` on `_system`.

The accounts (made through `/_api/user`): `dbadm` has `rw` on the test database (it
administers that database only), `writer` `ro` on it with `rw` on one collection, `reader`
`ro` on it, `sysadm` `rw` on `_system` and `ro` on the test database. Long queries run as
async jobs (`x-arango-async: store`) and are killed at the end of each test.
"""

from __future__ import annotations

import json

import pytest

from conftest import Http, unique, wait_for
from http_checks import assert_error, assert_success
from quince_server import superuser_jwt

PASSWORD = "qm-pw"
SECRET = "s3cr3t-bind-value"
LONG_QUERY = "RETURN {s: SLEEP(@secs), secret: @secret}"


@pytest.fixture(scope="module")
def world(http, url):
    """The test database, its users and an HTTP handle per user."""
    db = unique("qm_db")
    assert_success(http.post("/_api/database", json={"name": db}), 201)
    coll = unique("qm_col")
    assert_success(http.post(f"/_db/{db}/_api/collection", json={"name": coll}), 200)
    names = {role: unique(role) for role in ("dbadm", "writer", "reader", "sysadm")}
    for name in names.values():
        assert_success(http.post("/_api/user", json={"user": name, "passwd": PASSWORD}), 201)
    grants = [
        (names["dbadm"], db, None, "rw"),
        (names["writer"], db, None, "ro"),
        (names["writer"], db, coll, "rw"),
        (names["reader"], db, None, "ro"),
        (names["sysadm"], "_system", None, "rw"),
        (names["sysadm"], db, None, "ro"),
    ]
    for user, database, collection, level in grants:
        path = f"/_api/user/{user}/database/{database}"
        if collection:
            path += f"/{collection}"
        assert_success(http.put(path, json={"grant": level}), 200)
    handles = {role: Http(url, auth=(name, PASSWORD)) for role, name in names.items()}
    handles["root"] = http
    yield {"db": db, "names": {**names, "root": "root"}, "as": handles}
    for name in names.values():
        http.delete(f"/_api/user/{name}")
    http.delete(f"/_api/database/{db}")


def start_long_query(world, role: str, marker: str) -> tuple[str, str]:
    """Starts LONG_QUERY as `role` (an async job) and answers (query id, job id) once root
    sees it running."""
    client = world["as"][role]
    query = f"{LONG_QUERY} /* {marker} */"
    job = client.post(f"/_db/{world['db']}/_api/cursor",
                      json={"query": query, "bindVars": {"secs": 30, "secret": SECRET}},
                      headers={"x-arango-async": "store"})
    assert job.status_code == 202, job.text
    running = wait_for(lambda: [q for q in current(world, "root") if marker in q["query"]],
                       f"{role}'s query to run")
    assert running[0]["user"] == world["names"][role]
    return running[0]["id"], job.headers["x-arango-async-id"]


def current(world, role: str, db: str | None = None, **params) -> list[dict]:
    resp = world["as"][role].get(f"/_db/{db or world['db']}/_api/query/current", params=params)
    return assert_success(resp, 200)


def finish(world, role: str, query_id: str, job_id: str) -> None:
    """Kills the query as root (when still running) and waits for its job to end (410/1500)."""
    world["as"]["root"].delete(f"/_db/{world['db']}/_api/query/{query_id}")
    client = world["as"][role]
    # A Response is falsy for a 4xx status, so the poll wraps it.
    (result,) = wait_for(lambda: (lambda r: (r,) if r.status_code != 204 else None)(
        client.put(f"/_db/{world['db']}/_api/job/{job_id}")), "the killed query's job")
    assert result.status_code == 410 and result.json()["errorNum"] == 1500, result.text


def test_others_queries_are_hidden_from_non_admins_and_cannot_be_killed(world):
    marker = unique("root_query")
    query_id, job_id = start_long_query(world, "root", marker)
    try:
        for role in ("dbadm", "writer", "reader"):
            listing = world["as"][role].get(f"/_db/{world['db']}/_api/query/current")
            assert_success(listing, 200)
            assert marker not in listing.text and SECRET not in listing.text, (role, listing.text)
            assert all(q["id"] != query_id for q in listing.json())
            kill = world["as"][role].delete(f"/_db/{world['db']}/_api/query/{query_id}")
            assert_error(kill, 403, 11)
        # Still running: nobody above could kill it.
        assert [q for q in current(world, "root") if q["id"] == query_id]
        # A user with rw on _system administers the server and sees it, bind values included.
        (seen,) = [q for q in current(world, "sysadm") if q["id"] == query_id]
        assert seen["user"] == "root" and seen["bindVars"]["secret"] == SECRET
        missing = world["as"]["reader"].delete(f"/_db/{world['db']}/_api/query/987654321")
        assert_error(missing, 404, 1591)
    finally:
        finish(world, "root", query_id, job_id)


def test_each_user_sees_and_kills_their_own_queries(world):
    marker = unique("reader_query")
    query_id, job_id = start_long_query(world, "reader", marker)
    try:
        (own,) = [q for q in current(world, "reader") if q["id"] == query_id]
        assert own["user"] == world["names"]["reader"] and own["bindVars"]["secret"] == SECRET
        for role in ("writer", "dbadm"):
            assert all(q["id"] != query_id for q in current(world, role)), role
        killed = world["as"]["reader"].delete(f"/_db/{world['db']}/_api/query/{query_id}")
        assert killed.status_code == 200 and killed.json() == {"error": False, "code": 200}
    finally:
        finish(world, "reader", query_id, job_id)


def test_the_slow_log_shows_and_clears_only_ones_own_entries(world):
    root, reader, db = world["as"]["root"], world["as"]["reader"], world["db"]
    assert_success(root.put("/_api/query/properties", json={"slowQueryThreshold": 0}), 200)
    try:
        root_marker, reader_marker = unique("root_slow"), unique("reader_slow")
        for client, marker in ((root, root_marker), (reader, reader_marker)):
            r = client.post(f"/_db/{db}/_api/cursor", json={
                "query": f"RETURN @secret /* {marker} */", "bindVars": {"secret": SECRET}})
            assert r.status_code == 201, r.text
        slow = reader.get(f"/_db/{db}/_api/query/slow")
        assert_success(slow, 200)
        assert root_marker not in slow.text and reader_marker in slow.text, slow.text
        assert all(q["user"] == world["names"]["reader"] for q in slow.json())
        assert_success(reader.delete(f"/_db/{db}/_api/query/slow"), 200)
        left = root.get(f"/_db/{db}/_api/query/slow").text
        assert root_marker in left and reader_marker not in left, left
    finally:
        assert_success(root.put("/_api/query/properties", json={"slowQueryThreshold": 10}), 200)
        assert_success(root.delete(f"/_db/{db}/_api/query/slow"), 200)


def test_server_wide_properties_need_rw_on_system(world):
    root, db = world["as"]["root"], world["db"]
    tracking = assert_success(root.get("/_api/query/properties"), 200)
    cache = assert_success(root.get("/_api/query-cache/properties"), 200)
    for role in ("dbadm", "writer", "reader"):
        client = world["as"][role]
        assert_error(client.put(f"/_db/{db}/_api/query/properties",
                                json={"enabled": False, "trackBindVars": False}), 403, 11)
        assert_error(client.put(f"/_db/{db}/_api/query-cache/properties",
                                json={"mode": "on" if cache["mode"] != "on" else "off"}), 403, 11)
        # Reading them stays open to every user of the database.
        assert_success(client.get(f"/_db/{db}/_api/query/properties"), 200)
        assert_success(client.get(f"/_db/{db}/_api/query-cache/properties"), 200)
    assert assert_success(root.get("/_api/query/properties"), 200) == tracking
    assert assert_success(root.get("/_api/query-cache/properties"), 200) == cache
    # An administrator of the server may (writing back the same values changes nothing).
    sysadm = world["as"]["sysadm"]
    assert_success(sysadm.put(f"/_db/{db}/_api/query/properties",
                              json={"enabled": tracking["enabled"]}), 200)
    assert_success(sysadm.put("/_api/query-cache/properties", json={"mode": cache["mode"]}), 200)


def test_all_databases_need_a_superuser_in_system(world, url):
    marker = unique("all_query")
    query_id, job_id = start_long_query(world, "reader", marker)
    try:
        root = world["as"]["root"]
        for path in ("current", "slow"):
            assert_error(root.get(f"/_db/{world['db']}/_api/query/{path}?all=true"), 403, 1230)
            # root through Basic authentication is a user, not a superuser.
            assert_error(root.get(f"/_api/query/{path}?all=true"), 403, 11)
            assert_error(world["as"]["sysadm"].get(f"/_api/query/{path}?all=true"), 403, 11)
        assert_error(root.delete("/_api/query/slow?all=true"), 403, 11)
        assert_error(root.delete(f"/_api/query/{query_id}?all=true"), 403, 11)
        su = Http(url, auth=None)
        su.session.headers["Authorization"] = f"bearer {superuser_jwt()}"
        everywhere = assert_success(su.get("/_api/query/current?all=true"), 200)
        (seen,) = [q for q in everywhere if q["id"] == query_id]
        assert seen["database"] == world["db"] and seen["bindVars"]["secret"] == SECRET
        assert all(q["id"] != query_id for q in assert_success(su.get("/_api/query/current"), 200))
        killed = su.delete(f"/_api/query/{query_id}?all=true")
        assert killed.status_code == 200 and killed.json() == {"error": False, "code": 200}, killed.text
    finally:
        finish(world, "reader", query_id, job_id)


def test_bind_values_of_others_never_reach_a_read_only_user(world):
    """The whole reply of every listing, not only the matching entry."""
    marker = unique("leak_query")
    query_id, job_id = start_long_query(world, "dbadm", marker)
    try:
        for path in ("current", "slow"):
            body = world["as"]["reader"].get(f"/_db/{world['db']}/_api/query/{path}")
            assert_success(body, 200)
            assert SECRET not in json.dumps(body.json()), body.text
    finally:
        finish(world, "dbadm", query_id, job_id)
