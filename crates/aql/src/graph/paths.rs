//! The path searches between two vertices: `SHORTEST_PATH`, `K_SHORTEST_PATHS`, `K_PATHS` and
//! `ALL_SHORTEST_PATHS`.
//!
//! What it is: one function per search, each over a [`Neighbors`] provider, handing paths from
//! `source` to `target` to a callback until it returns false (so `LIMIT` stops the search).
//!
//! What it is not: documents or AQL (see the module above).
//!
//! Invariants (checked against brute force and a reference graph library in
//! `tests/graph_algorithms.rs`):
//! - every path runs from `source` to `target` with its steps oriented that way (a step found
//!   by a backward search is turned around: its `vertex` is the one the edge leads to from the
//!   source's side), and its `weight` is the sum of its edges' weights, or the number of edges
//!   when unweighted;
//! - [`shortest_path`]: a path of the fewest edges (unweighted: bidirectional breadth-first,
//!   expanding the smaller frontier a whole level at a time) or of the least total weight
//!   (bidirectional Dijkstra) when `weights` is given; `None` when the target cannot be
//!   reached; source == target is the path of length 0;
//! - [`k_shortest_paths`]: loopless paths by ascending weight (fewest edges when unweighted),
//!   each once (paths are told apart by their edges, so parallel edges give distinct paths),
//!   by Yen's method: the next path is computed only when the callback asked for it;
//! - [`k_paths`]: every path with a length between `min` and `max` on which no vertex repeats,
//!   by ascending length;
//! - [`all_shortest_paths`]: every path of the least number of edges (or least weight: ArangoDB's
//!   `ALL_SHORTEST_PATHS` takes no weight options, so the planner passes `None`; with weights,
//!   equal means bit-equal sums, and zero-weight cycles are cut by never repeating a vertex);
//! - memory: the searches that ask the provider about a vertex more than once (Yen's repeated
//!   searches, `K_PATHS`' depth by depth walk) keep the edge lists they read (both
//!   directions) for the rest of the search; the others keep only their visited maps. Every provider error ends
//!   the search at once.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use quince_errors::Result;

use super::{step_weight, Neighbors, Path, Step, Weights};

/// A vertex's edges with their weights.
type Edges = Rc<[(Step, f64)]>;

/// The provider with the weights applied and, where a search asks again, a cache of the
/// edge lists read (forward and backward).
struct Graph<'a> {
    provider: &'a mut dyn Neighbors,
    weights: Option<&'a Weights>,
    cache: Option<HashMap<(Arc<str>, bool), Edges>>,
}

impl<'a> Graph<'a> {
    fn new(provider: &'a mut dyn Neighbors, weights: Option<&'a Weights>, cache: bool) -> Self {
        Graph {
            provider,
            weights,
            cache: cache.then(HashMap::new),
        }
    }

    fn edges(&mut self, vertex: &Arc<str>, backward: bool) -> Result<Edges> {
        self.provider.step()?;
        if let Some(edges) = self
            .cache
            .as_ref()
            .and_then(|cache| cache.get(&(vertex.clone(), backward)))
        {
            return Ok(edges.clone());
        }
        let steps = self.provider.neighbors(vertex, backward)?;
        let mut edges = Vec::with_capacity(steps.len());
        for step in steps {
            let weight = step_weight(self.weights, &step)?;
            edges.push((step, weight));
        }
        let edges: Edges = edges.into();
        if let Some(cache) = &mut self.cache {
            cache.insert((vertex.clone(), backward), edges.clone());
        }
        Ok(edges)
    }
}

/// A priority queue entry: the least weight first, then the first pushed.
struct Entry<T> {
    weight: f64,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T> Eq for Entry<T> {}

impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Entry<T> {
    // Reversed: `BinaryHeap` pops the greatest.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .weight
            .total_cmp(&self.weight)
            .then(other.seq.cmp(&self.seq))
    }
}

/// A min-queue with insertion order as the tie-break.
struct MinQueue<T> {
    heap: BinaryHeap<Entry<T>>,
    seq: u64,
}

impl<T> MinQueue<T> {
    fn new() -> Self {
        MinQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }

    fn push(&mut self, weight: f64, item: T) {
        self.seq += 1;
        self.heap.push(Entry {
            weight,
            seq: self.seq,
            item,
        });
    }

    fn pop(&mut self) -> Option<(f64, T)> {
        self.heap.pop().map(|entry| (entry.weight, entry.item))
    }

    fn peek_weight(&self) -> Option<f64> {
        self.heap.peek().map(|entry| entry.weight)
    }
}

