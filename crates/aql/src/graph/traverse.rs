//! The traversal enumerator: every path from a start vertex up to a depth, in depth-first,
//! breadth-first or weighted order, with ArangoDB's uniqueness rules.
//!
//! What it is: [`traverse`], which hands each path it reaches (depth 0, the start alone,
//! included) to a callback that says whether to expand the path further and whether to stop
//! the whole traversal (the executor emits `v, e, p` from inside the callback when the depth is
//! at least `min`, evaluates `PRUNE` and pushed-down filters there, and stops on `LIMIT`).
//!
//! What it is not: documents, AQL expressions or the edge index (see the module above).
//!
//! Invariants (checked against brute force in `tests/graph_algorithms.rs`):
//! - every path handed over has depth <= `max_depth`; a path at `max_depth` is never expanded;
//! - the start alone (depth 0) is handed over first, whatever the options;
//! - `uniqueEdges: path`: no edge twice on one path; `none`: no check (`global` on edges, which
//!   the planner refuses, is taken as `path`);
//! - `uniqueVertices: path`: no vertex twice on one path (the start included); `global` (bfs and
//!   weighted only; the planner refuses it with dfs): each vertex is reached at most once in the
//!   whole traversal, by the first path to reach it (the shortest in bfs, the lightest in
//!   weighted order), and the start counts as reached; a path that reaches a vertex reached
//!   before is never handed over;
//! - depth-first order follows the provider's edge order (a pre-order walk: a path, then its
//!   extensions edge by edge); breadth-first hands over all paths of depth d before any of depth
//!   d+1, each depth in the order of their parents and then of the provider's edges; weighted
//!   hands them over by ascending weight, ties in the order they were found;
//! - the provider is asked for a vertex's edges only when a path ending there is expanded (the
//!   callback said so and it is shallower than `max_depth`), and only when that path's turn
//!   comes: depth-first holds one edge list per depth of the current path, breadth-first and
//!   weighted hold the paths found but not yet handed over (sharing their common prefixes);
//! - `Path::weight` is the sum of the edges' weights when `weights` is given (a negative one is
//!   1948), the number of edges otherwise.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use quince_errors::Result;

use super::{step_weight, Neighbors, Path, Step, Weights};

/// The order in which paths are reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Depth-first (ArangoDB's default).
    Dfs,
    /// Breadth-first.
    Bfs,
    /// By ascending path weight (a priority queue).
    Weighted,
}

/// A uniqueness rule for vertices or edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uniqueness {
    /// No check.
    None,
    /// Unique on each path.
    Path,
    /// Unique in the whole traversal (vertices only; bfs and weighted only).
    Global,
}

/// A traversal's options, already validated by the planner.
#[derive(Clone, Debug, PartialEq)]
pub struct TraversalOptions {
    /// The least depth the executor emits at (the enumerator still visits shallower paths,
    /// so that `PRUNE` and filters see them).
    pub min_depth: u64,
    /// The greatest depth reached.
    pub max_depth: u64,
    /// Depth-first, breadth-first or weighted.
    pub order: Order,
    /// `uniqueVertices`.
    pub unique_vertices: Uniqueness,
    /// `uniqueEdges` (`None` or `Path`).
    pub unique_edges: Uniqueness,
    /// Edge weights: the weights of `p.weights` and the order of `Weighted`; `None` counts
    /// each edge as 1.
    pub weights: Option<Weights>,
}

/// What the callback decides about a path it was handed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    /// Follow the path's last vertex's edges (ignored at `max_depth`).
    pub expand: bool,
    /// End the traversal now (nothing more is handed over).
    pub stop: bool,
}

/// Hands every path from `start` allowed by `options` to `visit`, in `options.order`.
pub fn traverse(
    neighbors: &mut dyn Neighbors,
    start: &str,
    options: &TraversalOptions,
    visit: &mut dyn FnMut(&Path) -> Result<Flow>,
) -> Result<()> {
    let root = Path::at(Arc::from(start));
    let flow = visit(&root)?;
    if flow.stop || !flow.expand || options.max_depth == 0 {
        return Ok(());
    }
    match options.order {
        Order::Dfs => depth_first(neighbors, root, options, visit),
        Order::Bfs | Order::Weighted => queued(neighbors, root, options, visit),
    }
}

