//! The plan nodes of the graph operations: [`TraversalNode`] (ArangoDB's `TraversalNode`) and
//! [`PathSearchNode`] (`ShortestPathNode`, and `EnumeratePathsNode` for `K_SHORTEST_PATHS`,
//! `K_PATHS` and `ALL_SHORTEST_PATHS`, as ArangoDB 3.12 names them).
//!
//! What it is: plain data: the edge collections with their directions (a named graph is
//! resolved when the query is compiled), the options already validated, the variables, `PRUNE`
//! and the filters pushed into the traversal ([`PathCondition`]).
//!
//! What it is not: the algorithms (`crate::graph`), the executor (`crate::exec::traversal`) or
//! the compile step (`compile/graph.rs`).
//!
//! Invariants: every edge collection is an edge collection of the database the plan was
//! compiled against; a pushed condition is implied by a `FILTER` that stays in the plan unless
//! `covered` says the condition is the whole filter, so pushing never changes results.

use std::sync::Arc;

use quince_ops::CollectionOps;
use serde_json::{json, Value};

use super::{CExpr, Slot};
use crate::ast::PathKind;
use crate::graph::traverse::TraversalOptions;
use crate::graph::{Direction, Weights};

/// One edge collection a graph operation follows, and in which direction.
pub struct EdgeCollection {
    /// Its name.
    pub name: String,
    /// The collection.
    pub collection: Arc<dyn CollectionOps>,
    /// The direction its edges are followed in.
    pub direction: Direction,
}

/// The edges of a graph operation.
pub struct GraphEdges {
    /// `GRAPH name`: the graph's name.
    pub graph: Option<String>,
    /// The edge collections, in the order written (or the graph's definition order).
    pub collections: Vec<EdgeCollection>,
    /// The graph's vertex collections (empty for a list of edge collections), for explain.
    pub vertex_collections: Vec<String>,
    /// `OPTIONS { vertexCollections }`: only vertices in these collections are reached.
    pub restrict_vertices: Option<Vec<String>>,
    /// The operation's own direction (each collection may differ), for explain.
    pub direction: Direction,
}

/// A condition on the paths of a traversal, pushed down from a `FILTER` right after it: a
/// path that can never satisfy it is not expanded (nor emitted).
pub struct PathCondition {
    /// Which part of the path the condition reads.
    pub target: PathTarget,
    /// The condition over the slot `slot` (which holds the vertex or edge looked at).
    pub condition: CExpr,
    /// The slot the condition reads its vertex or edge from.
    pub slot: Slot,
}

/// What a [`PathCondition`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathTarget {
    /// `p.vertices[n]`.
    Vertex(usize),
    /// `p.edges[n]`.
    Edge(usize),
    /// Every vertex of the path (`p.vertices[*].x ALL == y`).
    AllVertices,
    /// Every edge of the path (`p.edges[*].x ALL == y`).
    AllEdges,
}

/// `FOR v, e, p IN min..max DIR start GRAPH g|colls [PRUNE ...] [OPTIONS ...]`.
pub struct TraversalNode {
    /// The vertex variable (`None` when nothing reads it).
    pub vertex: Option<Slot>,
    /// The edge variable.
    pub edge: Option<Slot>,
    /// The path variable.
    pub path: Option<Slot>,
    /// The start vertex.
    pub start: CExpr,
    /// The edges followed.
    pub edges: GraphEdges,
    /// Depth, order, uniqueness and weights.
    pub options: TraversalOptions,
    /// `PRUNE [var =] cond`: the variable's slot, if any, and the condition.
    pub prune: Option<(Option<Slot>, CExpr)>,
    /// Conditions pushed down from filters.
    pub conditions: Vec<PathCondition>,
    /// The slots the traversal's own variables had before the optimizer dropped unread ones
    /// (vertex, edge, path): `PRUNE` and pushed conditions read them.
    pub declared: [Option<Slot>; 3],
    /// When the query reads `v` only as `v.name` (and neither `p`, `PRUNE` nor a pushed
    /// condition sees vertices): those names, and only they are built from each vertex.
    pub vertex_projection: Option<Vec<String>>,
    /// The options as written (for explain; unknown ones included).
    pub options_json: Value,
}

/// `FOR x[, e] IN DIR SHORTEST_PATH|K_SHORTEST_PATHS|K_PATHS|ALL_SHORTEST_PATHS s TO t ...`.
pub struct PathSearchNode {
    /// Which search.
    pub kind: PathKind,
    /// The vertex variable (`SHORTEST_PATH`) or the path variable (the others).
    pub slot: Slot,
    /// `SHORTEST_PATH`'s edge variable.
    pub edge: Option<Slot>,
    /// The source vertex.
    pub source: CExpr,
    /// The target vertex.
    pub target: CExpr,
    /// The edges followed.
    pub edges: GraphEdges,
    /// `K_PATHS`' least and greatest length.
    pub min_depth: u64,
    /// `K_PATHS`' greatest length.
    pub max_depth: u64,
    /// `weightAttribute` / `defaultWeight`, when a weight attribute is set.
    pub weights: Option<Weights>,
    /// `SHORTEST_PATH` whose vertex variable the query reads only as `v.name`: those names,
    /// and only they are built from each vertex.
    pub vertex_projection: Option<Vec<String>>,
    /// The options as written (for explain).
    pub options_json: Value,
}

fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::Outbound => "OUTBOUND",
        Direction::Inbound => "INBOUND",
        Direction::Any => "ANY",
    }
}

/// ArangoDB's direction numbers (0 any, 1 inbound, 2 outbound).
fn direction_number(d: Direction) -> u32 {
    match d {
        Direction::Any => 0,
        Direction::Inbound => 1,
        Direction::Outbound => 2,
    }
}

/// The attributes graph nodes share in explain: the graph, the edge collections with their
/// directions, the vertex collections.
fn graph_json(edges: &GraphEdges) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    let collections: Vec<Value> = edges
        .collections
        .iter()
        .map(|c| Value::String(c.name.clone()))
        .collect();
    out.insert(
        "graph".into(),
        match &edges.graph {
            Some(name) => Value::String(name.clone()),
            None => Value::Array(collections.clone()),
        },
    );
    out.insert(
        "graphDefinition".into(),
        json!({
            "vertexCollectionNames": edges.vertex_collections,
            "edgeCollectionNames": collections,
        }),
    );
    out.insert("edgeCollections".into(), Value::Array(collections));
    out.insert(
        "directions".into(),
        edges
            .collections
            .iter()
            .map(|c| json!(direction_number(c.direction)))
            .collect(),
    );
    out.insert(
        "defaultDirection".into(),
        json!(direction_number(edges.direction)),
    );
    out.insert("direction".into(), json!(direction_name(edges.direction)));
    let vertices = edges
        .restrict_vertices
        .clone()
        .unwrap_or_else(|| edges.vertex_collections.clone());
    out.insert("vertexCollections".into(), json!(vertices));
    out
}

/// `TraversalNode` as explain shows it (`variable` renders a slot).
pub fn explain_traversal(t: &TraversalNode, variable: &dyn Fn(Slot) -> Value) -> Value {
    use crate::graph::traverse::{Order, Uniqueness};
    let mut node = graph_json(&t.edges);
    node.insert("type".into(), json!("TraversalNode"));
    if let Some(s) = t.vertex {
        node.insert("vertexOutVariable".into(), variable(s));
    }
    if let Some(s) = t.edge {
        node.insert("edgeOutVariable".into(), variable(s));
    }
    if let Some(s) = t.path {
        node.insert("pathOutVariable".into(), variable(s));
    }
    let unique = |u: Uniqueness| match u {
        Uniqueness::None => "none",
        Uniqueness::Path => "path",
        Uniqueness::Global => "global",
    };
    let order = match t.options.order {
        Order::Dfs => "dfs",
        Order::Bfs => "bfs",
        Order::Weighted => "weighted",
    };
    let mut options = json!({
        "minDepth": t.options.min_depth,
        "maxDepth": t.options.max_depth,
        "order": order,
        "bfs": t.options.order == Order::Bfs,
        "uniqueVertices": unique(t.options.unique_vertices),
        "uniqueEdges": unique(t.options.unique_edges),
    });
    if let Some(w) = &t.options.weights {
        options["weightAttribute"] = json!(w.attribute.as_ref().map(|a| a.join(".")));
        options["defaultWeight"] = json!(w.default);
    }
    node.insert("options".into(), options);
    node.insert("optionsGiven".into(), t.options_json.clone());
    node.insert("isPruned".into(), json!(t.prune.is_some()));
    if let Some((Some(slot), _)) = &t.prune {
        node.insert("pruneVariable".into(), variable(*slot));
    }
    let conditions: Vec<Value> = t
        .conditions
        .iter()
        .map(|c| match c.target {
            PathTarget::Vertex(n) => json!({"on": "vertex", "depth": n}),
            PathTarget::Edge(n) => json!({"on": "edge", "depth": n}),
            PathTarget::AllVertices => json!({"on": "vertex", "depth": "all"}),
            PathTarget::AllEdges => json!({"on": "edge", "depth": "all"}),
        })
        .collect();
    node.insert("pushedConditions".into(), Value::Array(conditions));
    Value::Object(node)
}

/// `ShortestPathNode` or `EnumeratePathsNode` as explain shows it.
pub fn explain_path_search(p: &PathSearchNode, variable: &dyn Fn(Slot) -> Value) -> Value {
    let mut node = graph_json(&p.edges);
    let kind = match p.kind {
        PathKind::Shortest => "ShortestPathNode",
        _ => "EnumeratePathsNode",
    };
    node.insert("type".into(), json!(kind));
    match p.kind {
        PathKind::Shortest => {
            node.insert("vertexOutVariable".into(), variable(p.slot));
            if let Some(e) = p.edge {
                node.insert("edgeOutVariable".into(), variable(e));
            }
        }
        _ => {
            node.insert("pathType".into(), json!(p.kind.keyword()));
            node.insert("pathOutVariable".into(), variable(p.slot));
        }
    }
    let mut options = json!({});
    if p.kind == PathKind::KPaths {
        options["minDepth"] = json!(p.min_depth);
        options["maxDepth"] = json!(p.max_depth);
    }
    if let Some(w) = &p.weights {
        options["weightAttribute"] = json!(w.attribute.as_ref().map(|a| a.join(".")));
        options["defaultWeight"] = json!(w.default);
    }
    node.insert("options".into(), options);
    node.insert("optionsGiven".into(), p.options_json.clone());
    Value::Object(node)
}
