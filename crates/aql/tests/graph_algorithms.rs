//! Property tests of the graph searches (`quince_aql::graph`) over random small directed
//! multigraphs.
//!
//! What it is: an adjacency-list [`Neighbors`] provider (outbound, inbound or any, forward or
//! backward; self-loops and parallel edges allowed; weights 0..5 in the edge attribute `w`), a
//! brute-force reference that enumerates paths depth-first under the same uniqueness rules, and
//! `petgraph`'s Dijkstra as the reference for shortest distances. Each search is compared with
//! them: traversals path for path (depth-first in the same order, breadth-first and weighted as
//! multisets with their order checked), shortest paths by weight, k shortest paths by their
//! weights, k paths and all shortest paths path for path.
//!
//! What it is not: a test of the executor or of AQL syntax, or of performance (the graphs have at
//! most 8 vertices and 20 edges, and the case counts are modest so the file runs in seconds).
//!
//! Invariants: the provider's edge order is the edge insertion order (outbound ones first for
//! `any`), the same on every call; every path a search hands over is checked to be a real walk
//! (each step one of the provider's edges out of the vertex before it).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use petgraph::algo::dijkstra;
use petgraph::graph::{DiGraph, NodeIndex};
use proptest::prelude::*;
use quince_aql::graph::paths::{all_shortest_paths, k_paths, k_shortest_paths, shortest_path};
use quince_aql::graph::traverse::{traverse, Flow, Order, TraversalOptions, Uniqueness};
use quince_aql::graph::{Direction, Neighbors, Path, Step, Weights};
use quince_errors::Result;
use serde_json::json;

/// A random graph: `n` vertices `v/0..`, edges `e/<index>` as `(from, to, weight)`.
#[derive(Clone, Debug)]
struct Graph {
    n: usize,
    edges: Vec<(usize, usize, u32)>,
    direction: Direction,
}

/// The adjacency-list provider over a [`Graph`].
struct Adjacency {
    direction: Direction,
    out: Vec<Vec<Step>>,
    inn: Vec<Vec<Step>>,
}

fn vid(i: usize) -> Arc<str> {
    format!("v/{i}").into()
}

fn index(v: &str) -> usize {
    v[2..].parse().unwrap()
}

impl Adjacency {
    fn new(graph: &Graph) -> Adjacency {
        let mut out = vec![Vec::new(); graph.n];
        let mut inn = vec![Vec::new(); graph.n];
        for (i, &(from, to, w)) in graph.edges.iter().enumerate() {
            let id: Arc<str> = format!("e/{i}").into();
            let doc = Arc::new(json!({
                "_id": &*id, "_from": &*vid(from), "_to": &*vid(to), "w": w,
            }));
            out[from].push(Step {
                edge_id: id.clone(),
                edge: doc.clone(),
                vertex: vid(to),
            });
            inn[to].push(Step {
                edge_id: id,
                edge: doc,
                vertex: vid(from),
            });
        }
        Adjacency {
            direction: graph.direction,
            out,
            inn,
        }
    }
}

impl Neighbors for Adjacency {
    fn neighbors(&mut self, vertex: &str, backward: bool) -> Result<Vec<Step>> {
        let i = index(vertex);
        let direction = if backward {
            self.direction.reverse()
        } else {
            self.direction
        };
        Ok(match direction {
            Direction::Outbound => self.out[i].clone(),
            Direction::Inbound => self.inn[i].clone(),
            Direction::Any => self.out[i].iter().chain(&self.inn[i]).cloned().collect(),
        })
    }

    fn step(&mut self) -> Result<()> {
        Ok(())
    }
}

fn by_w() -> Weights {
    Weights {
        attribute: Some(vec!["w".into()]),
        default: 1.0,
    }
}

/// A path as comparable data: vertex ids, edge ids, weight.
type Flat = (Vec<String>, Vec<String>, u64);

fn flat(path: &Path) -> Flat {
    (
        path.vertices().map(|v| v.to_string()).collect(),
        path.steps.iter().map(|s| s.edge_id.to_string()).collect(),
        path.weight as u64,
    )
}

