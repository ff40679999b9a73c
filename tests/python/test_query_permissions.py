"""The permission matrix of AQL: for each access level (none, ro, rw on the database and on a
collection) and each way a query can reach a collection, the expected outcome.

A query may name a collection in its text (`FOR`, `@@c`, a named graph, `INSERT`/`UPSERT`,
`LENGTH(c)`) or reach one at run time through a string (`DOCUMENT`, a traversal's vertices,
a path search's target, `FULLTEXT`/`NEAR`/`WITHIN`/`WITHIN_RECTANGLE`, `COLLECTION_COUNT`),
and `COLLECTIONS()` lists names. Every one of them must pass the caller's levels, with
ArangoDB's answers: 403/11 "forbidden: c [read]" for a collection the user may not read,
403/1004 "read only: c [write]" for a write to a collection the user may only read, 401/11 for
a database the user may not use, 404/1203 for a collection the user may not see (`_users`).
Views are not in the matrix: Quince has none yet (issue 29).
"""

from __future__ import annotations

import pytest
import requests

from conftest import unique
from quince_server import ROOT_PASSWORD

PASSWORD = "qp-pw"

# Who: (database level, level on `secret` or None for no collection grant).
USERS = {
    "coll_none": ("rw", "none"),
    "coll_ro": ("rw", "ro"),
    "coll_rw": ("ro", "rw"),
    "db_none": ("none", None),
    "db_ro": ("ro", None),
    "db_rw": ("rw", None),
}

# What each user's effective level on `secret` is, and on `open` (which has no grant of its own).
SECRET_LEVEL = {"coll_none": "none", "coll_ro": "ro", "coll_rw": "rw", "db_none": "none", "db_ro": "ro", "db_rw": "rw"}
OPEN_LEVEL = {"coll_none": "rw", "coll_ro": "rw", "coll_rw": "ro", "db_none": "none", "db_ro": "ro", "db_rw": "rw"}

# Queries that read `secret`, with their bind parameters and the result root gets.
READS = {
    "for": ("FOR d IN secret SORT d._key RETURN d._key", {}, ["s1", "s2"]),
    "for_bind_collection": ("FOR d IN @@c SORT d._key RETURN d._key", {"@c": "secret"}, ["s1", "s2"]),
    "document_literal": ("RETURN DOCUMENT('secret/s1').v", {}, ["hidden"]),
    "document_computed": ("RETURN DOCUMENT(CONCAT('sec', 'ret/s1')).v", {}, ["hidden"]),
    "document_bound": ("RETURN DOCUMENT(@id).v", {"id": "secret/s1"}, ["hidden"]),
    "document_two_arguments": ("RETURN DOCUMENT('secret', 's1').v", {}, ["hidden"]),
    "document_array": ("RETURN DOCUMENT(['open/o1', 'secret/s1'])[*].v", {}, [["visible", "hidden"]]),
    "traversal_anonymous": ("FOR v IN 1..1 OUTBOUND 'open/o1' edges RETURN v.v", {}, ["hidden"]),
    "traversal_named_graph": ("FOR v IN 1..1 OUTBOUND 'open/o1' GRAPH @g RETURN v.v", {"g": "GRAPH"}, ["hidden"]),
    "shortest_path": (
        "FOR v IN OUTBOUND SHORTEST_PATH 'open/o1' TO 'secret/s1' edges RETURN v.v",
        {},
        ["visible", "hidden"],
    ),
    "k_shortest_paths": (
        "FOR p IN OUTBOUND K_SHORTEST_PATHS 'open/o1' TO 'secret/s1' edges LIMIT 1 RETURN p.vertices[*].v",
        {},
        [["visible", "hidden"]],
    ),
    "k_paths": (
        "FOR p IN 1..2 OUTBOUND K_PATHS 'open/o1' TO 'secret/s1' edges RETURN p.vertices[*].v",
        {},
        [["visible", "hidden"]],
    ),
    "all_shortest_paths": (
        "FOR p IN OUTBOUND ALL_SHORTEST_PATHS 'open/o1' TO 'secret/s1' edges RETURN p.vertices[*].v",
        {},
        [["visible", "hidden"]],
    ),
    "fulltext": ("FOR d IN FULLTEXT(secret, 'text', 'needle') RETURN d.v", {}, ["hidden"]),
    "fulltext_bound": ("FOR d IN FULLTEXT(@c, 'text', 'needle') RETURN d.v", {"c": "secret"}, ["hidden"]),
    "near": ("FOR d IN NEAR(secret, 52.5, 13.4, 1) RETURN d.v", {}, ["hidden"]),
    "within": ("FOR d IN WITHIN(secret, 52.5, 13.4, 1000) RETURN d.v", {}, ["hidden"]),
    "within_rectangle": ("FOR d IN WITHIN_RECTANGLE(secret, 52, 13, 53, 14) RETURN d.v", {}, ["hidden"]),
    "collection_count": ("RETURN COLLECTION_COUNT('secret')", {}, [2]),
    "collection_count_bound": ("RETURN COLLECTION_COUNT(@c)", {"c": "secret"}, [2]),
    "length_of_collection": ("RETURN LENGTH(secret)", {}, [2]),
    "subquery": ("LET s = (FOR d IN secret RETURN 1) RETURN LENGTH(s)", {}, [2]),
    "explain_free_read_in_loop": (
        "FOR o IN open FOR d IN secret FILTER d.v == 'hidden' RETURN [o.v, d.v]",
        {},
        [["visible", "hidden"]],
    ),
}