/// One shortest (or lightest) path from `source` to `target`, or `None`.
pub fn shortest_path(
    neighbors: &mut dyn Neighbors,
    source: &str,
    target: &str,
    weights: Option<&Weights>,
) -> Result<Option<Path>> {
    let source: Arc<str> = source.into();
    if &*source == target {
        return Ok(Some(Path::at(source)));
    }
    let mut graph = Graph::new(neighbors, weights, false);
    match weights {
        None => bidirectional_bfs(&mut graph, source, target.into()),
        Some(_) => dijkstra(
            &mut graph,
            &source,
            target,
            &HashSet::new(),
            &HashSet::new(),
        ),
    }
}

/// How each vertex a breadth-first side reached was reached: the vertex before it on that
/// side and the step between them as the provider returned it (`None` for the side's root).
type Reached = HashMap<Arc<str>, Option<(Arc<str>, Step)>>;

/// The unweighted shortest path, searching from both ends; the side with the smaller frontier
/// goes one whole level further each round, and the first vertex both sides reach joins them.
fn bidirectional_bfs(
    graph: &mut Graph,
    source: Arc<str>,
    target: Arc<str>,
) -> Result<Option<Path>> {
    let mut forward: Reached = HashMap::from([(source.clone(), None)]);
    let mut backward: Reached = HashMap::from([(target.clone(), None)]);
    let mut forward_frontier = vec![source.clone()];
    let mut backward_frontier = vec![target];
    while !forward_frontier.is_empty() && !backward_frontier.is_empty() {
        let meeting = if forward_frontier.len() <= backward_frontier.len() {
            bfs_level(graph, &mut forward_frontier, false, &mut forward, &backward)?
        } else {
            bfs_level(graph, &mut backward_frontier, true, &mut backward, &forward)?
        };
        if let Some(meeting) = meeting {
            return Ok(Some(join(source, &forward, &backward, meeting)));
        }
    }
    Ok(None)
}

/// Expands one level of one side; the first vertex the other side has reached, if any.
///
/// Every vertex is checked against the other side when first reached, so the first meeting
/// lies on a shortest path: the other side's vertices are all at its current depth or
/// shallower, and a shallower one would have met this side a level earlier.
fn bfs_level(
    graph: &mut Graph,
    frontier: &mut Vec<Arc<str>>,
    backward: bool,
    mine: &mut Reached,
    other: &Reached,
) -> Result<Option<Arc<str>>> {
    let mut next = Vec::new();
    for vertex in std::mem::take(frontier) {
        for (step, _) in graph.edges(&vertex, backward)?.iter() {
            if mine.contains_key(&step.vertex) {
                continue;
            }
            mine.insert(step.vertex.clone(), Some((vertex.clone(), step.clone())));
            if other.contains_key(&step.vertex) {
                return Ok(Some(step.vertex.clone()));
            }
            next.push(step.vertex.clone());
        }
    }
    *frontier = next;
    Ok(None)
}

/// The path source -> meeting (from the forward side) -> target (from the backward side,
/// each step turned around).
fn join(source: Arc<str>, forward: &Reached, backward: &Reached, meeting: Arc<str>) -> Path {
    let mut steps = Vec::new();
    let mut vertex = &meeting;
    while let Some(Some((before, step))) = forward.get(vertex) {
        steps.push(step.clone());
        vertex = before;
    }
    steps.reverse();
    let mut vertex = &meeting;
    while let Some(Some((after, step))) = backward.get(vertex) {
        // The backward search found the edge `vertex -> after` from `after`'s side: the
        // same edge, leading to `after` from the source's side.
        steps.push(Step {
            edge_id: step.edge_id.clone(),
            edge: step.edge.clone(),
            vertex: after.clone(),
        });
        vertex = after;
    }
    let weight = steps.len() as f64;
    Path {
        start: source,
        steps,
        weight,
    }
}

/// One side of [`dijkstra`]: the best weight found so far to each vertex it reached, how it
/// reached it, the vertices it settled and its queue.
struct Side {
    best: HashMap<Arc<str>, f64>,
    reached: Reached,
    settled: HashSet<Arc<str>>,
    queue: MinQueue<Arc<str>>,
    backward: bool,
}

impl Side {
    fn new(root: &Arc<str>, backward: bool) -> Side {
        let mut queue = MinQueue::new();
        queue.push(0.0, root.clone());
        Side {
            best: HashMap::from([(root.clone(), 0.0)]),
            reached: HashMap::from([(root.clone(), None)]),
            settled: HashSet::new(),
            queue,
            backward,
        }
    }
}

