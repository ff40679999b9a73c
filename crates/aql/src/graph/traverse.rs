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
//! - `uniqueEdges: path`: no edge twice on one path; `none`: no check;
//! - `uniqueVertices: path`: no vertex twice on one path (the start included); `global` (bfs and
//!   weighted only): each vertex is reached at most once in the whole traversal, by the first
//!   path to reach it (the shortest in bfs, the lightest in weighted order);
//! - depth-first order follows the provider's edge order; breadth-first hands over all paths of
//!   depth d before any of depth d+1; weighted hands them over by ascending weight.

// IMPLEMENTED ON BRANCH graph-algorithms (a helper's): this file's body is a placeholder so
// that the executor can be written against the signature in parallel.

use quince_errors::Result;

use super::{Neighbors, Path, Weights};

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
    let _ = (neighbors, start, options, visit);
    unimplemented!("traverse lands on branch graph-algorithms")
}
