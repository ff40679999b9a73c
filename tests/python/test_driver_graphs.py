"""Named graphs through python-arango 8: `create_graph`, `graphs()`, `graph()`, `has_graph`,
`delete_graph`, vertex collections and edge definitions, vertex and edge documents through
`graph.vertex_collection(...)` / `graph.edge_collection(...)` with their options, cascading
vertex removal across graphs, restart persistence, concurrent creation, and error numbers.

What it is: the driver's view of the contract; the exact HTTP replies are in
`test_http_gharial.py`.
"""

from __future__ import annotations

import threading

import pytest
from arango import ArangoClient
from arango.exceptions import (
    CollectionDeleteError,
    DocumentInsertError,
    DocumentReplaceError,
    DocumentRevisionError,
    DocumentUpdateError,
    EdgeDefinitionCreateError,
    EdgeDefinitionDeleteError,
    GraphCreateError,
    GraphDeleteError,
    GraphPropertiesError,
    VertexCollectionCreateError,
    VertexCollectionDeleteError,
)

from conftest import ROOT_PASSWORD, unique


def names(*prefixes):
    return [unique(p) for p in prefixes]


@pytest.fixture
def social(db):
    g, rel, person, city, lonely = names("g", "rel", "person", "city", "lonely")
    graph = db.create_graph(
        g,
        edge_definitions=[{"edge_collection": rel, "from_vertex_collections": [person],
                           "to_vertex_collections": [person, city]}],
        orphan_collections=[lonely],
    )
    yield graph, rel, person, city, lonely
    db.delete_graph(g, ignore_missing=True, drop_collections=True)


def test_lifecycle(db, social):
    graph, rel, person, city, lonely = social
    assert db.has_graph(graph.name) and not db.has_graph(unique("none"))
    listed = {g["name"]: g for g in db.graphs()}
    assert listed[graph.name]["orphan_collections"] == [lonely]
    assert listed[graph.name]["edge_definitions"] == [{
        "edge_collection": rel, "from_vertex_collections": [person],
        "to_vertex_collections": sorted([person, city])}]
    properties = graph.properties()
    assert properties["name"] == graph.name and properties["id"] == f"_graphs/{graph.name}"
    assert properties["smart"] is False and properties["shard_count"] == 1
    assert properties["replication_factor"] == 1 and properties["write_concern"] == 1
    assert db.collection(rel).properties()["edge"] is True
    assert db.has_collection(lonely)
    with pytest.raises(GraphCreateError) as e:
        db.create_graph(graph.name)
    assert e.value.error_code == 1925 and e.value.http_code == 409
    with pytest.raises(GraphPropertiesError) as e:
        db.graph(unique("none")).properties()
    assert e.value.error_code == 1924
    assert db.delete_graph(graph.name, drop_collections=False) is True
    assert db.has_collection(rel), "collections stay without drop_collections"
    with pytest.raises(GraphDeleteError) as e:
        db.delete_graph(graph.name)
    assert e.value.error_code == 1924
    assert db.delete_graph(graph.name, ignore_missing=True) is False


def test_drop_collections_keeps_those_of_other_graphs(db, social):
    graph, rel, person, city, lonely = social
    other = db.create_graph(unique("g2"), edge_definitions=[{
        "edge_collection": rel, "from_vertex_collections": [person],
        "to_vertex_collections": [person, city]}])
    db.delete_graph(graph.name, drop_collections=True)
    assert db.has_collection(rel) and db.has_collection(person)
    assert not db.has_collection(lonely)
    db.delete_graph(other.name, drop_collections=True)
    assert not db.has_collection(rel) and not db.has_collection(person)