/// The lightest path from `source` to `target` that avoids `blocked_vertices` and leaves
/// `source` by none of `blocked_edges`: bidirectional Dijkstra. Each round settles the next
/// vertex of the side with the smaller queue (a vertex's edges are read when it is settled);
/// every edge relaxed into a vertex the other side has reached offers a path through it, and
/// the search ends once the two queues' least weights together reach the lightest path
/// offered (no path still unseen can be lighter: weights are not negative).
fn dijkstra(
    graph: &mut Graph,
    source: &Arc<str>,
    target: &str,
    blocked_vertices: &HashSet<Arc<str>>,
    blocked_edges: &HashSet<Arc<str>>,
) -> Result<Option<Path>> {
    let target: Arc<str> = target.into();
    let mut forward = Side::new(source, false);
    let mut backward = Side::new(&target, true);
    let mut lightest = f64::INFINITY;
    let mut meeting: Option<Arc<str>> = None;
    if source == &target {
        return Ok(Some(Path::at(source.clone())));
    }
    loop {
        let (f, b) = (forward.queue.peek_weight(), backward.queue.peek_weight());
        if (f.is_none() || b.is_none()) && meeting.is_none() {
            // One side reached everything it can without meeting the other.
            break;
        }
        if f.unwrap_or(0.0) + b.unwrap_or(0.0) >= lightest || (f.is_none() && b.is_none()) {
            break;
        }
        let go_forward = match (f, b) {
            (Some(_), None) => true,
            (None, _) => false,
            (Some(_), Some(_)) => forward.queue.heap.len() <= backward.queue.heap.len(),
        };
        let (mine, other) = if go_forward {
            (&mut forward, &backward)
        } else {
            (&mut backward, &forward)
        };
        let Some((weight, vertex)) = mine.queue.pop() else {
            break;
        };
        if !mine.settled.insert(vertex.clone()) {
            continue;
        }
        for (step, edge_weight) in graph.edges(&vertex, mine.backward)?.iter() {
            if mine.settled.contains(&step.vertex) || blocked_vertices.contains(&step.vertex) {
                continue;
            }
            // The edge leaving the source: the forward side's first step, or the backward
            // side's step that reaches the source.
            let leaves_source = if mine.backward {
                &step.vertex == source
            } else {
                &vertex == source
            };
            if leaves_source && blocked_edges.contains(&step.edge_id) {
                continue;
            }
            let candidate = weight + edge_weight;
            if mine
                .best
                .get(&step.vertex)
                .is_none_or(|&old| candidate < old)
            {
                mine.best.insert(step.vertex.clone(), candidate);
                mine.reached
                    .insert(step.vertex.clone(), Some((vertex.clone(), step.clone())));
                mine.queue.push(candidate, step.vertex.clone());
                if let Some(rest) = other.best.get(&step.vertex) {
                    if candidate + rest < lightest {
                        lightest = candidate + rest;
                        meeting = Some(step.vertex.clone());
                    }
                }
            }
        }
    }
    Ok(meeting.map(|meeting| {
        let mut path = join(source.clone(), &forward.reached, &backward.reached, meeting);
        erase_loops(&mut path);
        path.weight = lightest;
        path
    }))
}

/// Cuts every cycle out of `path` (the two sides of a bidirectional search can share a vertex
/// when a cycle weighs nothing; cutting it keeps the weight, and the path stays one whose
/// edges both sides accepted).
fn erase_loops(path: &mut Path) {
    let mut at: HashMap<Arc<str>, usize> = HashMap::from([(path.start.clone(), 0)]);
    let mut kept: Vec<Step> = Vec::with_capacity(path.steps.len());
    for step in std::mem::take(&mut path.steps) {
        if let Some(&n) = at.get(&step.vertex) {
            for dropped in kept.drain(n..) {
                at.remove(&dropped.vertex);
            }
            continue;
        }
        at.insert(step.vertex.clone(), kept.len() + 1);
        kept.push(step);
    }
    path.steps = kept;
}

/// The edge ids of a path (what tells two paths apart).
fn edge_ids(steps: &[Step]) -> Vec<Arc<str>> {
    steps.iter().map(|step| step.edge_id.clone()).collect()
}

