"""The edge index through python-arango 8: `EdgeCollection.edges(vertex, direction=...)` (its
edges and stats), `indexes()` of an edge collection, `delete_index` of the edge index, AQL on
`_from`/`_to` served by the edge index (explain names it), and edges inside a stream
transaction.

What it is: the driver's view of the contract. python-arango reaches `/_api/edges` only through
`EdgeCollection`, which it builds for a named graph; this server has no graph API
(`/_api/gharial`), so the tests build it directly, and `EdgeCollection.link` (which inserts
through the graph API) is not exercised: edges are inserted through the collection.

What it is not: the exact HTTP replies (`test_http_edges.py`).
"""

from __future__ import annotations

import pytest
from arango.collection import EdgeCollection
from arango.exceptions import EdgeListError, IndexDeleteError


def edge_view(database, name: str) -> EdgeCollection:
    """python-arango's edge collection wrapper for `name`, outside any graph."""
    return EdgeCollection(database._conn, database._executor, "no-graph", name)


@pytest.fixture
def graph(ecol):
    ecol.insert_many([
        {"_key": "e1", "_from": "p/a", "_to": "p/b"},
        {"_key": "e2", "_from": "p/a", "_to": "p/c"},
        {"_key": "e3", "_from": "p/b", "_to": "p/a"},
        {"_key": "e4", "_from": "p/a", "_to": "p/a"},
    ])
    return ecol


def keys(listing):
    return [edge["_key"] for edge in listing["edges"]]


def test_edges_in_each_direction(db, graph):
    view = edge_view(db, graph.name)
    both = view.edges("p/a")
    assert keys(both) == ["e1", "e2", "e4", "e3"]
    assert both["stats"] == {"filtered": 0, "scanned_index": 5}
    assert keys(view.edges("p/a", direction="out")) == ["e1", "e2", "e4"]
    assert keys(view.edges("p/a", direction="in")) == ["e3", "e4"]
    assert keys(view.edges({"_id": "p/b"}, direction="in")) == ["e1"]
    assert view.edges("p/nobody")["edges"] == []
    edge = view.edges("p/b", direction="out")["edges"][0]
    assert (edge["_id"], edge["_from"], edge["_to"]) == (f"{graph.name}/e3", "p/b", "p/a")


def test_errors_as_the_driver_reports_them(db, graph, col):
    with pytest.raises(EdgeListError) as err:
        edge_view(db, col.name).edges("p/a")
    assert (err.value.http_code, err.value.error_code) == (400, 1218)
    with pytest.raises(EdgeListError) as err:
        edge_view(db, graph.name).edges("p/a", direction="sideways")
    assert (err.value.http_code, err.value.error_code) == (400, 400)


def test_the_edge_index_is_listed_and_kept(graph):
    indexes = graph.indexes()
    assert [i["type"] for i in indexes] == ["primary", "edge"]
    edge = indexes[1]
    assert (edge["id"], edge["name"], edge["fields"]) == ("1", "edge", ["_from", "_to"])
    assert (edge["unique"], edge["sparse"]) == (False, False)
    with pytest.raises(IndexDeleteError) as err:
        graph.delete_index("1")
    assert (err.value.http_code, err.value.error_code) == (403, 11)
    assert [i["type"] for i in graph.indexes()] == ["primary", "edge"]


def test_aql_reads_the_edge_index(db, graph):
    query = "FOR e IN @@c FILTER e._to == @v SORT e._key RETURN e._key"
    binds = {"@c": graph.name, "v": "p/a"}
    plan = db.aql.explain(query, bind_vars=binds)
    index_nodes = [n for n in plan["nodes"] if n["type"] == "IndexNode"]
    assert [i["type"] for i in index_nodes[0]["indexes"]] == ["edge"]
    assert index_nodes[0]["indexes"][0]["fields"] == ["_to"]
    cursor = db.aql.execute(query, bind_vars=binds, count=True)
    assert list(cursor) == ["e3", "e4"]
    assert cursor.statistics()["scanned_full"] == 0


def test_a_transaction_sees_its_own_edges(db, graph):
    trx = db.begin_transaction(write=[graph.name])
    try:
        trx.collection(graph.name).insert({"_key": "e5", "_from": "p/a", "_to": "p/z"})
        inside = edge_view(trx, graph.name)
        assert keys(inside.edges("p/z", direction="in")) == ["e5"]
        assert edge_view(db, graph.name).edges("p/z")["edges"] == []
        trx.commit_transaction()
    finally:
        if trx.transaction_status() == "running":
            trx.abort_transaction()
    assert keys(edge_view(db, graph.name).edges("p/z")) == ["e5"]
