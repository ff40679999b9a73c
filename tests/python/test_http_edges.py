"""`/_api/edges` and the edge index at the HTTP level, as ArangoDB 3.12 answers them.

What it is: `GET /_api/edges/C?vertex=V&direction=in|out|any` (bodies, order, a looping edge
once, stats), the internal `POST /_api/edges/C` with an array of vertex ids, the errors in
ArangoDB's order (404/1203, 400/1218, 400/400 for a bad direction or body, 400/1205 without a
vertex, 501 for other methods), permissions (`ro` on the collection), `x-arango-trx-id` (the
transaction's own edges are seen), and the edge index through `/_api/index` (listed after the
primary index, read by id or name, never dropped: 403/11, never created: 400/10), in figures,
kept by document writes and rebuilt after a restart.

What it is not: the driver's view (`test_driver_edges.py`).
"""

from __future__ import annotations

import pytest

from conftest import Http, unique
from http_checks import assert_error, assert_success


@pytest.fixture
def api(db_name) -> str:
    return f"/_db/{db_name}/_api"


EDGES = [
    {"_key": "5", "_from": "v/1", "_to": "v/3", "label": "v1 -> v3"},
    {"_key": "6", "_from": "v/2", "_to": "v/1", "label": "v2 -> v1"},
    {"_key": "7", "_from": "v/4", "_to": "v/1", "label": "v4 -> v1"},
    {"_key": "8", "_from": "v/1", "_to": "v/1", "label": "loop"},
]


@pytest.fixture
def graph(http, api, ecol):
    assert_success(http.post(f"{api}/document/{ecol.name}", json=EDGES), 202)
    return ecol.name


def edges_of(http, api, name, **params):
    return http.get(f"{api}/edges/{name}", params=params)


def keys(body):
    return [edge["_key"] for edge in body["edges"]]


def test_directions_order_and_body(http, api, graph):
    body = assert_success(edges_of(http, api, graph, vertex="v/1"), 200)
    assert keys(body) == ["5", "8", "6", "7"]
    assert body["error"] is False and body["code"] == 200
    assert body["stats"]["scannedIndex"] == 5 and body["stats"]["filtered"] == 0
    first = body["edges"][0]
    assert {k: first[k] for k in ("_key", "_id", "_from", "_to", "label")} == {
        "_key": "5", "_id": f"{graph}/5", "_from": "v/1", "_to": "v/3", "label": "v1 -> v3",
    }
    assert first["_rev"]
    for direction, expected in [("any", ["5", "8", "6", "7"]), ("out", ["5", "8"]),
                                ("outbound", ["5", "8"]), ("in", ["6", "7", "8"]),
                                ("inbound", ["6", "7", "8"])]:
        got = assert_success(edges_of(http, api, graph, vertex="v/1", direction=direction), 200)
        assert keys(got) == expected, direction
    assert assert_success(edges_of(http, api, graph, vertex="v/9"), 200)["edges"] == []


def test_errors(http, api, graph, col):
    assert_error(edges_of(http, api, unique("missing"), vertex="v/1"), 404, 1203)
    assert_error(edges_of(http, api, col.name, vertex="v/1"), 400, 1218)
    bad = assert_error(edges_of(http, api, graph, vertex="v/1", direction="up"), 400, 400)
    assert bad["errorMessage"] == "<direction> must by any, in, or out, not: up"
    assert_error(edges_of(http, api, graph), 400, 1205)
    assert_error(edges_of(http, api, graph, vertex=""), 400, 1205)
    assert_error(http.get(f"{api}/edges"), 400, 400)
    assert_error(http.get(f"{api}/edges/{graph}/extra", params={"vertex": "v/1"}), 400, 400)
    assert_error(http.delete(f"{api}/edges/{graph}"), 501, 9)


def test_post_reads_many_vertices(http, api, graph, col):
    body = assert_success(http.post(f"{api}/edges/{graph}", json=["v/1", "v/2"]), 200)
    assert keys(body) == ["5", "8", "6", "7"]
    assert body == {"edges": body["edges"], "error": False, "code": 200}
    out = assert_success(http.post(f"{api}/edges/{graph}", params={"direction": "out"},
                                   json=["v/2", "v/1"]), 200)
    assert keys(out) == ["6", "5", "8"]
    assert_error(http.post(f"{api}/edges/{graph}", json={"vertex": "v/1"}), 400, 400)
    assert_error(http.post(f"{api}/edges/{graph}", json=["v/1", 2]), 400, 400)
    assert_error(http.post(f"{api}/edges/{col.name}", json=[]), 400, 1218)


def test_permissions(http, url, db_name, api, graph):
    user, password = unique("u"), "pw"
    assert_success(http.post("/_api/user", json={"user": user, "passwd": password}), 201)
    try:
        as_user = Http(url, auth=(user, password))
        grants = f"/_api/user/{user}/database/{db_name}"
        assert_success(http.put(grants, json={"grant": "ro"}), 200)
        assert keys(assert_success(edges_of(as_user, api, graph, vertex="v/1"), 200)) == ["5", "8", "6", "7"]
        assert_success(http.put(f"{grants}/{graph}", json={"grant": "none"}), 200)
        assert_error(edges_of(as_user, api, graph, vertex="v/1"), 403, 11)
        assert_error(as_user.post(f"{api}/edges/{graph}", json=["v/1"]), 403, 11)
    finally:
        http.delete(f"/_api/user/{user}")