/// Loopless paths from `source` to `target` by ascending weight, handed to `visit` until it
/// returns false.
pub fn k_shortest_paths(
    neighbors: &mut dyn Neighbors,
    source: &str,
    target: &str,
    weights: Option<&Weights>,
    visit: &mut dyn FnMut(Path) -> Result<bool>,
) -> Result<()> {
    let source: Arc<str> = source.into();
    if &*source == target {
        // Any longer path back to the source would repeat it.
        visit(Path::at(source))?;
        return Ok(());
    }
    let mut graph = Graph::new(neighbors, weights, true);
    let none = HashSet::new();
    let Some(mut current) = dijkstra(&mut graph, &source, target, &none, &none)? else {
        return Ok(());
    };
    // Yen: every next path leaves a path already found at some vertex (the spur) by an edge
    // none of the found paths with the same beginning (the root) took there, and goes on by
    // the lightest way that does not come back to the root.
    let mut found: Vec<Path> = Vec::new();
    let mut seen: HashSet<Vec<Arc<str>>> = HashSet::from([edge_ids(&current.steps)]);
    let mut candidates: MinQueue<Path> = MinQueue::new();
    loop {
        if !visit(current.clone())? {
            return Ok(());
        }
        found.push(current);
        let last = &found[found.len() - 1];
        let mut root_weight = 0.0;
        let mut root_vertices: HashSet<Arc<str>> = HashSet::new();
        for i in 0..last.steps.len() {
            let spur = if i == 0 {
                &last.start
            } else {
                &last.steps[i - 1].vertex
            };
            let root = &last.steps[..i];
            let blocked_edges: HashSet<Arc<str>> = found
                .iter()
                .filter(|path| {
                    path.steps.len() > i
                        && path.steps[..i]
                            .iter()
                            .zip(root)
                            .all(|(a, b)| a.edge_id == b.edge_id)
                })
                .map(|path| path.steps[i].edge_id.clone())
                .collect();
            if let Some(spur_path) =
                dijkstra(&mut graph, spur, target, &root_vertices, &blocked_edges)?
            {
                let mut steps = root.to_vec();
                steps.extend(spur_path.steps);
                if seen.insert(edge_ids(&steps)) {
                    let weight = root_weight + spur_path.weight;
                    candidates.push(
                        weight,
                        Path {
                            start: source.clone(),
                            steps,
                            weight,
                        },
                    );
                }
            }
            root_vertices.insert(spur.clone());
            root_weight += step_weight(weights, &last.steps[i])?;
        }
        match candidates.pop() {
            Some((_, path)) => current = path,
            None => return Ok(()),
        }
    }
}

/// Every path from `source` to `target` of `min..=max` edges with no repeated vertex, handed
/// to `visit` until it returns false.
pub fn k_paths(
    neighbors: &mut dyn Neighbors,
    source: &str,
    target: &str,
    min: u64,
    max: u64,
    visit: &mut dyn FnMut(Path) -> Result<bool>,
) -> Result<()> {
    let source: Arc<str> = source.into();
    if min > max {
        return Ok(());
    }
    if &*source == target {
        // Any longer path back to the source would repeat it.
        if min == 0 {
            visit(Path::at(source))?;
        }
        return Ok(());
    }
    let mut graph = Graph::new(neighbors, None, true);
    // How far each vertex is from the target (backward breadth-first, up to `max`): a walk of
    // `length` edges goes on from a vertex at depth d only to one at most `length - d - 1`
    // from the target.
    let target: Arc<str> = target.into();
    let mut to_target: HashMap<Arc<str>, u64> = HashMap::from([(target.clone(), 0)]);
    let mut frontier = vec![target.clone()];
    let mut depth = 0;
    while !frontier.is_empty() && depth < max && !to_target.contains_key(&source) {
        depth += 1;
        let mut next = Vec::new();
        for vertex in frontier {
            for (step, _) in graph.edges(&vertex, true)?.iter() {
                if !to_target.contains_key(&step.vertex) {
                    to_target.insert(step.vertex.clone(), depth);
                    next.push(step.vertex.clone());
                }
            }
        }
        frontier = next;
    }
    // The source's distance bounds the shortest path; those within it do not bound the
    // longer ones, so go on reaching vertices within `max` (they may lie on longer paths).
    let Some(&shortest) = to_target.get(&source) else {
        return Ok(());
    };
    while !frontier.is_empty() && depth < max {
        depth += 1;
        let mut next = Vec::new();
        for vertex in frontier {
            for (step, _) in graph.edges(&vertex, true)?.iter() {
                if !to_target.contains_key(&step.vertex) {
                    to_target.insert(step.vertex.clone(), depth);
                    next.push(step.vertex.clone());
                }
            }
        }
        frontier = next;
    }
    // A loopless path has fewer edges than there are vertices that can lie on it.
    let longest = max.min(to_target.len() as u64 - 1);
    for length in min.max(shortest)..=longest {
        if !paths_of_length(&mut graph, &source, &target, length, &to_target, visit)? {
            return Ok(());
        }
    }
    Ok(())
}