/// The edges of one vertex on the current depth-first path, and the next one to follow.
struct Frame {
    steps: Vec<Step>,
    next: usize,
}

/// Depth-first: one path, grown and shrunk in place, with one [`Frame`] per vertex on it.
fn depth_first(
    neighbors: &mut dyn Neighbors,
    mut path: Path,
    options: &TraversalOptions,
    visit: &mut dyn FnMut(&Path) -> Result<Flow>,
) -> Result<()> {
    let weights = options.weights.as_ref();
    let check_vertices = options.unique_vertices == Uniqueness::Path;
    let global = options.unique_vertices == Uniqueness::Global;
    let check_edges = options.unique_edges != Uniqueness::None;
    // The vertices on the path (path uniqueness) or reached so far (global: the planner
    // refuses it with dfs; here it means "the first path in depth-first order").
    let mut seen_vertices: HashSet<Arc<str>> = HashSet::new();
    if check_vertices || global {
        seen_vertices.insert(path.start.clone());
    }
    let mut path_edges: HashSet<Arc<str>> = HashSet::new();
    // The weight of the path's first i edges at index i.
    let mut prefix = vec![0.0];
    let mut frames = vec![Frame {
        steps: neighbors.neighbors(&path.start, false)?,
        next: 0,
    }];
    // Invariant: frames.len() == path.depth() + 1; the top frame lists the end's edges.
    while let Some(frame) = frames.last_mut() {
        let Some(step) = frame.steps.get(frame.next) else {
            frames.pop();
            if !frames.is_empty() {
                retract(
                    &mut path,
                    &mut prefix,
                    &mut seen_vertices,
                    &mut path_edges,
                    global,
                );
            }
            continue;
        };
        frame.next += 1;
        if (check_vertices || global) && seen_vertices.contains(&step.vertex) {
            continue;
        }
        if check_edges && path_edges.contains(&step.edge_id) {
            continue;
        }
        let step = step.clone();
        let weight = prefix[prefix.len() - 1] + step_weight(weights, &step)?;
        if check_vertices || global {
            seen_vertices.insert(step.vertex.clone());
        }
        if check_edges {
            path_edges.insert(step.edge_id.clone());
        }
        prefix.push(weight);
        path.weight = weight;
        path.steps.push(step);
        let flow = visit(&path)?;
        if flow.stop {
            return Ok(());
        }
        if flow.expand && (path.depth() as u64) < options.max_depth {
            let steps = neighbors.neighbors(path.end(), false)?;
            frames.push(Frame { steps, next: 0 });
        } else {
            retract(
                &mut path,
                &mut prefix,
                &mut seen_vertices,
                &mut path_edges,
                global,
            );
        }
    }
    Ok(())
}

/// Takes the last edge off the depth-first path (a globally reached vertex stays reached).
fn retract(
    path: &mut Path,
    prefix: &mut Vec<f64>,
    path_vertices: &mut HashSet<Arc<str>>,
    path_edges: &mut HashSet<Arc<str>>,
    global: bool,
) {
    if let Some(step) = path.steps.pop() {
        if !global {
            path_vertices.remove(&step.vertex);
        }
        path_edges.remove(&step.edge_id);
        prefix.pop();
        path.weight = prefix[prefix.len() - 1];
    }
}

/// A path found by breadth-first or weighted order and not yet handed over: its last step and
/// its parent, so that paths share their prefixes.
struct Node {
    parent: Option<Rc<Node>>,
    step: Step,
    depth: u64,
    weight: f64,
}

impl Node {
    /// The steps from the start, walking up the parents.
    fn steps(&self) -> Vec<Step> {
        let mut steps = Vec::with_capacity(self.depth as usize);
        let mut node = Some(self);
        while let Some(n) = node {
            steps.push(n.step.clone());
            node = n.parent.as_deref();
        }
        steps.reverse();
        steps
    }

