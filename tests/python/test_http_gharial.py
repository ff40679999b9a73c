"""`/_api/gharial` at the HTTP level: exact statuses, headers and bodies, and every graph
error number the API answers.

What it is: graph create (201/202, the stored options of a general graph, ETag), list,
read, drop (always 202); vertex collections and edge definitions (add, replace, remove and
their codes 1920/1921/1927/1928/1929/1930/1938/1943/1944); vertex and edge documents
(statuses, ETag, If-Match 412, If-None-Match 304, HEAD, returnOld/returnNew, keepNull) and
the constraints (1926, 1939, 1947, 1233, 1202); 403/1942 for dropping a graph's collection.

What it is not: the drivers' view (`test_driver_graphs.py`).
"""

from __future__ import annotations

import pytest

from conftest import unique


@pytest.fixture
def api(db_name) -> str:
    return f"/_db/{db_name}/_api"


def ok(response, status):
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["error"] is False and body["code"] == status, body
    return body


def err(response, status, num):
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["error"] is True and body["code"] == status, body
    assert body["errorNum"] == num, body
    assert isinstance(body["errorMessage"], str)
    return body


@pytest.fixture
def names():
    return {k: unique(k) for k in ("g", "e", "a", "b", "o")}


@pytest.fixture
def graph(http, api, names):
    n = names
    body = {
        "name": n["g"],
        "edgeDefinitions": [{"collection": n["e"], "from": [n["a"]], "to": [n["b"]]}],
        "orphanCollections": [n["o"]],
    }
    ok(http.post(f"{api}/gharial", json=body), 202)
    yield n
    http.delete(f"{api}/gharial/{n['g']}", params={"dropCollections": "true"})


def test_create_read_list_and_drop(http, api, names):
    n = names
    body = {
        "name": n["g"],
        "edgeDefinitions": [{"collection": n["e"], "from": [n["b"], n["a"]], "to": [n["b"]]}],
        "orphanCollections": [n["o"]],
    }
    created = http.post(f"{api}/gharial", params={"waitForSync": "true"}, json=body)
    graph = ok(created, 201)["graph"]
    assert created.headers["etag"] == f'"{graph["_rev"]}"'
    assert graph["_key"] == graph["name"] == n["g"]
    assert graph["_id"] == f"_graphs/{n['g']}"
    assert graph["edgeDefinitions"] == [
        {"collection": n["e"], "from": sorted([n["a"], n["b"]]), "to": [n["b"]]}
    ]
    assert graph["orphanCollections"] == [n["o"]]
    for key, value in [("numberOfShards", 1), ("replicationFactor", 1), ("writeConcern", 1),
                       ("minReplicationFactor", 1), ("isSmart", False), ("isDisjoint", False),
                       ("isSatellite", False)]:
        assert graph[key] == value, key
    # The collections exist with the right types.
    assert ok(http.get(f"{api}/collection/{n['e']}"), 200)["type"] == 3
    assert ok(http.get(f"{api}/collection/{n['a']}"), 200)["type"] == 2
    assert ok(http.get(f"{api}/collection/{n['o']}"), 200)["type"] == 2

    read = ok(http.get(f"{api}/gharial/{n['g']}"), 200)["graph"]
    assert read == graph
    listed = ok(http.get(f"{api}/gharial"), 200)["graphs"]
    assert graph in listed
    assert ok(http.get(f"{api}/gharial/{n['g']}/vertex"), 200)["collections"] == sorted(
        [n["a"], n["b"], n["o"]])
    assert ok(http.get(f"{api}/gharial/{n['g']}/edge"), 200)["collections"] == [n["e"]]

    dropped = ok(http.delete(f"{api}/gharial/{n['g']}",
                             params={"dropCollections": "true", "waitForSync": "true"}), 202)
    assert dropped["removed"] is True
    err(http.get(f"{api}/gharial/{n['g']}"), 404, 1924)
    err(http.get(f"{api}/collection/{n['e']}"), 404, 1203)
    err(http.get(f"{api}/collection/{n['o']}"), 404, 1203)