/// Hands every loopless path of exactly `length` edges to `visit` (depth-first, in provider
/// order); false when `visit` said to stop.
fn paths_of_length(
    graph: &mut Graph,
    source: &Arc<str>,
    target: &Arc<str>,
    length: u64,
    to_target: &HashMap<Arc<str>, u64>,
    visit: &mut dyn FnMut(Path) -> Result<bool>,
) -> Result<bool> {
    let mut steps: Vec<Step> = Vec::new();
    let mut on_path: HashSet<Arc<str>> = HashSet::from([source.clone()]);
    let mut frames: Vec<(Edges, usize)> = vec![(graph.edges(source, false)?, 0)];
    // Invariant: frames.len() == steps.len() + 1.
    while let Some((edges, next)) = frames.last_mut() {
        let Some((step, _)) = edges.get(*next) else {
            frames.pop();
            if let Some(step) = steps.pop() {
                on_path.remove(&step.vertex);
            }
            continue;
        };
        *next += 1;
        let depth = steps.len() as u64 + 1;
        let remaining = length - depth;
        let fits = to_target
            .get(&step.vertex)
            .is_some_and(|&distance| distance <= remaining);
        if !fits || on_path.contains(&step.vertex) || (step.vertex == *target && remaining > 0) {
            continue;
        }
        if remaining == 0 {
            let mut path_steps = steps.clone();
            path_steps.push(step.clone());
            let path = Path {
                start: source.clone(),
                steps: path_steps,
                weight: length as f64,
            };
            if !visit(path)? {
                return Ok(false);
            }
            continue;
        }
        let step = step.clone();
        let edges = graph.edges(&step.vertex, false)?;
        on_path.insert(step.vertex.clone());
        steps.push(step);
        frames.push((edges, 0));
    }
    Ok(true)
}

/// How the searches for all shortest paths reached a vertex: every vertex before it on a
/// shortest path, with the step from there.
type Predecessors = HashMap<Arc<str>, Vec<(Arc<str>, Step)>>;

/// Every shortest path from `source` to `target` (fewest edges, or least weight when
/// `weights` is given), handed to `visit` until it returns false.
///
/// ArangoDB's `ALL_SHORTEST_PATHS` takes no weight options: the planner passes `None`.
pub fn all_shortest_paths(
    neighbors: &mut dyn Neighbors,
    source: &str,
    target: &str,
    weights: Option<&Weights>,
    visit: &mut dyn FnMut(Path) -> Result<bool>,
) -> Result<()> {
    let source: Arc<str> = source.into();
    if &*source == target {
        visit(Path::at(source))?;
        return Ok(());
    }
    let target: Arc<str> = target.into();
    let mut graph = Graph::new(neighbors, weights, false);
    let found = match weights {
        None => shortest_levels(&mut graph, &source, &target)?,
        Some(_) => lightest_predecessors(&mut graph, &source, &target)?,
    };
    let Some((weight, predecessors)) = found else {
        return Ok(());
    };
    // Walk back from the target over the predecessors, depth-first; the on-path set only
    // matters for zero-weight cycles.
    let mut chain: Vec<(Arc<str>, usize)> = vec![(target.clone(), 0)];
    let mut steps_back: Vec<Step> = Vec::new();
    let mut on_path: HashSet<Arc<str>> = HashSet::from([target]);
    // Invariant: chain.len() == steps_back.len() + 1; steps_back[k] leads from chain[k + 1]
    // to chain[k].
    while let Some((vertex, next)) = chain.last_mut() {
        if *vertex == source {
            let mut steps = steps_back.clone();
            steps.reverse();
            if !visit(Path {
                start: source.clone(),
                steps,
                weight,
            })? {
                return Ok(());
            }
        }
        let before = if *vertex == source {
            None
        } else {
            predecessors.get(vertex).and_then(|list| list.get(*next))
        };
        *next += 1;
        match before {
            Some((before, step)) => {
                if on_path.insert(before.clone()) {
                    chain.push((before.clone(), 0));
                    steps_back.push(step.clone());
                }
            }
            None => {
                if let Some((vertex, _)) = chain.pop() {
                    on_path.remove(&vertex);
                }
                steps_back.pop();
            }
        }
    }
    Ok(())
}

