"""`/_api/index` at the HTTP level: exact status codes and bodies as ArangoDB 3.12 answers them.

What it is: create (201 new, 200 existing), list (`indexes` + `identifiers`), read by id or
name, the selectivity listing, drop (`{id, error, code}`); the errors (404/1203 for a missing
or unknown collection, 400/10 for bad definitions, 400/1207 for a taken name, 400/1210 for a
unique index over clashing documents, 404/1212 for missing indexes and the primary one,
400/1214 for a bad handle, 405), permissions (reading needs `ro` on the collection, creating
and dropping `rw` on the database and the collection), unique violations through the document
and import APIs, and that `x-arango-trx-id` does not make index changes transactional.

What it is not: the driver's view (`test_driver_indexes.py`).
"""

from __future__ import annotations

import pytest

from conftest import Http, unique
from http_checks import assert_error, assert_success, error_codes_header


@pytest.fixture
def api(db_name) -> str:
    return f"/_db/{db_name}/_api"


def create(http, api, name, body):
    return http.post(f"{api}/index", params={"collection": name}, json=body)


def test_create_then_the_same_definition_again(http, api, col):
    resp = create(http, api, col.name, {"type": "persistent", "fields": ["a"], "unique": True})
    body = assert_success(resp, 201)
    number = body["id"].split("/")[1]
    assert body == {
        "cacheEnabled": False, "deduplicate": True, "estimates": True, "fields": ["a"],
        "id": f"{col.name}/{number}", "name": f"idx_{number}", "selectivityEstimate": 1,
        "sparse": False, "type": "persistent", "unique": True, "isNewlyCreated": True,
        "error": False, "code": 201,
    }
    again = assert_success(create(http, api, col.name, {"type": "hash", "fields": ["a"], "unique": True}), 200)
    assert again["isNewlyCreated"] is False and again["code"] == 200 and again["id"] == body["id"]

    ttl = assert_success(create(http, api, col.name, {"type": "ttl", "fields": ["t"], "expireAfter": 1.5}), 201)
    assert {k: ttl[k] for k in ("type", "fields", "expireAfter", "sparse", "unique")} == {
        "type": "ttl", "fields": ["t"], "expireAfter": 1.5, "sparse": True, "unique": False,
    }


def test_geo_and_fulltext_bodies(http, api, col):
    geo = assert_success(create(http, api, col.name, {"type": "geo", "fields": ["loc"]}), 201)
    number = geo["id"].split("/")[1]
    assert geo == {
        "bestIndexedLevel": 17, "fields": ["loc"], "geoJson": False, "id": f"{col.name}/{number}",
        "legacyPolygons": False, "maxNumCoverCells": 8, "name": f"idx_{number}", "sparse": True,
        "type": "geo", "unique": False, "worstIndexedLevel": 4, "isNewlyCreated": True,
        "error": False, "code": 201,
    }
    again = assert_success(create(http, api, col.name, {"type": "geo1", "fields": ["loc"]}), 200)
    assert again["id"] == geo["id"]
    geojson = assert_success(create(http, api, col.name, {"type": "geo", "fields": ["loc"], "geoJson": True}), 201)
    assert geojson["id"] != geo["id"] and geojson["geoJson"] is True

    text = assert_success(create(http, api, col.name, {"type": "fulltext", "fields": ["text"]}), 201)
    number = text["id"].split("/")[1]
    assert text == {
        "fields": ["text"], "id": f"{col.name}/{number}", "minLength": 2, "name": f"idx_{number}",
        "sparse": True, "type": "fulltext", "unique": False, "isNewlyCreated": True,
        "error": False, "code": 201,
    }
    listed = assert_success(http.get(f"{api}/index", params={"collection": col.name, "withStats": "true"}), 200)
    assert [i["type"] for i in listed["indexes"]] == ["primary", "geo", "geo", "fulltext"]
    http.post(f"{api}/document/{col.name}", json=[{"loc": [1, 2], "text": "two words"}, {"loc": [100, 2]}])
    figures = assert_success(http.get(f"{api}/collection/{col.name}/figures", params={"details": "true"}), 200)
    engine = figures["figures"]["engine"]
    assert [(i["type"], i["count"]) for i in engine["indexes"]] == [
        ("primary", 2), ("geo", 1), ("geo", 2), ("fulltext", 2),
    ]


