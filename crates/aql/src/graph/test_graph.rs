//! A test [`Neighbors`] provider over an adjacency list, for the unit tests of the graph
//! searches.
//!
//! What it is: vertices `v/<name>`, edges `e/<n>` numbered in insertion order with a weight
//! attribute `w`, followed in one [`Direction`] (`Any`: outbound edges first, then inbound
//! ones, so a self-loop shows up twice); it counts the provider calls and can be told to fail
//! from a given call on.
//!
//! What it is not: the engine's edge index, or the property tests' provider (those live in
//! `tests/graph_algorithms.rs`, with their own copy, so that they test only the public API).
//!
//! Invariants: the edge order of a vertex is the insertion order, the same on every call.

use std::sync::Arc;

use quince_errors::{ArangoError, Result, QUERY_KILLED};
use serde_json::json;

use super::{Direction, Neighbors, Step};

/// One edge: `(edge id, from, to, edge document)`.
pub(crate) type Edge = (Arc<str>, Arc<str>, Arc<str>, Arc<serde_json::Value>);

pub(crate) struct TestGraph {
    pub direction: Direction,
    pub edges: Vec<Edge>,
    pub calls: usize,
    pub fail_at: Option<usize>,
}

impl TestGraph {
    /// `edges` as `(from, to, weight)` with vertex names without the `v/` prefix.
    pub fn new(direction: Direction, edges: &[(&str, &str, f64)]) -> TestGraph {
        let edges = edges
            .iter()
            .enumerate()
            .map(|(n, (from, to, w))| {
                let id: Arc<str> = format!("e/{n}").into();
                let from: Arc<str> = format!("v/{from}").into();
                let to: Arc<str> = format!("v/{to}").into();
                let doc = json!({"_id": &*id, "_from": &*from, "_to": &*to, "w": w});
                (id, from, to, Arc::new(doc))
            })
            .collect();
        TestGraph {
            direction,
            edges,
            calls: 0,
            fail_at: None,
        }
    }
}

impl Neighbors for TestGraph {
    fn neighbors(&mut self, vertex: &str, backward: bool) -> Result<Vec<Step>> {
        self.calls += 1;
        if self.fail_at.is_some_and(|n| self.calls >= n) {
            return Err(ArangoError::new(QUERY_KILLED));
        }
        let direction = if backward {
            self.direction.reverse()
        } else {
            self.direction
        };
        let mut steps = Vec::new();
        if matches!(direction, Direction::Outbound | Direction::Any) {
            for (id, from, to, doc) in &self.edges {
                if &**from == vertex {
                    steps.push(Step {
                        edge_id: id.clone(),
                        edge: doc.clone(),
                        vertex: to.clone(),
                    });
                }
            }
        }
        if matches!(direction, Direction::Inbound | Direction::Any) {
            for (id, from, to, doc) in &self.edges {
                if &**to == vertex {
                    steps.push(Step {
                        edge_id: id.clone(),
                        edge: doc.clone(),
                        vertex: from.clone(),
                    });
                }
            }
        }
        Ok(steps)
    }

    fn step(&mut self) -> Result<()> {
        if self.fail_at.is_some_and(|n| self.calls >= n) {
            return Err(ArangoError::new(QUERY_KILLED));
        }
        Ok(())
    }
}

/// The path's vertices without the `v/` prefix, joined: `"abc"`.
pub(crate) fn names(path: &super::Path) -> String {
    path.vertices()
        .map(|v| &v[2..])
        .collect::<Vec<_>>()
        .join("")
}