/// Breadth-first from the source, level by level, until the level that reaches the target:
/// the target's depth and every vertex's predecessors one level up.
fn shortest_levels(
    graph: &mut Graph,
    source: &Arc<str>,
    target: &Arc<str>,
) -> Result<Option<(f64, Predecessors)>> {
    let mut depth_of: HashMap<Arc<str>, u64> = HashMap::from([(source.clone(), 0)]);
    let mut predecessors: Predecessors = HashMap::new();
    let mut frontier = vec![source.clone()];
    let mut depth = 0;
    while !frontier.is_empty() && !depth_of.contains_key(target) {
        depth += 1;
        let mut next = Vec::new();
        for vertex in frontier {
            for (step, _) in graph.edges(&vertex, false)?.iter() {
                match depth_of.get(&step.vertex) {
                    None => {
                        depth_of.insert(step.vertex.clone(), depth);
                        next.push(step.vertex.clone());
                    }
                    Some(&d) if d == depth => {}
                    Some(_) => continue,
                }
                predecessors
                    .entry(step.vertex.clone())
                    .or_default()
                    .push((vertex.clone(), step.clone()));
            }
        }
        frontier = next;
    }
    Ok(depth_of
        .get(target)
        .map(|&depth| (depth as f64, predecessors)))
}