fn edge_weight(step: &Step, weighted: bool) -> u64 {
    if weighted {
        step.edge["w"].as_u64().unwrap()
    } else {
        1
    }
}

/// Checks that `path` is a real walk from `start` through the provider's edges, with the right
/// weight.
fn check_walk(adjacency: &mut Adjacency, path: &Path, start: &str, weighted: bool) {
    assert_eq!(&*path.start, start);
    let mut at = path.start.clone();
    let mut weight = 0;
    for step in &path.steps {
        let edges = adjacency.neighbors(&at, false).unwrap();
        assert!(
            edges.iter().any(|e| e == step),
            "{step:?} is no edge out of {at}"
        );
        weight += edge_weight(step, weighted);
        at = step.vertex.clone();
    }
    assert_eq!(path.weight, weight as f64, "weight of {path:?}");
}

/// The brute-force traversal: every path, depth-first in provider order, under path
/// uniqueness (`None` or `Path`), not expanding at `max_depth` nor at a vertex `prune` (except
/// the start).
fn brute_traverse(
    adjacency: &mut Adjacency,
    start: usize,
    options: &TraversalOptions,
    prune: Option<usize>,
) -> Vec<Flat> {
    fn walk(
        adjacency: &mut Adjacency,
        path: &mut Flat,
        options: &TraversalOptions,
        prune: Option<usize>,
        out: &mut Vec<Flat>,
    ) {
        out.push(path.clone());
        let end = path.0.last().unwrap().clone();
        let depth = path.1.len() as u64;
        if depth == options.max_depth || (depth > 0 && prune == Some(index(&end))) {
            return;
        }
        for step in adjacency.neighbors(&end, false).unwrap() {
            let vertex = step.vertex.to_string();
            let edge = step.edge_id.to_string();
            if options.unique_vertices == Uniqueness::Path && path.0.contains(&vertex) {
                continue;
            }
            if options.unique_edges == Uniqueness::Path && path.1.contains(&edge) {
                continue;
            }
            let w = edge_weight(&step, options.weights.is_some());
            path.0.push(vertex);
            path.1.push(edge);
            path.2 += w;
            walk(adjacency, path, options, prune, out);
            path.0.pop();
            path.1.pop();
            path.2 -= w;
        }
    }
    let mut out = Vec::new();
    let mut path = (vec![vid(start).to_string()], Vec::new(), 0);
    walk(adjacency, &mut path, options, prune, &mut out);
    out
}

/// Every loopless path from `source` to `target`, depth-first.
fn brute_simple_paths(adjacency: &mut Adjacency, source: usize, target: usize) -> Vec<Flat> {
    let options = TraversalOptions {
        min_depth: 0,
        max_depth: u64::MAX,
        order: Order::Dfs,
        unique_vertices: Uniqueness::Path,
        unique_edges: Uniqueness::Path,
        weights: Some(by_w()),
    };
    let target = vid(target).to_string();
    brute_traverse(adjacency, source, &options, None)
        .into_iter()
        .filter(|p| p.0.last() == Some(&target))
        .collect()
}

/// petgraph's view of the graph: one arc per direction an edge can be followed in.
fn reference(graph: &Graph, weighted: bool) -> (DiGraph<(), u64>, Vec<NodeIndex>) {
    let mut g = DiGraph::new();
    let nodes: Vec<NodeIndex> = (0..graph.n).map(|_| g.add_node(())).collect();
    for &(from, to, w) in &graph.edges {
        let w = if weighted { u64::from(w) } else { 1 };
        if matches!(graph.direction, Direction::Outbound | Direction::Any) {
            g.add_edge(nodes[from], nodes[to], w);
        }
        if matches!(graph.direction, Direction::Inbound | Direction::Any) {
            g.add_edge(nodes[to], nodes[from], w);
        }
    }
    (g, nodes)
}

/// The reference distances from `source` (petgraph's Dijkstra).
fn distances(graph: &Graph, source: usize, weighted: bool) -> HashMap<usize, u64> {
    let (g, nodes) = reference(graph, weighted);
    dijkstra(&g, nodes[source], None, |e| *e.weight())
        .into_iter()
        .map(|(node, d)| (node.index(), d))
        .collect()
}