# Queries that write `secret` (each leaves it as it was when it succeeds: every write is undone
# by the query itself or by the next one).
WRITES = {
    "insert": ("INSERT {_key: @k, v: 'new'} INTO secret RETURN NEW._key", None),
    "upsert": ("UPSERT {_key: 's2'} INSERT {_key: 's2', v: 'x'} UPDATE {w: 1} IN secret RETURN NEW._key", ["s2"]),
    "update": ("UPDATE 's2' WITH {w: 2} IN secret RETURN NEW._key", ["s2"]),
    "remove_missing": ("REMOVE 'absent' IN secret OPTIONS {ignoreErrors: true}", []),
}


def grant(root: requests.Session, url: str, user: str, path: str, level: str) -> None:
    r = root.put(f"{url}/_api/user/{user}/database/{path}", json={"grant": level})
    assert r.status_code == 200, r.text


@pytest.fixture(scope="module")
def world(server):
    """A database with `open` (o1), `secret` (s1, s2, with geo and fulltext indexes), the edge
    collection `edges` (o1 -> s1), a named graph over them, and one user per row of USERS."""
    url = server.url
    root = requests.Session()
    root.auth = ("root", ROOT_PASSWORD)
    db = unique("qp_db")
    graph = unique("qp_graph")
    assert root.post(f"{url}/_api/database", json={"name": db}).status_code == 201
    base = f"{url}/_db/{db}"
    for name, kind in (("open", 2), ("secret", 2), ("edges", 3)):
        assert root.post(f"{base}/_api/collection", json={"name": name, "type": kind}).status_code == 200
    assert root.post(
        f"{base}/_api/index?collection=secret", json={"type": "geo", "fields": ["lat", "lon"]}
    ).status_code == 201
    assert root.post(
        f"{base}/_api/index?collection=secret", json={"type": "fulltext", "fields": ["text"], "minLength": 2}
    ).status_code == 201
    assert root.post(f"{base}/_api/document/open", json={"_key": "o1", "v": "visible"}).status_code == 202
    assert root.post(
        f"{base}/_api/document/secret",
        json=[
            {"_key": "s1", "v": "hidden", "text": "a needle here", "lat": 52.5, "lon": 13.4},
            {"_key": "s2", "v": "other"},
        ],
    ).status_code == 202
    assert root.post(
        f"{base}/_api/document/edges", json={"_from": "open/o1", "_to": "secret/s1"}
    ).status_code == 202
    r = root.post(
        f"{base}/_api/gharial",
        json={"name": graph, "edgeDefinitions": [{"collection": "edges", "from": ["open"], "to": ["secret"]}]},
    )
    assert r.status_code in (201, 202), r.text
    users = {}
    for role, (db_level, secret_level) in USERS.items():
        name = unique(f"qp_{role}")
        r = root.post(f"{url}/_api/user", json={"user": name, "passwd": PASSWORD})
        assert r.status_code == 201, r.text
        grant(root, url, name, db, db_level)
        if secret_level is not None:
            grant(root, url, name, f"{db}/secret", secret_level)
        users[role] = name
    yield {"url": url, "base": base, "db": db, "graph": graph, "users": users, "root": root}
    root.delete(f"{url}/_api/database/{db}")
    for name in users.values():
        root.delete(f"{url}/_api/user/{name}")


def run(world, user: str | None, query: str, bind_vars: dict) -> requests.Response:
    auth = ("root", ROOT_PASSWORD) if user is None else (user, PASSWORD)
    binds = {k: (world["graph"] if v == "GRAPH" else v) for k, v in bind_vars.items()}
    return requests.post(
        f"{world['base']}/_api/cursor", json={"query": query, "bindVars": binds}, auth=auth, timeout=30
    )


def assert_refused(r: requests.Response, status: int, errno: int, message: str | None = None) -> None:
    body = r.json()
    assert (r.status_code, body.get("errorNum")) == (status, errno), r.text
    assert body["error"] is True and body["code"] == status
    if message is not None:
        assert body["errorMessage"] == message, r.text


@pytest.mark.parametrize("role", list(USERS))
@pytest.mark.parametrize("case", list(READS))
def test_reads_pass_the_callers_level_on_every_collection_they_reach(world, role, case):
    query, binds, expected = READS[case]
    assert run(world, None, query, binds).json().get("result") == expected, case
    r = run(world, world["users"][role], query, binds)
    if OPEN_LEVEL[role] == "none":
        assert_refused(r, 401, 11)
    elif SECRET_LEVEL[role] == "none":
        assert_refused(r, 403, 11, "forbidden: secret [read]")
    else:
        assert r.status_code == 201, r.text
        assert r.json()["result"] == expected