def test_vertex_collections_and_edge_definitions(db, social):
    graph, rel, person, city, lonely = social
    assert graph.vertex_collections() == sorted([person, city, lonely])
    extra, e2, t = names("extra", "e2", "t")
    graph.create_vertex_collection(extra)
    assert graph.has_vertex_collection(extra)
    with pytest.raises(VertexCollectionCreateError) as e:
        graph.create_vertex_collection(extra)
    assert e.value.error_code == 1938
    with pytest.raises(VertexCollectionCreateError) as e:
        graph.create_vertex_collection(person)
    assert e.value.error_code == 1929
    with pytest.raises(VertexCollectionDeleteError) as e:
        graph.delete_vertex_collection(person)
    assert e.value.error_code == 1928
    assert graph.delete_vertex_collection(extra, purge=True) is True
    assert not db.has_collection(extra)

    graph.create_edge_definition(e2, [lonely], [t])
    assert graph.has_edge_definition(e2) and graph.has_edge_collection(e2)
    assert lonely not in graph.properties()["orphan_collections"]
    assert graph.edge_collections() == sorted([rel, e2])
    with pytest.raises(EdgeDefinitionCreateError) as e:
        graph.create_edge_definition(e2, [person], [t])
    assert e.value.error_code == 1920
    graph.replace_edge_definition(e2, [person], [person], sync=True)
    definitions = {d["edge_collection"]: d for d in graph.edge_definitions()}
    assert definitions[e2]["from_vertex_collections"] == [person]
    assert sorted(graph.properties()["orphan_collections"]) == sorted([lonely, t])
    assert graph.delete_edge_definition(e2, purge=True) is True
    assert not db.has_collection(e2)
    with pytest.raises(EdgeDefinitionDeleteError) as e:
        graph.delete_edge_definition(e2)
    assert e.value.error_code == 1930


def test_vertex_crud_with_every_option(db, social):
    graph, rel, person, city, lonely = social
    people = graph.vertex_collection(person)
    meta = people.insert({"_key": "ann", "age": 30}, return_new=True, sync=True)
    assert meta["new"]["age"] == 30 and meta["vertex"]["_id"] == f"{person}/ann"
    ann = people.get("ann")
    assert ann["age"] == 30 and people.get("nobody") is None
    assert people.has("ann")
    with pytest.raises(DocumentRevisionError):
        people.get({"_key": "ann", "_rev": "_nope"})
    updated = people.update({"_key": "ann", "nick": None, "city": "x"}, return_old=True,
                            return_new=True)
    assert updated["old"]["age"] == 30 and updated["new"]["nick"] is None
    updated = people.update({"_key": "ann", "nick": None}, keep_none=False, return_new=True)
    assert "nick" not in updated["new"]
    with pytest.raises(DocumentRevisionError):
        people.update({"_key": "ann", "_rev": ann["_rev"], "z": 1}, check_rev=True)
    replaced = people.replace({"_key": "ann", "only": True}, return_old=True, sync=True)
    assert replaced["old"]["city"] == "x" and replaced["vertex"]["_old_rev"]
    with pytest.raises(DocumentRevisionError):
        people.replace({"_key": "ann", "_rev": ann["_rev"], "z": 1})
    with pytest.raises(DocumentRevisionError):
        people.delete({"_key": "ann", "_rev": ann["_rev"]})
    removed = people.delete("ann", return_old=True, sync=True)
    assert removed["old"]["only"] is True
    assert people.delete("ann", ignore_missing=True) is False
    with pytest.raises(DocumentInsertError) as e:
        graph.vertex_collection(unique("none")).insert({})
    assert e.value.error_code == 1926


def test_edges_link_and_constraints(db, social):
    graph, rel, person, city, lonely = social
    people = graph.vertex_collection(person)
    people.insert({"_key": "a"})
    people.insert({"_key": "b"})
    graph.vertex_collection(city).insert({"_key": "c"})
    graph.vertex_collection(lonely).insert({"_key": "l"})
    edges = graph.edge_collection(rel)
    meta = edges.insert({"_key": "ab", "_from": f"{person}/a", "_to": f"{person}/b"},
                        return_new=True)
    assert meta["new"]["_to"] == f"{person}/b"
    linked = graph.link(rel, f"{person}/a", f"{city}/c", data={"w": 1})
    assert edges.get(linked["_key"])["w"] == 1
    assert graph.insert_edge(rel, {"_from": f"{person}/b", "_to": f"{person}/a"})
    listing = edges.edges(f"{person}/a", direction="out")
    assert sorted(e["_to"] for e in listing["edges"]) == sorted([f"{person}/b", f"{city}/c"])
    with pytest.raises(DocumentInsertError) as e:
        edges.insert({"_from": f"{lonely}/l", "_to": f"{person}/a"})
    assert e.value.error_code == 1947
    with pytest.raises(DocumentInsertError) as e:
        edges.insert({"_from": f"{person}/zz", "_to": f"{person}/a"})
    assert e.value.error_code == 1202 and e.value.http_code == 404
    with pytest.raises(DocumentInsertError) as e:
        graph.edge_collection(unique("none")).insert({"_from": f"{person}/a",
                                                      "_to": f"{person}/b"})
    assert e.value.error_code == 1939
    with pytest.raises(DocumentUpdateError) as e:
        edges.update({"_key": "ab", "_to": f"{lonely}/l"})
    assert e.value.error_code == 1947
    with pytest.raises(DocumentReplaceError) as e:
        edges.replace({"_key": "ab", "w": 2})
    assert e.value.error_code == 1233
    replaced = edges.replace({"_key": "ab", "_from": f"{person}/b", "_to": f"{person}/b"},
                             return_new=True)
    assert replaced["new"]["_from"] == f"{person}/b"
    with pytest.raises(CollectionDeleteError) as e:
        db.delete_collection(rel)
    assert e.value.error_code == 1942 and e.value.http_code == 403