    /// Whether a vertex or an edge is on the path (the start is checked by the caller).
    fn contains(&self, hit: impl Fn(&Step) -> bool) -> bool {
        let mut node = Some(self);
        while let Some(n) = node {
            if hit(&n.step) {
                return true;
            }
            node = n.parent.as_deref();
        }
        false
    }
}

impl Drop for Node {
    // Iterative, so that dropping a long chain does not recurse once per edge.
    fn drop(&mut self) {
        let mut next = self.parent.take();
        while let Some(node) = next {
            match Rc::try_unwrap(node) {
                Ok(mut node) => next = node.parent.take(),
                Err(_) => break,
            }
        }
    }
}

/// A weighted-order queue entry: the lightest first, then the first found.
struct Entry {
    weight: f64,
    seq: u64,
    node: Rc<Node>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    // Reversed: `BinaryHeap` pops the greatest.
    fn cmp(&self, other: &Entry) -> Ordering {
        other
            .weight
            .total_cmp(&self.weight)
            .then(other.seq.cmp(&self.seq))
    }
}

/// The paths waiting to be handed over: first in, first out, or by weight.
enum Queue {
    Fifo(VecDeque<Rc<Node>>),
    Heap(BinaryHeap<Entry>, u64),
}

impl Queue {
    fn push(&mut self, node: Rc<Node>) {
        match self {
            Queue::Fifo(queue) => queue.push_back(node),
            Queue::Heap(heap, seq) => {
                *seq += 1;
                heap.push(Entry {
                    weight: node.weight,
                    seq: *seq,
                    node,
                });
            }
        }
    }

    fn pop(&mut self) -> Option<Rc<Node>> {
        match self {
            Queue::Fifo(queue) => queue.pop_front(),
            Queue::Heap(heap, _) => heap.pop().map(|entry| entry.node),
        }
    }
}

