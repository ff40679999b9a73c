"""AQL graph traversals and path searches through python-arango's `db.aql.execute`, checked
against networkx on a generated random graph: traversal reachability by depth, SHORTEST_PATH
(unweighted and weighted), K_SHORTEST_PATHS, K_PATHS and ALL_SHORTEST_PATHS; the named-graph
form over a definition stored in `_graphs`; and the node types `explain` shows.

What it is: the driver's view of graph queries. What it is not: the options and edge cases
one by one (`crates/aql/tests/graph_queries.rs`).
"""

from __future__ import annotations

import random

import networkx as nx
import pytest

from conftest import unique

N = 24


@pytest.fixture(scope="module")
def graph(db):
    rng = random.Random(7)
    vertices = db.create_collection(unique("gv"))
    edges = db.create_collection(unique("ge"), edge=True)
    vertices.insert_many([{"_key": str(i), "n": i} for i in range(N)])
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(N))
    docs = []
    for k in range(60):
        a, b = rng.randrange(N), rng.randrange(N)
        if a == b:
            continue
        w = rng.randint(1, 9)
        docs.append({"_key": f"e{k}", "_from": f"{vertices.name}/{a}", "_to": f"{vertices.name}/{b}", "w": w})
        g.add_edge(a, b, key=f"e{k}", w=w)
    edges.insert_many(docs)
    if not db.has_collection("_graphs"):
        db.create_collection("_graphs", system=True)
    name = unique("graph")
    db.collection("_graphs").insert({
        "_key": name,
        "edgeDefinitions": [{"collection": edges.name, "from": [vertices.name], "to": [vertices.name]}],
        "orphanCollections": [],
    })
    yield {"v": vertices.name, "e": edges.name, "g": g, "name": name}
    db.collection("_graphs").delete(name, ignore_missing=True)
    db.delete_collection(edges.name)
    db.delete_collection(vertices.name)


def run(db, query, **binds):
    return list(db.aql.execute(query, bind_vars=binds))


def simple(g):
    """The graph with one edge per pair (the lightest) for networkx's path functions."""
    out = nx.DiGraph()
    out.add_nodes_from(g.nodes)
    for a, b, data in g.edges(data=True):
        if not out.has_edge(a, b) or out[a][b]["w"] > data["w"]:
            out.add_edge(a, b, w=data["w"])
    return out


def test_traversal_reaches_what_networkx_reaches(db, graph):
    g = simple(graph["g"])
    for start in range(0, N, 5):
        got = run(
            db,
            "FOR v IN 1..3 OUTBOUND @s @@e OPTIONS {uniqueVertices: 'global', order: 'bfs'} "
            "RETURN v.n",
            s=f"{graph['v']}/{start}", **{"@e": graph["e"]},
        )
        lengths = nx.single_source_shortest_path_length(g, start, cutoff=3)
        expected = sorted(v for v, d in lengths.items() if 1 <= d <= 3)
        assert sorted(got) == expected
        # Breadth-first order: depths never decrease.
        depths = [lengths[v] for v in got]
        assert depths == sorted(depths)


def test_traversal_with_named_graph_and_paths(db, graph):
    start = max(graph["g"].nodes, key=graph["g"].degree)
    rows = run(
        db,
        "FOR v, e, p IN 1..2 ANY @s GRAPH @g RETURN {v: v.n, e: e._key, len: LENGTH(p.edges), "
        "last: LAST(p.vertices).n}",
        s=f"{graph['v']}/{start}", g=graph["name"],
    )
    assert rows
    for row in rows:
        assert row["v"] == row["last"]
        assert 1 <= row["len"] <= 2