def test_list_read_selectivity_and_drop(http, api, col):
    made = assert_success(create(http, api, col.name, {"type": "skiplist", "fields": ["x"], "name": "byX"}), 201)
    listing = assert_success(http.get(f"{api}/index", params={"collection": col.name}), 200)
    primary = {"fields": ["_key"], "id": f"{col.name}/0", "name": "primary", "selectivityEstimate": 1,
               "sparse": False, "type": "primary", "unique": True}
    described = {k: v for k, v in made.items() if k not in ("isNewlyCreated", "error", "code")}
    assert listing == {"error": False, "code": 200, "indexes": [primary, described],
                       "identifiers": {primary["id"]: primary, made["id"]: described}}

    number = made["id"].split("/")[1]
    for handle in (number, "byX"):
        one = assert_success(http.get(f"{api}/index/{col.name}/{handle}"), 200)
        assert one == {**described, "error": False, "code": 200}
    estimates = assert_success(http.get(f"{api}/index/selectivity", params={"collection": col.name}), 200)
    assert estimates == {"error": False, "code": 200, "indexes": {primary["id"]: 1, made["id"]: 1}}

    dropped = assert_success(http.delete(f"{api}/index/{col.name}/byX"), 200)
    assert dropped == {"id": f"{col.name}/byX", "error": False, "code": 200}
    assert_error(http.get(f"{api}/index/{col.name}/{number}"), 404, 1212)
    assert_error(http.delete(f"{api}/index/{col.name}/{number}"), 404, 1212)


def test_errors(http, api, col):
    good = {"type": "persistent", "fields": ["a"]}
    assert_error(http.post(f"{api}/index", json=good), 404, 1203)
    assert_error(create(http, api, unique("nope"), good), 404, 1203)
    assert_error(http.get(f"{api}/index"), 404, 1203)
    assert_error(http.get(f"{api}/index", params={"collection": unique("nope")}), 404, 1203)
    assert_error(http.delete(f"{api}/index/{unique('nope')}/1"), 404, 1203)

    mdi = assert_error(create(http, api, col.name, {"type": "mdi", "fields": ["l"]}), 400, 10)
    assert "'mdi'" in mdi["errorMessage"]
    assert_error(create(http, api, col.name, {"type": "geo", "fields": ["a", "b", "c"]}), 400, 10)
    assert_error(create(http, api, col.name, {"type": "fulltext", "fields": ["t"], "minLength": 0}), 400, 10)
    assert_error(create(http, api, col.name, {"type": "persistent", "fields": "a"}), 400, 10)
    assert_error(create(http, api, col.name, {"type": "persistent", "fields": ["a", "b[*]", "c[*]"]}), 400, 10)
    assert_error(create(http, api, col.name, {"type": "ttl", "fields": ["a"], "expireAfter": "soon"}), 400, 10)
    assert_error(create(http, api, col.name, {**good, "name": "a/b"}), 400, 1208)
    assert_error(http.post(f"{api}/index", params={"collection": col.name}, data="{nope"), 400, 600)

    assert_success(create(http, api, col.name, {**good, "name": "n"}), 201)
    assert_error(create(http, api, col.name, {"type": "persistent", "fields": ["b"], "name": "n"}), 400, 1207)

    assert_error(http.delete(f"{api}/index/{col.name}/0"), 404, 1212)
    assert_error(http.delete(f"{api}/index/{col.name}/primary"), 404, 1212)
    assert_error(http.delete(f"{api}/index/{col.name}"), 400, 400)
    assert_error(http.get(f"{api}/index/{col.name}/1/2"), 400, 400)
    assert_error(http.post(f"{api}/index/{col.name}", params={"collection": col.name}, json=good), 400, 400)
    assert_error(http.put(f"{api}/index", json=good), 405, 405)


def test_id_cannot_be_indexed_and_a_non_boolean_unique_reads_as_false(http, api, col):
    """ArangoDB refuses `_id` (and any path ending in `._id`) in the fields of every index
    but an inverted one: 400/10 "_id attribute cannot be indexed". It reads a `unique` that
    is not a boolean as false rather than refusing it."""
    bodies = [
        {"type": "persistent", "fields": ["_id"]},
        {"type": "persistent", "fields": ["a", "_id"], "unique": True},
        {"type": "hash", "fields": ["a._id"]},
        {"type": "skiplist", "fields": ["a[*]._id"]},
        {"type": "ttl", "fields": ["_id"], "expireAfter": 10},
        {"type": "geo", "fields": ["_id"]},
        {"type": "fulltext", "fields": ["_id"]},
    ]
    for body in bodies:
        refused = assert_error(create(http, api, col.name, body), 400, 10)
        assert refused["errorMessage"] == "_id attribute cannot be indexed", body
    listed = assert_success(http.get(f"{api}/index", params={"collection": col.name}), 200)
    assert [i["type"] for i in listed["indexes"]] == ["primary"]
    # Other attributes that end in "_id", and `_key`, are fine.
    assert_success(create(http, api, col.name, {"type": "persistent", "fields": ["user_id"]}), 201)
    made = assert_success(create(http, api, col.name, {"type": "persistent", "fields": ["u"],
                                                       "unique": "yes"}), 201)
    assert made["unique"] is False