def test_a_transaction_sees_its_own_edges(http, api, graph):
    begin = http.post(f"{api}/transaction/begin", json={"collections": {"write": graph}})
    tid = assert_success(begin, 201)["result"]["id"]
    trx = {"x-arango-trx-id": tid}
    try:
        made = http.post(f"{api}/document/{graph}", json={"_key": "9", "_from": "v/1", "_to": "v/5"},
                         headers=trx)
        assert_success(made, 202)
        assert_success(http.delete(f"{api}/document/{graph}/5", headers=trx), 202)
        inside = assert_success(http.get(f"{api}/edges/{graph}", params={"vertex": "v/1", "direction": "out"},
                                         headers=trx), 200)
        assert keys(inside) == ["8", "9"]
        outside = assert_success(edges_of(http, api, graph, vertex="v/1", direction="out"), 200)
        assert keys(outside) == ["5", "8"]
        assert_success(http.put(f"{api}/transaction/{tid}"), 200)
        after = assert_success(edges_of(http, api, graph, vertex="v/1", direction="out"), 200)
        assert keys(after) == ["8", "9"]
    finally:
        http.delete(f"{api}/transaction/{tid}")


def test_the_edge_index_through_the_index_api(http, api, graph, col):
    listing = assert_success(http.get(f"{api}/index", params={"collection": graph}), 200)
    edge = {"fields": ["_from", "_to"], "id": f"{graph}/1", "name": "edge",
            "selectivityEstimate": 0.625, "sparse": False, "type": "edge", "unique": False}
    assert listing["indexes"][0]["type"] == "primary"
    assert listing["indexes"][1] == edge
    assert listing["identifiers"][f"{graph}/1"] == edge
    assert assert_success(http.get(f"{api}/index/{graph}/1"), 200) == {**edge, "error": False, "code": 200}
    assert assert_success(http.get(f"{api}/index/{graph}/edge"), 200)["id"] == f"{graph}/1"
    assert_error(http.delete(f"{api}/index/{graph}/1"), 403, 11)
    assert_error(http.delete(f"{api}/index/{graph}/edge"), 403, 11)
    assert_error(http.post(f"{api}/index", params={"collection": graph},
                           json={"type": "edge", "fields": ["_from", "_to"]}), 400, 10)
    taken = http.post(f"{api}/index", params={"collection": graph},
                      json={"type": "persistent", "fields": ["x"], "name": "edge"})
    assert_error(taken, 400, 1207)
    figures = assert_success(http.get(f"{api}/collection/{graph}/figures", params={"details": "true"}), 200)
    assert figures["figures"]["indexes"]["count"] == 2
    engine = figures["figures"]["engine"]["indexes"]
    assert [(i["type"], i["id"], i["count"]) for i in engine] == [("primary", 0, 4), ("edge", 1, 4)]
    plain = assert_success(http.get(f"{api}/index", params={"collection": col.name}), 200)
    assert [i["type"] for i in plain["indexes"]] == ["primary"]


def test_document_writes_keep_it_and_need_both_ends(http, api, graph):
    assert_success(http.patch(f"{api}/document/{graph}/5", json={"_to": "v/7"}), 202)
    assert_success(http.put(f"{api}/document/{graph}/6", json={"_from": "v/7", "_to": "v/2"}), 202)
    assert keys(assert_success(edges_of(http, api, graph, vertex="v/7"), 200)) == ["6", "5"]
    for bad in ({"_to": "v/1"}, {"_from": "v/1", "_to": "nohandle"}, {"_from": 1, "_to": "v/1"}):
        assert_error(http.post(f"{api}/document/{graph}", json=bad), 400, 1233)
    assert_error(http.put(f"{api}/document/{graph}/7", json={"x": 1}), 400, 1233)
    multi = assert_success(http.post(f"{api}/document/{graph}", json=[{"_from": "v/1"}, {"_from": "a/1", "_to": "b/1"}]), 202)
    assert multi[0]["errorNum"] == 1233 and "_key" in multi[1]
    imported = assert_success(http.post(f"{api}/import", params={"collection": graph, "type": "list"},
                                        json=[{"_from": "v/1", "_to": "bad"}, {"_from": "x/1", "_to": "y/1"}]), 201)
    assert (imported["created"], imported["errors"]) == (1, 1)
    assert len(keys(assert_success(edges_of(http, api, graph, vertex="x/1", direction="out"), 200))) == 1
    assert keys(assert_success(edges_of(http, api, graph, vertex="b/1", direction="in"), 200)) == [multi[1]["_key"]]


def test_rebuilt_after_a_restart(server_factory, tmp_path):
    srv = server_factory()
    http = Http(srv.url)
    assert_success(http.post("/_api/collection", json={"name": "e", "type": 3}), 200)
    assert_success(http.post("/_api/document/e", json=EDGES), 202)
    srv.stop()
    again = server_factory(data_dir=srv.data_dir)
    http = Http(again.url)
    body = assert_success(http.get("/_api/edges/e", params={"vertex": "v/1"}), 200)
    assert keys(body) == ["5", "8", "6", "7"]
    listing = assert_success(http.get("/_api/index", params={"collection": "e"}), 200)
    assert [i["type"] for i in listing["indexes"]] == ["primary", "edge"]