fn graphs() -> impl Strategy<Value = Graph> {
    let direction = prop_oneof![
        Just(Direction::Outbound),
        Just(Direction::Inbound),
        Just(Direction::Any),
    ];
    (1usize..=8, direction).prop_flat_map(|(n, direction)| {
        prop::collection::vec((0..n, 0..n, 0u32..5), 0..=20).prop_map(move |edges| Graph {
            n,
            edges,
            direction,
        })
    })
}

fn uniqueness() -> impl Strategy<Value = Uniqueness> {
    prop_oneof![Just(Uniqueness::None), Just(Uniqueness::Path)]
}

fn order() -> impl Strategy<Value = Order> {
    prop_oneof![Just(Order::Dfs), Just(Order::Bfs), Just(Order::Weighted)]
}

/// Runs `traverse`, expanding every path except those ending at `prune`.
fn run_traverse(
    adjacency: &mut Adjacency,
    start: usize,
    options: &TraversalOptions,
    prune: Option<usize>,
) -> Vec<Path> {
    let mut seen = Vec::new();
    traverse(adjacency, &vid(start), options, &mut |path| {
        seen.push(path.clone());
        Ok(Flow {
            expand: path.depth() == 0 || prune != Some(index(path.end())),
            stop: false,
        })
    })
    .unwrap();
    seen
}