/// Breadth-first and weighted order: a queue of paths.
fn queued(
    neighbors: &mut dyn Neighbors,
    root: Path,
    options: &TraversalOptions,
    visit: &mut dyn FnMut(&Path) -> Result<Flow>,
) -> Result<()> {
    let weighted = options.order == Order::Weighted;
    let global = options.unique_vertices == Uniqueness::Global;
    let start = root.start;
    let mut queue = if weighted {
        Queue::Heap(BinaryHeap::new(), 0)
    } else {
        Queue::Fifo(VecDeque::new())
    };
    // Global uniqueness: breadth-first marks a vertex when a path first reaches it (paths
    // are handed over in the order they are found); weighted marks it when the lightest path
    // to it is handed over, and drops the heavier ones then.
    let mut reached: HashSet<Arc<str>> = HashSet::new();
    if global {
        reached.insert(start.clone());
    }
    let mut expand = |parent: Option<Rc<Node>>,
                      queue: &mut Queue,
                      reached: &mut HashSet<Arc<str>>|
     -> Result<()> {
        let end = parent.as_ref().map_or(&start, |node| &node.step.vertex);
        let (depth, weight) = parent.as_ref().map_or((0, 0.0), |n| (n.depth, n.weight));
        for step in neighbors.neighbors(end, false)? {
            if global {
                if reached.contains(&step.vertex) {
                    continue;
                }
            } else if options.unique_vertices == Uniqueness::Path
                && (step.vertex == start
                    || parent
                        .as_ref()
                        .is_some_and(|n| n.contains(|s| s.vertex == step.vertex)))
            {
                continue;
            }
            if options.unique_edges != Uniqueness::None
                && parent
                    .as_ref()
                    .is_some_and(|n| n.contains(|s| s.edge_id == step.edge_id))
            {
                continue;
            }
            let weight = weight + step_weight(options.weights.as_ref(), &step)?;
            if global && !weighted {
                reached.insert(step.vertex.clone());
            }
            queue.push(Rc::new(Node {
                parent: parent.clone(),
                step,
                depth: depth + 1,
                weight,
            }));
        }
        Ok(())
    };
    expand(None, &mut queue, &mut reached)?;
    while let Some(node) = queue.pop() {
        if global && weighted && !reached.insert(node.step.vertex.clone()) {
            continue;
        }
        let path = Path {
            start: start.clone(),
            steps: node.steps(),
            weight: node.weight,
        };
        let flow = visit(&path)?;
        if flow.stop {
            return Ok(());
        }
        if flow.expand && node.depth < options.max_depth {
            expand(Some(node), &mut queue, &mut reached)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::test_graph::{names, TestGraph};
    use crate::graph::Direction;
    use quince_errors::{GRAPH_NEGATIVE_EDGE_WEIGHT, QUERY_KILLED};

    fn options(order: Order, max_depth: u64) -> TraversalOptions {
        TraversalOptions {
            min_depth: 0,
            max_depth,
            order,
            unique_vertices: Uniqueness::None,
            unique_edges: Uniqueness::Path,
            weights: None,
        }
    }

    /// Every path handed over, as vertex names and weight.
    fn run(graph: &mut TestGraph, options: &TraversalOptions) -> Vec<(String, f64)> {
        let mut seen = Vec::new();
        traverse(graph, "v/a", options, &mut |path| {
            seen.push((names(path), path.weight));
            Ok(Flow {
                expand: true,
                stop: false,
            })
        })
        .unwrap();
        seen
    }

    fn only_names(seen: Vec<(String, f64)>) -> Vec<String> {
        seen.into_iter().map(|(n, _)| n).collect()
    }

    /// a -> b, a -> c, b -> d, c -> d.
    fn diamond(direction: Direction) -> TestGraph {
        TestGraph::new(
            direction,
            &[
                ("a", "b", 1.0),
                ("a", "c", 5.0),
                ("b", "d", 10.0),
                ("c", "d", 1.0),
            ],
        )
    }

    #[test]
    fn depth_zero_is_the_start_alone_and_asks_the_provider_nothing() {
        let mut graph = diamond(Direction::Outbound);
        for order in [Order::Dfs, Order::Bfs, Order::Weighted] {
            assert_eq!(only_names(run(&mut graph, &options(order, 0))), ["a"]);
        }
        assert_eq!(graph.calls, 0);
    }

    #[test]
    fn depth_first_is_a_pre_order_walk_in_provider_order() {
        let mut graph = diamond(Direction::Outbound);
        let seen = only_names(run(&mut graph, &options(Order::Dfs, 5)));
        assert_eq!(seen, ["a", "ab", "abd", "ac", "acd"]);
    }

    #[test]
    fn breadth_first_hands_over_by_depth() {
        let mut graph = diamond(Direction::Outbound);
        let seen = only_names(run(&mut graph, &options(Order::Bfs, 5)));
        assert_eq!(seen, ["a", "ab", "ac", "abd", "acd"]);
    }

    #[test]
    fn weighted_hands_over_by_weight_and_sums_the_weights() {
        let mut graph = diamond(Direction::Outbound);
        let mut opts = options(Order::Weighted, 5);
        opts.weights = Some(Weights {
            attribute: Some(vec!["w".into()]),
            default: 1.0,
        });
        let seen = run(&mut graph, &opts);
        let expected = [
            ("a", 0.0),
            ("ab", 1.0),
            ("ac", 5.0),
            ("acd", 6.0),
            ("abd", 11.0),
        ];
        let expected: Vec<(String, f64)> =
            expected.iter().map(|(n, w)| (n.to_string(), *w)).collect();
        assert_eq!(seen, expected);
        // Unweighted: the weight is the number of edges.
        let seen = run(&mut graph, &options(Order::Bfs, 5));
        assert_eq!(seen[3], ("abd".to_string(), 2.0));
    }

    #[test]
    fn global_uniqueness_reaches_each_vertex_once_and_the_start_counts() {
        let mut graph = diamond(Direction::Any);
        let mut opts = options(Order::Bfs, 5);
        opts.unique_vertices = Uniqueness::Global;
        assert_eq!(only_names(run(&mut graph, &opts)), ["a", "ab", "ac", "abd"]);
        opts.order = Order::Weighted;
        opts.weights = Some(Weights {
            attribute: Some(vec!["w".into()]),
            default: 1.0,
        });
        assert_eq!(only_names(run(&mut graph, &opts)), ["a", "ab", "ac", "acd"]);
    }

    #[test]
    fn a_cycle_is_cut_by_path_uniqueness_and_by_the_depth() {
        // a -> b -> a, b -> b (a self-loop).
        let mut graph = TestGraph::new(
            Direction::Outbound,
            &[("a", "b", 1.0), ("b", "a", 1.0), ("b", "b", 1.0)],
        );
        let mut opts = options(Order::Dfs, 4);
        opts.unique_vertices = Uniqueness::Path;
        assert_eq!(only_names(run(&mut graph, &opts)), ["a", "ab"]);
        // Edges unique only: the loop is followed once per path, each edge once.
        opts.unique_vertices = Uniqueness::None;
        assert_eq!(
            only_names(run(&mut graph, &opts)),
            ["a", "ab", "aba", "abb", "abba"]
        );
        // No uniqueness: the depth bounds it.
        opts.unique_edges = Uniqueness::None;
        opts.max_depth = 3;
        let seen = only_names(run(&mut graph, &opts));
        assert_eq!(seen, ["a", "ab", "aba", "abab", "abb", "abba", "abbb"]);
        opts.order = Order::Bfs;
        let mut bfs = only_names(run(&mut graph, &opts));
        assert_eq!(bfs[..4], ["a", "ab", "aba", "abb"]);
        bfs.sort();
        let mut dfs = seen;
        dfs.sort();
        assert_eq!(bfs, dfs);
    }

    #[test]
    fn any_direction_follows_edges_both_ways_and_a_self_loop_twice() {
        // b -> a, a -> a.
        let mut graph = TestGraph::new(Direction::Any, &[("b", "a", 1.0), ("a", "a", 1.0)]);
        let mut opts = options(Order::Dfs, 1);
        opts.unique_edges = Uniqueness::None;
        assert_eq!(only_names(run(&mut graph, &opts)), ["a", "aa", "ab", "aa"]);
        // Inbound from a: only b.
        let mut graph = TestGraph::new(Direction::Inbound, &[("b", "a", 1.0), ("a", "c", 1.0)]);
        assert_eq!(only_names(run(&mut graph, &opts)), ["a", "ab"]);
    }

    #[test]
    fn the_callback_decides_expansion_and_stops_early() {
        let mut graph = diamond(Direction::Outbound);
        let mut seen = Vec::new();
        traverse(&mut graph, "v/a", &options(Order::Dfs, 5), &mut |path| {
            seen.push(names(path));
            Ok(Flow {
                expand: names(path) != "ab",
                stop: names(path) == "ac",
            })
        })
        .unwrap();
        assert_eq!(seen, ["a", "ab", "ac"]);
        // The provider was asked for a's edges only: not b's (not expanded), not c's (stopped).
        assert_eq!(graph.calls, 1);
    }

    #[test]
    fn a_path_at_max_depth_is_never_expanded() {
        let mut graph = diamond(Direction::Outbound);
        for order in [Order::Dfs, Order::Bfs, Order::Weighted] {
            graph.calls = 0;
            let seen = only_names(run(&mut graph, &options(order, 1)));
            assert_eq!(seen, ["a", "ab", "ac"]);
            assert_eq!(graph.calls, 1, "{order:?}");
        }
    }

    #[test]
    fn provider_errors_and_negative_weights_propagate() {
        let mut graph = diamond(Direction::Outbound);
        graph.fail_at = Some(2);
        for order in [Order::Dfs, Order::Bfs, Order::Weighted] {
            graph.calls = 0;
            let e = traverse(&mut graph, "v/a", &options(order, 5), &mut |_| {
                Ok(Flow {
                    expand: true,
                    stop: false,
                })
            })
            .unwrap_err();
            assert!(e.is(QUERY_KILLED));
        }
        let mut graph = TestGraph::new(Direction::Outbound, &[("a", "b", -1.0)]);
        let mut opts = options(Order::Dfs, 5);
        opts.weights = Some(Weights {
            attribute: Some(vec!["w".into()]),
            default: 1.0,
        });
        let e = traverse(&mut graph, "v/a", &opts, &mut |_| {
            Ok(Flow {
                expand: true,
                stop: false,
            })
        })
        .unwrap_err();
        assert!(e.is(GRAPH_NEGATIVE_EDGE_WEIGHT));
    }
}