/// Dijkstra from the source that keeps, for every vertex, every predecessor on a lightest
/// path, and settles every vertex no heavier than the target.
fn lightest_predecessors(
    graph: &mut Graph,
    source: &Arc<str>,
    target: &Arc<str>,
) -> Result<Option<(f64, Predecessors)>> {
    let mut best: HashMap<Arc<str>, f64> = HashMap::from([(source.clone(), 0.0)]);
    let mut predecessors: Predecessors = HashMap::new();
    let mut settled: HashSet<Arc<str>> = HashSet::new();
    let mut queue = MinQueue::new();
    queue.push(0.0, source.clone());
    while let Some(weight) = queue.peek_weight() {
        if best
            .get(target)
            .is_some_and(|&t| settled.contains(target) && weight > t)
        {
            break;
        }
        let Some((weight, vertex)) = queue.pop() else {
            break;
        };
        if !settled.insert(vertex.clone()) {
            continue;
        }
        for (step, edge_weight) in graph.edges(&vertex, false)?.iter() {
            let candidate = weight + edge_weight;
            match best.get(&step.vertex) {
                Some(&old) if candidate > old => continue,
                Some(&old) if candidate == old => {}
                _ => {
                    best.insert(step.vertex.clone(), candidate);
                    predecessors.remove(&step.vertex);
                    queue.push(candidate, step.vertex.clone());
                }
            }
            predecessors
                .entry(step.vertex.clone())
                .or_default()
                .push((vertex.clone(), step.clone()));
        }
    }
    Ok(best.get(target).map(|&weight| (weight, predecessors)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::test_graph::{names, TestGraph};
    use crate::graph::Direction;
    use quince_errors::{ArangoError, GRAPH_NEGATIVE_EDGE_WEIGHT, QUERY_KILLED};

    #[test]
    fn erasing_loops_cuts_every_cycle_and_keeps_the_way_on() {
        let step = |id: &str, to: &str| Step {
            edge_id: id.into(),
            edge: Arc::new(serde_json::Value::Null),
            vertex: to.into(),
        };
        // s -> a -> b -> a -> s -> c -> t: both cycles go, s -> c -> t is left.
        let mut path = Path {
            start: "s".into(),
            steps: vec![
                step("e1", "a"),
                step("e2", "b"),
                step("e3", "a"),
                step("e4", "s"),
                step("e5", "c"),
                step("e6", "t"),
            ],
            weight: 0.0,
        };
        erase_loops(&mut path);
        let ids: Vec<&str> = path.steps.iter().map(|s| s.edge_id.as_ref()).collect();
        assert_eq!(ids, ["e5", "e6"]);
    }

    fn by_w() -> Weights {
        Weights {
            attribute: Some(vec!["w".into()]),
            default: 1.0,
        }
    }

    /// a -> b -> d (weights 1, 10), a -> c -> d (5, 1), d -> e (1), a -> a (1).
    fn diamond(direction: Direction) -> TestGraph {
        TestGraph::new(
            direction,
            &[
                ("a", "b", 1.0),
                ("a", "c", 5.0),
                ("b", "d", 10.0),
                ("c", "d", 1.0),
                ("d", "e", 1.0),
                ("a", "a", 1.0),
            ],
        )
    }

    fn collect(
        search: impl FnOnce(&mut dyn FnMut(Path) -> Result<bool>) -> Result<()>,
    ) -> Vec<(String, f64)> {
        let mut seen = Vec::new();
        search(&mut |path| {
            seen.push((names(&path), path.weight));
            Ok(true)
        })
        .unwrap();
        seen
    }

    fn pairs(expected: &[(&str, f64)]) -> Vec<(String, f64)> {
        expected.iter().map(|(n, w)| (n.to_string(), *w)).collect()
    }

    #[test]
    fn shortest_path_fewest_edges_or_least_weight() {
        let mut graph = diamond(Direction::Outbound);
        let path = shortest_path(&mut graph, "v/a", "v/e", None)
            .unwrap()
            .unwrap();
        assert_eq!(path.depth(), 3);
        assert_eq!(path.weight, 3.0);
        let path = shortest_path(&mut graph, "v/a", "v/e", Some(&by_w()))
            .unwrap()
            .unwrap();
        assert_eq!((names(&path), path.weight), ("acde".to_string(), 7.0));
        assert_eq!(path.steps[0].edge_id.as_ref(), "e/1");
    }

    #[test]
    fn shortest_path_orients_backward_steps_from_the_source() {
        // Inbound from e: e <- d <- c/b <- a; the backward search runs outbound.
        let mut graph = diamond(Direction::Inbound);
        let path = shortest_path(&mut graph, "v/e", "v/a", None)
            .unwrap()
            .unwrap();
        let n = names(&path);
        assert!(n == "edba" || n == "edca", "{n}");
        let ids: Vec<&str> = path.steps.iter().map(|s| s.edge_id.as_ref()).collect();
        assert_eq!(ids[0], "e/4");
        // Each step's edge joins the vertex before it and the step's vertex.
        let mut before = path.start.clone();
        for step in &path.steps {
            let (from, to) = (&step.edge["_from"], &step.edge["_to"]);
            assert_eq!(from.as_str(), Some(step.vertex.as_ref()));
            assert_eq!(to.as_str(), Some(before.as_ref()));
            before = step.vertex.clone();
        }
    }

    #[test]
    fn shortest_path_edge_cases() {
        let mut graph = diamond(Direction::Outbound);
        let path = shortest_path(&mut graph, "v/a", "v/a", None)
            .unwrap()
            .unwrap();
        assert_eq!((path.depth(), path.weight), (0, 0.0));
        assert_eq!(shortest_path(&mut graph, "v/e", "v/a", None).unwrap(), None);
        assert_eq!(
            shortest_path(&mut graph, "v/e", "v/a", Some(&by_w())).unwrap(),
            None
        );
        // Any direction reaches back.
        let mut graph = diamond(Direction::Any);
        let path = shortest_path(&mut graph, "v/e", "v/a", None)
            .unwrap()
            .unwrap();
        assert_eq!(path.depth(), 3);
        let path = shortest_path(&mut graph, "v/b", "v/c", Some(&by_w()))
            .unwrap()
            .unwrap();
        assert_eq!((names(&path), path.weight), ("bac".to_string(), 6.0));
    }

    #[test]
    fn k_shortest_paths_by_weight_loopless_and_lazy() {
        let mut graph = diamond(Direction::Any);
        let seen =
            collect(|visit| k_shortest_paths(&mut graph, "v/a", "v/d", Some(&by_w()), visit));
        assert_eq!(seen, pairs(&[("acd", 6.0), ("abd", 11.0)]));
        let seen = collect(|visit| k_shortest_paths(&mut graph, "v/a", "v/d", None, visit));
        assert_eq!(seen.len(), 2);
        assert!(seen.iter().all(|(_, w)| *w == 2.0));
        // Parallel edges give distinct paths.
        let mut graph = TestGraph::new(
            Direction::Outbound,
            &[("a", "b", 2.0), ("a", "b", 1.0), ("b", "c", 1.0)],
        );
        let seen =
            collect(|visit| k_shortest_paths(&mut graph, "v/a", "v/c", Some(&by_w()), visit));
        assert_eq!(seen, pairs(&[("abc", 2.0), ("abc", 3.0)]));
        // Stopping after the first asks for no more than the first search needed.
        let mut graph = diamond(Direction::Any);
        let mut count = 0;
        k_shortest_paths(&mut graph, "v/a", "v/d", None, &mut |_| {
            count += 1;
            Ok(false)
        })
        .unwrap();
        assert_eq!(count, 1);
        let seen = collect(|visit| k_shortest_paths(&mut graph, "v/a", "v/a", None, visit));
        assert_eq!(seen, pairs(&[("a", 0.0)]));
        let mut graph = diamond(Direction::Outbound);
        assert!(
            collect(|visit| k_shortest_paths(&mut graph, "v/e", "v/a", None, visit)).is_empty()
        );
    }

    #[test]
    fn k_paths_by_length_without_repeated_vertices() {
        let mut graph = diamond(Direction::Any);
        let seen = collect(|visit| k_paths(&mut graph, "v/a", "v/d", 0, 10, visit));
        assert_eq!(seen, pairs(&[("abd", 2.0), ("acd", 2.0)]));
        let seen = collect(|visit| k_paths(&mut graph, "v/a", "v/e", 3, 3, visit));
        assert_eq!(seen, pairs(&[("abde", 3.0), ("acde", 3.0)]));
        assert!(collect(|visit| k_paths(&mut graph, "v/a", "v/e", 0, 2, visit)).is_empty());
        assert!(collect(|visit| k_paths(&mut graph, "v/a", "v/e", 4, 9, visit)).is_empty());
        let seen = collect(|visit| k_paths(&mut graph, "v/a", "v/a", 0, 3, visit));
        assert_eq!(seen, pairs(&[("a", 0.0)]));
        assert!(collect(|visit| k_paths(&mut graph, "v/a", "v/a", 1, 3, visit)).is_empty());
        // b to c: through d (b's outbound edge comes first), or through a.
        let seen = collect(|visit| k_paths(&mut graph, "v/b", "v/c", 1, 2, visit));
        assert_eq!(seen, pairs(&[("bdc", 2.0), ("bac", 2.0)]));
    }

    #[test]
    fn all_shortest_paths_every_minimal_one() {
        let mut graph = diamond(Direction::Outbound);
        let mut seen = collect(|visit| all_shortest_paths(&mut graph, "v/a", "v/e", None, visit));
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(seen, pairs(&[("abde", 3.0), ("acde", 3.0)]));
        let seen =
            collect(|visit| all_shortest_paths(&mut graph, "v/a", "v/e", Some(&by_w()), visit));
        assert_eq!(seen, pairs(&[("acde", 7.0)]));
        let seen = collect(|visit| all_shortest_paths(&mut graph, "v/a", "v/a", None, visit));
        assert_eq!(seen, pairs(&[("a", 0.0)]));
        assert!(
            collect(|visit| all_shortest_paths(&mut graph, "v/e", "v/a", None, visit)).is_empty()
        );
        // Zero-weight cycle: b <-> c at weight 0, so a-b-c and a-c-b... each once, no loop.
        let mut graph = TestGraph::new(
            Direction::Outbound,
            &[
                ("a", "b", 1.0),
                ("a", "c", 1.0),
                ("b", "c", 0.0),
                ("c", "b", 0.0),
                ("c", "d", 1.0),
            ],
        );
        let mut seen =
            collect(|visit| all_shortest_paths(&mut graph, "v/a", "v/d", Some(&by_w()), visit));
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(seen, pairs(&[("abcd", 2.0), ("acd", 2.0)]));
    }

    #[test]
    fn path_searches_propagate_provider_errors_and_negative_weights() {
        let mut graph = diamond(Direction::Outbound);
        graph.fail_at = Some(2);
        let killed = |e: ArangoError| assert!(e.is(QUERY_KILLED));
        graph.calls = 0;
        killed(shortest_path(&mut graph, "v/a", "v/e", None).unwrap_err());
        graph.calls = 0;
        killed(shortest_path(&mut graph, "v/a", "v/e", Some(&by_w())).unwrap_err());
        graph.calls = 0;
        killed(k_shortest_paths(&mut graph, "v/a", "v/e", None, &mut |_| Ok(true)).unwrap_err());
        graph.calls = 0;
        killed(k_paths(&mut graph, "v/a", "v/e", 0, 5, &mut |_| Ok(true)).unwrap_err());
        graph.calls = 0;
        killed(all_shortest_paths(&mut graph, "v/a", "v/e", None, &mut |_| Ok(true)).unwrap_err());
        let mut graph = TestGraph::new(Direction::Outbound, &[("a", "b", -1.0)]);
        let e = shortest_path(&mut graph, "v/a", "v/b", Some(&by_w())).unwrap_err();
        assert!(e.is(GRAPH_NEGATIVE_EDGE_WEIGHT));
    }
}