def test_removing_a_vertex_removes_its_edges_in_every_graph(db, social):
    graph, rel, person, city, lonely = social
    other_edges, = names("other_edges")
    other = db.create_graph(unique("g2"), edge_definitions=[
        {"edge_collection": rel, "from_vertex_collections": [person],
         "to_vertex_collections": [person, city]},
        {"edge_collection": other_edges, "from_vertex_collections": [city],
         "to_vertex_collections": [person]},
    ])
    people = graph.vertex_collection(person)
    for key in ("a", "b"):
        people.insert({"_key": key})
    graph.vertex_collection(city).insert({"_key": "c"})
    graph.edge_collection(rel).insert({"_key": "ab", "_from": f"{person}/a", "_to": f"{person}/b"})
    graph.edge_collection(rel).insert({"_key": "ba", "_from": f"{person}/b", "_to": f"{person}/a"})
    graph.edge_collection(rel).insert({"_key": "bc", "_from": f"{person}/b", "_to": f"{city}/c"})
    other.edge_collection(other_edges).insert(
        {"_key": "ca", "_from": f"{city}/c", "_to": f"{person}/a"})
    people.delete("a")
    assert db.collection(rel).has("bc")
    assert not db.collection(rel).has("ab") and not db.collection(rel).has("ba")
    assert not db.collection(other_edges).has("ca"), "the other graph's edges go too"
    db.delete_graph(other.name, drop_collections=True)


def test_definitions_survive_a_restart(server_factory):
    srv = server_factory()
    client = ArangoClient(hosts=srv.url)
    sys_db = client.db("_system", username="root", password=ROOT_PASSWORD)
    g, e, v = names("g", "e", "v")
    sys_db.create_graph(g, edge_definitions=[{"edge_collection": e,
                                              "from_vertex_collections": [v],
                                              "to_vertex_collections": [v]}],
                        orphan_collections=["orph"], sync=True)
    sys_db.graph(g).vertex_collection(v).insert({"_key": "x"})
    assert srv.stop() == 0
    srv.start()
    sys_db = ArangoClient(hosts=srv.url).db("_system", username="root", password=ROOT_PASSWORD)
    properties = sys_db.graph(g).properties()
    assert properties["orphan_collections"] == ["orph"]
    assert properties["edge_definitions"][0]["edge_collection"] == e
    assert sys_db.graph(g).vertex_collection(v).get("x")["_key"] == "x"
    with pytest.raises(CollectionDeleteError) as err:
        sys_db.delete_collection(e)
    assert err.value.error_code == 1942


def test_concurrent_graphs_sharing_edge_collections(db):
    e, v, w = names("e", "v", "w")
    errors: list = []
    created: list = []

    def create(i: int):
        to = [v] if i % 2 == 0 else [w]
        name = unique(f"cg{i}")
        try:
            db.create_graph(name, edge_definitions=[
                {"edge_collection": e, "from_vertex_collections": [v],
                 "to_vertex_collections": to}])
            created.append((name, to))
        except GraphCreateError as error:
            errors.append(error.error_code)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Whichever definition came first wins; every graph created agrees with it, and every
    # refusal is 1921.
    assert created
    assert len({tuple(to) for _, to in created}) == 1
    assert set(errors) <= {1921}
    assert len(created) + len(errors) == 8
    assert db.collection(e).properties()["edge"] is True
    for name, _ in created:
        db.delete_graph(name)