fn sorted(mut paths: Vec<Flat>) -> Vec<Flat> {
    paths.sort();
    paths
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn traversal_matches_brute_force(
        graph in graphs(),
        start in 0usize..8,
        max_depth in 0u64..=4,
        unique_vertices in uniqueness(),
        unique_edges in uniqueness(),
        order in order(),
        weighted in any::<bool>(),
        prune in proptest::option::of(0usize..8),
    ) {
        let start = start % graph.n;
        let options = TraversalOptions {
            min_depth: 0,
            max_depth,
            order,
            unique_vertices,
            unique_edges,
            weights: weighted.then(by_w),
        };
        let mut adjacency = Adjacency::new(&graph);
        let expected = brute_traverse(&mut adjacency, start, &options, prune);
        let got = run_traverse(&mut adjacency, start, &options, prune);
        for path in &got {
            check_walk(&mut adjacency, path, &vid(start), weighted);
        }
        let got: Vec<Flat> = got.iter().map(flat).collect();
        prop_assert_eq!(&got[0], &expected[0]);
        match order {
            Order::Dfs => prop_assert_eq!(got, expected),
            Order::Bfs => {
                prop_assert!(got.windows(2).all(|w| w[0].1.len() <= w[1].1.len()));
                prop_assert_eq!(sorted(got), sorted(expected));
            }
            Order::Weighted => {
                prop_assert!(got.windows(2).all(|w| w[0].2 <= w[1].2));
                prop_assert_eq!(sorted(got), sorted(expected));
            }
        }
    }

    #[test]
    fn global_uniqueness_reaches_each_vertex_once(
        graph in graphs(),
        start in 0usize..8,
        max_depth in 0u64..=9,
        weighted_order in any::<bool>(),
        weighted in any::<bool>(),
    ) {
        let start = start % graph.n;
        let options = TraversalOptions {
            min_depth: 0,
            max_depth,
            order: if weighted_order { Order::Weighted } else { Order::Bfs },
            unique_vertices: Uniqueness::Global,
            unique_edges: Uniqueness::Path,
            weights: weighted.then(by_w),
        };
        let mut adjacency = Adjacency::new(&graph);
        let got = run_traverse(&mut adjacency, start, &options, None);
        for path in &got {
            check_walk(&mut adjacency, path, &vid(start), weighted);
        }
        // Each vertex once, the start first.
        let ends: Vec<usize> = got.iter().map(|p| index(p.end())).collect();
        prop_assert_eq!(ends[0], start);
        prop_assert_eq!(ends.iter().collect::<HashSet<_>>().len(), ends.len());
        let hops = distances(&graph, start, false);
        let within: HashSet<usize> = hops
            .iter()
            .filter(|(_, &d)| d <= max_depth)
            .map(|(&v, _)| v)
            .collect();
        let reached: HashSet<usize> = ends.iter().copied().collect();
        // Breadth-first reaches every vertex within the depth limit. Weighted
        // order visits a vertex first by its lightest path, which may be
        // longer in hops and so end its branch at the limit: a subset then,
        // and all of them once the limit does not bind.
        if weighted_order && (max_depth as usize) < graph.n {
            prop_assert!(reached.is_subset(&within));
        } else {
            prop_assert_eq!(reached, within);
        }
        if weighted_order {
            prop_assert!(got.windows(2).all(|w| w[0].weight <= w[1].weight));
            if max_depth as usize >= graph.n {
                // No depth limit in effect: each vertex by its lightest path.
                let lightest = distances(&graph, start, weighted);
                for path in &got {
                    prop_assert_eq!(path.weight as u64, lightest[&index(path.end())]);
                }
            }
        } else {
            // Breadth-first: each vertex by a shortest path.
            prop_assert!(got.windows(2).all(|w| w[0].depth() <= w[1].depth()));
            for path in &got {
                prop_assert_eq!(path.depth() as u64, hops[&index(path.end())]);
            }
        }
    }

    #[test]
    fn shortest_path_matches_petgraph(
        graph in graphs(),
        source in 0usize..8,
        target in 0usize..8,
        weighted in any::<bool>(),
    ) {
        let (source, target) = (source % graph.n, target % graph.n);
        let mut adjacency = Adjacency::new(&graph);
        let weights = weighted.then(by_w);
        let got = shortest_path(&mut adjacency, &vid(source), &vid(target), weights.as_ref())
            .unwrap();
        let expected = distances(&graph, source, weighted).get(&target).copied();
        match got {
            None => prop_assert_eq!(expected, None),
            Some(path) => {
                check_walk(&mut adjacency, &path, &vid(source), weighted);
                prop_assert_eq!(&**path.end(), &*vid(target));
                prop_assert_eq!(Some(path.weight as u64), expected);
            }
        }
    }

    #[test]
    fn k_shortest_paths_match_the_lightest_loopless_paths(
        graph in graphs(),
        source in 0usize..8,
        target in 0usize..8,
        weighted in any::<bool>(),
        limit in 1usize..8,
    ) {
        let (source, target) = (source % graph.n, target % graph.n);
        let mut adjacency = Adjacency::new(&graph);
        let weights = weighted.then(by_w);
        let mut got = Vec::new();
        k_shortest_paths(&mut adjacency, &vid(source), &vid(target), weights.as_ref(), &mut |p| {
            got.push(p);
            Ok(got.len() < limit)
        })
        .unwrap();
        for path in &got {
            check_walk(&mut adjacency, path, &vid(source), weighted);
            prop_assert_eq!(&**path.end(), &*vid(target));
            let vertices: HashSet<_> = path.vertices().collect();
            prop_assert_eq!(vertices.len(), path.depth() + 1, "loopless");
        }
        prop_assert!(got.windows(2).all(|w| w[0].weight <= w[1].weight));
        let got: Vec<Flat> = got.iter().map(flat).collect();
        let distinct: HashSet<&Vec<String>> = got.iter().map(|p| &p.1).collect();
        prop_assert_eq!(distinct.len(), got.len());
        let mut expected: Vec<u64> = brute_simple_paths(&mut adjacency, source, target)
            .iter()
            .map(|p| if weighted { p.2 } else { p.1.len() as u64 })
            .collect();
        expected.sort();
        expected.truncate(limit);
        let weights: Vec<u64> = got.iter().map(|p| p.2).collect();
        prop_assert_eq!(weights, expected);
    }

    #[test]
    fn k_paths_match_brute_force(
        graph in graphs(),
        source in 0usize..8,
        target in 0usize..8,
        min in 0u64..4,
        span in 0u64..5,
    ) {
        let (source, target) = (source % graph.n, target % graph.n);
        let max = min + span;
        let mut adjacency = Adjacency::new(&graph);
        let mut got = Vec::new();
        k_paths(&mut adjacency, &vid(source), &vid(target), min, max, &mut |p| {
            got.push(p);
            Ok(true)
        })
        .unwrap();
        for path in &got {
            check_walk(&mut adjacency, path, &vid(source), false);
        }
        prop_assert!(got.windows(2).all(|w| w[0].depth() <= w[1].depth()));
        let got: Vec<Flat> = got.iter().map(flat).collect();
        let expected: Vec<Flat> = brute_simple_paths(&mut adjacency, source, target)
            .into_iter()
            .filter(|p| (min..=max).contains(&(p.1.len() as u64)))
            .map(|(v, e, _)| {
                let len = e.len() as u64;
                (v, e, len)
            })
            .collect();
        prop_assert_eq!(sorted(got), sorted(expected));
    }

    #[test]
    fn all_shortest_paths_match_brute_force(
        graph in graphs(),
        source in 0usize..8,
        target in 0usize..8,
        weighted in any::<bool>(),
    ) {
        let (source, target) = (source % graph.n, target % graph.n);
        let mut adjacency = Adjacency::new(&graph);
        let weights = weighted.then(by_w);
        let mut got = Vec::new();
        all_shortest_paths(&mut adjacency, &vid(source), &vid(target), weights.as_ref(), &mut |p| {
            got.push(p);
            Ok(true)
        })
        .unwrap();
        for path in &got {
            check_walk(&mut adjacency, path, &vid(source), weighted);
        }
        let got: Vec<Flat> = got.iter().map(flat).collect();
        let all: Vec<Flat> = brute_simple_paths(&mut adjacency, source, target)
            .into_iter()
            .map(|(v, e, w)| {
                let w = if weighted { w } else { e.len() as u64 };
                (v, e, w)
            })
            .collect();
        let least = all.iter().map(|p| p.2).min();
        let expected: Vec<Flat> = all.into_iter().filter(|p| Some(p.2) == least).collect();
        prop_assert_eq!(sorted(got), sorted(expected));
    }
}