def test_smart_and_satellite_options_are_stored_and_echoed(http, api):
    smart, satellite = unique("smart"), unique("sat")
    body = {"name": smart, "isSmart": True,
            "options": {"numberOfShards": 9, "replicationFactor": 2, "writeConcern": 2,
                        "smartGraphAttribute": "region", "isDisjoint": True,
                        "satellites": ["s1"]}}
    graph = ok(http.post(f"{api}/gharial", json=body), 202)["graph"]
    assert (graph["isSmart"], graph["isDisjoint"], graph["numberOfShards"]) == (True, True, 9)
    assert (graph["replicationFactor"], graph["writeConcern"]) == (2, 2)
    assert graph["smartGraphAttribute"] == "region" and graph["satellites"] == ["s1"]
    graph = ok(http.post(f"{api}/gharial", json={
        "name": satellite, "options": {"replicationFactor": "satellite"}}), 202)["graph"]
    assert graph["isSatellite"] is True and graph["replicationFactor"] == "satellite"
    for name in (smart, satellite):
        ok(http.delete(f"{api}/gharial/{name}"), 202)


def test_create_errors(http, api, graph, col, ecol):
    n = graph
    err(http.post(f"{api}/gharial", json={"edgeDefinitions": []}), 400, 1922)
    err(http.post(f"{api}/gharial", json={"name": unique("g"), "edgeDefinitions": [
        {"collection": "x", "from": "a", "to": ["b"]}]}), 400, 1923)
    err(http.post(f"{api}/gharial", json={"name": unique("g"), "edgeDefinitions": [
        {"collection": "x", "from": ["a"], "to": ["b"]},
        {"collection": "x", "from": ["a"], "to": ["c"]}]}), 400, 1920)
    err(http.post(f"{api}/gharial", json={"name": n["g"]}), 409, 1925)
    err(http.post(f"{api}/gharial", json={"name": unique("g"), "edgeDefinitions": [
        {"collection": n["e"], "from": [n["a"]], "to": [n["a"]]}]}), 409, 1921)
    err(http.post(f"{api}/gharial", json={"name": unique("g"), "orphanCollections": "x"}),
        400, 1943)
    err(http.post(f"{api}/gharial", json={"name": unique("g"), "edgeDefinitions": [
        {"collection": col.name, "from": ["a"], "to": ["b"]}]}), 400, 1944)
    err(http.post(f"{api}/gharial", json={"name": unique("g"),
                                          "orphanCollections": [ecol.name]}), 400, 1927)
    err(http.post(f"{api}/gharial", data="{"), 400, 600)
    err(http.get(f"{api}/gharial/{unique('none')}"), 404, 1924)
    err(http.delete(f"{api}/gharial/{unique('none')}"), 404, 1924)
    err(http.get(f"{api}/gharial/{n['g']}/nonsense"), 404, 404)
    err(http.put(f"{api}/gharial"), 405, 405)
    # The same definition in a second graph is fine.
    other = unique("g")
    ok(http.post(f"{api}/gharial", json={"name": other, "edgeDefinitions": [
        {"collection": n["e"], "from": [n["a"]], "to": [n["b"]]}]}), 202)
    ok(http.delete(f"{api}/gharial/{other}"), 202)


def test_a_failed_create_or_extension_leaves_no_collection_behind(http, api, graph):
    """All or nothing: the edge collection is created first, then the vertex collection
    with the illegal name fails (400/1208); the edge collection goes again, and no graph is
    stored. The same holds when an edge definition or orphan is added to a graph."""
    g, e, v = unique("g"), unique("e"), unique("v")
    err(http.post(f"{api}/gharial", json={"name": g, "edgeDefinitions": [
        {"collection": e, "from": [v], "to": ["bad/name"]}]}), 400, 1208)
    err(http.post(f"{api}/gharial", json={"name": g, "edgeDefinitions": [
        {"collection": e, "from": [v], "to": [v]}], "orphanCollections": ["bad/name"]}), 400, 1208)
    for name in (e, v):
        err(http.get(f"{api}/collection/{name}"), 404, 1203)
    err(http.get(f"{api}/gharial/{g}"), 404, 1924)
    err(http.post(f"{api}/gharial/{graph['g']}/edge", json={
        "collection": e, "from": [graph["a"]], "to": ["bad/name"]}), 400, 1208)
    err(http.get(f"{api}/collection/{e}"), 404, 1203)
    edges = ok(http.get(f"{api}/gharial/{graph['g']}/edge"), 200)["collections"]
    assert edges == [graph["e"]]


