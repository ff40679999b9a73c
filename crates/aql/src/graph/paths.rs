//! The path searches between two vertices: `SHORTEST_PATH`, `K_SHORTEST_PATHS`, `K_PATHS` and
//! `ALL_SHORTEST_PATHS`.
//!
//! What it is: one function per search, each over a [`Neighbors`] provider, handing paths from
//! `source` to `target` to a callback until it returns false (so `LIMIT` stops the search).
//!
//! What it is not: documents or AQL (see the module above).
//!
//! Invariants (checked against a reference graph library in `tests/graph_algorithms.rs`):
//! - [`shortest_path`]: a path of the fewest edges (unweighted: bidirectional breadth-first) or
//!   of the least total weight (Dijkstra) when `weights` is given; `None` when the target cannot
//!   be reached; source == target is the path of length 0;
//! - [`k_shortest_paths`]: loopless paths by ascending weight (fewest edges when unweighted),
//!   each once;
//! - [`k_paths`]: every path with a length between `min` and `max` on which no vertex repeats;
//! - [`all_shortest_paths`]: every path of the least number of edges (or least weight).

// IMPLEMENTED ON BRANCH graph-algorithms (a helper's): these bodies are placeholders so that
// the executor can be written against the signatures in parallel.

use quince_errors::Result;

use super::{Neighbors, Path, Weights};

/// One shortest (or lightest) path from `source` to `target`, or `None`.
pub fn shortest_path(
    neighbors: &mut dyn Neighbors,
    source: &str,
    target: &str,
    weights: Option<&Weights>,
) -> Result<Option<Path>> {
    let _ = (neighbors, source, target, weights);
    unimplemented!("shortest_path lands on branch graph-algorithms")
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
    let _ = (neighbors, source, target, weights, visit);
    unimplemented!("k_shortest_paths lands on branch graph-algorithms")
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
    let _ = (neighbors, source, target, min, max, visit);
    unimplemented!("k_paths lands on branch graph-algorithms")
}

/// Every shortest path from `source` to `target` (fewest edges, or least weight when
/// `weights` is given), handed to `visit` until it returns false.
pub fn all_shortest_paths(
    neighbors: &mut dyn Neighbors,
    source: &str,
    target: &str,
    weights: Option<&Weights>,
    visit: &mut dyn FnMut(Path) -> Result<bool>,
) -> Result<()> {
    let _ = (neighbors, source, target, weights, visit);
    unimplemented!("all_shortest_paths lands on branch graph-algorithms")
}