def test_shortest_path_matches_networkx(db, graph):
    g = simple(graph["g"])
    for source, target in [(0, 5), (3, 17), (8, 2), (11, 23)]:
        query = (
            "FOR v, e IN OUTBOUND SHORTEST_PATH @s TO @t @@e OPTIONS {weightAttribute: @w} "
            "RETURN [v.n, e.w]"
        )
        binds = {"s": f"{graph['v']}/{source}", "t": f"{graph['v']}/{target}", "@e": graph["e"]}
        unweighted = list(db.aql.execute(query, bind_vars={**binds, "w": None}))
        weighted = list(db.aql.execute(query, bind_vars={**binds, "w": "w"}))
        if not nx.has_path(g, source, target):
            assert unweighted == [] and weighted == []
            continue
        assert len(unweighted) - 1 == nx.shortest_path_length(g, source, target)
        assert unweighted[0] == [source, None] and unweighted[-1][0] == target
        cost = nx.shortest_path_length(g, source, target, weight="w")
        assert sum(w for _, w in weighted[1:]) == cost


def test_k_shortest_paths_k_paths_and_all_shortest_paths(db, graph):
    g = simple(graph["g"])
    multi = graph["g"]
    pairs = [(s, t) for s in range(6) for t in range(6, 12) if nx.has_path(g, s, t)][:3]
    assert pairs
    for source, target in pairs:
        binds = {"s": f"{graph['v']}/{source}", "t": f"{graph['v']}/{target}", "@e": graph["e"]}
        k = list(db.aql.execute(
            "FOR p IN OUTBOUND K_SHORTEST_PATHS @s TO @t @@e OPTIONS {weightAttribute: 'w'} "
            "LIMIT 3 RETURN p", bind_vars=binds))
        weights = [p["weight"] for p in k]
        assert weights == sorted(weights)
        assert weights[0] == nx.shortest_path_length(g, source, target, weight="w")
        for p in k:
            assert sum(e["w"] for e in p["edges"]) == p["weight"]
            assert len({v["_key"] for v in p["vertices"]}) == len(p["vertices"])
        paths = list(db.aql.execute(
            "FOR p IN 1..4 OUTBOUND K_PATHS @s TO @t @@e RETURN p.vertices[*].n", bind_vars=binds))
        expected = set()
        for path in nx.all_simple_edge_paths(multi, source, target, cutoff=4):
            expected.add(tuple([source] + [b for _, b, _ in path]))
        assert sorted(map(tuple, paths)) == sorted(
            tuple([source] + [b for _, b, _ in p])
            for p in nx.all_simple_edge_paths(multi, source, target, cutoff=4))
        assert set(map(tuple, paths)) == expected
        shortest = list(db.aql.execute(
            "FOR p IN OUTBOUND ALL_SHORTEST_PATHS @s TO @t @@e RETURN p.vertices[*].n",
            bind_vars=binds))
        assert sorted(map(tuple, shortest)) == sorted(
            tuple(p) for p in nx.all_shortest_paths(g, source, target))


def test_explain_shows_graph_node_types(db, graph):
    binds = {"s": f"{graph['v']}/0", "t": f"{graph['v']}/1", "@e": graph["e"]}
    cases = [
        ("FOR v IN 1..2 OUTBOUND @s @@e RETURN v", "TraversalNode", {"s": binds["s"], "@e": graph["e"]}),
        ("FOR v IN OUTBOUND SHORTEST_PATH @s TO @t @@e RETURN v", "ShortestPathNode", binds),
        ("FOR p IN OUTBOUND K_SHORTEST_PATHS @s TO @t @@e RETURN p", "EnumeratePathsNode", binds),
        ("FOR p IN 1..3 OUTBOUND K_PATHS @s TO @t @@e RETURN p", "EnumeratePathsNode", binds),
        ("FOR p IN OUTBOUND ALL_SHORTEST_PATHS @s TO @t @@e RETURN p", "EnumeratePathsNode", binds),
    ]
    for query, node_type, bind_vars in cases:
        plan = db.aql.explain(query, bind_vars=bind_vars)
        types = [n["type"] for n in plan["nodes"]]
        assert node_type in types, (query, types)


def test_unknown_graph_is_an_error(db):
    from arango.exceptions import AQLQueryExecuteError

    with pytest.raises(AQLQueryExecuteError) as info:
        run(db, "FOR v IN OUTBOUND 'a/b' GRAPH 'no_such_graph' RETURN v")
    assert info.value.error_code == 1924