def test_vertex_collections(http, api, graph):
    n = graph
    base = f"{api}/gharial/{n['g']}/vertex"
    extra = unique("v")
    added = http.post(base, json={"collection": extra})
    assert extra in ok(added, 202)["graph"]["orphanCollections"]
    assert added.headers["etag"]
    err(http.post(base, json={"collection": extra}), 400, 1938)
    err(http.post(base, json={"collection": n["a"]}), 400, 1929)
    err(http.post(base, json={"collection": n["e"]}), 400, 1927)
    err(http.delete(f"{base}/{n['a']}"), 404, 1928)
    removed = ok(http.delete(f"{base}/{extra}", params={"dropCollection": "true",
                                                        "waitForSync": "true"}), 200)
    assert extra not in removed["graph"]["orphanCollections"]
    err(http.get(f"{api}/collection/{extra}"), 404, 1203)


def test_edge_definitions(http, api, graph):
    n = graph
    base = f"{api}/gharial/{n['g']}/edge"
    e2, c = unique("e2"), unique("c")
    added = ok(http.post(base, params={"waitForSync": "true"},
                         json={"collection": e2, "from": [n["o"]], "to": [c]}), 201)["graph"]
    assert n["o"] not in added["orphanCollections"], "an orphan used by a definition is not one"
    err(http.post(base, json={"collection": e2, "from": [n["a"]], "to": [c]}), 400, 1920)
    err(http.post(base, json={"collection": e2}), 400, 1923)
    replaced = ok(http.put(f"{base}/{e2}", json={"collection": e2, "from": [n["a"]],
                                                   "to": [n["a"]]}), 202)["graph"]
    assert {"collection": e2, "from": [n["a"]], "to": [n["a"]]} in replaced["edgeDefinitions"]
    assert sorted(replaced["orphanCollections"]) == sorted([n["o"], c])
    err(http.put(f"{base}/{unique('x')}", json={"collection": "x", "from": [], "to": []}),
        404, 1930)
    err(http.delete(f"{base}/{unique('x')}"), 404, 1930)
    removed = ok(http.delete(f"{base}/{e2}", params={"dropCollections": "true"}), 202)["graph"]
    assert [d["collection"] for d in removed["edgeDefinitions"]] == [n["e"]]
    err(http.get(f"{api}/collection/{e2}"), 404, 1203)


def test_vertex_documents(http, api, graph):
    n = graph
    base = f"{api}/gharial/{n['g']}/vertex/{n['a']}"
    created = http.post(base, params={"returnNew": "true"}, json={"_key": "v1", "x": 1})
    body = ok(created, 202)
    assert body["vertex"]["_id"] == f"{n['a']}/v1" and body["new"]["x"] == 1
    rev = body["vertex"]["_rev"]
    assert created.headers["etag"] == f'"{rev}"'
    assert ok(http.post(base, params={"waitForSync": "true"}, json={"_key": "v2"}), 201)

    read = http.get(f"{base}/v1")
    assert ok(read, 200)["vertex"]["x"] == 1 and read.headers["etag"] == f'"{rev}"'
    assert http.get(f"{base}/v1", headers={"If-None-Match": f'"{rev}"'}).status_code == 304
    err(http.get(f"{base}/v1", headers={"If-Match": '"_nope"'}), 412, 1200)
    err(http.get(f"{base}/v1", params={"rev": "_nope"}), 412, 1200)
    head = http.head(f"{base}/v1")
    assert head.status_code == 200 and head.headers["etag"] == f'"{rev}"' and not head.content
    assert http.head(f"{base}/missing").status_code == 404
    err(http.get(f"{base}/missing"), 404, 1202)

    updated = ok(http.patch(f"{base}/v1", params={"returnOld": "true", "returnNew": "true"},
                            json={"y": None, "z": 2}), 202)
    assert updated["vertex"]["_oldRev"] == rev and updated["old"]["x"] == 1
    assert updated["new"]["y"] is None, "keepNull defaults to true"
    dropped = ok(http.patch(f"{base}/v1", params={"keepNull": "false", "returnNew": "true"},
                            json={"y": None}), 202)
    assert "y" not in dropped["new"]
    err(http.patch(f"{base}/v1", headers={"If-Match": rev}, json={"w": 1}), 412, 1200)
    replaced = http.put(f"{base}/v1", params={"waitForSync": "true"}, json={"only": 1})
    new_rev = ok(replaced, 200)["vertex"]["_rev"]
    assert replaced.headers["etag"] == f'"{new_rev}"'
    err(http.delete(f"{base}/v1", headers={"If-Match": rev}), 412, 1200)
    removed = ok(http.delete(f"{base}/v1", params={"returnOld": "true"}), 202)
    assert removed["removed"] is True and removed["old"]["only"] == 1
    assert ok(http.delete(f"{base}/v2", params={"waitForSync": "true"}), 200)["removed"]
    err(http.delete(f"{base}/v1"), 404, 1202)
    err(http.post(f"{api}/gharial/{n['g']}/vertex/{unique('x')}", json={}), 404, 1926)
    err(http.get(f"{api}/gharial/{n['g']}/vertex/{unique('x')}/k"), 404, 1926)
    err(http.post(base, json=[1]), 400, 1227)