/// A provider that reads the graph lazily: depth-first over a huge implicit graph (every
/// vertex has 1000 successors) stops after a few results without enumerating it.
#[test]
fn depth_first_is_lazy_on_a_huge_graph() {
    struct Huge {
        calls: usize,
    }
    impl Neighbors for Huge {
        fn neighbors(&mut self, vertex: &str, _backward: bool) -> Result<Vec<Step>> {
            self.calls += 1;
            Ok((0..1000)
                .map(|i| {
                    let id: Arc<str> = format!("e/{vertex}-{i}").into();
                    Step {
                        edge_id: id.clone(),
                        edge: Arc::new(json!({ "_id": &*id })),
                        vertex: format!("{vertex}.{i}").into(),
                    }
                })
                .collect())
        }

        fn step(&mut self) -> Result<()> {
            Ok(())
        }
    }
    let mut huge = Huge { calls: 0 };
    let options = TraversalOptions {
        min_depth: 0,
        max_depth: 50,
        order: Order::Dfs,
        unique_vertices: Uniqueness::Path,
        unique_edges: Uniqueness::Path,
        weights: None,
    };
    let mut seen = 0;
    traverse(&mut huge, "v/0", &options, &mut |_| {
        seen += 1;
        Ok(Flow {
            expand: true,
            stop: seen == 10,
        })
    })
    .unwrap();
    assert_eq!(seen, 10);
    assert_eq!(huge.calls, 9);
    // Breadth-first asks for the start's edges and no more for ten paths.
    let mut huge = Huge { calls: 0 };
    let mut seen = 0;
    let options = TraversalOptions {
        order: Order::Bfs,
        ..options
    };
    traverse(&mut huge, "v/0", &options, &mut |_| {
        seen += 1;
        Ok(Flow {
            expand: true,
            stop: seen == 10,
        })
    })
    .unwrap();
    assert_eq!(seen, 10);
    assert_eq!(huge.calls, 1);
}