@pytest.mark.parametrize("role", list(USERS))
@pytest.mark.parametrize("case", list(WRITES))
def test_writes_need_rw_on_the_written_collection(world, role, case):
    query, expected = WRITES[case]
    binds = {"k": unique("k")} if "@k" in query else {}
    r = run(world, world["users"][role], query, binds)
    if OPEN_LEVEL[role] == "none":
        assert_refused(r, 401, 11)
    elif SECRET_LEVEL[role] == "none":
        assert_refused(r, 403, 11, "forbidden: secret [read]")
    elif SECRET_LEVEL[role] == "ro":
        assert_refused(r, 403, 1004, "read only: secret [write]")
    else:
        assert r.status_code == 201, r.text
        assert r.json()["result"] == (expected if expected is not None else [binds["k"]])
        if "k" in binds:
            world["root"].delete(f"{world['base']}/_api/document/secret/{binds['k']}")


@pytest.mark.parametrize("role", list(USERS))
def test_a_write_elsewhere_that_reads_secret_in_a_subquery_is_refused(world, role):
    """The written collection is `open`; `secret` is only read, inside a subquery."""
    key = unique("k")
    query = "LET s = (FOR d IN secret RETURN d.v) INSERT {_key: @k, n: LENGTH(s)} INTO open RETURN NEW.n"
    r = run(world, world["users"][role], query, {"k": key})
    if OPEN_LEVEL[role] == "none":
        assert_refused(r, 401, 11)
    elif SECRET_LEVEL[role] == "none":
        assert_refused(r, 403, 11, "forbidden: secret [read]")
    elif OPEN_LEVEL[role] == "ro":
        assert_refused(r, 403, 1004, "read only: open [write]")
    else:
        assert r.status_code == 201, r.text
        assert r.json()["result"] == [2]
    assert world["root"].get(f"{world['base']}/_api/document/open/{key}").status_code == (
        200 if r.status_code == 201 else 404
    )


@pytest.mark.parametrize("role", list(USERS))
def test_collections_lists_only_what_the_caller_may_read(world, role):
    r = run(world, world["users"][role], "RETURN COLLECTIONS()[*].name", {})
    if OPEN_LEVEL[role] == "none":
        assert_refused(r, 401, 11)
        return
    names = set(r.json()["result"][0])
    assert {"open", "edges"} <= names
    assert ("secret" in names) == (SECRET_LEVEL[role] != "none")


def test_a_missing_document_collection_is_still_null_and_a_forbidden_one_is_an_error(world):
    user = world["users"]["coll_none"]
    r = run(world, user, "RETURN [DOCUMENT('nosuch/x'), DOCUMENT('open/nosuch'), DOCUMENT('open/o1').v]", {})
    assert r.status_code == 201, r.text
    assert r.json()["result"] == [[None, None, "visible"]]
    assert_refused(run(world, user, "RETURN DOCUMENT('secret/nosuch')", {}), 403, 11, "forbidden: secret [read]")


def test_explain_checks_the_same_levels(world):
    user = world["users"]["coll_none"]
    r = requests.post(
        f"{world['base']}/_api/explain",
        json={"query": "FOR d IN secret RETURN d"},
        auth=(user, PASSWORD),
        timeout=30,
    )
    assert_refused(r, 403, 11, "forbidden: secret [read]")


def test_a_stream_cursor_checks_at_run_time_too(world):
    user = world["users"]["coll_none"]
    r = requests.post(
        f"{world['base']}/_api/cursor",
        json={"query": "FOR i IN 1..3 RETURN DOCUMENT(CONCAT('secret/s', i))", "options": {"stream": True}},
        auth=(user, PASSWORD),
        timeout=30,
    )
    assert_refused(r, 403, 11, "forbidden: secret [read]")


def test_the_users_collection_is_invisible_to_queries(server):
    """`_system/_users` holds password hashes: no user sees it through AQL, root included."""
    root = requests.Session()
    root.auth = ("root", ROOT_PASSWORD)
    url = server.url
    r = root.post(f"{url}/_api/cursor", json={"query": "FOR u IN _users RETURN u"})
    assert_refused(r, 404, 1203)
    r = root.post(f"{url}/_api/cursor", json={"query": "RETURN COLLECTION_COUNT('_users')"})
    assert_refused(r, 404, 1203)
    r = root.post(f"{url}/_api/cursor", json={"query": "RETURN LENGTH(FOR c IN COLLECTIONS() FILTER c.name == '_users' RETURN 1)"})
    assert r.status_code == 201 and r.json()["result"] == [0], r.text
    r = root.post(f"{url}/_api/cursor", json={"query": "RETURN DOCUMENT('_users/root')"})
    assert r.status_code == 201 and r.json()["result"] == [None], r.text