def test_unique_violations_over_http(http, api, col):
    docs = f"{api}/document/{col.name}"
    assert_success(http.post(docs, json=[{"_key": "a", "u": 1}, {"_key": "b", "u": 1}]), 202)
    clash = assert_error(create(http, api, col.name, {"type": "persistent", "fields": ["u"], "unique": True}), 400, 1210)
    assert clash["errorMessage"].endswith("of type persistent over 'u'; conflicting key: b")
    assert_success(http.delete(f"{docs}/b"), 202)
    made = assert_success(create(http, api, col.name, {"type": "persistent", "fields": ["u", "v"], "unique": True}), 201)

    single = assert_error(http.post(docs, json={"_key": "c", "u": 1}), 409, 1210)
    assert single["errorMessage"] == (
        f"unique constraint violated - in index {made['name']} of type persistent over 'u, v'; "
        "conflicting key: a"
    )
    multi = http.post(docs, json=[{"_key": "d", "u": 2}, {"_key": "e", "u": 2}, {"_key": "f", "u": 1, "v": 1}])
    body = assert_success(multi, 202)
    assert error_codes_header(multi) == {"1210": 1}
    assert body[1]["errorNum"] == 1210 and body[1]["error"] is True
    assert [body[0]["_key"], body[2]["_key"]] == ["d", "f"]

    lines = '{"_key": "g", "u": 3}\n{"_key": "h", "u": 3}\n'
    imported = assert_success(http.post(f"{api}/import", params={"collection": col.name, "type": "documents", "details": "true"}, data=lines), 201)
    assert (imported["created"], imported["errors"]) == (1, 1)
    assert "unique constraint violated" in imported["details"][0]


def test_permissions(http, url, db_name, api, col):
    user, password = unique("u"), "pw"
    assert_success(http.post("/_api/user", json={"user": user, "passwd": password}), 201)
    try:
        as_user = Http(url, auth=(user, password))
        good = {"type": "persistent", "fields": ["a"]}
        grants = f"/_api/user/{user}/database/{db_name}"
        assert_success(http.put(grants, json={"grant": "ro"}), 200)
        assert_success(as_user.get(f"{api}/index", params={"collection": col.name}), 200)
        assert_error(create(as_user, api, col.name, good), 403, 11)
        # rw on the collection is not enough without rw on the database.
        assert_success(http.put(f"{grants}/{col.name}", json={"grant": "rw"}), 200)
        assert_error(create(as_user, api, col.name, good), 403, 11)
        assert_success(http.put(grants, json={"grant": "rw"}), 200)
        assert_success(http.put(f"{grants}/{col.name}", json={"grant": "ro"}), 200)
        assert_error(create(as_user, api, col.name, good), 403, 11)
        assert_success(http.put(f"{grants}/{col.name}", json={"grant": "rw"}), 200)
        made = assert_success(create(as_user, api, col.name, good), 201)
        assert_success(http.put(f"{grants}/{col.name}", json={"grant": "none"}), 200)
        assert_error(as_user.get(f"{api}/index", params={"collection": col.name}), 403, 11)
        assert_error(as_user.delete(f"{api}/index/{made['id']}"), 403, 11)
    finally:
        http.delete(f"/_api/user/{user}")


def test_index_changes_ignore_a_transaction_header(http, api, col):
    begin = http.post(f"{api}/transaction/begin", json={"collections": {"write": col.name}})
    tid = assert_success(begin, 201)["result"]["id"]
    try:
        made = http.post(f"{api}/index", params={"collection": col.name},
                         json={"type": "persistent", "fields": ["a"]}, headers={"x-arango-trx-id": tid})
        assert_success(made, 201)
    finally:
        http.delete(f"{api}/transaction/{tid}")
