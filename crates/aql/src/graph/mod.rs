//! Graph searches for AQL: the traversal enumerator and the path searches, over an abstract
//! source of edges.
//!
//! What it is: the types every graph search shares ([`Direction`], [`Step`], [`Path`],
//! [`Weights`]), the [`Neighbors`] trait through which a search reads a vertex's edges, and the
//! algorithms: [`traverse`] (`FOR v, e, p IN min..max ...`: depth-first, breadth-first or
//! weighted, with vertex and edge uniqueness and a per-path callback that decides whether to
//! go on) and [`paths`] (`SHORTEST_PATH`, `K_SHORTEST_PATHS`, `K_PATHS`,
//! `ALL_SHORTEST_PATHS`).
//!
//! What it is not: AQL syntax, plans or documents. The executor implements [`Neighbors`] over
//! the engines' edge indexes (through the operations interface), reads vertex documents, and
//! turns [`Path`]s into `v`, `e` and `p`; the tests implement it over adjacency lists. Nothing
//! here reads a vertex document: vertices are `_id` strings, and an edge is the document the
//! provider handed over.
//!
//! Invariants: a search never follows an edge the provider did not return, so it sees exactly
//! the collections and directions the query named; every search is bounded by its depth limits
//! or its visited sets, and asks the provider (which may fail, e.g. when the query is killed or
//! over its memory limit) before every expansion, through [`Neighbors::neighbors`] or, when it
//! answers one from its own cache, [`Neighbors::step`], so a failure stops it promptly; a weight is
//! never negative (1948, ArangoDB's "negative edge weight found", otherwise).

pub mod paths;
#[cfg(test)]
mod test_graph;
pub mod traverse;

use std::sync::Arc;

use quince_errors::{ArangoError, Result, GRAPH_NEGATIVE_EDGE_WEIGHT};
use serde_json::Value;

/// Which edges of a vertex a search follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Edges whose `_from` is the vertex, to their `_to`.
    Outbound,
    /// Edges whose `_to` is the vertex, to their `_from`.
    Inbound,
    /// Both: outbound edges first, then inbound ones.
    Any,
}

impl Direction {
    /// The direction a backward search (from the target towards the source) follows.
    pub fn reverse(self) -> Direction {
        match self {
            Direction::Outbound => Direction::Inbound,
            Direction::Inbound => Direction::Outbound,
            Direction::Any => Direction::Any,
        }
    }
}

/// One edge as a search follows it: the edge and the vertex at its other end.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The edge's `_id` (uniqueness of edges is by this).
    pub edge_id: Arc<str>,
    /// The edge document (what `e` and `p.edges` show), or as much of it as the search needs
    /// (a provider may hand out a `null` or only the weight attribute when nothing else reads
    /// it; searches read it only through [`Weights::of`]).
    pub edge: Arc<Value>,
    /// The `_id` of the vertex the edge leads to.
    pub vertex: Arc<str>,
}

/// Where a search reads edges: the engine's edge indexes, or a test's adjacency list.
pub trait Neighbors {
    /// The edges a search follows out of `vertex`: forward in each edge collection's own
    /// direction, or, when `backward`, in the reverse of it (a search from the target towards
    /// the source). Each edge comes with the vertex at its other end; the order is the
    /// provider's and must be the same every time it is asked (depth-first results follow it).
    fn neighbors(&mut self, vertex: &str, backward: bool) -> Result<Vec<Step>>;

    /// One step of a search that may not ask for neighbours (an expansion it answers from its
    /// own cache, a candidate it pops): the provider may stop the search here (a killed query,
    /// one past its deadline or its memory limit).
    fn step(&mut self) -> Result<()>;
}

/// How an edge's weight is read: `weightAttribute` (a path of attribute names) and
/// `defaultWeight` (for an edge without a numeric value there, or when no attribute is set).
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    /// The attribute path of the weight (`weightAttribute: "w"` is `["w"]`); `None` gives every
    /// edge the default weight.
    pub attribute: Option<Vec<String>>,
    /// The weight of an edge without a numeric weight attribute (ArangoDB's default is 1).
    pub default: f64,
}

impl Default for Weights {
    fn default() -> Weights {
        Weights {
            attribute: None,
            default: 1.0,
        }
    }
}

impl Weights {
    /// The weight of `edge`: its numeric weight attribute, or the default. A negative weight
    /// is 400/1948.
    pub fn of(&self, edge: &Value) -> Result<f64> {
        let mut value = Some(edge);
        if let Some(path) = &self.attribute {
            for name in path {
                value = value.and_then(|v| v.get(name));
            }
        } else {
            value = None;
        }
        let weight = value.and_then(Value::as_f64).unwrap_or(self.default);
        if weight < 0.0 {
            return Err(ArangoError::new(GRAPH_NEGATIVE_EDGE_WEIGHT));
        }
        Ok(weight)
    }
}

/// The weight a search gives `step`: its edge's weight under `weights`, or 1 when the search
/// is unweighted (`None`).
pub(crate) fn step_weight(weights: Option<&Weights>, step: &Step) -> Result<f64> {
    match weights {
        Some(weights) => weights.of(&step.edge),
        None => Ok(1.0),
    }
}

/// A path found by a search: its start vertex, then one [`Step`] per edge.
#[derive(Clone, Debug, PartialEq)]
pub struct Path {
    /// The start vertex's `_id`.
    pub start: Arc<str>,
    /// The edges in order, each with the vertex it leads to.
    pub steps: Vec<Step>,
    /// The sum of the edges' weights (the number of edges when the search is unweighted).
    pub weight: f64,
}

impl Path {
    /// The path of length 0 at `start`.
    pub fn at(start: Arc<str>) -> Path {
        Path {
            start,
            steps: Vec::new(),
            weight: 0.0,
        }
    }

    /// The number of edges.
    pub fn depth(&self) -> usize {
        self.steps.len()
    }

    /// The last vertex (the start for a path of length 0).
    pub fn end(&self) -> &Arc<str> {
        self.steps.last().map_or(&self.start, |step| &step.vertex)
    }

    /// The vertices in order, the start first.
    pub fn vertices(&self) -> impl Iterator<Item = &Arc<str>> {
        std::iter::once(&self.start).chain(self.steps.iter().map(|step| &step.vertex))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn weights_read_the_attribute_path_or_the_default_and_refuse_negatives() {
        let weights = Weights {
            attribute: Some(vec!["data".into(), "w".into()]),
            default: 2.5,
        };
        assert_eq!(weights.of(&json!({"data": {"w": 4}})).unwrap(), 4.0);
        assert_eq!(weights.of(&json!({"data": {"w": "4"}})).unwrap(), 2.5);
        assert_eq!(weights.of(&json!({})).unwrap(), 2.5);
        let e = weights.of(&json!({"data": {"w": -1}})).unwrap_err();
        assert!(e.is(GRAPH_NEGATIVE_EDGE_WEIGHT));
        assert_eq!(Weights::default().of(&json!({"w": 7})).unwrap(), 1.0);
    }

    #[test]
    fn a_path_lists_its_vertices_from_the_start() {
        let mut path = Path::at("v/a".into());
        assert_eq!(path.end().as_ref(), "v/a");
        path.steps.push(Step {
            edge_id: "e/1".into(),
            edge: Arc::new(json!({"_id": "e/1"})),
            vertex: "v/b".into(),
        });
        let vertices: Vec<&str> = path.vertices().map(|v| v.as_ref()).collect();
        assert_eq!(vertices, ["v/a", "v/b"]);
        assert_eq!(path.depth(), 1);
    }
}