def test_edge_documents_and_constraints(http, api, graph):
    n = graph
    vertices = f"{api}/gharial/{n['g']}/vertex"
    ok(http.post(f"{vertices}/{n['a']}", json={"_key": "a1"}), 202)
    ok(http.post(f"{vertices}/{n['b']}", json={"_key": "b1"}), 202)
    ok(http.post(f"{vertices}/{n['o']}", json={"_key": "o1"}), 202)
    base = f"{api}/gharial/{n['g']}/edge/{n['e']}"
    good = {"_from": f"{n['a']}/a1", "_to": f"{n['b']}/b1"}
    created = http.post(base, json={"_key": "e1", **good})
    body = ok(created, 202)
    assert body["edge"]["_id"] == f"{n['e']}/e1" and created.headers["etag"]
    read = ok(http.get(f"{base}/e1"), 200)["edge"]
    assert read["_from"] == good["_from"]
    err(http.post(base, json={"_from": f"{n['o']}/o1", "_to": f"{n['b']}/b1"}), 400, 1947)
    err(http.post(base, json={"_from": f"{n['a']}/a1", "_to": f"{n['a']}/a1"}), 400, 1947)
    err(http.post(base, json={"_from": f"{n['a']}/zz", "_to": f"{n['b']}/b1"}), 404, 1202)
    err(http.post(base, json={"_from": "nope", "_to": f"{n['b']}/b1"}), 400, 1233)
    err(http.post(base, json={"_to": f"{n['b']}/b1"}), 400, 1233)
    err(http.post(f"{api}/gharial/{n['g']}/edge/{unique('x')}", json=good), 404, 1939)
    err(http.patch(f"{base}/e1", json={"_to": f"{n['a']}/a1"}), 400, 1947)
    assert ok(http.patch(f"{base}/e1", json={"w": 1}), 202)["edge"]["_oldRev"]
    err(http.put(f"{base}/e1", json={"w": 2}), 400, 1233)
    ok(http.put(f"{base}/e1", params={"waitForSync": "true"}, json={"w": 3, **good}), 200)
    # Removing a vertex removes its edges.
    ok(http.delete(f"{vertices}/{n['a']}/a1"), 202)
    err(http.get(f"{base}/e1"), 404, 1202)


def test_a_graph_collection_cannot_be_dropped(http, api, graph):
    n = graph
    for name, role in [(n["e"], "an edge collection"), (n["a"], "a vertex collection"),
                       (n["o"], "an orphan collection")]:
        body = err(http.delete(f"{api}/collection/{name}"), 403, 1942)
        assert body["errorMessage"] == (
            f"must not drop collection while part of graph: collection '{name}' is {role} "
            f"inside graph '{n['g']}'")
    ok(http.delete(f"{api}/gharial/{n['g']}"), 202)
    assert http.delete(f"{api}/collection/{n['o']}").status_code == 200
